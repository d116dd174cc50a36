// Package benchplot draws how benchmarks scale: time/op and allocs/op
// against node count, log-log, one line per implementation, one row of
// panels per benchmark and shape, from any Go benchmark results whose names
// carry /nodes=N and /impl=I keys (the bench suite's names). It writes
// plain SVG.
package benchplot

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/preemptbench/preemptbench/internal/benchcmp"
)

// units are the units drawn, one panel each, in this order.
var units = []string{"sec/op", "allocs/op"}

// series is one implementation's points in one panel row.
type series struct {
	impl   string
	points map[float64][]float64 // nodes -> samples
}

type row struct {
	key    benchproc.Key
	series map[string]map[string]*series // unit -> impl -> series
}

// notes gathers the messages about what is not drawn, each once.
type notes struct {
	seen map[string]bool
	list []string
}

func (n *notes) add(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	if !n.seen[msg] {
		n.seen[msg] = true
		n.list = append(n.list, msg)
	}
}

// Plot draws src (only the results matching filter, a benchproc filter
// such as ".name:Decide"; "" for all) as an SVG document. It reads src
// once, keeping only the values of each point. Notes say, once per
// benchmark and reason, what it could not draw: a result without a usable
// /nodes=N, a value that a log scale cannot place. An error reading src
// is a *benchcmp.ReadError.
func Plot(src benchcmp.Source, filter string) (svg []byte, notesList []string, err error) {
	if filter == "" {
		filter = "*"
	}
	f, err := benchproc.NewFilter(filter)
	if err != nil {
		return nil, nil, fmt.Errorf("filter: %w", err)
	}
	var parser benchproc.ProjectionParser
	rowBy, err := parser.Parse(".name,/shape", f)
	if err != nil {
		return nil, nil, err
	}
	implBy, err := parser.Parse("/impl", f)
	if err != nil {
		return nil, nil, err
	}
	nodesBy, err := parser.Parse("/nodes", f)
	if err != nil {
		return nil, nil, err
	}
	rows := map[benchproc.Key]*row{}
	var order []benchproc.Key
	var implOrder []string
	var ns notes
	scanErr := src.Scan(func(rec *benchfmt.Result) {
		m, err := f.Match(rec)
		if err != nil || !m.Any() {
			return
		}
		name := "Benchmark" + string(rec.Name)
		nv := nodesBy.Project(rec).StringValues()
		nodes, err := strconv.ParseFloat(nv, 64)
		switch {
		case nv == "":
			ns.add("%s: not drawn: no /nodes=N in its name", name)
			return
		case err != nil || !(nodes > 0) || math.IsInf(nodes, 0):
			ns.add("%s: not drawn: nodes=%s is not a positive number", name, nv)
			return
		}
		rk := rowBy.Project(rec)
		r := rows[rk]
		if r == nil {
			r = &row{key: rk, series: map[string]map[string]*series{}}
			rows[rk] = r
			order = append(order, rk)
		}
		impl := implBy.Project(rec).StringValues()
		if !slices.Contains(implOrder, impl) {
			implOrder = append(implOrder, impl)
		}
		drawn := false
		for i, v := range rec.Values {
			if !m.Test(i) || !slices.Contains(units, v.Unit) {
				continue
			}
			// 0 is drawn on the panel's floor line (allocs/op: the
			// optimized implementation's target); below 0 nothing is.
			// (Read refuses both for times and negative counts.)
			if !(v.Value >= 0) || math.IsInf(v.Value, 0) {
				ns.add("%s: %s not drawn: %v is not a value a log scale can place", name, v.Unit, v.Value)
				continue
			}
			drawn = true
			byImpl := r.series[v.Unit]
			if byImpl == nil {
				byImpl = map[string]*series{}
				r.series[v.Unit] = byImpl
			}
			s := byImpl[impl]
			if s == nil {
				s = &series{impl: impl, points: map[float64][]float64{}}
				byImpl[impl] = s
			}
			s.points[nodes] = append(s.points[nodes], v.Value)
		}
		if !drawn {
			ns.add("%s: not drawn: no %s", name, strings.Join(units, " or "))
		}
	})
	if scanErr != nil {
		return nil, nil, &benchcmp.ReadError{Err: scanErr}
	}
	if len(order) == 0 {
		return nil, ns.list, fmt.Errorf("no results with /nodes=N and a positive %v to plot", units)
	}
	benchproc.SortKeys(order)
	return draw(order, rows, implOrder), ns.list, nil
}

