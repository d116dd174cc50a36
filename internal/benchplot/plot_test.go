package benchplot

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/benchcmp"
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
	svg, notes, err := Plot(read(t, results), ".name:Decide")
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
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
	if _, _, err := Plot(read(t, "BenchmarkOther-2 100 5 ns/op\n"), ""); err == nil || !strings.Contains(err.Error(), "/nodes=N") {
		t.Errorf("error %v, want one saying results need /nodes=N", err)
	}
	if _, _, err := Plot(read(t, results), ".name:("); err == nil {
		t.Error("a broken filter was accepted")
	}
}

// svgDoc is what the tests read of a plot.
type svgDoc struct {
	Width  float64 `xml:"width,attr"`
	Height float64 `xml:"height,attr"`
	Lines  []struct {
		Y1    float64 `xml:"y1,attr"`
		Y2    float64 `xml:"y2,attr"`
		Dash  string  `xml:"stroke-dasharray,attr"`
		Color string  `xml:"stroke,attr"`
	} `xml:"line"`
	Texts   []string `xml:"text"`
	Circles []struct {
		CY    float64 `xml:"cy,attr"`
		Title string  `xml:"title"`
	} `xml:"circle"`
	Legend []struct {
		Title string `xml:"title"`
		Line  struct {
			X1    float64 `xml:"x1,attr"`
			Y1    float64 `xml:"y1,attr"`
			Color string  `xml:"stroke,attr"`
			Dash  string  `xml:"stroke-dasharray,attr"`
		} `xml:"line"`
		Text struct {
			X    float64 `xml:"x,attr"`
			Text string  `xml:",chardata"`
		} `xml:"text"`
	} `xml:"g"`
}

func parse(t *testing.T, svg []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	return doc
}

// Issue 21: an implementation with no allocation, the optimized one's
// target, is drawn on the allocs/op panel's floor line, and the legend
// says what the line is.
func TestPlotZeroAllocations(t *testing.T) {
	in := `BenchmarkDecide/shape=basic/nodes=5/impl=reference-2 100 170000 ns/op 595 allocs/op
BenchmarkDecide/shape=basic/nodes=500/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=5/impl=optimized-2 100 3300 ns/op 0 allocs/op
BenchmarkDecide/shape=basic/nodes=500/impl=optimized-2 100 67000 ns/op 0 allocs/op
`
	svg, notes, err := Plot(read(t, in), "")
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	doc := parse(t, svg)
	var floors []float64
	for _, l := range doc.Lines {
		if l.Dash == "4 3" && l.Y1 == l.Y2 {
			floors = append(floors, l.Y1)
		}
	}
	// One in the legend, one in the allocs/op panel; none in sec/op.
	if len(floors) != 2 {
		t.Fatalf("%d floor lines, want the legend's and the allocs/op panel's", len(floors))
	}
	drawn := 0
	for _, c := range doc.Circles {
		if strings.HasPrefix(c.Title, "optimized nodes=") && strings.HasSuffix(c.Title, ": 0 allocs/op") {
			drawn++
			if c.CY != floors[1] {
				t.Errorf("%s drawn at y %v, the floor line is at %v", c.Title, c.CY, floors[1])
			}
		}
	}
	if drawn != 2 {
		t.Errorf("%d zero-allocation points drawn, want 2", drawn)
	}
	if !strings.Contains(string(svg), zeroNote) {
		t.Errorf("the legend does not say where 0 is")
	}
	// Without a 0, no floor line.
	svg, _, err = Plot(read(t, results), ".name:Decide")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(svg), zeroNote) || strings.Contains(string(svg), `stroke-dasharray="4 3"`) {
		t.Errorf("a floor line without a 0")
	}
}

// Issue 21: the legend ran off the canvas past six implementations. Any
// number of them fits, in as many rows as it takes, each with its own
// color and dash.
func TestPlotLegendFits(t *testing.T) {
	for _, n := range []int{1, 8, 12, 40} {
		var in strings.Builder
		for i := range n {
			name := fmt.Sprintf("implementation-%02d", i)
			if i == 3 {
				name = strings.Repeat("a-very-long-implementation-name-", 4)
			}
			fmt.Fprintf(&in, "BenchmarkDecide/shape=basic/nodes=5/impl=%s-2 1 %d ns/op %d allocs/op\n", name, 1000+i, i)
			fmt.Fprintf(&in, "BenchmarkDecide/shape=basic/nodes=50/impl=%s-2 1 %d ns/op %d allocs/op\n", name, 9000+i, i)
		}
		svg, _, err := Plot(read(t, in.String()), "")
		if err != nil {
			t.Fatal(err)
		}
		doc := parse(t, svg)
		if len(doc.Legend) != n {
			t.Fatalf("%d implementations: %d in the legend", n, len(doc.Legend))
		}
		styles := map[string]bool{}
		maxY := 0.0
		for _, it := range doc.Legend {
			right := it.Text.X + charW*float64(len([]rune(it.Text.Text)))
			if it.Line.X1 < 0 || right > doc.Width {
				t.Errorf("%d implementations: %q runs from %v to %v, off a canvas %v wide", n, it.Title, it.Line.X1, right, doc.Width)
			}
			maxY = max(maxY, it.Line.Y1)
		}
		for _, it := range doc.Legend {
			styles[it.Line.Color+" "+it.Line.Dash] = true
		}
		if maxY > doc.Height-panelH {
			t.Errorf("%d implementations: the legend reaches y %v, into the panels (height %v)", n, maxY, doc.Height)
		}
		if len(doc.Legend) > 0 && !strings.Contains(doc.Legend[min(3, n-1)].Title, "implementation") {
			t.Errorf("the long name's tooltip is %q", doc.Legend[min(3, n-1)].Title)
		}
		if len(styles) < min(n, 32) {
			t.Errorf("%d implementations in %d styles", n, len(styles))
		}
	}
}

// Issue 21: every point not drawn is named on the notes, with why.
func TestPlotNotes(t *testing.T) {
	in := `BenchmarkDecide/shape=basic/nodes=5/impl=reference-2 100 170000 ns/op 595 allocs/op
BenchmarkDecide/shape=basic/nodes=500/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=abc/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=abc/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=0/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=-5/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=1e999/impl=reference-2 100 3340000 ns/op 11550 allocs/op
BenchmarkDecide/shape=basic/nodes=50/impl=reference-2 100 7 candidates/op
BenchmarkOther-2 100 5 ns/op
`
	_, notes, err := Plot(read(t, in), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"BenchmarkDecide/shape=basic/nodes=abc/impl=reference-2: not drawn: nodes=abc is not a positive number",
		"BenchmarkDecide/shape=basic/nodes=0/impl=reference-2: not drawn: nodes=0 is not a positive number",
		"BenchmarkDecide/shape=basic/nodes=-5/impl=reference-2: not drawn: nodes=-5 is not a positive number",
		"BenchmarkDecide/shape=basic/nodes=1e999/impl=reference-2: not drawn: nodes=1e999 is not a positive number",
		"BenchmarkDecide/shape=basic/nodes=50/impl=reference-2: not drawn: no sec/op or allocs/op",
		"BenchmarkOther-2: not drawn: no /nodes=N in its name",
	}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}
