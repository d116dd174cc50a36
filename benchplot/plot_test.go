package benchplot

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/preemptbench/preemptbench/benchcmp"
)

const results = `goos: linux
goarch: amd64
pkg: github.com/preemptbench/preemptbench/bench
BenchmarkDecide/shape=basic/nodes=5/impl=reference-2     100  170000 ns/op  595 allocs/op
BenchmarkDecide/shape=basic/nodes=5/impl=optimized-2     100    3300 ns/op    3 allocs/op
BenchmarkDecide/shape=basic/nodes=500/impl=reference-2   100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=500/impl=optimized-2   100   67000 ns/op    7 allocs/op
BenchmarkDecide/shape=basic/nodes=5000/impl=reference-2  100 16500000 ns/op 57580 allocs/op
BenchmarkDecide/shape=basic/nodes=5000/impl=reference-2  100 17500000 ns/op 57580 allocs/op
BenchmarkDecide/shape=basic/nodes=5000/impl=optimized-2  100  450000 ns/op    7 allocs/op
BenchmarkNewEvaluator/shape=basic/nodes=5000/impl=optimized-2  100  9000000 ns/op    7 allocs/op
BenchmarkOther-2 100 5 ns/op
`

func read(t *testing.T, s string) *benchcmp.Results {
	t.Helper()
	rs, err := benchcmp.Read(strings.NewReader(s), "results")
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestPlot(t *testing.T) {
	svg, err := Plot(read(t, results), ".name:Decide")
	if err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, an svg document.
	var doc struct {
		XMLName xml.Name
		Paths   []struct {
			D      string `xml:"d,attr"`
			Stroke string `xml:"stroke,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if doc.XMLName.Local != "svg" {
		t.Fatalf("root %q, want svg", doc.XMLName.Local)
	}
	// Two panels (sec/op, allocs/op), one line per implementation in
	// each, three points per line.
	if len(doc.Paths) != 4 {
		t.Fatalf("%d lines, want 4", len(doc.Paths))
	}
	for _, p := range doc.Paths {
		if n := strings.Count(p.D, "L") + strings.Count(p.D, "M"); n != 3 {
			t.Errorf("line %q has %d points, want 3", p.D, n)
		}
	}
	for _, want := range []string{"Decide basic — sec/op", "Decide basic — allocs/op", ">reference<", ">optimized<", "nodes=5000: 0.017 sec/op"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("no %q in the plot", want)
		}
	}
	if strings.Contains(string(svg), "NewEvaluator") {
		t.Error("the filter let NewEvaluator through")
	}
}

func TestPlotNothingToDraw(t *testing.T) {
	if _, err := Plot(read(t, "BenchmarkOther-2 100 5 ns/op\n"), ""); err == nil || !strings.Contains(err.Error(), "/nodes=N") {
		t.Errorf("error %v, want one saying results need /nodes=N", err)
	}
	if _, err := Plot(read(t, results), ".name:("); err == nil {
		t.Error("a broken filter was accepted")
	}
}
