// Package benchcmp turns Go benchmark results into what `compare stat`,
// `compare gate` and the default `compare` job print: benchstat-style
// tables (benchfmt to read, benchproc to project, benchmath to summarise and
// compare) and a regression gate.
//
// Statistics are benchstat's: the center of a cell is the median, its range
// the 95% confidence interval of the median, and two cells are compared
// with the Mann-Whitney U test (benchmath.AssumeNothing). One rule is added
// for samples without variance (allocs/op nearly always): see Compare.
//
// Building is kept apart from rendering, as x/perf's benchstat keeps
// benchproc and benchmath apart from its table writers: read.go reads
// results as a stream, stat.go builds a Report of tables (Stat),
// gate.go builds a GateResult of checks (Gate), compare.go holds the
// statistics; stat_render.go and gate_render.go only print what was built
// (text, Markdown, CSV, JSON).
package benchcmp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

// A Source yields benchmark results one at a time: Stat, Gate and plots
// read through one, keeping only what a cell needs (its values), never the
// results themselves. Results holds results in memory; Files reads files
// as it goes, so that a million result lines take the memory of their
// values, not of their lines.
type Source interface {
	// Scan calls fn with each valid result in order, then returns the
	// error that ended the reading or the invalid values it met (see
	// Results), each with its file, line and benchmark. fn must not keep
	// rec: a reader reuses it.
	Scan(fn func(rec *benchfmt.Result)) error
}

// warner is a Source that knows its unparsable lines once scanned.
type warner interface{ warningList() []string }

// Results are benchmark results read from one or more inputs.
type Results struct {
	Records []*benchfmt.Result
	Units   benchfmt.UnitMetadataMap
	// Warnings are the lines the reader could not parse.
	Warnings []string
}

// Scan calls fn with each record.
func (rs *Results) Scan(fn func(rec *benchfmt.Result)) error {
	for _, rec := range rs.Records {
		fn(rec)
	}
	return nil
}

func (rs *Results) warningList() []string { return rs.Warnings }

// checker checks the results as they are read. A value that no
// measurement can have is an error, not a value to compare: NaN and
// infinities (benchstat's statistics are undefined on them, go-moremath's
// U test does not even terminate on NaN, and dropping them would let an
// infinitely slow head pass the gate), a time that is zero or negative
// (a "-200%" improvement, or a 0 ns/op base that nothing can regress
// from), a negative byte or allocation count.
type checker struct {
	warnings []string
	// moreWarnings counts the unparsable lines past maxKept.
	moreWarnings int
	// invalid are the invalid values, the same value of the same
	// benchmark in the same file once, with the lines it is on.
	invalid     []*invalidValues
	invalidBy   map[string]*invalidValues
	moreInvalid int
}

type invalidValues struct {
	file, what string
	lines      []int
	moreLines  int
}

// String is "f:3: BenchmarkX: 0 ns/op is not a possible time (...)",
// then ", and so are lines 4, 5 and 6" when the value is on more lines.
func (iv *invalidValues) String() string {
	s := fmt.Sprintf("%s:%d: %s", iv.file, iv.lines[0], iv.what)
	if len(iv.lines) == 1 {
		return s
	}
	var more []string
	for _, l := range iv.lines[1:] {
		more = append(more, strconv.Itoa(l))
	}
	if iv.moreLines > 0 {
		more = append(more, plural(iv.moreLines, "more", "more"))
	}
	if len(more) == 1 {
		return s + ", and so is line " + more[0]
	}
	return s + ", and so are lines " + joinAnd(more)
}

func (c *checker) addInvalid(file string, line int, what string) {
	key := file + "\x00" + what
	if iv := c.invalidBy[key]; iv != nil {
		if len(iv.lines) < 6 {
			iv.lines = append(iv.lines, line)
		} else {
			iv.moreLines++
		}
		return
	}
	if len(c.invalid) >= maxKept {
		c.moreInvalid++
		return
	}
	if c.invalidBy == nil {
		c.invalidBy = map[string]*invalidValues{}
	}
	iv := &invalidValues{file: file, what: what, lines: []int{line}}
	c.invalidBy[key] = iv
	c.invalid = append(c.invalid, iv)
}

