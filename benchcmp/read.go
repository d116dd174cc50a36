// Package benchcmp turns Go benchmark results into what `compare stat`,
// `compare gate` and the default `compare` job print: benchstat-style
// tables (benchfmt to read, benchproc to project, benchmath to summarise and
// compare) and a regression gate.
//
// Statistics are benchstat's: the center of a cell is the median, its range
// the 95% confidence interval of the median, and two cells are compared
// with the Mann-Whitney U test (benchmath.AssumeNothing). One rule is added
// for samples without variance (allocs/op nearly always): see Compare.
package benchcmp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// Results are benchmark results read from one or more inputs.
type Results struct {
	Records []*benchfmt.Result
	Units   benchfmt.UnitMetadataMap
	// Warnings are the lines the reader could not parse.
	Warnings []string
	// invalid are the results with a NaN or infinite value: an error, since
	// benchstat's statistics are undefined on them (go-moremath's U test
	// does not even terminate on NaN) and dropping them would let an
	// infinitely slow head pass the gate.
	invalid []string
}

// err reports the invalid values, each with its file and line.
func (rs *Results) err() error {
	if len(rs.invalid) == 0 {
		return nil
	}
	const most = 5
	msg := strings.Join(rs.invalid[:min(most, len(rs.invalid))], "; ")
	if len(rs.invalid) > most {
		msg += fmt.Sprintf("; and %d more", len(rs.invalid)-most)
	}
	return fmt.Errorf("%s", msg)
}

// ReadFiles reads Go benchmark format files; a path may be label=path, the
// label then being the result's .file. A file that cannot be opened is an
// error; unparsable lines are warnings.
func ReadFiles(paths []string) (*Results, error) {
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
	files := benchfmt.Files{Paths: paths, AllowLabels: true}
	rs := &Results{}
	for files.Scan() {
		rs.add(files.Result())
	}
	if err := files.Err(); err != nil {
		return nil, readErr(err)
	}
	if err := rs.err(); err != nil {
		return nil, err
	}
	rs.Units = files.Units()
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

// Read reads results from r, whose .file is name.
func Read(r io.Reader, name string) (*Results, error) {
	rd := benchfmt.NewReader(r, name)
	rs := &Results{}
	for rd.Scan() {
		rs.add(rd.Result())
	}
	if err := rd.Err(); err != nil {
		return nil, readErr(err)
	}
	if err := rs.err(); err != nil {
		return nil, err
	}
	rs.Units = rd.Units()
	return rs, nil
}

func (rs *Results) add(rec benchfmt.Record) {
	switch rec := rec.(type) {
	case *benchfmt.SyntaxError:
		rs.Warnings = append(rs.Warnings, rec.Error())
	case *benchfmt.Result:
		for _, v := range rec.Values {
			if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
				file, line := rec.Pos()
				rs.invalid = append(rs.invalid, fmt.Sprintf("%s:%d: %s: %s value %v is not a finite number", file, line, rec.Name.Full(), v.Unit, v.Value))
			}
		}
		// The reader reuses its Result; keep a copy.
		rs.Records = append(rs.Records, rec.Clone())
	}
}
