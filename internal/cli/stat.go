package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/preemptbench/preemptbench/internal/benchcmp"
	"github.com/preemptbench/preemptbench/internal/registry"
)

// runStat prints benchstat-style tables of benchmark result files: the
// tables on stdout, every error and warning on stderr.
func runStat(args []string, stdout, stderr io.Writer) int {
	def := benchcmp.DefaultStatOptions()
	fs := flag.NewFlagSet("stat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	table := fs.String("table", def.Table, "benchproc projection of the tables (one per configuration by default)")
	row := fs.String("row", def.Row, "benchproc projection of the rows")
	col := fs.String("col", def.Col, "benchproc projection of the columns (the implementations)")
	ignore := fs.String("ignore", def.Ignore, "keys whose variation within a cell is not warned of (e.g. /gomaxprocs)")
	filter := fs.String("filter", def.Filter, "benchproc filter of the results")
	alpha := fs.Float64("alpha", def.Alpha, "a comparison is significant when p < alpha, in (0, 1)")
	confidence := fs.Float64("confidence", def.Confidence, "confidence level of the ranges, in (0, 1)")
	output := fs.String("o", "text", "output: text, markdown, csv or json")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare stat [flags] FILE...\n\n%s", statHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare stat: "+format+"\n", a...)
		return ExitBadInput
	}
	warn := func(format string, a ...any) {
		fmt.Fprintf(stderr, "compare stat: warning: "+format+"\n", a...)
	}
	if !(*alpha > 0 && *alpha < 1) { // NaN fails too
		return bad("-alpha %v is not in (0, 1)", *alpha)
	}
	if !(*confidence > 0 && *confidence < 1) {
		return bad("-confidence %v is not in (0, 1)", *confidence)
	}
	if fs.NArg() == 0 {
		return bad("no result files (write them with `go test -bench` or scripts/bench.sh)")
	}
	write, ok := statWriters[*output]
	if !ok {
		return bad("-o must be text, markdown, csv or json, not %q", *output)
	}
	// Read as the tables are made: a million result lines take the
	// memory of their values, not of their lines.
	files, err := benchcmp.OpenFiles(fs.Args())
	if err != nil {
		return bad("%v", err)
	}
	rep, err := benchcmp.Stat(files, benchcmp.StatOptions{Table: *table, Row: *row, Col: *col, Ignore: *ignore, Filter: *filter, Alpha: *alpha, Confidence: *confidence, Baselines: registry.Baselines()})
	for _, w := range files.Warnings {
		warn("%s", w)
	}
	var readErr *benchcmp.ReadError
	switch {
	case errors.As(err, &readErr):
		return bad("%v", readErr.Err)
	case err != nil:
		return bad("-%v", err) // "-filter: ...", "-row: ..."
	case files.N == 0:
		return bad("no benchmark results in %s", strings.Join(fs.Args(), ", "))
	}
	if len(rep.Tables) == 0 {
		return bad("no result matches -filter %q", *filter)
	}
	// Results of different configurations: split into tables, or pooled
	// in a cell (with a footnote) when the projections say so.
	for _, m := range rep.Mixed {
		warn("%s", m)
	}
	if err := write(rep, stdout); err != nil {
		return bad("%v", err)
	}
	if *output == "csv" {
		// CSV has no room for footnotes.
		for _, n := range rep.Notes() {
			fmt.Fprintf(stderr, "compare stat: note: %s\n", n)
		}
	}
	return ExitOK
}

const statHelp = `Tables of benchmark results: one per configuration (goos, goarch, pkg, cpu
and any other "key: value" line of the files) and unit (sec/op, B/op,
allocs/op, then the custom metrics), a column per implementation (median ±
95% interval of the median), and comparison columns against reference and
upstream: the ratio of the medians and the Mann-Whitney p-value, "~" when
p >= alpha. BenchmarkX-2, BenchmarkX-8 and BenchmarkX are one benchmark
(the GOMAXPROCS suffix is the key /gomaxprocs, not part of the name).
Results of different configurations are never pooled without a warning
on stderr: the same benchmark measured in two configurations is in two
tables, and a cell pooling samples that differ in a key no projection
names (with -table "", say), in GOMAXPROCS or in file is footnoted and
warned of. Errors and warnings go to stderr, the tables to stdout.

`

var statWriters = map[string]func(*benchcmp.Report, io.Writer) error{
	"text":     (*benchcmp.Report).WriteText,
	"markdown": (*benchcmp.Report).WriteMarkdown,
	"csv":      (*benchcmp.Report).WriteCSV,
	"json":     (*benchcmp.Report).WriteJSON,
}
