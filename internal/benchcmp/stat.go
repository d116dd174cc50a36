package benchcmp

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
)

// StatOptions configure Stat. Table, Row, Col and Ignore are benchproc
// projections, Filter a benchproc filter (see
// golang.org/x/perf/benchproc/syntax).
type StatOptions struct {
	Table, Row, Col, Ignore, Filter string
	Alpha, Confidence               float64
	// Baselines are the columns the others are compared with, in this
	// order, when present (the command passes registry.Baselines); when
	// none is present, the first column is the baseline.
	Baselines []string
}

// DefaultStatOptions group as benchstat does, with a column per
// implementation: a table per file configuration (.config: goos, goarch,
// pkg, cpu and any other "key: value" line) and unit, one column per
// implementation (/impl), one row per benchmark with every other name key
// (shape, nodes, ...). The "-N" GOMAXPROCS suffix is not part of a row's
// name: BenchmarkX-2, BenchmarkX-8 and BenchmarkX are the row X, the
// suffix being benchproc's /gomaxprocs key (a cell that pools samples of
// two GOMAXPROCS says so, see Report.Mixed).
func DefaultStatOptions() StatOptions {
	return StatOptions{Table: ".config", Row: ".fullname", Col: "/impl", Filter: "*", Alpha: DefaultAlpha, Confidence: DefaultConfidence}
}

// Report is the outcome of Stat: one table per configuration and unit.
type Report struct {
	// Config holds the file configuration (goos, pkg, cpu, ...) keys that
	// have one value in every result.
	Config []ConfigValue `json:"config"`
	Tables []*Table      `json:"tables"`
	// Warnings are input lines that could not be parsed.
	Warnings []string `json:"warnings,omitempty"`
	// Mixed are the warnings about results of different configurations:
	// the same benchmarks measured in several configurations (shown in
	// separate tables), or cells that pool samples of different
	// configurations (a key neither projected nor ignored that varies).
	Mixed []string `json:"mixed,omitempty"`
}

