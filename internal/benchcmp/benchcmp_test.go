package benchcmp

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	six := func(v ...float64) []float64 { return v }
	for _, tc := range []struct {
		name            string
		base, new       []float64
		alpha           float64
		wantSignificant bool
		wantExact       bool
		wantP           float64 // checked when >= 0
	}{
		{"equal constants", six(100, 100, 100, 100, 100, 100), six(100, 100, 100, 100, 100, 100), 0.05, false, true, 1},
		{"different constants", six(100, 100, 100, 100, 100, 100), six(101, 101, 101, 101, 101, 101), 0.05, true, true, 0.0021645021645021645},
		// The U test cannot reach p < 0.001 with 6+6 samples; exact
		// samples need no test.
		{"different constants, tiny alpha", six(100, 100, 100, 100, 100, 100), six(101, 101, 101, 101, 101, 101), 0.001, true, true, -1},
		// Too few samples to show they do not vary: "~", as benchstat
		// prints it (issue 21: one sample a side printed a ratio).
		{"different constants, 2 samples", six(100, 100), six(101, 101), 0.05, false, true, 1.0 / 3},
		{"different values, 1 sample", six(100), six(250), 0.05, false, true, 1},
		{"different constants, 3+4 samples", six(100, 100, 100), six(101, 101, 101, 101), 0.05, false, true, -1},
		{"different constants, 4 samples", six(100, 100, 100, 100), six(101, 101, 101, 101), 0.05, true, true, 2.0 / 70},
		{"different constants, 4 samples, tiny alpha", six(100, 100, 100, 100), six(101, 101, 101, 101), 0.001, true, true, -1},
		{"separated", six(10, 11, 12, 10.5, 11.5, 10.2), six(20, 21, 22, 20.5, 21.5, 20.2), 0.05, true, false, 0.0021645021645021645},
		{"overlapping", six(10, 11, 12, 10.5, 11.5, 10.2), six(10.1, 11.1, 11.9, 10.4, 11.6, 10.3), 0.05, false, false, -1},
		// One side varies: left to the U test, ties and all.
		{"one side varies", six(100, 100, 100, 100, 100, 101), six(101, 101, 101, 101, 101, 101), 0.05, true, false, -1},
		{"empty", nil, six(1), 0.05, false, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(tc.base, tc.new, tc.alpha)
			if c.Significant != tc.wantSignificant || c.Exact != tc.wantExact {
				t.Errorf("Compare = %+v, want significant %v exact %v", c, tc.wantSignificant, tc.wantExact)
			}
			if tc.wantP >= 0 && math.Abs(c.P-tc.wantP) > 1e-12 {
				t.Errorf("p = %v, want %v", c.P, tc.wantP)
			}
		})
	}
}

func TestCompareLeavesInputsAlone(t *testing.T) {
	base, new := []float64{3, 1, 2, 6, 5, 4}, []float64{9, 7, 8, 12, 11, 10}
	Compare(base, new, 0.05)
	Summarize(base, 0.95)
	if diff := cmp.Diff([]float64{3, 1, 2, 6, 5, 4}, base); diff != "" {
		t.Errorf("base changed (-want +got):\n%s", diff)
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"5%": 5, "5": 5, "0%": 0, "2.5%": 2.5, " 10% ": 10} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1%", "five", "5%%", "NaN", "Inf"} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q) succeeded", in)
		}
	}
}

