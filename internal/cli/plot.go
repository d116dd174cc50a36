package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/preemptbench/preemptbench/internal/benchcmp"
	"github.com/preemptbench/preemptbench/internal/benchplot"
)

// runPlot is `compare plot [-o FILE.svg] [-filter F] RESULTS...`: the
// scaling picture of any results file.
func runPlot(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "the SVG `file` to write, named .svg (default: standard output)")
	filter := fs.String("filter", "", "benchproc filter of the results to draw, e.g. .name:Decide (default: all)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare plot [-o FILE.svg] [-filter F] RESULTS...\n\n%s", plotHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare plot: "+format+"\n", a...)
		return ExitBadInput
	}
	if fs.NArg() == 0 {
		return bad("no results file")
	}
	if *out != "" {
		if err := checkPlotFile(*out); err != nil {
			return bad("-o %v", err)
		}
	}
	files, err := benchcmp.OpenFiles(fs.Args())
	if err != nil {
		return bad("%v", err)
	}
	svg, notes, err := benchplot.Plot(files, *filter)
	for _, w := range files.Warnings {
		fmt.Fprintf(stderr, "compare plot: warning: %s\n", w)
	}
	// Every point not drawn is named, with why.
	for _, n := range notes {
		fmt.Fprintf(stderr, "compare plot: note: %s\n", n)
	}
	if err != nil {
		return bad("%v", err)
	}
	if *out == "" {
		stdout.Write(svg)
		return ExitOK
	}
	if err := os.WriteFile(*out, svg, 0o644); err != nil {
		return bad("%v", err)
	}
	return ExitOK
}

const plotHelp = `Draws time/op and allocs/op against node count, log-log, one line per
implementation (/impl), one row per benchmark and shape, from Go benchmark
results named with /nodes=N. A median of 0 (an implementation that does not
allocate) is drawn on a dashed floor line at the bottom of its panel. Every
result it cannot draw (no /nodes=N, a node count that is not a positive
number) is named on stderr. It writes SVG only: -o takes a .svg file
(rsvg-convert turns it into PNG).

`

// checkPlotFile refuses a file name that does not say SVG: "-o x.png"
// used to write SVG under a PNG name.
func checkPlotFile(name string) error {
	if ext := filepath.Ext(name); !strings.EqualFold(ext, ".svg") {
		what := "has no extension"
		if ext != "" {
			what = "is " + ext
		}
		return fmt.Errorf("%s: the plot is SVG and the name %s: name it .svg (rsvg-convert -o x.png x.svg makes a PNG of it)", name, what)
	}
	return nil
}

// writePlot writes the plot of src to file, a .svg, and a note on stderr
// for every point it could not draw.
func writePlot(file string, src benchcmp.Source, filter string, stderr io.Writer) error {
	if err := checkPlotFile(file); err != nil {
		return errors.New("-plot " + err.Error())
	}
	svg, notes, err := benchplot.Plot(src, filter)
	for _, n := range notes {
		fmt.Fprintf(stderr, "compare: plot: note: %s\n", n)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(file, svg, 0o644)
}
