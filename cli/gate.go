package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/preemptbench/preemptbench/benchcmp"
)

// Exit codes of compare gate (ExitBadInput is shared).
const (
	ExitPass       = benchcmp.GatePass
	ExitRegression = benchcmp.GateRegression
)

// runGate compares a head result file with a base one and fails on a
// significant regression.
func runGate(args []string, stdout, stderr io.Writer) int {
	def := benchcmp.DefaultGateOptions()
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "", "result file of the base (required)")
	head := fs.String("head", "", "result file of the head (required)")
	maxTime := fs.String("max-time", "5%", "allowed worsening of sec/op")
	maxBytes := fs.String("max-bytes", "0%", "allowed worsening of B/op")
	maxAllocs := fs.String("max-allocs", "0%", "allowed worsening of allocs/op")
	alpha := fs.Float64("alpha", def.Alpha, "a change is significant when p < alpha")
	output := fs.String("o", "text", "output: text or markdown")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare gate -base FILE -head FILE [flags]\n\n%s", gateHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return ExitBadInput
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare gate: "+format+"\n", a...)
		return ExitBadInput
	}
	if fs.NArg() > 0 {
		return bad("unexpected arguments %q", fs.Args())
	}
	if *base == "" || *head == "" {
		return bad("-base and -head are required")
	}
	if *output != "text" && *output != "markdown" {
		return bad("-o must be text or markdown, not %q", *output)
	}
	if !(*alpha > 0 && *alpha < 1) { // NaN fails too
		return bad("-alpha %v is not in (0, 1)", *alpha)
	}
	opts := def
	opts.Alpha = *alpha
	for _, t := range []struct {
		flag string
		val  string
		dst  *float64
	}{{"max-time", *maxTime, &opts.MaxTime}, {"max-bytes", *maxBytes, &opts.MaxBytes}, {"max-allocs", *maxAllocs, &opts.MaxAllocs}} {
		v, err := benchcmp.ParsePercent(t.val)
		if err != nil {
			return bad("-%s: %v", t.flag, err)
		}
		*t.dst = v
	}
	baseRes, err := benchcmp.ReadFiles([]string{*base})
	if err != nil {
		return bad("%v", err)
	}
	headRes, err := benchcmp.ReadFiles([]string{*head})
	if err != nil {
		return bad("%v", err)
	}
	for _, w := range append(baseRes.Warnings, headRes.Warnings...) {
		fmt.Fprintf(stderr, "compare gate: warning: %s\n", w)
	}
	g := benchcmp.Gate(*base, baseRes, *head, headRes, opts)
	if *output == "markdown" {
		err = g.WriteMarkdown(stdout)
	} else {
		err = g.WriteText(stdout)
	}
	if err != nil {
		return bad("%v", err)
	}
	// The report is on stdout; what makes the input unusable is an error,
	// on stderr too.
	for _, p := range g.Problems {
		fmt.Fprintf(stderr, "compare gate: %s\n", p)
	}
	return g.ExitCode()
}

const gateHelp = `Fails when head is slower or allocates more than base. A benchmark regresses
in a unit (sec/op, B/op, allocs/op) only when the change is significant
(Mann-Whitney p < alpha; when neither side varies, as allocs/op seldom
does, different values are significant and equal ones are not) and worse
than the unit's threshold. Benchmarks of one side only are listed, not
compared. Exit 0 pass, 1 regression, 2 bad input (unreadable file, a file
without results, fewer than 6 samples of any benchmark, nothing in common,
samples of one benchmark from different goos, goarch, cpu or pkg, within a
file or between base and head). BenchmarkX-2 and BenchmarkX-8 are one
benchmark (the GOMAXPROCS suffix is not part of the name).

`
