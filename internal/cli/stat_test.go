package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/bench")

// golden runs the command line and compares its exit code, stdout and
// stderr with testdata/bench/NAME.golden (rewritten under -update).
func golden(t *testing.T, name string, args ...string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, args...)
	checkGolden(t, name, fmt.Sprintf("exit: %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout, stderr))
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "bench", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -run %s -update to write it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs from %s (-want +got):\n%s", t.Name(), path, diff)
	}
}

// The inputs, written by hand in Go benchmark format (testdata/bench):
//
//	stat.txt   reference, upstream, optimized at 500 and 5000 nodes, 6 runs
//	           each; optimized ties upstream at 500 nodes, beats both at 5000
//	base.txt   reference and upstream at 500 and 5000 nodes, upstream at 5
//	head.txt   base.txt changed: reference at 5000 nodes 30% slower (a
//	           regression), reference at 500 nodes noise, upstream at 500
//	           nodes one allocation (64 B) more on every run, upstream at
//	           5000 nodes 20% faster; 5 nodes gone, 15000 new
//	noise.txt  base.txt rerun: noise only
//	few.txt    5 runs of one benchmark
//	other.txt  a benchmark base.txt does not have
func TestStatGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"stat-text", []string{"stat", "testdata/bench/stat.txt"}},
		{"stat-markdown", []string{"stat", "-o", "markdown", "testdata/bench/stat.txt"}},
		{"stat-csv", []string{"stat", "-o", "csv", "testdata/bench/stat.txt"}},
		{"stat-json", []string{"stat", "-o", "json", "testdata/bench/stat.txt"}},
		// Infinite bounds (too few samples) are null in JSON.
		{"stat-json-few", []string{"stat", "-o", "json", "-filter", ".unit:sec/op", "testdata/bench/few.txt"}},
		// Columns by file: the first is the baseline.
		{"stat-files", []string{"stat", "-col", ".file", "-filter", ".unit:sec/op", "base=testdata/bench/base.txt", "head=testdata/bench/head.txt"}},
		{"stat-filter", []string{"stat", "-filter", "/nodes:5000 .unit:(sec/op OR allocs/op)", "testdata/bench/stat.txt"}},
		{"stat-few", []string{"stat", "-filter", ".unit:sec/op", "testdata/bench/few.txt"}},
		{"stat-no-files", []string{"stat"}},
		{"stat-missing-file", []string{"stat", "testdata/bench/missing.txt"}},
		{"stat-bad-output", []string{"stat", "-o", "yaml", "testdata/bench/stat.txt"}},
		{"stat-bad-filter", []string{"stat", "-filter", "/nodes:(", "testdata/bench/stat.txt"}},
		{"stat-nothing-matches", []string{"stat", "-filter", "/nodes:7", "testdata/bench/stat.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) { golden(t, tc.name, tc.args...) })
	}
}

