package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/preemptbench/preemptbench/benchcmp"
	"github.com/preemptbench/preemptbench/registry"
)

// runStat prints benchstat-style tables of benchmark result files.
func runStat(args []string, stdout, stderr io.Writer) int {
	def := benchcmp.DefaultStatOptions()
	fs := flag.NewFlagSet("stat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	row := fs.String("row", def.Row, "benchproc projection of the rows")
	col := fs.String("col", def.Col, "benchproc projection of the columns (the implementations)")
	ignore := fs.String("ignore", def.Ignore, "keys to ignore when grouping")
	filter := fs.String("filter", def.Filter, "benchproc filter of the results")
	alpha := fs.Float64("alpha", def.Alpha, "a comparison is significant when p < alpha")
	confidence := fs.Float64("confidence", def.Confidence, "confidence level of the ranges")
	output := fs.String("o", "text", "output: text, markdown, csv or json")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare stat [flags] FILE...\n\n%s", statHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return ExitBadInput
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare stat: "+format+"\n", a...)
		return ExitBadInput
	}
	if fs.NArg() == 0 {
		return bad("no result files (write them with `go test -bench` or scripts/bench.sh)")
	}
	write, ok := statWriters[*output]
	if !ok {
		return bad("-o must be text, markdown, csv or json, not %q", *output)
	}
	rs, err := benchcmp.ReadFiles(fs.Args())
	if err != nil {
		return bad("%v", err)
	}
	if len(rs.Records) == 0 {
		return bad("no benchmark results in %v", fs.Args())
	}
	rep, err := benchcmp.Stat(rs, benchcmp.StatOptions{Row: *row, Col: *col, Ignore: *ignore, Filter: *filter, Alpha: *alpha, Confidence: *confidence, Baselines: registry.Baselines()})
	if err != nil {
		return bad("%v", err)
	}
	if len(rep.Tables) == 0 {
		return bad("no result matches -filter %q", *filter)
	}
	if err := write(rep, stdout); err != nil {
		return bad("%v", err)
	}
	if *output == "csv" {
		// CSV has no room for footnotes.
		for _, n := range rep.Notes() {
			fmt.Fprintf(stderr, "compare stat: note: %s\n", n)
		}
	} else {
		// Cells that pool samples of different configurations (benchstat's
		// "benchmarks vary in ..." footnote) are also a warning on stderr.
		for _, n := range rep.Notes() {
			if strings.Contains(n, "benchmarks vary in") && varyInConfig(n) {
				fmt.Fprintf(stderr, "compare stat: warning: %s: samples of different configurations pooled in one cell; split them with -row or -col (e.g. -col /impl,goarch)\n", n)
			}
		}
	}
	return ExitOK
}

const statHelp = `Tables of benchmark results: one per unit (sec/op, B/op, allocs/op, then
the custom metrics), a column per implementation (median ± 95% interval of
the median), and comparison columns against reference and upstream: the
ratio of the medians and the Mann-Whitney p-value, "~" when p >= alpha.

`

var statWriters = map[string]func(*benchcmp.Report, io.Writer) error{
	"text":     (*benchcmp.Report).WriteText,
	"markdown": (*benchcmp.Report).WriteMarkdown,
	"csv":      (*benchcmp.Report).WriteCSV,
	"json":     (*benchcmp.Report).WriteJSON,
}

// varyInConfig: a "benchmarks vary in" note names a configuration key
// whose mixing makes samples incomparable.
func varyInConfig(note string) bool {
	_, keys, _ := strings.Cut(note, "benchmarks vary in ")
	for _, k := range strings.Split(keys, ", ") {
		switch k {
		case "goos", "goarch", "cpu", "pkg", ".file":
			return true
		}
	}
	return false
}