// ConfigValue is a file configuration line.
type ConfigValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Table holds the cells of one unit in one configuration.
type Table struct {
	// Config is what sets this table's configuration apart from the
	// other tables' (the Table projection's keys that vary); empty when
	// every result is in one configuration.
	Config  []ConfigValue `json:"config,omitempty"`
	Unit    string        `json:"unit"`
	Columns []string      `json:"columns"`
	Pairs   []Pair        `json:"pairs"`
	Rows    []*Row        `json:"rows"`
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

// Table returns the (first) table of unit, or nil.
func (r *Report) Table(unit string) *Table {
	for _, t := range r.Tables {
		if t.Unit == unit {
			return t
		}
	}
	return nil
}

type cellKey struct{ table, row, col benchproc.Key }

// ReadError is an error reading the results Stat or a plot reads: a file
// or line that cannot be read, an invalid value.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

type cellData struct {
	values  []float64
	residue map[benchproc.Key]bool
	// gomaxprocs and files are the GOMAXPROCS and the files of the
	// samples, when neither is projected nor ignored.
	gomaxprocs, files []string
}

// checkUnitInterval refuses a probability outside (0, 1), NaN among them.
func checkUnitInterval(name string, v float64) error {
	if !(v > 0 && v < 1) {
		return fmt.Errorf("%s %v is not in (0, 1)", name, v)
	}
	return nil
}

// Stat projects rs into tables: a table per Table key and unit, a row per
// Row key, a column per Col key, and a comparison column for every column
// against each baseline (see StatOptions.Baselines).
//
// Samples of different configurations are never pooled without a word:
// benchmarks measured in several configurations (Table keys) are in
// several tables, and a cell whose samples differ in a key that no
// projection names (benchproc's residue), in GOMAXPROCS or in the file
// they come from, unless that key is ignored, gets a footnote ("benchmarks
// vary in goarch"), and Report.Mixed names the key and its values.
//
// Stat reads src once, keeping per cell only its values and what it
// needs to warn of pooling; an error reading it is a *ReadError.
func Stat(src Source, opts StatOptions) (*Report, error) {
	if err := checkUnitInterval("alpha", opts.Alpha); err != nil {
		return nil, err
	}
	if err := checkUnitInterval("confidence", opts.Confidence); err != nil {
		return nil, err
	}
	if opts.Filter == "" {
		opts.Filter = "*"
	}
	filter, err := benchproc.NewFilter(opts.Filter)
	if err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	var parser benchproc.ProjectionParser
	tableBy, err := parser.Parse(opts.Table, filter)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	rowBy, err := parser.Parse(opts.Row, filter)
	if err != nil {
		return nil, fmt.Errorf("row: %w", err)
	}
	colBy, err := parser.Parse(opts.Col, filter)
	if err != nil {
		return nil, fmt.Errorf("col: %w", err)
	}
	ignoreBy, err := parser.Parse(opts.Ignore, filter)
	if err != nil {
		return nil, fmt.Errorf("ignore: %w", err)
	}
	named := map[string]bool{}
	for _, p := range []*benchproc.Projection{tableBy, rowBy, colBy, ignoreBy} {
		for _, f := range p.Fields() {
			named[f.Name] = true
		}
	}
	// The GOMAXPROCS suffix is a key of its own, /gomaxprocs, never part
	// of .fullname: parsing it takes it out of .fullname (and of the
	// residue), and it is tracked below unless a projection names it.
	gmpBy, err := parser.Parse("/gomaxprocs", filter)
	if err != nil {
		return nil, fmt.Errorf("gomaxprocs: %w", err)
	}
	gmpField := gmpBy.Fields()[0]
	trackGMP, trackFile := !named["/gomaxprocs"], !named[".file"]
	residue := parser.Residue()

	var units []string
	cells := map[string]map[cellKey]*cellData{}
	seen := map[benchproc.Key]bool{}
	var tables, rows, cols []benchproc.Key
	add := func(keys *[]benchproc.Key, k benchproc.Key) {
		if !seen[k] {
			seen[k] = true
			*keys = append(*keys, k)
		}
	}
	cfg := newConfigTracker()
	scanErr := src.Scan(func(rec *benchfmt.Result) {
		m, err := filter.Match(rec)
		if err != nil || !m.Any() {
			return
		}
		k := cellKey{tableBy.Project(rec), rowBy.Project(rec), colBy.Project(rec)}
		res := residue.Project(rec)
		add(&tables, k.table)
		add(&rows, k.row)
		add(&cols, k.col)
		cfg.add(rec)
		gmp := ""
		if trackGMP {
			if gmp = gmpBy.Project(rec).Get(gmpField); gmp == "" {
				gmp = "1" // go test omits the suffix when GOMAXPROCS is 1
			}
		}
		file := ""
		if trackFile {
			file = rec.GetConfig(".file")
		}
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
			c := byCell[k]
			if c == nil {
				c = &cellData{residue: map[benchproc.Key]bool{}}
				byCell[k] = c
			}
			c.values = append(c.values, v.Value)
			c.residue[res] = true
			if trackGMP && !slices.Contains(c.gomaxprocs, gmp) {
				c.gomaxprocs = append(c.gomaxprocs, gmp)
			}
			if trackFile && !slices.Contains(c.files, file) {
				c.files = append(c.files, file)
			}
		}
	})
	if scanErr != nil {
		return nil, &ReadError{scanErr}
	}
	// Keys are sorted (and printed) only now: a projection's fields are
	// final once every result is projected.
	benchproc.SortKeys(tables)
	benchproc.SortKeys(rows)
	benchproc.SortKeys(cols)

	rep := &Report{Config: cfg.common()}
	if w, ok := src.(warner); ok {
		rep.Warnings = w.warningList()
	}
	tableConfig, split := splitTables(tables)
	pooled := newPoolTracker()
	for _, tk := range tables {
		for _, unit := range unitOrder(units) {
			t := buildTable(unit, tk, cells[unit], rows, cols, opts, pooled)
			if t == nil {
				continue
			}
			t.Config = tableConfig[tk]
			rep.Tables = append(rep.Tables, t)
		}
	}
	if split != "" {
		if n := measuredInSeveral(cells, tables); n > 0 {
			rep.Mixed = append(rep.Mixed, fmt.Sprintf("results of different %s: %s measured in more than one of them, shown in a table per configuration, not pooled (-filter keeps one, e.g. -filter %s)",
				split, plural(n, "benchmark was", "benchmarks were"), filterExample(tables, tableConfig)))
		}
	}
	rep.Mixed = append(rep.Mixed, pooled.messages()...)
	return rep, nil
}

// splitTables returns, per table key, the keys that set it apart from the
// others, and the description of what varies ("goarch "amd64" and
// "arm64""), empty when there is one table.
func splitTables(tables []benchproc.Key) (map[benchproc.Key][]ConfigValue, string) {
	fields := benchproc.NonSingularFields(tables)
	if len(fields) == 0 {
		return nil, ""
	}
	out := map[benchproc.Key][]ConfigValue{}
	var desc []string
	for _, f := range fields {
		var values []string
		for _, tk := range tables {
			v := tk.Get(f)
			out[tk] = append(out[tk], ConfigValue{Key: f.Name, Value: v})
			if !slices.Contains(values, v) {
				values = append(values, v)
			}
		}
		desc = append(desc, f.Name+" "+quoteValues(values))
	}
	return out, strings.Join(desc, ", ")
}