const (
	panelW, panelH = 460.0, 300.0
	left, right    = 70.0, 20.0
	top, bottom    = 40.0, 45.0
	// zeroBand is the height below a panel's positive values that holds
	// its floor line, where 0 is drawn.
	zeroBand = 36.0
	// legendRowH is the height of a row of the legend.
	legendRowH = 20.0
	// charW is about the width of a character of the 12px sans-serif
	// font, to lay out the legend.
	charW = 7.0
	// maxLabel is the most characters of a legend label; a longer one is
	// cut, its whole name in its tooltip.
	maxLabel = 40
)

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"}

// dashes and markers set apart the implementations past the colors: the
// ninth is the first's color, dashed, with squares.
var dashes = []string{"", "8 4", "2 3", "10 3 2 3"}

var markers = []string{"circle", "square", "diamond", "triangle"}

type style struct{ color, dash, marker string }

func styleOf(i int) style {
	c := len(colors)
	return style{colors[i%c], dashes[(i/c)%len(dashes)], markers[(i/c)%len(markers)]}
}

// marker draws a point's marker, with a tooltip.
func (st style) markerSVG(b *bytes.Buffer, x, y float64, title string) {
	const r = 3.5
	switch st.marker {
	case "square":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">`, x-r, y-r, 2*r, 2*r, st.color)
		fmt.Fprintf(b, "<title>%s</title></rect>\n", title)
	case "diamond":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="%s">`, x, y-r-1, x+r+1, y, x, y+r+1, x-r-1, y, st.color)
		fmt.Fprintf(b, "<title>%s</title></path>\n", title)
	case "triangle":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="%s">`, x, y-r-1, x+r+1, y+r, x-r-1, y+r, st.color)
		fmt.Fprintf(b, "<title>%s</title></path>\n", title)
	default:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s">`, x, y, r, st.color)
		fmt.Fprintf(b, "<title>%s</title></circle>\n", title)
	}
}

