package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/preemptbench/preemptbench/internal/benchcmp"
)

// Exit codes of compare gate (ExitBadInput is shared).
const (
	ExitPass       = 0
	ExitRegression = 1
)

// gateExit is the exit code of the gate's verdict.
func gateExit(v benchcmp.Outcome) int {
	switch v {
	case benchcmp.Pass:
		return ExitPass
	case benchcmp.Regressed:
		return ExitRegression
	}
	return ExitBadInput
}

// runGate compares a head result file with a base one and fails on a
// significant regression.
func runGate(args []string, stdout, stderr io.Writer) int {
	def := benchcmp.DefaultGateOptions()
	fs := flag.NewFlagSet("gate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "", "result file of the base (required)")
	head := fs.String("head", "", "result file of the head (required)")
	maxTime := fs.String("max-time", "5%", "allowed worsening of sec/op, a finite percentage >= 0")
	maxBytes := fs.String("max-bytes", "0%", "allowed worsening of B/op, a finite percentage >= 0")
	maxAllocs := fs.String("max-allocs", "0%", "allowed worsening of allocs/op, a finite percentage >= 0")
	alpha := fs.Float64("alpha", def.Alpha, "a change is significant when p < alpha, in (0, 1)")
	output := fs.String("o", "text", "output: text or markdown")
	baseImpl := fs.String("base-impl", "", "gate only the base's results of this `implementation` (their name's impl=NAME), against the head's of -head-impl: two implementations of one run, say upstream@VERSION and upstream@DIR")
	headImpl := fs.String("head-impl", "", "with -base-impl: the head's `implementation`")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare gate -base FILE -head FILE [flags]\n\n%s", gateHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare gate: "+format+"\n", a...)
		return ExitBadInput
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q (the files go with -base and -head)", fs.Arg(0))
	}
	if *base == "" || *head == "" {
		return bad("-base and -head are required")
	}
	if *output != "text" && *output != "markdown" {
		return bad("-o must be text or markdown, not %q", *output)
	}
	if (*baseImpl == "") != (*headImpl == "") {
		return bad("-base-impl and -head-impl go together")
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
	// -alpha in (0, 1), NaN and infinities refused; thresholds finite and
	// not negative (ParsePercent already says so).
	if err := opts.Validate(); err != nil {
		return bad("-%v", err)
	}
	baseRes, err := benchcmp.OpenFiles([]string{*base})
	if err != nil {
		return bad("-base: %v", err)
	}
	headRes, err := benchcmp.OpenFiles([]string{*head})
	if err != nil {
		return bad("-head: %v", err)
	}
	// Each file is read once, as the gate collects its values: a million
	// result lines take the memory of their values, not of their lines.
	// An invalid value (a time of 0 or below, NaN) is a problem naming
	// the file, the line and the benchmark.
	var baseSrc, headSrc benchcmp.Source = baseRes, headRes
	baseName, headName := *base, *head
	if *baseImpl != "" {
		baseSrc, headSrc = benchcmp.ImplSource(baseRes, *baseImpl), benchcmp.ImplSource(headRes, *headImpl)
		baseName, headName = *base+" (impl="+*baseImpl+")", *head+" (impl="+*headImpl+")"
	}
	g := benchcmp.Gate(baseName, baseSrc, headName, headSrc, opts)
	for _, w := range append(baseRes.Warnings, headRes.Warnings...) {
		fmt.Fprintf(stderr, "compare gate: warning: %s\n", w)
	}
	// The report and its verdict on stdout; every error and warning on
	// stderr.
	for _, w := range g.Warnings {
		fmt.Fprintf(stderr, "compare gate: warning: %s\n", w)
	}
	for _, p := range g.Problems {
		fmt.Fprintf(stderr, "compare gate: %s\n", p)
	}
	if *output == "markdown" {
		err = g.WriteMarkdown(stdout)
	} else {
		err = g.WriteText(stdout)
	}
	if err != nil {
		return bad("%v", err)
	}
	return gateExit(g.Outcome())
}

const gateHelp = `Fails when head is slower or allocates more than base. A benchmark regresses
in a unit (sec/op, B/op, allocs/op) only when the change is significant
(Mann-Whitney p < alpha; when neither side varies, as allocs/op seldom
does, different values are significant and equal ones are not) and worse
than the unit's threshold. Benchmarks of one side only are listed, not
compared; every benchmark of both is compared in every unit either
measures. Exit 0 pass, 1 regression, 2 bad input (unreadable file, a file
without results, a time of 0 or below, a negative count, NaN or infinity,
fewer than 6 samples of any benchmark in any unit, a unit measured on one
side only (head run without -benchmem), nothing in common or nothing to
compare, samples of one benchmark from different goos, goarch, cpu or pkg,
within a file or between base and head; -alpha outside (0, 1), a threshold
negative or not finite). BenchmarkX-2 and BenchmarkX-8 are one benchmark (the
GOMAXPROCS suffix is not part of the name): samples of different GOMAXPROCS,
or of another "key: value" line within a file, are compared with a warning.
The report and its verdict go to stdout, errors and warnings to stderr.
-base-impl A -head-impl B gate implementation B's results against A's
(their names' impl= level), from one run's file or two: a kubernetes tree
against its release, as compare bench -impl upstream@vX,upstream@DIR ran
them.

`
