package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotCommand(t *testing.T) {
	dir := t.TempDir()
	res := writeFile(t, dir, "res.txt", "BenchmarkDecide/shape=basic/nodes=5/impl=reference-2 10 1000 ns/op 5 allocs/op\nBenchmarkDecide/shape=basic/nodes=50/impl=reference-2 10 9000 ns/op 50 allocs/op\n")
	out := filepath.Join(dir, "p.svg")
	if _, stderr, code := runCLI(t, "plot", "-o", out, res); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	svg, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(svg), "<svg") {
		t.Fatalf("plot file: %v %.40q", err, svg)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", []string{"plot"}, "no results file"},
		{"missing file", []string{"plot", filepath.Join(dir, "nope.txt")}, "nope.txt"},
		{"nothing sized", []string{"plot", writeFile(t, dir, "x.txt", "BenchmarkX-2 10 5 ns/op\n")}, "/nodes=N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}
