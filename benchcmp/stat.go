package benchcmp

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
)

// StatOptions configure Stat. Row, Col and Ignore are benchproc
// projections, Filter a benchproc filter (see
// golang.org/x/perf/benchproc/syntax).
type StatOptions struct {
	Row, Col, Ignore, Filter string
	Alpha, Confidence        float64
	// Baselines are the columns the others are compared with, in this
	// order, when present (the command passes registry.Baselines); when
	// none is present, the first column is the baseline.
	Baselines []string
}

// DefaultStatOptions: one column per implementation (/impl), one row per
// benchmark with every other name key (shape, nodes, ...), the "-N"
// GOMAXPROCS suffix ignored.
func DefaultStatOptions() StatOptions {
	return StatOptions{Row: ".fullname", Col: "/impl", Ignore: "/gomaxprocs", Filter: "*", Alpha: DefaultAlpha, Confidence: DefaultConfidence}
}

// Report is the outcome of Stat: one table per unit.
type Report struct {
	// Config holds the file configuration (goos, pkg, cpu, ...) keys that
	// have one value in every result.
	Config []ConfigValue `json:"config"`
	Tables []*Table      `json:"tables"`
	// Warnings are input lines that could not be parsed.
	Warnings []string `json:"warnings,omitempty"`
}

// ConfigValue is a file configuration line.
type ConfigValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Table holds the cells of one unit.
type Table struct {
	Unit    string   `json:"unit"`
	Columns []string `json:"columns"`
	Pairs   []Pair   `json:"pairs"`
	Rows    []*Row   `json:"rows"`
}

// Pair is a comparison column: New against Base.
type Pair struct {
	New  string `json:"new"`
	Base string `json:"base"`
}

// Row is one benchmark: its cells (by Table.Columns) and comparisons (by
// Table.Pairs); nil where a column has no result.
type Row struct {
	Name        string        `json:"name"`
	Cells       []*Summary    `json:"cells"`
	Comparisons []*Comparison `json:"comparisons"`
}

// Column is the index of the column labelled name, or -1.
func (t *Table) Column(name string) int { return slices.Index(t.Columns, name) }

