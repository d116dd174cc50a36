package benchcmp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
)

// GateOptions configure Gate. Max* are how much worse, in percent, a
// significant change of that unit may be before it is a regression.
type GateOptions struct {
	MaxTime, MaxBytes, MaxAllocs float64
	Alpha                        float64
	// MinSamples is the fewest runs of a benchmark either file may hold.
	MinSamples int
}

// DefaultGateOptions: 5% for time, nothing for bytes and allocations,
// alpha 0.05, 6 samples (the fewest for which the U test can reach
// p < 0.05 and the median has a finite 95% interval).
func DefaultGateOptions() GateOptions {
	return GateOptions{MaxTime: 5, MaxBytes: 0, MaxAllocs: 0, Alpha: DefaultAlpha, MinSamples: 6}
}

// gatedUnits are the units the gate checks; others (the domain counts) are
// not gated. pods/s is a throughput (compare e2e's, scheduler_perf's
// SchedulingThroughput): higher is better, and it is held to the time
// threshold.
var gatedUnits = []string{"sec/op", "B/op", "allocs/op", "pods/s"}

// higherIsBetter says whether a larger value of unit is an improvement.
func higherIsBetter(unit string) bool { return unit == "pods/s" }

func (o GateOptions) threshold(unit string) float64 {
	switch unit {
	case "sec/op", "pods/s":
		return o.MaxTime
	case "B/op":
		return o.MaxBytes
	}
	return o.MaxAllocs
}

// ParsePercent parses "5%", "5" or "2.5%" as a non-negative percentage.
func ParsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a non-negative percentage such as 5%%", s)
	}
	return v, nil
}

// Verdict is the outcome of one check.
type Verdict string

const (
	Regression      Verdict = "REGRESSION"
	WithinThreshold Verdict = "within threshold" // significantly worse, by no more than allowed
	Improvement     Verdict = "improvement"
	NoChange        Verdict = "~" // not significant
)

// Check is one benchmark in one unit, head against base.
type Check struct {
	Benchmark  string     `json:"benchmark"`
	Unit       string     `json:"unit"`
	Base       Summary    `json:"base"`
	Head       Summary    `json:"head"`
	Comparison Comparison `json:"comparison"`
	// Threshold is the allowed worsening in percent.
	Threshold float64 `json:"threshold"`
	Verdict   Verdict `json:"verdict"`
}

// GateResult is the outcome of Gate.
type GateResult struct {
	Base, Head string
	Options    GateOptions
	Checks     []Check
	// OnlyBase and OnlyHead are the benchmarks of one side only; they are
	// reported, not compared.
	OnlyBase, OnlyHead []string
	// Unpaired are units measured on one side only ("B/op of X only
	// in base"): not compared, so each is also a problem (a head run
	// without -benchmem must not pass the allocation gate).
	Unpaired []string
	// Problems are what makes the input unusable: invalid options, a
	// value no measurement has, a file without results, too few samples
	// of a unit, a unit of one side only, no benchmark in common, nothing
	// to compare, samples of different machines or packages.
	Problems []string
	// Warnings are what the gate did with a doubt: samples of different
	// GOMAXPROCS or of another configuration key pooled.
	Warnings []string
}

// An Outcome is the gate's answer as a whole; the command maps it to its
// exit code.
type Outcome int

const (
	// Pass: every check compared, none regressed.
	Pass Outcome = iota
	// Regressed: a check regressed significantly.
	Regressed
	// Unusable: the input cannot be gated (Problems says why).
	Unusable
)

type benchSamples struct {
	runs   int
	values map[string][]float64
	// config holds, per file configuration key ("goos", "commit", ...),
	// the values the samples were measured with ("" for samples without
	// the key), in the order seen.
	config map[string][]string
	// gomaxprocs are the GOMAXPROCS of the samples ("1" without suffix).
	gomaxprocs []string
}

// configKeys are the configuration keys whose values must be the same for
// every sample of a benchmark, in base and head: samples measured on
// another OS, architecture or CPU, or of another package, are not samples
// of the same thing. Other keys ("commit", "go", ...) may differ between
// base and head, that being the point of a gate; within one file, a
// benchmark whose samples differ in one is gated with a warning.
var configKeys = []string{"goos", "goarch", "cpu", "pkg"}

type side struct {
	names []string
	by    map[string]*benchSamples
}