// maxKept bounds the messages kept: a file of a million bad lines must
// not take the memory it would take to keep them.
const maxKept = 100

// check fixes rec's units and reports whether its values are valid.
func (c *checker) check(rec benchfmt.Record) (*benchfmt.Result, bool) {
	switch r := rec.(type) {
	case *benchfmt.SyntaxError:
		if overflows(r) {
			// ParseFloat's ErrRange: the value is ±Inf, and refused as
			// an infinity written out is, not skipped as a line that is
			// not a result (the gate would pass on the other lines).
			c.addInvalid(r.FileName, r.Line, "a measurement beyond ±1.8e308 (a float64's range) is not a finite number")
			return nil, false
		}
		if len(c.warnings) < maxKept {
			c.warnings = append(c.warnings, r.Error())
		} else {
			c.moreWarnings++
		}
	case *benchfmt.Result:
		ok := true
		for i := range r.Values {
			v := &r.Values[i]
			tidyUnits(v)
			if why := invalidValue(v); why != "" {
				ok = false
				file, line := r.Pos()
				// The name as the file writes it, benchfmt having taken
				// "Benchmark" off.
				c.addInvalid(file, line, fmt.Sprintf("Benchmark%s: %s %s", r.Name.Full(), formatOrig(v), why))
			}
		}
		return r, ok
	}
	return nil, false
}

// overflows reports whether e is benchfmt's error for a measurement that
// parses as ±Inf ("1e309 ns/op"): its reader says only this, in these
// words (TestGateOverflowingValueIsBadInput pins them).
func overflows(e *benchfmt.SyntaxError) bool {
	return e.Msg == "parsing measurement: value out of range"
}

// tidyUnits converts v to its tidy unit (ns/op to sec/op) whatever its
// value: benchfmt converts a value only when the conversion changes it,
// so "0 ns/op" stays in ns/op, apart from every other time of its
// benchmark.
func tidyUnits(v *benchfmt.Value) {
	if v.OrigUnit != "" {
		return
	}
	tv, tu := benchunit.Tidy(v.Value, v.Unit)
	if tu != v.Unit {
		v.OrigValue, v.OrigUnit = v.Value, v.Unit
		v.Value, v.Unit = tv, tu
	}
}

// invalidValue says why v is no measurement, or "".
func invalidValue(v *benchfmt.Value) string {
	switch {
	case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
		return "is not a finite number"
	case v.Unit == "sec/op" && v.Value <= 0:
		return "is not a possible time (a time per op is more than 0)"
	case strings.HasPrefix(v.Unit, "sec/") && v.Value < 0:
		return "is not a possible time (a time is 0 or more)"
	case (v.Unit == "B/op" || v.Unit == "allocs/op") && v.Value < 0:
		return "is not a possible count (a count is 0 or more)"
	}
	return ""
}

// formatOrig is the value as the file wrote it: "-102.5 ns/op".
func formatOrig(v *benchfmt.Value) string {
	if v.OrigUnit != "" {
		return strconv.FormatFloat(v.OrigValue, 'g', -1, 64) + " " + v.OrigUnit
	}
	return strconv.FormatFloat(v.Value, 'g', -1, 64) + " " + v.Unit
}

// err reports the invalid values, each with its file and line.
func (c *checker) err() error {
	if len(c.invalid) == 0 {
		return nil
	}
	const most = 5
	var parts []string
	for _, iv := range c.invalid[:min(most, len(c.invalid))] {
		parts = append(parts, iv.String())
	}
	msg := strings.Join(parts, "; ")
	if more := len(c.invalid) - most + c.moreInvalid; more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	return fmt.Errorf("%s", msg)
}

func (c *checker) warningList() []string {
	if c.moreWarnings == 0 {
		return c.warnings
	}
	return append(slices.Clip(c.warnings), fmt.Sprintf("and %d more unparsable lines", c.moreWarnings))
}