// Row returns the row named name, or nil.
func (t *Table) Row(name string) *Row {
	for _, r := range t.Rows {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// Table returns the table of unit, or nil.
func (r *Report) Table(unit string) *Table {
	for _, t := range r.Tables {
		if t.Unit == unit {
			return t
		}
	}
	return nil
}

type cellKey struct{ row, col benchproc.Key }

type cellData struct {
	values  []float64
	residue map[benchproc.Key]bool
}

// Stat projects rs into tables: a table per unit, a row per Row key, a
// column per Col key, and a comparison column for every column against
// each baseline (see StatOptions.Baselines).
func Stat(rs *Results, opts StatOptions) (*Report, error) {
	if !(opts.Alpha > 0 && opts.Alpha < 1) { // NaN fails too
		return nil, fmt.Errorf("alpha %v is not in (0, 1)", opts.Alpha)
	}
	if !(opts.Confidence > 0 && opts.Confidence < 1) {
		return nil, fmt.Errorf("confidence %v is not in (0, 1)", opts.Confidence)
	}
	if opts.Filter == "" {
		opts.Filter = "*"
	}
	filter, err := benchproc.NewFilter(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	var parser benchproc.ProjectionParser
	rowBy, err := parser.Parse(opts.Row, filter)
	if err != nil {
		return nil, fmt.Errorf("row: %w", err)
	}
	colBy, err := parser.Parse(opts.Col, filter)
	if err != nil {
		return nil, fmt.Errorf("col: %w", err)
	}
	if opts.Ignore != "" {
		if _, err := parser.Parse(opts.Ignore, filter); err != nil {
			return nil, fmt.Errorf("ignore: %w", err)
		}
	}
	residue := parser.Residue()

	var units []string
	cells := map[string]map[cellKey]*cellData{}
	rowSeen, colSeen := map[benchproc.Key]bool{}, map[benchproc.Key]bool{}
	var rows, cols []benchproc.Key
	cfg := newConfigTracker()
	for _, rec := range rs.Records {
		m, err := filter.Match(rec)
		if err != nil || !m.Any() {
			continue
		}
		row, col, res := rowBy.Project(rec), colBy.Project(rec), residue.Project(rec)
		if !rowSeen[row] {
			rowSeen[row] = true
			rows = append(rows, row)
		}
		if !colSeen[col] {
			colSeen[col] = true
			cols = append(cols, col)
		}
		cfg.add(rec)
		for i, v := range rec.Values {
			if !m.Test(i) {
				continue
			}
			byCell := cells[v.Unit]
			if byCell == nil {
				byCell = map[cellKey]*cellData{}
				cells[v.Unit] = byCell
				units = append(units, v.Unit)
			}
			k := cellKey{row, col}
			c := byCell[k]
			if c == nil {
				c = &cellData{residue: map[benchproc.Key]bool{}}
				byCell[k] = c
			}
			c.values = append(c.values, v.Value)
			c.residue[res] = true
		}
	}
	benchproc.SortKeys(rows)
	benchproc.SortKeys(cols)

	rep := &Report{Config: cfg.common(), Warnings: rs.Warnings}
	for _, unit := range unitOrder(units) {
		rep.Tables = append(rep.Tables, buildTable(unit, cells[unit], rows, cols, opts))
	}
	return rep, nil
}

func buildTable(unit string, cells map[cellKey]*cellData, rows, cols []benchproc.Key, opts StatOptions) *Table {
	t := &Table{Unit: unit}
	// Only the rows and columns with a value in this unit, in global order.
	var tRows, tCols []benchproc.Key
	for _, c := range cols {
		for _, r := range rows {
			if cells[cellKey{r, c}] != nil {
				tCols = append(tCols, c)
				t.Columns = append(t.Columns, columnLabel(c))
				break
			}
		}
	}
	for _, r := range rows {
		for _, c := range tCols {
			if cells[cellKey{r, c}] != nil {
				tRows = append(tRows, r)
				break
			}
		}
	}
	t.Pairs = pairs(t.Columns, opts.Baselines)
	for _, r := range tRows {
		row := &Row{Name: r.StringValues(), Cells: make([]*Summary, len(tCols)), Comparisons: make([]*Comparison, len(t.Pairs))}
		values := make([][]float64, len(tCols))
		for i, c := range tCols {
			cd := cells[cellKey{r, c}]
			if cd == nil {
				continue
			}
			values[i] = cd.values
			s := Summarize(cd.values, opts.Confidence)
			if len(cd.residue) > 1 {
				var keys []benchproc.Key
				for k := range cd.residue {
					keys = append(keys, k)
				}
				var names []string
				for _, f := range benchproc.NonSingularFields(keys) {
					names = append(names, f.Name)
				}
				slices.Sort(names)
				s.Warnings = append(s.Warnings, "benchmarks vary in "+strings.Join(names, ", "))
			}
			row.Cells[i] = &s
		}
		for i, p := range t.Pairs {
			b, n := values[t.Column(p.Base)], values[t.Column(p.New)]
			if b == nil || n == nil {
				continue
			}
			c := Compare(b, n, opts.Alpha)
			row.Comparisons[i] = &c
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func columnLabel(k benchproc.Key) string {
	if s := k.StringValues(); s != "" {
		return s
	}
	return "none"
}

// pairs compares every column with each baseline present.
func pairs(cols, baselines []string) []Pair {
	var bases []string
	for _, b := range baselines {
		if slices.Contains(cols, b) {
			bases = append(bases, b)
		}
	}
	if len(bases) == 0 && len(cols) > 0 {
		bases = cols[:1]
	}
	out := []Pair{}
	for bi, b := range bases {
		for _, c := range cols {
			if c != b && !slices.Contains(bases[:bi], c) {
				out = append(out, Pair{New: c, Base: b})
			}
		}
	}
	return out
}

// configTracker finds the file configuration shared by every result.
type configTracker struct {
	keys   []string
	values map[string]string
	count  map[string]int
	mixed  map[string]bool
	n      int
}

func newConfigTracker() *configTracker {
	return &configTracker{values: map[string]string{}, count: map[string]int{}, mixed: map[string]bool{}}
}

func (ct *configTracker) add(rec *benchfmt.Result) {
	ct.n++
	for _, c := range rec.Config {
		if !c.File {
			continue
		}
		v, seen := ct.values[c.Key]
		switch {
		case !seen:
			ct.keys = append(ct.keys, c.Key)
			ct.values[c.Key] = string(c.Value)
		case v != string(c.Value):
			ct.mixed[c.Key] = true
		}
		ct.count[c.Key]++
	}
}

func (ct *configTracker) common() []ConfigValue {
	var out []ConfigValue
	for _, k := range ct.keys {
		if !ct.mixed[k] && ct.count[k] == ct.n {
			out = append(out, ConfigValue{Key: k, Value: ct.values[k]})
		}
	}
	return out
}

// WriteText writes the tables for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	return r.write(w, false)
}

// WriteMarkdown writes the tables as GitHub-flavoured markdown.
func (r *Report) WriteMarkdown(w io.Writer) error {
	return r.write(w, true)
}

func (r *Report) write(w io.Writer, md bool) error {
	var b strings.Builder
	if len(r.Config) > 0 {
		if md {
			var parts []string
			for _, c := range r.Config {
				parts = append(parts, fmt.Sprintf("%s: `%s`", c.Key, c.Value))
			}
			fmt.Fprintf(&b, "%s\n\n", strings.Join(parts, ", "))
		} else {
			for _, c := range r.Config {
				fmt.Fprintf(&b, "%s: %s\n", c.Key, c.Value)
			}
			b.WriteString("\n")
		}
	}
	for i, t := range r.Tables {
		if i > 0 {
			b.WriteString("\n")
		}
		grid, notes := t.grid()
		if md {
			writeMarkdownGrid(&b, grid, "lr")
			if len(notes) > 0 {
				b.WriteString("\n")
			}
			for j, n := range notes {
				fmt.Fprintf(&b, "%s %s  \n", superscript(j+1), n)
			}
		} else {
			writeTextGrid(&b, grid, "lr")
			for j, n := range notes {
				fmt.Fprintf(&b, "%s %s\n", superscript(j+1), n)
			}
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// grid lays out t as strings, header first, and returns the footnotes the
// cells refer to.
func (t *Table) grid() ([][]string, []string) {
	var notes []string
	mark := func(ws []string) string {
		var s string
		for _, w := range ws {
			i := slices.Index(notes, w)
			if i < 0 {
				notes = append(notes, w)
				i = len(notes) - 1
			}
			s += superscript(i + 1)
		}
		if s != "" {
			s = " " + s
		}
		return s
	}
	header := []string{t.Unit}
	header = append(header, t.Columns...)
	for _, p := range t.Pairs {
		header = append(header, p.New+" vs "+p.Base)
	}
	grid := [][]string{header}
	for _, r := range t.Rows {
		line := []string{r.Name}
		for _, c := range r.Cells {
			if c == nil {
				line = append(line, "-")
				continue
			}
			line = append(line, FormatSummary(*c, t.Unit)+mark(c.Warnings))
		}
		for _, c := range r.Comparisons {
			if c == nil {
				line = append(line, "-")
				continue
			}
			line = append(line, formatComparison(*c)+mark(c.Warnings))
		}
		grid = append(grid, line)
	}
	return grid, notes
}

// formatComparison is "2.12x (p=0.002 n=6)" for a significant change and
// "~ (p=0.394 n=6)" for none.
func formatComparison(c Comparison) string {
	if !c.Significant {
		return "~ (" + c.FormatP() + ")"
	}
	return FormatRatio(c.Ratio) + " (" + c.FormatP() + ")"
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, d := range strconv.Itoa(n) {
		b.WriteString(string([]rune(digits)[d-'0']))
	}
	return b.String()
}

// writeTextGrid writes columns two spaces apart; align holds 'l' or 'r'
// per column, the last one repeating.
func writeTextGrid(b *strings.Builder, grid [][]string, align string) {
	widths := make([]int, len(grid[0]))
	for _, line := range grid {
		for i, s := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(s))
		}
	}
	for _, line := range grid {
		var l strings.Builder
		for i, s := range line {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s))
			if i > 0 {
				l.WriteString("  ")
			}
			if align[min(i, len(align)-1)] == 'r' {
				l.WriteString(pad + s)
			} else {
				l.WriteString(s + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
}

// writeMarkdownGrid writes a GitHub table; align holds 'l' or 'r' per
// column, the last one repeating.
func writeMarkdownGrid(b *strings.Builder, grid [][]string, align string) {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for i, line := range grid {
		b.WriteString("|")
		for _, s := range line {
			b.WriteString(" " + esc(s) + " |")
		}
		b.WriteString("\n")
		if i == 0 {
			b.WriteString("|")
			for j := range line {
				if align[min(j, len(align)-1)] == 'r' {
					b.WriteString("---:|")
				} else {
					b.WriteString("---|")
				}
			}
			b.WriteString("\n")
		}
	}
}

// WriteCSV writes one CSV block per table, with raw values (base units):
// benchmark, then center, lo, hi and n of each column, then ratio and p of
// each comparison. Blocks are separated by an empty record.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i, t := range r.Tables {
		if i > 0 {
			cw.Write([]string{})
		}
		header := []string{t.Unit}
		for _, c := range t.Columns {
			header = append(header, c+" center", c+" lo", c+" hi", c+" n")
		}
		for _, p := range t.Pairs {
			header = append(header, p.New+" vs "+p.Base+" ratio", p.New+" vs "+p.Base+" p")
		}
		cw.Write(header)
		for _, row := range t.Rows {
			rec := []string{row.Name}
			for _, c := range row.Cells {
				if c == nil {
					rec = append(rec, "", "", "", "")
					continue
				}
				rec = append(rec, num(c.Center), num(c.Lo), num(c.Hi), strconv.Itoa(c.N))
			}
			for _, c := range row.Comparisons {
				if c == nil {
					rec = append(rec, "", "")
					continue
				}
				rec = append(rec, num(c.Ratio), num(c.P))
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Notes lists every warning of the report, for outputs without footnotes.
func (r *Report) Notes() []string {
	var out []string
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for i, c := range row.Cells {
				if c != nil {
					for _, w := range c.Warnings {
						out = append(out, fmt.Sprintf("%s %s %s: %s", t.Unit, row.Name, t.Columns[i], w))
					}
				}
			}
			for i, c := range row.Comparisons {
				if c != nil {
					for _, w := range c.Warnings {
						out = append(out, fmt.Sprintf("%s %s %s vs %s: %s", t.Unit, row.Name, t.Pairs[i].New, t.Pairs[i].Base, w))
					}
				}
			}
		}
	}
	return append(out, r.Warnings...)
}