// measuredInSeveral counts the (row, column) cells present in more than
// one table: the benchmarks a table per configuration keeps apart.
func measuredInSeveral(cells map[string]map[cellKey]*cellData, tables []benchproc.Key) int {
	in := map[[2]benchproc.Key]map[benchproc.Key]bool{}
	for _, byCell := range cells {
		for k := range byCell {
			rc := [2]benchproc.Key{k.row, k.col}
			if in[rc] == nil {
				in[rc] = map[benchproc.Key]bool{}
			}
			in[rc][k.table] = true
		}
	}
	rowsIn := map[benchproc.Key]bool{}
	for rc, ts := range in {
		if len(ts) > 1 {
			rowsIn[rc[0]] = true
		}
	}
	return len(rowsIn)
}

// filterExample is a -filter keeping the first table's configuration.
func filterExample(tables []benchproc.Key, config map[benchproc.Key][]ConfigValue) string {
	var parts []string
	for _, c := range config[tables[0]] {
		if c.Value == "" {
			continue
		}
		v := c.Value
		if strings.ContainsAny(v, " \t()\"*") {
			v = strconv.Quote(v)
		}
		parts = append(parts, c.Key+":"+v)
	}
	if len(parts) == 0 {
		return "'...'"
	}
	return "'" + strings.Join(parts, " ") + "'"
}

// quoteValues is `"a" and "b"`, `"a", "b" and "c"`; an empty value is
// (none), the key being absent.
func quoteValues(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		if v == "" {
			q[i] = "(none)"
		} else {
			q[i] = strconv.Quote(v)
		}
	}
	return joinAnd(q)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// poolTracker gathers, per key, the cells that pool samples of different
// values of it, for one warning per key.
type poolTracker struct {
	keys  []string
	pools map[string]*pool
}

type pool struct {
	values []string
	cells  int
	first  string
}

func newPoolTracker() *poolTracker { return &poolTracker{pools: map[string]*pool{}} }

func (pt *poolTracker) add(key, cell string, values []string) {
	p := pt.pools[key]
	if p == nil {
		p = &pool{first: cell}
		pt.pools[key] = p
		pt.keys = append(pt.keys, key)
	}
	p.cells++
	for _, v := range values {
		if !slices.Contains(p.values, v) {
			p.values = append(p.values, v)
		}
	}
}

func (pt *poolTracker) messages() []string {
	var out []string
	for _, k := range pt.keys {
		p := pt.pools[k]
		where := p.first
		if p.cells > 1 {
			where += fmt.Sprintf(" (and %s)", plural(p.cells-1, "other cell", "other cells"))
		}
		hint := "add " + k + " to -row, -col or -table to split them, or -ignore " + k + " to pool them on purpose"
		out = append(out, fmt.Sprintf("%s pools samples of %s %s: %s", where, k, quoteValues(p.values), hint))
	}
	return out
}

func buildTable(unit string, tk benchproc.Key, cells map[cellKey]*cellData, rows, cols []benchproc.Key, opts StatOptions, pooled *poolTracker) *Table {
	t := &Table{Unit: unit}
	// Only the rows and columns with a value in this table, in global
	// order.
	var tRows, tCols []benchproc.Key
	for _, c := range cols {
		for _, r := range rows {
			if cells[cellKey{tk, r, c}] != nil {
				tCols = append(tCols, c)
				t.Columns = append(t.Columns, columnLabel(c))
				break
			}
		}
	}
	if len(tCols) == 0 {
		return nil
	}
	for _, r := range rows {
		for _, c := range tCols {
			if cells[cellKey{tk, r, c}] != nil {
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
			cd := cells[cellKey{tk, r, c}]
			if cd == nil {
				continue
			}
			values[i] = cd.values
			s := Summarize(cd.values, opts.Confidence)
			if vary := cd.vary(); len(vary) > 0 {
				var names []string
				for _, v := range vary {
					names = append(names, v.key)
					pooled.add(v.key, fmt.Sprintf("%s %s (column %s)", unit, row.Name, t.Columns[i]), v.values)
				}
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

type variation struct {
	key    string
	values []string
}

// vary lists the keys whose values differ among the cell's samples,
// sorted by key.
func (cd *cellData) vary() []variation {
	var out []variation
	if len(cd.residue) > 1 {
		keys := make([]benchproc.Key, 0, len(cd.residue))
		for k := range cd.residue {
			keys = append(keys, k)
		}
		benchproc.SortKeys(keys)
		for _, f := range benchproc.NonSingularFields(keys) {
			var values []string
			for _, k := range keys {
				if v := k.Get(f); !slices.Contains(values, v) {
					values = append(values, v)
				}
			}
			out = append(out, variation{f.Name, values})
		}
	}
	if len(cd.gomaxprocs) > 1 {
		out = append(out, variation{"/gomaxprocs", cd.gomaxprocs})
	}
	if len(cd.files) > 1 {
		out = append(out, variation{".file", cd.files})
	}
	slices.SortFunc(out, func(a, b variation) int { return strings.Compare(a.key, b.key) })
	return out
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

// Notes lists the footnotes of the cells and comparisons, for outputs
// without footnotes (CSV); Warnings and Mixed are apart.
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
	return out
}