// Results of two architectures: a table each and a warning on stderr
// naming the key and the values; pooled on request (-table ""), a warning
// too; split by -col, none.
func TestStatMixedConfigurations(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "mixed.txt", "goos: linux\ngoarch: amd64\npkg: a\nBenchmarkDecide/nodes=5/impl=reference-2 10 100 ns/op\ngoarch: arm64\nBenchmarkDecide/nodes=5/impl=reference-2 10 300 ns/op\n")
	stdout, stderr, code := runCLI(t, "stat", file)
	if want := `compare stat: warning: results of different goarch "amd64" and "arm64": 1 benchmark was measured in more than one of them, shown in a table per configuration, not pooled`; code != ExitOK || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	if !strings.Contains(stdout, "goarch: amd64\nsec/op") || !strings.Contains(stdout, "goarch: arm64\nsec/op") || strings.Contains(stdout, "warning") {
		t.Errorf("stdout %q; want a table per goarch and no warning", stdout)
	}
	_, stderr, code = runCLI(t, "stat", "-table", "", file)
	if want := `compare stat: warning: sec/op Decide/nodes=5 (column reference) pools samples of goarch "amd64" and "arm64": add goarch to -row, -col or -table to split them`; code != ExitOK || !strings.Contains(stderr, want) {
		t.Errorf("-table \"\": exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	_, stderr, _ = runCLI(t, "stat", "-table", "", "-col", "/impl,goarch", file)
	if stderr != "" {
		t.Errorf("split by goarch, still warned: %q", stderr)
	}
}

// Two files in one column: pooled, and said so; -col .file splits them.
func TestStatPooledFiles(t *testing.T) {
	_, stderr, code := runCLI(t, "stat", "-filter", ".unit:sec/op", "testdata/bench/base.txt", "testdata/bench/noise.txt")
	if want := `pools samples of .file "testdata/bench/base.txt" and "testdata/bench/noise.txt"`; code != ExitOK || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	_, stderr, _ = runCLI(t, "stat", "-col", ".file", "-filter", ".unit:sec/op", "testdata/bench/base.txt", "testdata/bench/noise.txt")
	if strings.Contains(stderr, "pools") {
		t.Errorf("-col .file, still warned: %q", stderr)
	}
}

// BenchmarkX-2 and BenchmarkX-8 are the row X; pooling them is said.
func TestStatGOMAXPROCSSuffix(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "procs.txt", strings.Repeat("BenchmarkX/impl=reference-2 10 100 ns/op\n", 3)+strings.Repeat("BenchmarkX/impl=reference-8 10 100 ns/op\n", 3))
	stdout, stderr, code := runCLI(t, "stat", file)
	if code != ExitOK || !strings.Contains(stdout, "\nX  ") || strings.Contains(stdout, "X-2") || strings.Contains(stdout, "X-8") {
		t.Errorf("exit %d, stdout %q; want one row X", code, stdout)
	}
	if want := `compare stat: warning: sec/op X (column reference) pools samples of /gomaxprocs "2" and "8"`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
	if _, stderr, _ = runCLI(t, "stat", "-ignore", "/gomaxprocs", file); stderr != "" {
		t.Errorf("-ignore /gomaxprocs: stderr %q", stderr)
	}
}

// Probabilities out of (0, 1), infinite and NaN among them, are refused
// naming the flag.
func TestStatBadProbabilities(t *testing.T) {
	for _, tc := range []struct{ flag, value, want string }{
		{"-alpha", "0", "compare stat: -alpha 0 is not in (0, 1)\n"},
		{"-alpha", "1", "compare stat: -alpha 1 is not in (0, 1)\n"},
		{"-alpha", "-0.5", "compare stat: -alpha -0.5 is not in (0, 1)\n"},
		{"-alpha", "Inf", "compare stat: -alpha +Inf is not in (0, 1)\n"},
		{"-alpha", "NaN", "compare stat: -alpha NaN is not in (0, 1)\n"},
		{"-confidence", "1", "compare stat: -confidence 1 is not in (0, 1)\n"},
		{"-confidence", "95", "compare stat: -confidence 95 is not in (0, 1)\n"},
		{"-confidence", "-Inf", "compare stat: -confidence -Inf is not in (0, 1)\n"},
	} {
		stdout, stderr, code := runCLI(t, "stat", tc.flag, tc.value, "testdata/bench/stat.txt")
		if code != ExitBadInput || stderr != tc.want || stdout != "" {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want 2 and %q", tc.flag, tc.value, code, stdout, stderr, tc.want)
		}
	}
}

// Unparsable lines are warnings on stderr, never in the tables.
func TestStatSyntaxWarningsOnStderr(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "bad.txt", strings.Repeat("BenchmarkX/impl=reference 10 100 ns/op\n", 6)+"BenchmarkX/impl=reference ten 100 ns/op\n")
	stdout, stderr, code := runCLI(t, "stat", file)
	if want := "compare stat: warning: " + file + ":7: parsing iteration count: invalid syntax\n"; code != ExitOK || stderr != want || strings.Contains(stdout, "warning") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, stdout, stderr, want)
	}
}

// A line longer than benchfmt reads is an error in words, not bufio's.
func TestStatLongLine(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "long.txt", "BenchmarkX 1 1 ns/op\n"+strings.Repeat("x", 70000)+"\n")
	_, stderr, code := runCLI(t, "stat", file)
	if want := file + ":2: a line is longer than 65536 bytes"; code != ExitBadInput || !strings.Contains(stderr, want) || strings.Contains(stderr, "bufio") {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}
