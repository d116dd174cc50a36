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

func TestStatWarnsOnPooledConfigurations(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "mixed.txt", "goos: linux\ngoarch: amd64\npkg: a\nBenchmarkDecide/nodes=5/impl=reference-2 10 100 ns/op\ngoarch: arm64\nBenchmarkDecide/nodes=5/impl=reference-8 10 300 ns/op\n")
	_, stderr, code := runCLI(t, "stat", file)
	if code != ExitOK || !strings.Contains(stderr, "benchmarks vary in goarch: samples of different configurations pooled") {
		t.Errorf("exit %d, stderr %q; want a warning naming goarch", code, stderr)
	}
	_, stderr, _ = runCLI(t, "stat", "-col", "/impl,goarch", file)
	if strings.Contains(stderr, "pooled") {
		t.Errorf("split by goarch, still warned: %q", stderr)
	}
}