func TestPairs(t *testing.T) {
	for _, tc := range []struct {
		cols []string
		want []Pair
	}{
		{nil, []Pair{}},
		{[]string{"reference"}, []Pair{}},
		{[]string{"reference", "upstream"}, []Pair{{"upstream", "reference"}}},
		{[]string{"upstream", "reference"}, []Pair{{"upstream", "reference"}}},
		{[]string{"reference", "upstream", "optimized"}, []Pair{{"upstream", "reference"}, {"optimized", "reference"}, {"optimized", "upstream"}}},
		{[]string{"upstream", "optimized"}, []Pair{{"optimized", "upstream"}}},
		{[]string{"old", "new", "newer"}, []Pair{{"new", "old"}, {"newer", "old"}}},
	} {
		if diff := cmp.Diff(tc.want, pairs(tc.cols, []string{"reference", "upstream"})); diff != "" {
			t.Errorf("pairs(%q) (-want +got):\n%s", tc.cols, diff)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{FormatRatio(2.1234), "2.12x"},
		{FormatRatio(0.52), "0.52x"},
		{FormatRatio(0.0235), "0.0235x"},
		{FormatRatio(1), "1.00x"},
		{FormatRatio(8928.0 / 8927), "1.0001x"},
		{FormatRatio(math.Inf(1)), "?"},
		{FormatPct(30.01), "+30.01%"},
		{FormatPct(-20), "-20.00%"},
		{FormatPct(100.0 / 57575), "+0.0017%"},
		{FormatPct(0), "+0.00%"},
		{FormatValue(0.031016, "sec/op"), "31.02m"},
		{FormatValue(1536, "B/op"), "1.500Ki"},
		{Comparison{P: 0.0021, N1: 6, N2: 6}.FormatP(), "p=0.002 n=6"},
		{Comparison{P: 0.5, N1: 6, N2: 5}.FormatP(), "p=0.500 n=6+5"},
		{gateValue(8927, "allocs/op"), "8927"},
		{gateValue(0.031016, "sec/op"), "31.02m"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// results makes a benchmark file: each spec is "name unit v1 v2 ...", one
// result line per value.
func results(t *testing.T, specs ...string) *Results {
	t.Helper()
	var b strings.Builder
	b.WriteString("goos: linux\n")
	for _, s := range specs {
		f := strings.Fields(s)
		for _, v := range f[2:] {
			fmt.Fprintf(&b, "Benchmark%s 1 %s %s\n", f[0], v, f[1])
		}
	}
	rs, err := Read(strings.NewReader(b.String()), "test")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestGateVerdicts(t *testing.T) {
	base := results(t,
		"Slower ns/op 100 101 102 100 101 102",
		"Faster ns/op 100 101 102 100 101 102",
		"Slightly ns/op 100 101 102 100 101 102",
		"Noise ns/op 100 101 102 100 101 102",
		"Allocs allocs/op 5 5 5 5 5 5",
		"Gone ns/op 1 1 1 1 1 1",
	)
	head := results(t,
		"Slower ns/op 120 121 122 120 121 122",
		"Faster ns/op 80 81 82 80 81 82",
		"Slightly ns/op 103 104 105 103 104 105",
		"Noise ns/op 101 100 102 101 100 102",
		"Allocs allocs/op 6 6 6 6 6 6",
		"New ns/op 1 1 1 1 1 1",
	)
	g := Gate("base", base, "head", head, DefaultGateOptions())
	got := map[string]Verdict{}
	for _, c := range g.Checks {
		got[c.Benchmark+" "+c.Unit] = c.Verdict
	}
	want := map[string]Verdict{
		"Slower sec/op":    Regression,
		"Faster sec/op":    Improvement,
		"Slightly sec/op":  WithinThreshold,
		"Noise sec/op":     NoChange,
		"Allocs allocs/op": Regression,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Gone"}, g.OnlyBase); diff != "" {
		t.Errorf("only in base (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"New"}, g.OnlyHead); diff != "" {
		t.Errorf("only in head (-want +got):\n%s", diff)
	}
	if g.Outcome() != Regressed {
		t.Errorf("exit %d, want %d", g.Outcome(), Regressed)
	}
}

func TestUnusable(t *testing.T) {
	six := "A ns/op 1 2 3 4 5 6"
	for _, tc := range []struct {
		name       string
		base, head *Results
		want       []string
	}{
		{"empty head", results(t, six), results(t), []string{"head: no benchmark results"}},
		{"few samples", results(t, six), results(t, "A ns/op 1 2 3 4 5"), []string{"head: A has 5 samples, need at least 6"}},
		{"few samples of an unmatched benchmark", results(t, six, "B ns/op 1"), results(t, six), []string{"base: B has 1 samples, need at least 6"}},
		{"nothing in common", results(t, six), results(t, "B ns/op 1 2 3 4 5 6"), []string{"no benchmark is in both files"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Gate("base", tc.base, "head", tc.head, DefaultGateOptions())
			if diff := cmp.Diff(tc.want, g.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if g.Outcome() != Unusable {
				t.Errorf("exit %d, want %d", g.Outcome(), Unusable)
			}
		})
	}
}

// Two commits' results: a table each, as benchstat's -table .config makes
// them, with a warning; pooled with -table "", with a footnote and a
// warning naming the key and its values.
func TestStatConfigurations(t *testing.T) {
	in := "commit: a\n"
	for range 3 {
		in += "BenchmarkX/impl=reference 1 10 ns/op\n"
	}
	in += "commit: b\n"
	for range 3 {
		in += "BenchmarkX/impl=reference 1 20 ns/op\n"
	}
	rs, err := Read(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Stat(rs, DefaultStatOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 2 {
		t.Fatalf("%d tables, want one per commit", len(rep.Tables))
	}
	for i, commit := range []string{"a", "b"} {
		tb := rep.Tables[i]
		if diff := cmp.Diff([]ConfigValue{{"commit", commit}}, tb.Config); diff != "" {
			t.Errorf("table %d config (-want +got):\n%s", i, diff)
		}
		if n := tb.Rows[0].Cells[0].N; n != 3 {
			t.Errorf("table %d: n = %d, want 3", i, n)
		}
	}
	want := []string{`results of different commit "a" and "b": 1 benchmark was measured in more than one of them, shown in a table per configuration, not pooled (-filter keeps one, e.g. -filter 'commit:a')`}
	if diff := cmp.Diff(want, rep.Mixed); diff != "" {
		t.Errorf("mixed (-want +got):\n%s", diff)
	}

	opts := DefaultStatOptions()
	opts.Table = ""
	rep, err = Stat(rs, opts)
	if err != nil {
		t.Fatal(err)
	}
	cell := rep.Tables[0].Rows[0].Cells[0]
	if diff := cmp.Diff([]string{"benchmarks vary in commit"}, cell.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if cell.N != 6 {
		t.Errorf("n = %d, want 6", cell.N)
	}
	if len(rep.Config) != 0 {
		t.Errorf("config %v, want none shared", rep.Config)
	}
	want = []string{`sec/op X (column reference) pools samples of commit "a" and "b": add commit to -row, -col or -table to split them, or -ignore commit to pool them on purpose`}
	if diff := cmp.Diff(want, rep.Mixed); diff != "" {
		t.Errorf("mixed (-want +got):\n%s", diff)
	}
	// Ignored, the variation is neither footnoted nor warned of.
	opts.Ignore = "commit"
	if rep, err = Stat(rs, opts); err != nil {
		t.Fatal(err)
	}
	if w := rep.Tables[0].Rows[0].Cells[0].Warnings; len(rep.Mixed) != 0 || slices.Contains(w, "benchmarks vary in commit") {
		t.Errorf("-ignore commit: mixed %q, cell warnings %q", rep.Mixed, w)
	}
}

// Different configurations whose benchmarks differ are apart (as in one
// run of several packages), with nothing to warn of.
func TestStatPackagesApart(t *testing.T) {
	in := "pkg: a\n" + strings.Repeat("BenchmarkX 1 10 ns/op\n", 6) + "pkg: b\n" + strings.Repeat("BenchmarkY 1 10 ns/op\n", 6)
	rs, err := Read(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Stat(rs, DefaultStatOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Tables) != 2 || len(rep.Mixed) != 0 {
		t.Errorf("%d tables, mixed %q; want 2 and none", len(rep.Tables), rep.Mixed)
	}
}

// BenchmarkX-2, BenchmarkX-8 and BenchmarkX are the row X; a cell pooling
// GOMAXPROCS 1, 2 and 8 says so, unless /gomaxprocs is ignored or
// projected.
func TestStatGOMAXPROCS(t *testing.T) {
	in := strings.Repeat("BenchmarkX-2 1 10 ns/op\n", 2) + strings.Repeat("BenchmarkX-8 1 10 ns/op\n", 2) + strings.Repeat("BenchmarkX 1 10 ns/op\n", 2)
	rs, err := Read(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Stat(rs, DefaultStatOptions())
	if err != nil {
		t.Fatal(err)
	}
	tb := rep.Tables[0]
	if len(tb.Rows) != 1 || tb.Rows[0].Name != "X" || tb.Rows[0].Cells[0].N != 6 {
		t.Fatalf("rows %+v, want X with 6 samples", tb.Rows)
	}
	if diff := cmp.Diff([]string{"benchmarks vary in /gomaxprocs"}, tb.Rows[0].Cells[0].Warnings); diff != "" {
		t.Errorf("cell warnings (-want +got):\n%s", diff)
	}
	want := []string{`sec/op X (column none) pools samples of /gomaxprocs "2", "8" and "1": add /gomaxprocs to -row, -col or -table to split them, or -ignore /gomaxprocs to pool them on purpose`}
	if diff := cmp.Diff(want, rep.Mixed); diff != "" {
		t.Errorf("mixed (-want +got):\n%s", diff)
	}
	opts := DefaultStatOptions()
	opts.Ignore = "/gomaxprocs"
	if rep, err = Stat(rs, opts); err != nil {
		t.Fatal(err)
	}
	if len(rep.Mixed) != 0 || len(rep.Tables[0].Rows) != 1 || rep.Tables[0].Rows[0].Name != "X" {
		t.Errorf("-ignore /gomaxprocs: mixed %q, rows %d", rep.Mixed, len(rep.Tables[0].Rows))
	}
	opts = DefaultStatOptions()
	opts.Col = "/gomaxprocs"
	if rep, err = Stat(rs, opts); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"2", "8", "none"}, rep.Tables[0].Columns); len(rep.Mixed) != 0 || diff != "" {
		t.Errorf("-col /gomaxprocs: mixed %q, columns (-want +got):\n%s", rep.Mixed, diff)
	}
}

func TestStatUnitOrder(t *testing.T) {
	var b strings.Builder
	for range 6 {
		b.WriteString("BenchmarkX/impl=reference 1 5 victims/op 10 ns/op 7 allocs/op 8 B/op 3 candidates/op\n")
	}
	rs, err := Read(strings.NewReader(b.String()), "t")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Stat(rs, DefaultStatOptions())
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, tb := range rep.Tables {
		units = append(units, tb.Unit)
	}
	if diff := cmp.Diff([]string{"sec/op", "B/op", "allocs/op", "victims/op", "candidates/op"}, units); diff != "" {
		t.Errorf("units (-want +got):\n%s", diff)
	}
}

func TestStatRejectsBadOptions(t *testing.T) {
	rs := results(t, "X ns/op 1 2 3 4 5 6")
	for _, opts := range []StatOptions{
		{Row: ".fullname", Col: "/impl", Alpha: 0, Confidence: 0.95},
		{Row: ".fullname", Col: "/impl", Alpha: 0.05, Confidence: 1},
		{Row: ".fullname", Col: "/impl(", Alpha: 0.05, Confidence: 0.95},
		{Row: ".fullname", Col: "/impl", Filter: "x:(", Alpha: 0.05, Confidence: 0.95},
	} {
		if _, err := Stat(rs, opts); err == nil {
			t.Errorf("Stat(%+v) succeeded", opts)
		}
	}
}

// The gate's false-alarm rate over many runs of unchanged code: 200 gates
// of 20 benchmarks, each timed 10 times with 20% noise. The raw U test at
// 0.05 would cry wolf in most gates; with the correction, at most about 5%
// of the gates may (the family-wise alpha). A 30% slowdown of one benchmark
// is caught in nearly every gate all the same.
func TestGateMultipleComparisons(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	sample := func(center float64) []float64 {
		out := make([]float64, 10)
		for i := range out {
			out[i] = center * (1 + 0.2*(rng.Float64()-0.5))
		}
		return out
	}
	gate := func(slowdown float64) (raw bool, g *GateResult) {
		var base, head strings.Builder
		for i := range 20 {
			b, h := sample(1e6), sample(1e6)
			if i == 0 {
				h = sample(1e6 * slowdown)
			}
			if c := Compare(b, h, 0.05); c.Significant && c.Ratio > 1.05 {
				raw = true
			}
			for k := range b {
				fmt.Fprintf(&base, "BenchmarkX/n=%d-2\t1\t%.0f ns/op\n", i, b[k])
				fmt.Fprintf(&head, "BenchmarkX/n=%d-2\t1\t%.0f ns/op\n", i, h[k])
			}
		}
		br, err := Read(strings.NewReader(base.String()), "base")
		if err != nil {
			t.Fatal(err)
		}
		hr, err := Read(strings.NewReader(head.String()), "head")
		if err != nil {
			t.Fatal(err)
		}
		return raw, Gate("base", br, "head", hr, DefaultGateOptions())
	}
	const trials = 200
	rawAlarms, alarms, caught := 0, 0, 0
	for range trials {
		raw, g := gate(1)
		if raw {
			rawAlarms++
		}
		if g.Outcome() != Pass {
			alarms++
		}
		if _, g := gate(1.3); g.Outcome() == Regressed {
			caught++
		}
	}
	t.Logf("unchanged code: raw U test alarms in %d of %d gates, corrected gate in %d; 30%% slowdown caught in %d", rawAlarms, trials, alarms, caught)
	if alarms > trials/10 {
		t.Errorf("the gate cried wolf in %d of %d runs of unchanged code", alarms, trials)
	}
	if rawAlarms < trials/4 {
		t.Errorf("the raw test alarmed in only %d of %d runs: the noise model no longer shows the problem", rawAlarms, trials)
	}
	if caught < trials*95/100 {
		t.Errorf("a 30%% slowdown was caught in only %d of %d runs", caught, trials)
	}
}

func TestGateConfigurations(t *testing.T) {
	six := func(header, name, value string) string {
		out := header
		for range 6 {
			out += name + " 10 " + value + " ns/op\n"
		}
		return out
	}
	amd := "goos: linux\ngoarch: amd64\npkg: p\n"
	arm := "goos: linux\ngoarch: arm64\npkg: p\n"
	read := func(s string) *Results {
		rs, err := Read(strings.NewReader(s), "f")
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	// The GOMAXPROCS suffix is not part of the name.
	g := Gate("base", read(six(amd, "BenchmarkX-2", "10")), "head", read(six(amd, "BenchmarkX-8", "10")), DefaultGateOptions())
	if len(g.Checks) != 1 || g.Checks[0].Benchmark != "X" || g.Outcome() != Pass {
		t.Errorf("-2 against -8: %d checks %+v, exit %d; want X compared and passing", len(g.Checks), g.Checks, g.Outcome())
	}
	// Base and head from different architectures are refused.
	g = Gate("base", read(six(amd, "BenchmarkX-2", "10")), "head", read(six(arm, "BenchmarkX-2", "30")), DefaultGateOptions())
	if g.Outcome() != Unusable || !strings.Contains(strings.Join(g.Problems, "\n"), `base has goarch "amd64", head "arm64"`) {
		t.Errorf("amd64 against arm64: exit %d, problems %q", g.Outcome(), g.Problems)
	}
	// One file mixing packages is refused.
	mixed := six(amd, "BenchmarkX-2", "10") + six("pkg: q\n", "BenchmarkX-2", "10")
	g = Gate("base", read(mixed), "head", read(six(amd, "BenchmarkX-2", "10")), DefaultGateOptions())
	if g.Outcome() != Unusable || !strings.Contains(strings.Join(g.Problems, "\n"), `base: X mixes samples of pkg "p" and "q"`) {
		t.Errorf("mixed packages: exit %d, problems %q", g.Outcome(), g.Problems)
	}
}

// A file of another machine is one problem naming the benchmarks, not one
// per benchmark; GOMAXPROCS and other keys are warnings.
func TestGateConfigurationMessages(t *testing.T) {
	six := func(header string, names ...string) *Results {
		in := header
		for _, n := range names {
			in += strings.Repeat(n+" 10 10 ns/op\n", 6)
		}
		rs, err := Read(strings.NewReader(in), "f")
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	amd := "goos: linux\ngoarch: amd64\npkg: p\n"
	g := Gate("base", six(amd, "BenchmarkA", "BenchmarkB", "BenchmarkC", "BenchmarkD"), "head", six("goos: linux\npkg: p\n", "BenchmarkA", "BenchmarkB", "BenchmarkC", "BenchmarkD"), DefaultGateOptions())
	want := []string{`A, B, C and 1 more benchmark: base has goarch "amd64", head (none): measurements of another goarch are not comparable`}
	if diff := cmp.Diff(want, g.Problems); diff != "" || g.Outcome() != Unusable {
		t.Errorf("exit %d, problems (-want +got):\n%s", g.Outcome(), diff)
	}

	// Base at GOMAXPROCS 2, head at 8 and 1: compared, with warnings.
	g = Gate("base", six(amd, "BenchmarkA-2"), "head", six(amd, "BenchmarkA-8", "BenchmarkA"), DefaultGateOptions())
	want = []string{`head: A pools samples of GOMAXPROCS 8 and 1`}
	if diff := cmp.Diff(want, g.Warnings); diff != "" || g.Outcome() != Pass || len(g.Checks) != 1 {
		t.Errorf("exit %d, %d checks, warnings (-want +got):\n%s", g.Outcome(), len(g.Checks), diff)
	}
	g = Gate("base", six(amd, "BenchmarkA-2"), "head", six(amd, "BenchmarkA-8"), DefaultGateOptions())
	want = []string{`A: base ran at GOMAXPROCS 2, head at 8: compared all the same (the -N suffix is not part of the name)`}
	if diff := cmp.Diff(want, g.Warnings); diff != "" || g.Outcome() != Pass {
		t.Errorf("exit %d, warnings (-want +got):\n%s", g.Outcome(), diff)
	}

	// Commits differ between base and head (the point of a gate); two
	// commits pooled in one file are warned of.
	g = Gate("base", six(amd+"commit: a\n", "BenchmarkA"), "head", six(amd+"commit: b\n", "BenchmarkA"), DefaultGateOptions())
	if len(g.Warnings) != 0 || len(g.Problems) != 0 {
		t.Errorf("commit a against b: warnings %q, problems %q", g.Warnings, g.Problems)
	}
	pooled := six(amd+"commit: a\n", "BenchmarkA")
	pooled.Records = append(pooled.Records, six(amd+"commit: b\n", "BenchmarkA").Records...)
	g = Gate("base", pooled, "head", six(amd, "BenchmarkA"), DefaultGateOptions())
	want = []string{`base: A pools samples of commit "a" and "b"`}
	if diff := cmp.Diff(want, g.Warnings); diff != "" || g.Outcome() != Pass {
		t.Errorf("exit %d, warnings (-want +got):\n%s", g.Outcome(), diff)
	}
}

func TestGateOptionsValidate(t *testing.T) {
	ok := DefaultGateOptions()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		change func(*GateOptions)
		want   string
	}{
		{func(o *GateOptions) { o.Alpha = 0 }, "alpha 0 is not in (0, 1)"},
		{func(o *GateOptions) { o.Alpha = 1 }, "alpha 1 is not in (0, 1)"},
		{func(o *GateOptions) { o.Alpha = math.NaN() }, "alpha NaN is not in (0, 1)"},
		{func(o *GateOptions) { o.Alpha = math.Inf(1) }, "alpha +Inf is not in (0, 1)"},
		{func(o *GateOptions) { o.MaxTime = -1 }, "max-time -1 is not a finite percentage >= 0"},
		{func(o *GateOptions) { o.MaxBytes = math.Inf(1) }, "max-bytes +Inf is not a finite percentage >= 0"},
		{func(o *GateOptions) { o.MaxAllocs = math.NaN() }, "max-allocs NaN is not a finite percentage >= 0"},
		{func(o *GateOptions) { o.MinSamples = 0 }, "min-samples 0 is not at least 1"},
	} {
		o := DefaultGateOptions()
		tc.change(&o)
		err := o.Validate()
		if err == nil || err.Error() != tc.want {
			t.Errorf("Validate = %v, want %q", err, tc.want)
		}
		g := Gate("base", results(t, "A ns/op 1 2 3 4 5 6"), "head", results(t, "A ns/op 1 2 3 4 5 6"), o)
		if g.Outcome() != Unusable || len(g.Problems) != 1 || g.Problems[0] != tc.want {
			t.Errorf("Gate: exit %d, problems %q; want 2 and %q", g.Outcome(), g.Problems, tc.want)
		}
	}
}

// Issue 21: a time of 0 or below, a count below 0 are no measurements:
// an error naming the file, the line, the benchmark and the value as
// written, from Read and from a Files scan alike; a zero among other times
// is not dropped apart into a unit of its own (benchfmt leaves "0 ns/op"
// in ns/op).
func TestImpossibleValues(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"BenchmarkX-2 1 0 ns/op\n", "f:1: BenchmarkX-2: 0 ns/op is not a possible time (a time per op is more than 0)"},
		{"BenchmarkX-2 1 100 ns/op\nBenchmarkX-2 1 -102.5 ns/op\n", "f:2: BenchmarkX-2: -102.5 ns/op is not a possible time"},
		{"BenchmarkX-2 1 -1 sec/op\n", "f:1: BenchmarkX-2: -1 sec/op is not a possible time"},
		{"BenchmarkX-2 1 5 ns/op -64 B/op\n", "f:1: BenchmarkX-2: -64 B/op is not a possible count (a count is 0 or more)"},
		{"BenchmarkX-2 1 5 ns/op -1 allocs/op\n", "f:1: BenchmarkX-2: -1 allocs/op is not a possible count"},
		{"BenchmarkX-2 1 NaN ns/op\n", "f:1: BenchmarkX-2: NaN ns/op is not a finite number"},
		{strings.Repeat("BenchmarkX-2 1 0 ns/op\n", 8), "f:1: BenchmarkX-2: 0 ns/op is not a possible time (a time per op is more than 0), and so are lines 2, 3, 4, 5, 6 and 2 more"},
		{"BenchmarkX-2 1 0 ns/op\nBenchmarkX-2 1 1 ns/op\nBenchmarkX-2 1 0 ns/op\n", "f:1: BenchmarkX-2: 0 ns/op is not a possible time (a time per op is more than 0), and so is line 3"},
		{"BenchmarkA 1 0 ns/op\nBenchmarkB 1 0 ns/op\nBenchmarkC 1 0 ns/op\nBenchmarkD 1 0 ns/op\nBenchmarkE 1 0 ns/op\nBenchmarkF 1 0 ns/op\nBenchmarkF 1 0 ns/op\nBenchmarkG 1 -1 ns/op\n", "f:5: BenchmarkE: 0 ns/op is not a possible time (a time per op is more than 0); and 2 more"},
	} {
		_, err := Read(strings.NewReader(tc.in), "f")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		fs, err := OpenFiles([]string{"f=" + path})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Stat(fs, DefaultStatOptions()); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tc.want, "f")) {
			t.Errorf("Stat(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
		g := Gate("base", fs, "head", fs, DefaultGateOptions())
		if g.Outcome() != Unusable || !strings.Contains(strings.Join(g.Problems, "\n"), strings.TrimPrefix(tc.want, "f")) {
			t.Errorf("Gate(%q): exit %d, problems %q", tc.in, g.Outcome(), g.Problems)
		}
	}
	// Zero allocations and bytes are measurements (the optimized
	// implementation's target); custom units may be anything finite.
	rs, err := Read(strings.NewReader("BenchmarkX-2 1 5 ns/op 0 B/op 0 allocs/op -3 delta/op 0 ns/x\n"), "f")
	if err != nil {
		t.Fatal(err)
	}
	var units []string
	for _, v := range rs.Records[0].Values {
		units = append(units, fmt.Sprintf("%v %s", v.Value, v.Unit))
	}
	// 0 ns/x is in sec/x, as 1 ns/x is.
	if diff := cmp.Diff([]string{"5e-09 sec/op", "0 B/op", "0 allocs/op", "-3 delta/op", "0 sec/x"}, units); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

// Issue 21: every benchmark of both files is compared in every gated unit
// either side measures, on enough samples of that unit; a gate that
// compares nothing fails.
func TestGateComparesWhatItClaims(t *testing.T) {
	six := func(line string) string { return strings.Repeat("BenchmarkA-2 10 "+line+"\n", 6) }
	read := func(s string) *Results {
		rs, err := Read(strings.NewReader(s), "f")
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	for _, tc := range []struct {
		name, base, head string
		want             string
	}{
		{"head without -benchmem", six("100 ns/op 64 B/op 1 allocs/op"), six("100 ns/op"),
			"B/op of A only in base: the head has none to compare (run base and head with the same flags, -benchmem for B/op and allocs/op)"},
		{"base without -benchmem", six("100 ns/op"), six("100 ns/op 64 B/op 1 allocs/op"), "allocs/op of A only in head: the base has none to compare"},
		{"a unit on some lines only", six("100 ns/op 64 B/op 1 allocs/op"), six("100 ns/op") + strings.Repeat("BenchmarkA-2 10 100 ns/op 64 B/op 1 allocs/op\n", 3),
			"head: A has 3 samples of B/op (of 9 results), need at least 6"},
		{"no gated unit", six("5 candidates/op"), six("6 candidates/op"), "nothing to gate: no benchmark of both files has sec/op, B/op, allocs/op or pods/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Gate("base", read(tc.base), "head", read(tc.head), DefaultGateOptions())
			if g.Outcome() != Unusable || !slices.Contains(g.Problems, tc.want) && !strings.Contains(strings.Join(g.Problems, "\n"), tc.want) {
				t.Errorf("exit %d, problems %q; want 2 and %q", g.Outcome(), g.Problems, tc.want)
			}
			var out strings.Builder
			if err := g.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "BAD INPUT: ") || strings.Contains(out.String(), "PASS") {
				t.Errorf("report:\n%s", out.String())
			}
		})
	}
}

// Issue 21: one sample a side is "~" in stat, as in benchstat, with the
// reason as a footnote; four a side of different constants are a change.
func TestStatFewSamples(t *testing.T) {
	in := "BenchmarkX/impl=reference 1 100 ns/op\nBenchmarkX/impl=upstream 1 250 ns/op\n"
	rep, err := Stat(results(t), DefaultStatOptions())
	if err != nil || len(rep.Tables) != 0 {
		t.Fatalf("empty: %v, %d tables", err, len(rep.Tables))
	}
	rs, err := Read(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	opts := DefaultStatOptions()
	opts.Baselines = []string{"reference"}
	rep, err = Stat(rs, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"~ (p=1.000 n=1) ²", "need >= 4 samples to detect a difference at alpha level 0.05"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "2.50x") {
		t.Errorf("a ratio from one sample:\n%s", out.String())
	}
}

func TestGateFormatsBytesAsStat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{gateValue(663168, "B/op"), "647.6Ki"},
		{gateValue(663168, "B/op"), FormatValue(663168, "B/op")},
		{gateValue(8927, "allocs/op"), "8927"},
		{gateValue(8927.5, "allocs/op"), "8927.5"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// WriteJSON writes row by row the bytes json.Encoder writes of the whole
// report.
func TestWriteJSONIsTheEncoders(t *testing.T) {
	in := "goos: linux\ncommit: a\n" + strings.Repeat("BenchmarkX/impl=reference 1 10 ns/op 3 B/op\nBenchmarkX/impl=upstream 1 12 ns/op 3 B/op\nBenchmarkY/impl=reference 1 1 ns/op\n", 3) +
		"commit: b\n" + strings.Repeat("BenchmarkX/impl=reference 1 10 ns/op <&> 2 x/op\n", 2) + "garbage line\nBenchmarkZ 1 x ns/op\n"
	rs, err := Read(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	pooled := DefaultStatOptions()
	pooled.Table = ""
	for _, opts := range []StatOptions{DefaultStatOptions(), pooled} {
		rep, err := Stat(rs, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*Report{rep, {}, {Tables: []*Table{{Unit: "x"}}}, {Tables: []*Table{{Unit: "x", Rows: []*Row{}}}}} {
			var want, got strings.Builder
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("WriteJSON differs from json.Encoder (-want +got):\n%s", diff)
			}
		}
	}
}

// Issue 33: a unit of one side only is bad input whichever side has it,
// gated or not (an extra ms/op or s/op in the head was dropped silently,
// while the same unit of the base only was refused).
func TestGateUnitOfOneSideIsBadInputEitherWay(t *testing.T) {
	six := func(line string) string { return strings.Repeat("BenchmarkA-2 10 "+line+"\n", 6) }
	read := func(s string) *Results {
		rs, err := Read(strings.NewReader(s), "f")
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	plain, extraMs, extraS := six("100 ns/op"), six("100 ns/op 5 ms/op"), six("100 ns/op 5 s/op")
	for _, tc := range []struct {
		name, base, head string
		want             string
	}{
		{"ms/op in head only", plain, extraMs, "ms/op of A only in head: the base has none to compare"},
		{"ms/op in base only", extraMs, plain, "ms/op of A only in base: the head has none to compare"},
		{"s/op in head only", plain, extraS, "s/op of A only in head: the base has none to compare"},
		{"s/op in base only", extraS, plain, "s/op of A only in base: the head has none to compare"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Gate("base", read(tc.base), "head", read(tc.head), DefaultGateOptions())
			if g.Outcome() != Unusable || !strings.Contains(strings.Join(g.Problems, "\n"), tc.want) {
				t.Errorf("exit %d, problems %q; want %d and %q", g.Outcome(), g.Problems, Unusable, tc.want)
			}
		})
	}
	// A unit both sides measure and the gate does not gate (a domain
	// count) is not a problem.
	g := Gate("base", read(six("100 ns/op 3 victims/op")), "head", read(six("100 ns/op 4 victims/op")), DefaultGateOptions())
	if g.Outcome() != Pass {
		t.Errorf("a domain count on both sides: exit %d, problems %q", g.Outcome(), g.Problems)
	}
}

// Issue 33: a value too large for a float64 ("1e309 ns/op") is +Inf, and
// refused as +Inf is, naming the line; it was an unparsable line's
// warning and the gate passed on the other lines.
func TestGateOverflowingValueIsBadInput(t *testing.T) {
	base := strings.Repeat("BenchmarkA-2 10 100 ns/op\n", 7)
	for _, tc := range []struct{ line, want string }{
		{"BenchmarkA-2 10 1e309 ns/op", "f:7: "},
		{"BenchmarkA-2 10 100 ns/op -1e400 B/op", "f:7: "},
	} {
		head := strings.Repeat("BenchmarkA-2 10 100 ns/op\n", 6) + tc.line + "\n"
		_, err := Read(strings.NewReader(head), "f")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "not a finite number") {
			t.Errorf("Read(%q) = %v, want an error naming %q as not a finite number", tc.line, err, tc.want)
		}
		dir := t.TempDir()
		bp, hp := filepath.Join(dir, "base"), filepath.Join(dir, "head")
		if err := os.WriteFile(bp, []byte(base), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(hp, []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := OpenFiles([]string{bp})
		if err != nil {
			t.Fatal(err)
		}
		h, err := OpenFiles([]string{hp})
		if err != nil {
			t.Fatal(err)
		}
		g := Gate("base", b, "head", h, DefaultGateOptions())
		if g.Outcome() != Unusable || !strings.Contains(strings.Join(g.Problems, "\n"), "head:7: ") {
			t.Errorf("Gate with %q: exit %d, problems %q, warnings %q", tc.line, g.Outcome(), g.Problems, h.Warnings)
		}
	}
}

// pods/s (compare e2e's throughput) is gated the other way round: a
// significant drop past the time threshold is a regression, a rise an
// improvement.
func TestGateThroughputHigherIsBetter(t *testing.T) {
	lines := func(base float64) string {
		var b strings.Builder
		for i := range 6 {
			fmt.Fprintf(&b, "BenchmarkE2E/workload=W/impl=x 1 %g pods/s\n", base+float64(i))
		}
		return b.String()
	}
	for _, tc := range []struct {
		base, head float64
		want       Verdict
	}{
		{100, 50, Regression},
		{100, 97, WithinThreshold},
		{100, 150, Improvement},
	} {
		base, err := Read(strings.NewReader(lines(tc.base)), "base")
		if err != nil {
			t.Fatal(err)
		}
		head, err := Read(strings.NewReader(lines(tc.head)), "head")
		if err != nil {
			t.Fatal(err)
		}
		g := Gate("base", base, "head", head, DefaultGateOptions())
		if len(g.Problems) > 0 || len(g.Checks) != 1 || g.Checks[0].Verdict != tc.want {
			t.Errorf("%g -> %g pods/s: problems %q, checks %+v; want %s", tc.base, tc.head, g.Problems, g.Checks, tc.want)
		}
	}
}