// Files are result files read as they are scanned: nothing is kept but
// what the scan's function keeps.
type Files struct {
	// Paths are the files; a path may be label=path, the label then being
	// the results' .file.
	Paths []string
	// N is the number of results the last Scan read.
	N int
	// Warnings are the lines the last Scan could not parse.
	Warnings []string
	// Units is the unit metadata the last Scan read.
	Units benchfmt.UnitMetadataMap
}

// OpenFiles checks that every path can be opened and returns them as a
// Source; the files are read by each Scan.
func OpenFiles(paths []string) (*Files, error) {
	for _, p := range paths {
		// benchfmt.Files opens files lazily; check them all first so the
		// error names the file rather than depending on scan order.
		_, path, ok := cutLabel(p)
		if !ok {
			path = p
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	return &Files{Paths: paths}, nil
}

// Scan reads the files, calling fn with each valid result.
func (fs *Files) Scan(fn func(rec *benchfmt.Result)) error {
	files := benchfmt.Files{Paths: fs.Paths, AllowLabels: true}
	var c checker
	fs.N = 0
	for files.Scan() {
		rec := files.Result()
		if r, ok := c.check(rec); ok {
			fs.N++
			fn(r)
		}
	}
	fs.Warnings = c.warningList()
	fs.Units = files.Units()
	if err := files.Err(); err != nil {
		return readErr(err)
	}
	return c.err()
}

func (fs *Files) warningList() []string { return fs.Warnings }

// ReadFiles reads Go benchmark format files into memory; a path may be
// label=path, the label then being the result's .file. A file that cannot
// be opened is an error, and so is an invalid value (see checker);
// unparsable lines are warnings. Stat, Gate and plots read large files
// with less memory through OpenFiles.
func ReadFiles(paths []string) (*Results, error) {
	fs, err := OpenFiles(paths)
	if err != nil {
		return nil, err
	}
	rs := &Results{}
	if err := fs.Scan(func(rec *benchfmt.Result) {
		// The reader reuses its Result; keep a copy.
		rs.Records = append(rs.Records, rec.Clone())
	}); err != nil {
		return nil, err
	}
	rs.Warnings, rs.Units = fs.Warnings, fs.Units
	return rs, nil
}

// MaxLineBytes is the longest line benchfmt reads (bufio.Scanner's
// default buffer): a longer line ends the input with an error.
const MaxLineBytes = bufio.MaxScanTokenSize

// readErr says in words what the reader's errors mean: benchfmt reads with
// a bufio.Scanner, whose error for a long line names the package
// ("file:3: bufio.Scanner: token too long").
func readErr(err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		pos := strings.TrimSuffix(strings.TrimSuffix(err.Error(), bufio.ErrTooLong.Error()), ": ")
		// The position is the last line read; the long one is the next.
		if i := strings.LastIndexByte(pos, ':'); i >= 0 {
			if n, err := strconv.Atoi(pos[i+1:]); err == nil {
				pos = pos[:i+1] + strconv.Itoa(n+1)
			}
		}
		return fmt.Errorf("%s: a line is longer than %d bytes, the most a results file may have (is it a results file?)", pos, MaxLineBytes)
	}
	return err
}

func cutLabel(p string) (label, path string, ok bool) {
	return strings.Cut(p, "=")
}

// Read reads results from r, whose .file is name, into memory.
func Read(r io.Reader, name string) (*Results, error) {
	rd := benchfmt.NewReader(r, name)
	rs := &Results{}
	var c checker
	for rd.Scan() {
		rec := rd.Result()
		if res, ok := c.check(rec); ok {
			// The reader reuses its Result; keep a copy.
			rs.Records = append(rs.Records, res.Clone())
		}
	}
	rs.Warnings = c.warningList()
	if err := rd.Err(); err != nil {
		return nil, readErr(err)
	}
	if err := c.err(); err != nil {
		return nil, err
	}
	rs.Units = rd.Units()
	return rs, nil
}
