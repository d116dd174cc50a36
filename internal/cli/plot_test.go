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

// Issue 21: -o chooses SVG by its extension and refuses any other, before
// reading anything: -o x.png wrote SVG under a PNG name.
func TestPlotOutputName(t *testing.T) {
	dir := t.TempDir()
	res := writeFile(t, dir, "res.txt", "BenchmarkDecide/shape=basic/nodes=5/impl=reference-2 10 1000 ns/op 5 allocs/op\n")
	for _, name := range []string{"x.png", "x", "x.svg.pdf"} {
		out := filepath.Join(dir, name)
		stdout, stderr, code := runCLI(t, "plot", "-o", out, res)
		want := "compare plot: -o " + out + ": the plot is SVG and the name "
		if code != ExitBadInput || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "name it .svg") || stdout != "" {
			t.Errorf("-o %s: exit %d, stdout %q, stderr %q; want 2 and %q", name, code, stdout, stderr, want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("-o %s: written (%v)", name, err)
		}
	}
	out := filepath.Join(dir, "X.SVG")
	if _, stderr, code := runCLI(t, "plot", "-o", out, res); code != ExitOK || stderr != "" {
		t.Errorf("-o X.SVG: exit %d, stderr %q", code, stderr)
	}
}

// Issue 21: every point not drawn is named on stderr, with why; a zero
// allocation is drawn, not dropped; an impossible value is refused with
// its file and line.
func TestPlotNotesOnStderr(t *testing.T) {
	dir := t.TempDir()
	res := writeFile(t, dir, "res.txt", `BenchmarkDecide/shape=basic/nodes=5/impl=optimized-2 10 1000 ns/op 0 allocs/op
BenchmarkDecide/shape=basic/nodes=50/impl=optimized-2 10 9000 ns/op 0 allocs/op
BenchmarkDecide/shape=basic/nodes=five/impl=optimized-2 10 9000 ns/op 0 allocs/op
BenchmarkDecideFloor-2 10 9000 ns/op
`)
	stdout, stderr, code := runCLI(t, "plot", res)
	want := "compare plot: note: BenchmarkDecide/shape=basic/nodes=five/impl=optimized-2: not drawn: nodes=five is not a positive number\n" +
		"compare plot: note: BenchmarkDecideFloor-2: not drawn: no /nodes=N in its name\n"
	if code != ExitOK || stderr != want {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	if !strings.Contains(stdout, "optimized nodes=50: 0 allocs/op") {
		t.Errorf("the zero allocation is not drawn")
	}
	bad := writeFile(t, dir, "bad.txt", "BenchmarkDecide/shape=basic/nodes=5/impl=optimized-2 10 -1000 ns/op 0 allocs/op\n")
	stdout, stderr, code = runCLI(t, "plot", bad)
	if want := bad + ":1: BenchmarkDecide/shape=basic/nodes=5/impl=optimized-2: -1000 ns/op is not a possible time"; code != ExitBadInput || !strings.Contains(stderr, want) || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, want)
	}
}