// collect groups results by benchmark as benchstat does, with benchproc:
// the name is .fullname without the GOMAXPROCS suffix (BenchmarkX-2,
// BenchmarkX-8 and BenchmarkX are X), which is /gomaxprocs; the file
// configuration is .config.
//
// It reads src once, keeping per benchmark only its values by unit and
// its configurations.
func collect(src Source) (side, error) {
	var parser benchproc.ProjectionParser
	nameBy, err1 := parser.Parse(".fullname", nil)
	gmpBy, err2 := parser.Parse("/gomaxprocs", nil)
	configBy, err3 := parser.Parse(".config", nil)
	if err := errors.Join(err1, err2, err3); err != nil {
		panic(err) // constant projections
	}
	gmpField := gmpBy.Fields()[0]
	type entry struct {
		b       *benchSamples
		configs []benchproc.Key
	}
	byKey := map[benchproc.Key]*entry{}
	var order []benchproc.Key
	err := src.Scan(func(rec *benchfmt.Result) {
		nk := nameBy.Project(rec)
		e := byKey[nk]
		if e == nil {
			e = &entry{b: &benchSamples{values: map[string][]float64{}, config: map[string][]string{}}}
			byKey[nk] = e
			order = append(order, nk)
		}
		b := e.b
		b.runs++
		gmp := gmpBy.Project(rec).Get(gmpField)
		if gmp == "" {
			gmp = "1" // go test omits the suffix when GOMAXPROCS is 1
		}
		if !slices.Contains(b.gomaxprocs, gmp) {
			b.gomaxprocs = append(b.gomaxprocs, gmp)
		}
		if ck := configBy.Project(rec); !slices.Contains(e.configs, ck) {
			e.configs = append(e.configs, ck)
		}
		for _, v := range rec.Values {
			b.values[v.Unit] = append(b.values[v.Unit], v.Value)
		}
	})
	if err != nil {
		return side{}, err
	}
	// Names and configuration fields are read once every result is
	// projected (a projection's fields grow as keys are seen).
	s := side{by: map[string]*benchSamples{}}
	fields := configBy.FlattenedFields()
	for _, nk := range order {
		e := byKey[nk]
		for _, f := range fields {
			for _, ck := range e.configs {
				if v := ck.Get(f); !slices.Contains(e.b.config[f.Name], v) {
					e.b.config[f.Name] = append(e.b.config[f.Name], v)
				}
			}
		}
		// One key, one name: .fullname is the only field.
		name := nk.StringValues()
		s.by[name] = e.b
		s.names = append(s.names, name)
	}
	return s, nil
}

// configKeys are the keys of b.config, configKeys first, then the others
// sorted.
func (b *benchSamples) configKeys() []string {
	var out, rest []string
	for _, k := range configKeys {
		if _, ok := b.config[k]; ok {
			out = append(out, k)
		}
	}
	for k := range b.config {
		if !slices.Contains(configKeys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// Validate refuses options the gate cannot apply: alpha outside (0, 1),
// a threshold that is negative, infinite or NaN, fewer than 1 sample. The
// names are the command's flags.
func (o GateOptions) Validate() error {
	if err := checkUnitInterval("alpha", o.Alpha); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		v    float64
	}{{"max-time", o.MaxTime}, {"max-bytes", o.MaxBytes}, {"max-allocs", o.MaxAllocs}} {
		if !(t.v >= 0) || math.IsInf(t.v, 0) {
			return fmt.Errorf("%s %v is not a finite percentage >= 0", t.name, t.v)
		}
	}
	if o.MinSamples < 1 {
		return fmt.Errorf("min-samples %d is not at least 1", o.MinSamples)
	}
	return nil
}

// byBenchmarks gathers messages that differ only in the benchmarks they
// concern, so that a file of another machine is one message, not one per
// benchmark. A message is a template in which nameMark stands for the
// benchmarks.
type byBenchmarks struct {
	order []string
	names map[string][]string
}

const nameMark = "\x00"

func (bb *byBenchmarks) add(template, name string) {
	if bb.names == nil {
		bb.names = map[string][]string{}
	}
	if _, ok := bb.names[template]; !ok {
		bb.order = append(bb.order, template)
	}
	bb.names[template] = append(bb.names[template], name)
}

func (bb *byBenchmarks) messages() []string {
	var out []string
	for _, t := range bb.order {
		out = append(out, strings.ReplaceAll(t, nameMark, benchmarkList(bb.names[t])))
	}
	return out
}

// benchmarkList is "X", "X and Y", "X, Y, Z and 4 more benchmarks".
func benchmarkList(names []string) string {
	const most = 3
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) <= most:
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names[:most], ", ") + " and " + plural(len(names)-most, "more benchmark", "more benchmarks")
}

