package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/preemptbench/preemptbench/benchcmp"
	"github.com/preemptbench/preemptbench/benchplot"
)

// runPlot is `compare plot [-o FILE.svg] [-filter F] RESULTS...`: the
// scaling picture of any results file.
func runPlot(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the SVG `file` to write (default: standard output)")
	filter := fs.String("filter", "", "benchproc filter of the results to draw, e.g. .name:Decide (default: all)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare plot [-o FILE.svg] [-filter F] RESULTS...\n\nDraws time/op and allocs/op against node count, log-log, one line per\nimplementation (/impl), one row per benchmark and shape, from Go benchmark\nresults named with /nodes=N.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return ExitBadInput
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "compare plot: no results file\n")
		return ExitBadInput
	}
	rs, err := benchcmp.ReadFiles(fs.Args())
	if err != nil {
		fmt.Fprintf(stderr, "compare plot: %v\n", err)
		return ExitBadInput
	}
	for _, w := range rs.Warnings {
		fmt.Fprintf(stderr, "compare plot: warning: %s\n", w)
	}
	if *out == "" {
		svg, err := benchplot.Plot(rs, *filter)
		if err != nil {
			fmt.Fprintf(stderr, "compare plot: %v\n", err)
			return ExitBadInput
		}
		stdout.Write(svg)
		return ExitOK
	}
	if err := writePlot(*out, rs, *filter); err != nil {
		fmt.Fprintf(stderr, "compare plot: %v\n", err)
		return ExitBadInput
	}
	return ExitOK
}

func writePlot(file string, rs *benchcmp.Results, filter string) error {
	svg, err := benchplot.Plot(rs, filter)
	if err != nil {
		return err
	}
	return os.WriteFile(file, svg, 0o644)
}