func (st style) dashAttr() string {
	if st.dash == "" {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%s"`, st.dash)
}

// legendItem is one implementation's place in the legend.
type legendItem struct {
	x, y  float64
	label string
}

// layoutLegend places the implementations in rows as wide as the canvas,
// as many rows as they take.
func layoutLegend(impls []string, width float64) ([]legendItem, float64) {
	const x0, y0 = 14.0, 18.0
	x, y := x0, y0
	var out []legendItem
	for _, impl := range impls {
		label := impl
		if r := []rune(label); len(r) > maxLabel {
			label = string(r[:maxLabel-1]) + "…"
		}
		w := 34 + charW*float64(len([]rune(label))) + 24
		if x > x0 && x+w > width-right {
			x, y = x0, y+legendRowH
		}
		out = append(out, legendItem{x, y, label})
		x += w
	}
	return out, y + legendRowH - y0 + 12
}

// zeroNote is the legend's line about 0 on a log scale.
const zeroNote = "0 (no allocation, say) is drawn on the dashed floor line at the bottom of its panel: a log scale has no 0"

func draw(order []benchproc.Key, rows map[benchproc.Key]*row, impls []string) []byte {
	var b bytes.Buffer
	width := float64(len(units)) * panelW
	items, legendH := layoutLegend(impls, width)
	hasZero := false
	for _, r := range rows {
		for _, byImpl := range r.series {
			for _, s := range byImpl {
				for _, vs := range s.points {
					hasZero = hasZero || median(vs) == 0
				}
			}
		}
	}
	if hasZero {
		legendH += legendRowH
	}
	height := legendH + float64(len(order))*panelH
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	// Legend.
	for i, it := range items {
		st := styleOf(i)
		fmt.Fprintf(&b, `<g><title>%s</title><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2.5"%s/>`, html.EscapeString(impls[i]), it.x, it.y, it.x+28, it.y, st.color, st.dashAttr())
		st.markerSVG(&b, it.x+14, it.y, html.EscapeString(impls[i]))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text></g>`+"\n", it.x+34, it.y+4, html.EscapeString(it.label))
	}
	if hasZero {
		y := legendH - legendRowH + 2
		fmt.Fprintf(&b, `<line x1="14" y1="%.0f" x2="42" y2="%.0f" stroke="#999" stroke-dasharray="4 3"/><text x="48" y="%.0f" fill="#555">%s</text>`+"\n", y, y, y+4, html.EscapeString(zeroNote))
	}
	for ri, k := range order {
		r := rows[k]
		for ui, unit := range units {
			x0, y0 := float64(ui)*panelW, legendH+float64(ri)*panelH
			panel(&b, x0, y0, k.StringValues()+" — "+unit, unit, r.series[unit], impls)
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// decades returns the powers of ten bounding [lo, hi].
func decades(lo, hi float64) (float64, float64) {
	a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if a == z {
		z++
	}
	return a, z
}

func panel(b *bytes.Buffer, x0, y0 float64, title, unit string, byImpl map[string]*series, impls []string) {
	pw, ph := panelW-left-right, panelH-top-bottom
	px, py := x0+left, y0+top
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-weight="bold">%s</text>`+"\n", px, y0+22, html.EscapeString(title))
	if len(byImpl) == 0 {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#777">no %s in the results</text>`+"\n", px+10, py+ph/2, html.EscapeString(unit))
		return
	}
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	zero := false
	for _, s := range byImpl {
		for n, vs := range s.points {
			v := median(vs)
			xmin, xmax = math.Min(xmin, n), math.Max(xmax, n)
			if v == 0 {
				zero = true
				continue
			}
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	xa, xz := decades(xmin, xmax)
	ya, yz := 0.0, 1.0 // every value 0: an empty decade above the floor
	if ymin <= ymax {
		ya, yz = decades(ymin, ymax)
	}
	// The positive values take the panel but for the floor band, when a
	// value is 0: a log scale has no 0, so 0 is drawn on a floor line
	// below the lowest decade.
	vh := ph
	if zero {
		vh = ph - zeroBand
	}
	floor := py + ph - zeroBand/3
	sx := func(n float64) float64 { return px + (math.Log10(n)-xa)/(xz-xa)*pw }
	sy := func(v float64) float64 {
		if v == 0 {
			return floor
		}
		return py + vh - (math.Log10(v)-ya)/(yz-ya)*vh
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#333"/>`+"\n", px, py, pw, ph)
	for d := xa; d <= xz; d++ {
		x := sx(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n",
			x, py, x, py+ph, x, py+ph+16, tick(d))
	}
	for d := ya; d <= yz; d++ {
		y := sy(math.Pow(10, d))
		label := tick(d)
		if unit == "sec/op" {
			label = seconds(math.Pow(10, d))
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n",
			px, y, px+pw, y, px-6, y+4, label)
	}
	if zero {
		// Series at 0 lie on one another: the line names them.
		var at0 []string
		for _, impl := range impls {
			if s := byImpl[impl]; s != nil {
				for _, vs := range s.points {
					if median(vs) == 0 {
						at0 = append(at0, impl)
						break
					}
				}
			}
		}
		label := "0 " + unit + ": " + strings.Join(at0, ", ")
		if len([]rune(label)) > int(pw/6) {
			label = fmt.Sprintf("0 %s: %d implementations (see the points' tooltips)", unit, len(at0))
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/><text x="%.1f" y="%.1f" text-anchor="end">0</text>`+"\n",
			px, floor, px+pw, floor, px-6, floor+4)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" font-size="10" fill="#555">%s</text>`+"\n", px+pw-4, floor-7, html.EscapeString(label))
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">nodes</text>`+"\n", px+pw/2, py+ph+34)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x0+16, py+ph/2, x0+16, py+ph/2, html.EscapeString(unit))
	for i, impl := range impls {
		s := byImpl[impl]
		if s == nil {
			continue
		}
		st := styleOf(i)
		var ns []float64
		for n := range s.points {
			ns = append(ns, n)
		}
		sort.Float64s(ns)
		var path bytes.Buffer
		for j, n := range ns {
			cmd := "L"
			if j == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, sx(n), sy(median(s.points[n])))
		}
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2.5"%s/>`+"\n", path.String(), st.color, st.dashAttr())
		for _, n := range ns {
			v := median(s.points[n])
			st.markerSVG(b, sx(n), sy(v), html.EscapeString(fmt.Sprintf("%s nodes=%g: %g %s", impl, n, v, unit)))
		}
	}
}

func tick(d float64) string {
	v := math.Pow(10, d)
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func seconds(v float64) string {
	switch {
	case v >= 1:
		return fmt.Sprintf("%gs", v)
	case v >= 1e-3:
		return fmt.Sprintf("%gms", v*1e3)
	case v >= 1e-6:
		return fmt.Sprintf("%gµs", v*1e6)
	}
	return fmt.Sprintf("%gns", v*1e9)
}