// joinOr is "a", "a or b", "a, b or c".
func joinOr(vs []string) string {
	if len(vs) <= 1 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// joinAnd is "a", "a and b", "a, b and c".
func joinAnd(vs []string) string {
	if len(vs) <= 1 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1]
}

// Gate compares head with base. A check regresses when its change is
// significant (see Compare) and worse than the unit's threshold; lower is
// better in every gated unit.
//
// Benchmarks are grouped as benchstat groups them (see collect). Samples
// of different configurations are never pooled without a word: a
// benchmark whose samples differ in a configKeys key, within a file or
// between base and head, is a problem (bad input); one whose samples
// within a file differ in another key or in GOMAXPROCS, or whose base and
// head ran at different GOMAXPROCS, is gated with a warning.
//
// Every benchmark of both files is compared in every gated unit either
// measures, on at least MinSamples samples a side; what cannot be is a
// problem (bad input), never a pass: a unit of one side only, too few
// samples, nothing compared at all. Base and head are each read once (see
// Source); an error reading either is a problem.
func Gate(baseName string, base Source, headName string, head Source, opts GateOptions) *GateResult {
	g := &GateResult{Base: baseName, Head: headName, Options: opts}
	if err := opts.Validate(); err != nil {
		g.Problems = append(g.Problems, err.Error())
		return g
	}
	b, errB := collect(base)
	h, errH := collect(head)
	for _, err := range []error{errB, errH} {
		if err != nil {
			// The error names the file, the line and the benchmark.
			g.Problems = append(g.Problems, err.Error())
		}
	}
	if len(g.Problems) > 0 {
		return g
	}
	var problems, warnings byBenchmarks
	for _, f := range []struct {
		name string
		s    side
	}{{baseName, b}, {headName, h}} {
		if len(f.s.names) == 0 {
			g.Problems = append(g.Problems, fmt.Sprintf("%s: no benchmark results", f.name))
		}
		for _, n := range f.s.names {
			bs := f.s.by[n]
			if bs.runs < opts.MinSamples {
				g.Problems = append(g.Problems, fmt.Sprintf("%s: %s has %d samples, need at least %d", f.name, n, bs.runs, opts.MinSamples))
				continue
			}
			// The minimum holds for every unit gated, not only for the
			// results: a unit missing from some lines has fewer samples.
			for _, unit := range gatedUnits {
				if vs := bs.values[unit]; vs != nil && len(vs) < opts.MinSamples {
					g.Problems = append(g.Problems, fmt.Sprintf("%s: %s has %d samples of %s (of %d results), need at least %d", f.name, n, len(vs), unit, bs.runs, opts.MinSamples))
				}
			}
		}
	}
	for _, f := range []struct {
		name string
		s    side
	}{{baseName, b}, {headName, h}} {
		for _, n := range f.s.names {
			bs := f.s.by[n]
			for _, key := range bs.configKeys() {
				vs := bs.config[key]
				if len(vs) < 2 {
					continue
				}
				if slices.Contains(configKeys, key) {
					problems.add(fmt.Sprintf("%s: %s mixes samples of %s %s: split the file, or gate each %s on its own", f.name, nameMark, key, quoteValues(vs), key), n)
				} else {
					warnings.add(fmt.Sprintf("%s: %s pools samples of %s %s", f.name, nameMark, key, quoteValues(vs)), n)
				}
			}
			if len(bs.gomaxprocs) > 1 {
				warnings.add(fmt.Sprintf("%s: %s pools samples of GOMAXPROCS %s", f.name, nameMark, joinAnd(bs.gomaxprocs)), n)
			}
		}
	}
	matched := 0
	for _, name := range b.names {
		hb := h.by[name]
		if hb == nil {
			g.OnlyBase = append(g.OnlyBase, name)
			continue
		}
		matched++
		bb := b.by[name]
		for _, key := range configKeys {
			bv, hv := bb.config[key], hb.config[key]
			if bv == nil {
				bv = []string{""}
			}
			if hv == nil {
				hv = []string{""}
			}
			if len(bv) == 1 && len(hv) == 1 && bv[0] != hv[0] {
				problems.add(fmt.Sprintf("%s: base has %s %s, head %s: measurements of another %s are not comparable", nameMark, key, quoteValues(bv), quoteValues(hv), key), name)
			}
		}
		if bg, hg := bb.gomaxprocs, hb.gomaxprocs; len(bg) == 1 && len(hg) == 1 && bg[0] != hg[0] {
			warnings.add(fmt.Sprintf("%s: base ran at GOMAXPROCS %s, head at %s: compared all the same (the -N suffix is not part of the name)", nameMark, bg[0], hg[0]), name)
		}
		for _, unit := range unionUnits(bb, hb) {
			bv, hv := bb.values[unit], hb.values[unit]
			gated := slices.Contains(gatedUnits, unit)
			switch {
			case hv == nil, bv == nil:
				// A head without B/op must not pass the allocation gate:
				// a unit measured on one side is a benchmark not gated.
				// So is any other unit ("5 ms/op" beside ns/op), on
				// either side: nothing either file holds goes unsaid.
				where, missing := "base", "head"
				if bv == nil {
					where, missing = "head", "base"
				}
				hint := "run base and head with the same flags, -benchmem for B/op and allocs/op"
				if !gated {
					hint = "run base and head with the same flags and benchmarks that report the same units"
				}
				g.Unpaired = append(g.Unpaired, fmt.Sprintf("%s of %s only in %s", unit, name, where))
				problems.add(fmt.Sprintf("%s of %s only in %s: the %s has none to compare (%s)", unit, nameMark, where, missing, hint), name)
				continue
			case !gated:
				// A unit of both sides that is not gated (a domain
				// count) is reported by stat, not gated.
				continue
			}
			g.Checks = append(g.Checks, Check{
				Benchmark:  name,
				Unit:       unit,
				Base:       Summarize(bv, DefaultConfidence),
				Head:       Summarize(hv, DefaultConfidence),
				Comparison: Compare(bv, hv, opts.Alpha),
				Threshold:  opts.threshold(unit),
			})
		}
	}
	g.Problems = append(g.Problems, problems.messages()...)
	g.Warnings = append(g.Warnings, warnings.messages()...)
	holm(g.Checks, opts.Alpha)
	for i := range g.Checks {
		c := &g.Checks[i]
		pct := c.Comparison.ChangePct() // how much worse
		if higherIsBetter(c.Unit) {
			pct = -pct
		}
		switch {
		case !c.Comparison.Significant || pct == 0:
			c.Verdict = NoChange
		case pct < 0:
			c.Verdict = Improvement
		case pct > c.Threshold:
			c.Verdict = Regression
		default:
			c.Verdict = WithinThreshold
		}
	}
	for _, name := range h.names {
		if b.by[name] == nil {
			g.OnlyHead = append(g.OnlyHead, name)
		}
	}
	if matched == 0 && len(b.names) > 0 && len(h.names) > 0 {
		g.Problems = append(g.Problems, "no benchmark is in both files")
	}
	if len(g.Checks) == 0 && len(g.Problems) == 0 {
		// A gate that compares nothing cannot pass.
		g.Problems = append(g.Problems, fmt.Sprintf("nothing to gate: no benchmark of both files has %s", joinOr(gatedUnits)))
	}
	return g
}

