package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestGateGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		// A 30% slowdown and one allocation more regress; the noise and the
		// improvement do not; 5 and 15000 nodes are listed, not compared.
		{"gate-regression", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt"}, ExitRegression},
		{"gate-regression-markdown", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-o", "markdown"}, ExitRegression},
		// The allocation is within 1% and the slowdown within 50%.
		{"gate-thresholds", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-max-time", "50%", "-max-bytes", "1%", "-max-allocs", "1"}, ExitPass},
		{"gate-noise", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/noise.txt"}, ExitPass},
		{"gate-few-samples", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/few.txt"}, ExitBadInput},
		{"gate-nothing-in-common", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/other.txt"}, ExitBadInput},
		{"gate-missing-file", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/missing.txt"}, ExitBadInput},
		{"gate-no-head", []string{"gate", "-base", "testdata/bench/base.txt"}, ExitBadInput},
		{"gate-bad-threshold", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-max-time", "-5%"}, ExitBadInput},
		{"gate-bad-alpha", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-alpha", "2"}, ExitBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, stderr, code := runCLI(t, tc.args...); code != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			golden(t, tc.name, tc.args...)
		})
	}
}

// gateFiles writes base and head: six runs of each benchmark after the
// header.
func gateFiles(t *testing.T, baseHeader, baseBench, headHeader, headBench string) (base, head string) {
	t.Helper()
	dir := t.TempDir()
	six := func(header, names string) string {
		out := header
		for _, n := range strings.Fields(names) {
			out += strings.Repeat(n+" 10 100 ns/op 64 B/op 1 allocs/op\n", 6)
		}
		return out
	}
	return writeFile(t, dir, "base.txt", six(baseHeader, baseBench)), writeFile(t, dir, "head.txt", six(headHeader, headBench))
}

const amd64Header = "goos: linux\ngoarch: amd64\npkg: p\ncpu: Xeon\n"

// Base and head of different machines or packages: exit 2, the reason on
// stderr, naming the key and both values; never pooled.
func TestGateMixedConfigurations(t *testing.T) {
	for _, tc := range []struct {
		name                              string
		baseHeader, baseBench, headHeader string
		headBench                         string
		want                              string
	}{
		{"goarch", amd64Header, "BenchmarkX", strings.Replace(amd64Header, "amd64", "arm64", 1), "BenchmarkX",
			`compare gate: X: base has goarch "amd64", head "arm64": measurements of another goarch are not comparable`},
		{"cpu", amd64Header, "BenchmarkX BenchmarkY", strings.Replace(amd64Header, "Xeon", "EPYC", 1), "BenchmarkX BenchmarkY",
			`compare gate: X and Y: base has cpu "Xeon", head "EPYC"`},
		{"pkg within head", amd64Header, "BenchmarkX", amd64Header + strings.Repeat("BenchmarkX 10 100 ns/op\n", 6) + "pkg: q\n", "BenchmarkX",
			`/head.txt: X mixes samples of pkg "p" and "q": split the file, or gate each pkg on its own`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := gateFiles(t, tc.baseHeader, tc.baseBench, tc.headHeader, tc.headBench)
			stdout, stderr, code := runCLI(t, "gate", "-base", base, "-head", head)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if !strings.Contains(stdout, "\nBAD INPUT: ") {
				t.Errorf("stdout %q; want the verdict", stdout)
			}
		})
	}
}

// BenchmarkX-2, BenchmarkX-8 and BenchmarkX are X: compared, with a
// warning on stderr.
func TestGateGOMAXPROCSSuffix(t *testing.T) {
	base, head := gateFiles(t, amd64Header, "BenchmarkX/n=5-2", amd64Header, "BenchmarkX/n=5-8")
	stdout, stderr, code := runCLI(t, "gate", "-base", base, "-head", head)
	if code != ExitPass || !strings.Contains(stdout, "\nX/n=5 ") || !strings.Contains(stdout, "PASS: no regression in 3 comparisons") {
		t.Errorf("exit %d, stdout %q; want X/n=5 compared and passing", code, stdout)
	}
	if want := "compare gate: warning: X/n=5: base ran at GOMAXPROCS 2, head at 8: compared all the same (the -N suffix is not part of the name)\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	base, head = gateFiles(t, amd64Header, "BenchmarkX/n=5-2", amd64Header, "BenchmarkX/n=5-2")
	if _, stderr, code := runCLI(t, "gate", "-base", base, "-head", head); code != ExitPass || stderr != "" {
		t.Errorf("same GOMAXPROCS: exit %d, stderr %q", code, stderr)
	}
}

// Every error is on stderr; stdout holds the report and its verdict only.
func TestGateErrorsOnStderr(t *testing.T) {
	dir := t.TempDir()
	empty := writeFile(t, dir, "empty.txt", "goos: linux\n")
	garbled := writeFile(t, dir, "garbled.txt", strings.Repeat("BenchmarkDecide/shape=basic/nodes=500/impl=reference-2 300 4012000 ns/op\n", 6)+"BenchmarkDecide/shape=basic/nodes=500/impl=reference-2 x 1 ns/op\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"few samples", []string{"-base", "testdata/bench/base.txt", "-head", "testdata/bench/few.txt"}, ExitBadInput,
			[]string{"compare gate: testdata/bench/few.txt: Decide/shape=basic/nodes=500/impl=reference has 5 samples, need at least 6\n"}},
		{"nothing in common", []string{"-base", "testdata/bench/base.txt", "-head", "testdata/bench/other.txt"}, ExitBadInput,
			[]string{"compare gate: no benchmark is in both files\n"}},
		{"no results", []string{"-base", "testdata/bench/base.txt", "-head", empty}, ExitBadInput,
			[]string{"compare gate: " + empty + ": no benchmark results\n"}},
		{"missing base", []string{"-base", filepath.Join(dir, "missing.txt"), "-head", "testdata/bench/base.txt"}, ExitBadInput,
			[]string{"compare gate: -base: open " + filepath.Join(dir, "missing.txt") + ": no such file or directory\n"}},
		{"unparsable line", []string{"-base", "testdata/bench/base.txt", "-head", garbled}, ExitBadInput,
			[]string{"compare gate: warning: " + garbled + ":7: parsing iteration count: invalid syntax\n"}},
		{"stray argument", []string{"-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "extra.txt"}, ExitBadInput,
			[]string{"compare gate: unexpected argument \"extra.txt\" (the files go with -base and -head)\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"gate"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q; want %q", stderr, w)
				}
			}
			if strings.Contains(stdout, "bad input:") || strings.Contains(stdout, "warning") || strings.Contains(stdout, "compare gate:") {
				t.Errorf("stdout holds errors or warnings:\n%s", stdout)
			}
		})
	}
}

// -alpha outside (0, 1) and thresholds negative or not finite: exit 2,
// naming the flag and the value, nothing on stdout.
func TestGateBadOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-alpha", "0"}, "compare gate: -alpha 0 is not in (0, 1)\n"},
		{[]string{"-alpha", "1"}, "compare gate: -alpha 1 is not in (0, 1)\n"},
		{[]string{"-alpha", "-0.05"}, "compare gate: -alpha -0.05 is not in (0, 1)\n"},
		{[]string{"-alpha", "+Inf"}, "compare gate: -alpha +Inf is not in (0, 1)\n"},
		{[]string{"-alpha", "NaN"}, "compare gate: -alpha NaN is not in (0, 1)\n"},
		{[]string{"-max-time", "Inf"}, "compare gate: -max-time: \"Inf\" is not a non-negative percentage such as 5%\n"},
		{[]string{"-max-bytes", "NaN%"}, "compare gate: -max-bytes: \"NaN%\" is not a non-negative percentage such as 5%\n"},
		{[]string{"-max-allocs", "1e999"}, "compare gate: -max-allocs: \"1e999\" is not a non-negative percentage such as 5%\n"},
		{[]string{"-max-allocs", "-1%"}, "compare gate: -max-allocs: \"-1%\" is not a non-negative percentage such as 5%\n"},
	} {
		stdout, stderr, code := runCLI(t, append([]string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt"}, tc.args...)...)
		if code != ExitBadInput || stderr != tc.want || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// -base-impl and -head-impl gate one implementation against another, from
// one run's file: a tree three times slower than its release fails, the
// release against itself passes, and the flags go together.
func TestGateImplementations(t *testing.T) {
	var b strings.Builder
	b.WriteString(amd64Header)
	for i := range 6 {
		fmt.Fprintf(&b, "BenchmarkDecide/shape=basic/nodes=500/impl=upstream@base-tree-2 \t 100\t %d ns/op\t 10 B/op\t 1 allocs/op\n", 1000+i)
		fmt.Fprintf(&b, "BenchmarkDecide/shape=basic/nodes=500/impl=upstream@my-tree-2 \t 100\t %d ns/op\t 10 B/op\t 1 allocs/op\n", 3000+i)
	}
	file := writeFile(t, t.TempDir(), "results.txt", b.String())
	stdout, stderr, code := runCLI(t, "gate", "-base", file, "-head", file, "-base-impl", "upstream@base-tree", "-head-impl", "upstream@my-tree")
	if code != ExitRegression || !strings.Contains(stdout, "Decide/shape=basic/nodes=500/impl=*") {
		t.Errorf("the slower tree: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, _, code := runCLI(t, "gate", "-base", file, "-head", file, "-base-impl", "upstream@base-tree", "-head-impl", "upstream@base-tree"); code != ExitPass {
		t.Errorf("the release against itself: exit %d", code)
	}
	if _, stderr, code := runCLI(t, "gate", "-base", file, "-head", file, "-base-impl", "upstream@base-tree"); code != ExitBadInput || !strings.Contains(stderr, "go together") {
		t.Errorf("-base-impl alone: exit %d, %s", code, stderr)
	}
}
