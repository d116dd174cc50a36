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

	"golang.org/x/perf/benchproc"

	"github.com/preemptbench/preemptbench/benchcmp"
)

// Units are the units drawn, one panel each, in this order.
var Units = []string{"sec/op", "allocs/op"}

// series is one implementation's points in one panel row.
type series struct {
	impl   string
	points map[float64][]float64 // nodes -> samples
}

type row struct {
	title  string
	series map[string]map[string]*series // unit -> impl -> series
}

// Plot draws rs (only the results matching filter, a benchproc filter such
// as ".name:Decide"; "" for all) as an SVG document.
func Plot(rs *benchcmp.Results, filter string) ([]byte, error) {
	if filter == "" {
		filter = "*"
	}
	f, err := benchproc.NewFilter(filter)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	var parser benchproc.ProjectionParser
	rowBy, err := parser.Parse(".name,/shape", f)
	if err != nil {
		return nil, err
	}
	implBy, err := parser.Parse("/impl", f)
	if err != nil {
		return nil, err
	}
	nodesBy, err := parser.Parse("/nodes", f)
	if err != nil {
		return nil, err
	}
	rows := map[benchproc.Key]*row{}
	var order []benchproc.Key
	var implOrder []string
	for _, rec := range rs.Records {
		m, err := f.Match(rec)
		if err != nil || !m.Any() {
			continue
		}
		nk := nodesBy.Project(rec)
		nodes, err := strconv.ParseFloat(nk.StringValues(), 64)
		if err != nil || nodes <= 0 {
			continue // not a sized benchmark
		}
		rk := rowBy.Project(rec)
		r := rows[rk]
		if r == nil {
			r = &row{title: rk.StringValues(), series: map[string]map[string]*series{}}
			rows[rk] = r
			order = append(order, rk)
		}
		impl := implBy.Project(rec).StringValues()
		if !slices.Contains(implOrder, impl) {
			implOrder = append(implOrder, impl)
		}
		for i, v := range rec.Values {
			if !m.Test(i) || !slices.Contains(Units, v.Unit) || !(v.Value > 0) || math.IsInf(v.Value, 0) {
				continue
			}
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
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no results with /nodes=N and a positive %v to plot", Units)
	}
	benchproc.SortKeys(order)
	return draw(order, rows, implOrder), nil
}

const (
	panelW, panelH = 460.0, 300.0
	left, right    = 70.0, 20.0
	top, bottom    = 40.0, 45.0
	legendH        = 30.0
)

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"}

func draw(order []benchproc.Key, rows map[benchproc.Key]*row, impls []string) []byte {
	var b bytes.Buffer
	width := float64(len(Units)) * panelW
	height := legendH + float64(len(order))*panelH
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	// Legend.
	for i, impl := range impls {
		x := left + float64(i)*140
		fmt.Fprintf(&b, `<line x1="%.0f" y1="18" x2="%.0f" y2="18" stroke="%s" stroke-width="2.5"/><circle cx="%.0f" cy="18" r="3.5" fill="%s"/><text x="%.0f" y="22">%s</text>`+"\n",
			x, x+28, colors[i%len(colors)], x+14, colors[i%len(colors)], x+34, html.EscapeString(impl))
	}
	for ri, k := range order {
		r := rows[k]
		for ui, unit := range Units {
			x0, y0 := float64(ui)*panelW, legendH+float64(ri)*panelH
			panel(&b, x0, y0, r.title+" — "+unit, unit, r.series[unit], impls)
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
	for _, s := range byImpl {
		for n, vs := range s.points {
			v := median(vs)
			xmin, xmax = math.Min(xmin, n), math.Max(xmax, n)
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	xa, xz := decades(xmin, xmax)
	ya, yz := decades(ymin, ymax)
	sx := func(n float64) float64 { return px + (math.Log10(n)-xa)/(xz-xa)*pw }
	sy := func(v float64) float64 { return py + ph - (math.Log10(v)-ya)/(yz-ya)*ph }
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
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">nodes</text>`+"\n", px+pw/2, py+ph+34)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", x0+16, py+ph/2, x0+16, py+ph/2, html.EscapeString(unit))
	for i, impl := range impls {
		s := byImpl[impl]
		if s == nil {
			continue
		}
		color := colors[i%len(colors)]
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
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2.5"/>`+"\n", path.String(), color)
		for _, n := range ns {
			v := median(s.points[n])
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s nodes=%g: %g %s</title></circle>`+"\n", sx(n), sy(v), color, html.EscapeString(impl), n, v, html.EscapeString(unit))
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