// unionUnits are the units of b and h: the gated units first, then the
// others in name order.
func unionUnits(b, h *benchSamples) []string {
	var out, rest []string
	for _, u := range gatedUnits {
		if b.values[u] != nil || h.values[u] != nil {
			out = append(out, u)
		}
	}
	for _, vs := range []map[string][]float64{b.values, h.values} {
		for u := range vs {
			if !slices.Contains(gatedUnits, u) && !slices.Contains(rest, u) {
				rest = append(rest, u)
			}
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// holm makes "significant" hold for the whole gate: a gate asks whether
// anything regressed, so its checks are one family, and the Holm-Bonferroni
// step-down keeps the chance of any false alarm below alpha however many
// benchmarks and units are gated (with the U test on each alone, twenty
// checks at 0.05 would cry wolf on most runs of unchanged code). Checks of
// samples that do not vary (Exact) are not tests and keep their verdict.
func holm(checks []Check, alpha float64) {
	var tested []int
	for i, c := range checks {
		if !c.Comparison.Exact {
			tested = append(tested, i)
		}
	}
	sort.SliceStable(tested, func(a, b int) bool { return checks[tested[a]].Comparison.P < checks[tested[b]].Comparison.P })
	rejecting := true
	for k, i := range tested {
		c := &checks[i].Comparison
		rejecting = rejecting && c.P < alpha/float64(len(tested)-k)
		c.Significant = rejecting
	}
}

// Regressions are the failing checks.
func (g *GateResult) Regressions() []Check {
	var out []Check
	for _, c := range g.Checks {
		if c.Verdict == Regression {
			out = append(out, c)
		}
	}
	return out
}

// Outcome is Unusable when the input is unusable, else Regressed when a
// check regressed, else Pass.
func (g *GateResult) Outcome() Outcome {
	switch {
	case len(g.Problems) > 0:
		return Unusable
	case len(g.Regressions()) > 0:
		return Regressed
	}
	return Pass
}
