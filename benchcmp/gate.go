package benchcmp

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// GatedUnits are the units the gate checks; others (the domain counts) are
// not gated.
var GatedUnits = []string{"sec/op", "B/op", "allocs/op"}

func (o GateOptions) threshold(unit string) float64 {
	switch unit {
	case "sec/op":
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
	// Unpaired are gated units measured on one side only ("B/op of X only
	// in head").
	Unpaired []string
	// Problems are what makes the input unusable: a file without results,
	// too few samples, no benchmark in common.
	Problems []string
}

// Gate exit codes.
const (
	GatePass       = 0
	GateRegression = 1
	GateBadInput   = 2
)

type benchSamples struct {
	runs   int
	values map[string][]float64
	// config holds, per configuration key that must not vary
	// (ConfigKeys), the values the samples were measured with.
	config map[string][]string
}

// ConfigKeys are the configuration keys whose values must be the same for
// every sample of a benchmark, in base and head: samples measured on
// another OS, architecture or CPU, or of another package, are not samples
// of the same thing.
var ConfigKeys = []string{"goos", "goarch", "cpu", "pkg"}

// gomaxprocs is the -N suffix go test adds to a benchmark's name.
var gomaxprocs = regexp.MustCompile(`-\d+$`)

type side struct {
	names []string
	by    map[string]*benchSamples
}

func collect(rs *Results) side {
	s := side{by: map[string]*benchSamples{}}
	for _, rec := range rs.Records {
		// BenchmarkX-2 and BenchmarkX-8 are one benchmark, as for benchstat.
		name := gomaxprocs.ReplaceAllString(string(rec.Name.Full()), "")
		b := s.by[name]
		if b == nil {
			b = &benchSamples{values: map[string][]float64{}, config: map[string][]string{}}
			s.by[name] = b
			s.names = append(s.names, name)
		}
		b.runs++
		for _, key := range ConfigKeys {
			v := rec.GetConfig(key)
			if !slices.Contains(b.config[key], v) {
				b.config[key] = append(b.config[key], v)
			}
		}
		for _, v := range rec.Values {
			b.values[v.Unit] = append(b.values[v.Unit], v.Value)
		}
	}
	return s
}

// Gate compares head with base. A check regresses when its change is
// significant (see Compare) and worse than the unit's threshold; lower is
// better in every gated unit.
func Gate(baseName string, base *Results, headName string, head *Results, opts GateOptions) *GateResult {
	g := &GateResult{Base: baseName, Head: headName, Options: opts}
	b, h := collect(base), collect(head)
	for _, f := range []struct {
		name string
		s    side
	}{{baseName, b}, {headName, h}} {
		if len(f.s.names) == 0 {
			g.Problems = append(g.Problems, fmt.Sprintf("%s: no benchmark results", f.name))
		}
		for _, n := range f.s.names {
			if runs := f.s.by[n].runs; runs < opts.MinSamples {
				g.Problems = append(g.Problems, fmt.Sprintf("%s: %s has %d samples, need at least %d", f.name, n, runs, opts.MinSamples))
			}
		}
	}
	for _, f := range []struct {
		name string
		s    side
	}{{baseName, b}, {headName, h}} {
		for _, n := range f.s.names {
			for _, key := range ConfigKeys {
				if vs := f.s.by[n].config[key]; len(vs) > 1 {
					g.Problems = append(g.Problems, fmt.Sprintf("%s: %s mixes samples of %s %s: split the file, or gate each %s on its own", f.name, n, key, quoteAll(vs), key))
				}
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
		for _, key := range ConfigKeys {
			bv, hv := bb.config[key], hb.config[key]
			if len(bv) == 1 && len(hv) == 1 && bv[0] != hv[0] {
				g.Problems = append(g.Problems, fmt.Sprintf("%s: base has %s %q, head %q: measurements of another %s are not comparable", name, key, bv[0], hv[0], key))
			}
		}
		for _, unit := range GatedUnits {
			bv, hv := bb.values[unit], hb.values[unit]
			switch {
			case bv == nil && hv == nil:
				continue
			case hv == nil:
				g.Unpaired = append(g.Unpaired, fmt.Sprintf("%s of %s only in base", unit, name))
				continue
			case bv == nil:
				g.Unpaired = append(g.Unpaired, fmt.Sprintf("%s of %s only in head", unit, name))
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
	holm(g.Checks, opts.Alpha)
	for i := range g.Checks {
		c := &g.Checks[i]
		pct := c.Comparison.ChangePct()
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
	return g
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, " and ")
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

// ExitCode is GateBadInput when the input is unusable, else GateRegression
// when a check regressed, else GatePass.
func (g *GateResult) ExitCode() int {
	switch {
	case len(g.Problems) > 0:
		return GateBadInput
	case len(g.Regressions()) > 0:
		return GateRegression
	}
	return GatePass
}

func (g *GateResult) rule() string {
	var parts []string
	for _, u := range GatedUnits {
		parts = append(parts, fmt.Sprintf("+%s%% %s", strconv.FormatFloat(g.Options.threshold(u), 'f', -1, 64), u))
	}
	return fmt.Sprintf("a regression is a change significant at p < %s (Holm-Bonferroni over the gate's checks) and worse than %s",
		strconv.FormatFloat(g.Options.Alpha, 'f', -1, 64), strings.Join(parts, ", "))
}

func (g *GateResult) summary() string {
	n := len(g.Regressions())
	switch {
	case len(g.Problems) > 0:
		return "BAD INPUT: " + strings.Join(g.Problems, "; ")
	case n == 1:
		return fmt.Sprintf("FAIL: 1 regression in %d comparisons", len(g.Checks))
	case n > 0:
		return fmt.Sprintf("FAIL: %d regressions in %d comparisons", n, len(g.Checks))
	}
	return fmt.Sprintf("PASS: no regression in %d comparisons", len(g.Checks))
}

// gateValue prints counts (B/op, allocs/op) unscaled, to a tenth (the
// median of an even sample may end in .5), so that a change of one
// allocation shows; times are scaled.
func gateValue(v float64, unit string) string {
	if unit != "sec/op" && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	}
	return FormatValue(v, unit)
}

func gateSummary(s Summary, unit string) string {
	return gateValue(s.Center, unit) + " ± " + s.RangePct
}

func (c Check) cells() []string {
	change := FormatPct(c.Comparison.ChangePct())
	return []string{c.Benchmark, c.Unit, gateSummary(c.Base, c.Unit), gateSummary(c.Head, c.Unit), change, c.Comparison.FormatP(), string(c.Verdict)}
}

var checkHeader = []string{"benchmark", "unit", "base", "head", "change", "p", "verdict"}

// WriteText writes the report for a terminal; it ends with a one-line
// summary (PASS, FAIL or BAD INPUT).
func (g *GateResult) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gate: base %s, head %s\n%s\n", g.Base, g.Head, g.rule())
	if len(g.Checks) > 0 {
		b.WriteString("\n")
		grid := [][]string{checkHeader}
		for _, c := range g.Checks {
			grid = append(grid, c.cells())
		}
		writeTextGrid(&b, grid, "llrrrrl")
	}
	lists := []struct {
		title string
		items []string
	}{
		{"only in base (not compared)", g.OnlyBase},
		{"only in head (not compared)", g.OnlyHead},
		{"not compared", g.Unpaired},
		{"bad input", g.Problems},
	}
	for _, l := range lists {
		if len(l.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", l.title)
		for _, it := range l.items {
			fmt.Fprintf(&b, "  %s\n", it)
		}
	}
	if regs := g.Regressions(); len(regs) > 0 {
		b.WriteString("\nregressions:\n")
		for _, c := range regs {
			fmt.Fprintf(&b, "  %s %s: %s -> %s (%s, %s)\n", c.Benchmark, c.Unit, gateValue(c.Base.Center, c.Unit), gateValue(c.Head.Center, c.Unit), FormatPct(c.Comparison.ChangePct()), c.Comparison.FormatP())
		}
	}
	fmt.Fprintf(&b, "\n%s\n", g.summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as a pull-request comment: the verdict,
// the regressions, then every comparison in a collapsed section.
func (g *GateResult) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### Benchmark gate: %s\n\n", g.summary())
	fmt.Fprintf(&b, "Base `%s`, head `%s`; %s.\n", g.Base, g.Head, g.rule())
	row := func(c Check) []string {
		cells := c.cells()
		cells[0] = "`" + cells[0] + "`"
		if c.Verdict == Regression {
			cells[6] = "**" + cells[6] + "**"
		}
		return cells
	}
	if regs := g.Regressions(); len(regs) > 0 {
		b.WriteString("\n#### Regressions\n\n")
		grid := [][]string{checkHeader}
		for _, c := range regs {
			grid = append(grid, row(c))
		}
		writeMarkdownGrid(&b, grid, "llrrrrl")
	}
	if len(g.Checks) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>All %d comparisons</summary>\n\n", len(g.Checks))
		grid := [][]string{checkHeader}
		for _, c := range g.Checks {
			grid = append(grid, row(c))
		}
		writeMarkdownGrid(&b, grid, "llrrrrl")
		b.WriteString("\n</details>\n")
	}
	lists := []struct {
		title string
		items []string
	}{
		{"Only in base (not compared)", g.OnlyBase},
		{"Only in head (not compared)", g.OnlyHead},
		{"Not compared", g.Unpaired},
		{"Bad input", g.Problems},
	}
	for _, l := range lists {
		if len(l.items) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n**%s:**\n\n", l.title)
		for _, it := range l.items {
			fmt.Fprintf(&b, "- `%s`\n", it)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
