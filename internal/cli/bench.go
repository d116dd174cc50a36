package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/preemptbench/preemptbench/bench"
	"github.com/preemptbench/preemptbench/internal/benchcmp"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/procgroup"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/releases"
)

// benchRunner builds and runs the bench test binary; tests replace it.
type benchRunner interface {
	// Build compiles the bench package's test binary to bin.
	Build(ctx context.Context, bin string) error
	// Run runs bin with args and returns its standard output.
	Run(ctx context.Context, bin string, args []string) ([]byte, error)
}

var (
	newBenchRunner = func() (benchRunner, error) {
		root, err := moduleRoot()
		return execRunner{root: root}, err
	}
	benchClock = time.Now
)

// execRunner runs `go test -c` and the binary in the module at root.
type execRunner struct{ root string }

func (r execRunner) Build(ctx context.Context, bin string) error {
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, "./bench")
	cmd.Dir = r.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go test -c ./bench: %v\n%s", err, out)
	}
	return nil
}

func (r execRunner) Run(ctx context.Context, bin string, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = filepath.Join(r.root, "bench")
	procgroup.Own(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

const modulePath = "github.com/preemptbench/preemptbench"

var moduleLine = regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(modulePath) + `\s*$`)

// moduleRoot is the nearest directory up from the working directory whose
// go.mod declares this module.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && moduleLine.Match(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the %s module (no go.mod declaring it above the working directory)", modulePath)
		}
		dir = parent
	}
}

// benchRun is one run of the test binary: one sub-benchmark, once.
type benchRun struct {
	Stage, Shape, Impl string
	Nodes, Round       int
	Preemptors         int // PreemptionStream's, 0: the shape's own count (bench.StreamPreemptors)
	// Gangs is a gang shape's number of preemptor gangs (its name's
	// gangs=G level), 0 for the other shapes.
	Gangs int
	// FeatureGates is -feature-gates as given ("" for none).
	FeatureGates string
	// Extra is -bench.impls: LABEL=NAME of the children ("" for none).
	Extra string
}

func (r benchRun) name() string {
	if r.Gangs > 0 {
		return fmt.Sprintf("%s/shape=%s/nodes=%d/gangs=%d/impl=%s", r.Stage, r.Shape, r.Nodes, r.Gangs, r.Impl)
	}
	return fmt.Sprintf("%s/shape=%s/nodes=%d/impl=%s", r.Stage, r.Shape, r.Nodes, r.Impl)
}

// args are the test binary's flags: the sub-benchmark by an anchored
// regular expression per level, once.
func (r benchRun) args(benchtime string) []string {
	q := regexp.QuoteMeta
	pattern := fmt.Sprintf("^Benchmark%s$/^shape=%s$/^nodes=%d$/^impl=%s$", q(r.Stage), q(r.Shape), r.Nodes, q(r.Impl))
	if r.Gangs > 0 {
		pattern = fmt.Sprintf("^Benchmark%s$/^shape=%s$/^nodes=%d$/^gangs=%d$/^impl=%s$", q(r.Stage), q(r.Shape), r.Nodes, r.Gangs, q(r.Impl))
	}
	args := []string{
		"-test.run=^$", "-test.bench=" + pattern, "-test.count=1", "-test.benchtime=" + benchtime,
		"-bench.shapes=" + r.Shape, "-bench.nodes=" + strconv.Itoa(r.Nodes),
	}
	if r.Gangs > 0 {
		args = append(args, "-bench.gangs="+strconv.Itoa(r.Gangs))
	}
	if r.Preemptors > 0 {
		args = append(args, "-bench.preemptors="+strconv.Itoa(r.Preemptors))
	}
	if r.FeatureGates != "" {
		args = append(args, "-bench.feature-gates="+r.FeatureGates)
	}
	if r.Extra != "" {
		args = append(args, "-bench.impls="+r.Extra)
	}
	return args
}

// benchPlan interleaves the implementations: for each round, each stage,
// shape and size, every implementation once (A B C A B C ...), so that
// drift of a noisy machine spreads over all of them alike.
// A gang shape runs gangs preemptor gangs (0: synth.DefaultGangs at
// each node count).
func benchPlan(stages, shapes []string, nodes []int, impls []string, count, gangs int) []benchRun {
	var plan []benchRun
	for round := 1; round <= count; round++ {
		for _, st := range stages {
			for _, sh := range shapes {
				for _, n := range nodes {
					for _, im := range impls {
						if im == bench.FloorName && st != "Decide" {
							continue // the floor is Decide's only
						}
						r := benchRun{Stage: st, Shape: sh, Impl: im, Nodes: n, Round: round}
						if synth.IsGangShape(sh) {
							r.Gangs = gangs
							if r.Gangs == 0 {
								r.Gangs = synth.DefaultGangs(n)
							}
						}
						plan = append(plan, r)
					}
				}
			}
		}
	}
	return plan
}

func benchImplNames() []string { return registry.Names() }

// splitList splits a comma-separated flag, checking each item against
// known ("all" is every known item).
func splitList(flagName, v string, known []string) ([]string, error) {
	if v == "all" {
		return known, nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("-%s: unknown %q (known: %s, all)", flagName, s, strings.Join(known, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// benchOptions are the default job's flags, checked.
type benchOptions struct {
	stages, shapes, impls []string
	// extra are the implementations run as children (-impl
	// upstream@VERSION, upstream@DIR): their labels in impls and the
	// results, and what the bench binary's -bench.impls resolves.
	extra          []benchExtra
	nodes          []int
	count          int
	benchtime, raw string
	preemptors     int    // -preemptors
	gangs          int    // -gangs
	featureGates   string // -feature-gates, checked
	markdown       bool
	plot           string // -plot: an SVG of the results
}

// runBench is the default job: build the bench test binary once, run the
// chosen benchmarks with the implementations interleaved, print the
// comparison tables and a verdict.
func runBench(args []string, stdout, stderr io.Writer) int {
	opts, err := parseBench(args, stderr)
	if err == nil {
		var rep *benchcmp.Report
		if rep, err = runBenchJob(opts, stderr); err == nil {
			err = renderBench(rep, opts, stdout)
		}
	}
	if err == flag.ErrHelp {
		return ExitOK
	}
	if err != nil {
		if err.Error() != "" {
			fmt.Fprintf(stderr, "compare: %v\n", err)
		}
		return ExitBadInput
	}
	return ExitOK
}

func parseBench(args []string, stderr io.Writer) (benchOptions, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stagesFlag := fs.String("bench", "Decide", "benchmarks, comma-separated: "+strings.Join(bench.Stages(), ", ")+" or all")
	shapesFlag := fs.String("shape", "basic", "shapes, comma-separated: "+strings.Join(synth.Shapes(), ", ")+" or all; the gang streams "+strings.Join(synth.GangShapes(), ", ")+" (-bench PreemptionStream only; in all when it is the only benchmark)")
	nodesFlag := fs.String("nodes", "5,500,5000", "node counts, comma-separated")
	implFlag := fs.String("impl", "all", "implementations, comma-separated: "+strings.Join(benchImplNames(), ", ")+" or all (the registry's); "+bench.FloorName+" adds the floor of a decision to Decide (floor.Floor, resource-only shapes)")
	count := fs.Int("count", 6, "rounds: runs of each benchmark and implementation (at least 6 for a p-value below 0.05)")
	benchtime := fs.String("benchtime", "1s", "-test.benchtime of each run")
	preemptors := fs.Int("preemptors", 0, "preemptors of each PreemptionStream run (0: the shape's own count, 100 for the podgroup shapes at 1000 nodes, or as many as nodes; for a gang shape, the first N gangs)")
	gangs := fs.Int("gangs", 0, "preemptor gangs of the gang shapes' streams, of nodes/N members each (0: 10 gangs of 10 at 100 nodes, 1 of 2 at 2; 1 is upstream's 100Nodes_1PreemptorGang_100Pods)")
	output := fs.String("o", "text", "output: text or markdown")
	raw := fs.String("raw", "", "file to write the raw results to (default: a new file in the temp directory)")
	var gates featureGatesFlag
	fs.Var(&gates, "feature-gates", "kube-scheduler's --feature-gates (`K=V,...`) the benchmarks run with (-bench.feature-gates; repeated, the flags merge, later keys overriding); an implementation that does not model a gate set away from its default is an error")
	plot := fs.String("plot", "", "also draw time/op and allocs/op against node count (log-log, one line per implementation) to this SVG `file`")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: compare [bench] [flags]\n\n%s", benchHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return benchOptions{}, parseError(err)
	}
	opts := benchOptions{count: *count, benchtime: *benchtime, raw: *raw, markdown: *output == "markdown", plot: *plot, preemptors: *preemptors}
	if opts.plot != "" {
		if err := checkPlotFile(opts.plot); err != nil { // before the run, not after it
			return opts, fmt.Errorf("-plot %v", err)
		}
	}
	if err := checkOutputFile("-raw", opts.raw); err != nil { // before the run, not after it
		return opts, err
	}
	if err := checkOutputFile("-plot", opts.plot); err != nil {
		return opts, err
	}
	if *preemptors < 0 {
		return opts, badf("-preemptors: %d is negative", *preemptors)
	}
	if fs.NArg() > 0 {
		return opts, badf("unexpected arguments %q", fs.Args())
	}
	var err error
	if opts.stages, err = splitList("bench", *stagesFlag, bench.Stages()); err != nil {
		return opts, err
	}
	streamOnly := slices.Equal(opts.stages, []string{"PreemptionStream"})
	shapes := append(synth.Shapes(), synth.GangShapes()...)
	if *shapesFlag == "all" && !streamOnly {
		shapes = synth.Shapes()
	}
	if opts.shapes, err = splitList("shape", *shapesFlag, shapes); err != nil {
		return opts, err
	}
	opts.gangs = *gangs
	for _, sh := range opts.shapes {
		if !synth.IsGangShape(sh) {
			continue
		}
		if !streamOnly {
			return opts, badf("-shape %s: a gang stream, which only -bench PreemptionStream runs", sh)
		}
	}
	if *implFlag == "all" {
		opts.impls = benchImplNames()
	} else {
		var inProcess []string
		for _, name := range strings.Split(*implFlag, ",") {
			name = strings.TrimSpace(name)
			if !strings.HasPrefix(name, "upstream@") {
				inProcess = append(inProcess, name)
				continue
			}
			x, err := resolveBenchExtra(name, stderr)
			if err != nil {
				return opts, err
			}
			if x.name == "" { // upstream@ the current release: upstream itself
				inProcess = append(inProcess, x.label)
				continue
			}
			for _, y := range opts.extra {
				if y.label == x.label && y.name != x.name {
					return opts, badf("-impl: %s and %s would both be named %s in the results: rename a tree's directory", y.name, x.name, x.label)
				}
			}
			if !slices.ContainsFunc(opts.extra, func(y benchExtra) bool { return y.label == x.label }) {
				opts.extra = append(opts.extra, x)
			}
		}
		if opts.impls, err = splitList("impl", strings.Join(inProcess, ","), append(benchImplNames(), bench.FloorName)); err != nil && len(inProcess) > 0 {
			return opts, err
		}
		for _, x := range opts.extra {
			opts.impls = append(opts.impls, x.label)
		}
	}
	if slices.Contains(opts.impls, bench.FloorName) && !slices.Contains(opts.stages, "Decide") {
		return opts, badf("-impl %s: the floor of a decision runs only in -bench Decide", bench.FloorName)
	}
	for _, s := range strings.Split(*nodesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return opts, badf("-nodes: %q is not a positive node count", s)
		}
		if !slices.Contains(opts.nodes, n) {
			opts.nodes = append(opts.nodes, n)
		}
	}
	for _, sh := range opts.shapes {
		for _, n := range opts.nodes {
			if synth.IsGangShape(sh) {
				if err := synth.CheckGangs(sh, n, *gangs); err != nil {
					return opts, badf("-gangs: %v", err)
				}
			}
		}
	}
	if *gangs < 0 {
		return opts, badf("-gangs: %d is negative", *gangs)
	}
	if *count < 1 {
		return opts, badf("-count %d: need at least 1", *count)
	}
	fg, err := parseFeatureGates(gates.String())
	if err != nil {
		return opts, err
	}
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = fg
	for _, name := range opts.impls {
		impl, ok := implByName(name)
		if !ok {
			continue
		}
		// Only the gates given are checked here; an implementation that
		// refuses a shape's own cluster or gates (the podgroup shapes'
		// pod groups under GenericWorkload) is skipped run by run.
		if err := harness.GateRefusal(impl, &preempt.Cluster{}, nil, cfg); err != nil {
			return opts, badf("-impl %s: %v", name, err)
		}
	}
	opts.featureGates = gates.String()
	if *output != "text" && *output != "markdown" {
		return opts, badf("-o must be text or markdown, not %q", *output)
	}
	return opts, nil
}

// benchExtra is an implementation compare bench runs as a child: an
// earlier release or a kubernetes tree.
type benchExtra struct {
	label string // its name in the results: upstream@VERSION, upstream@ + the tree's directory name
	name  string // upstream@VERSION or upstream@DIR ("" for the in-process upstream)
	impl  *releases.Impl
}

// benchLabelChars are what a tree's label keeps of its directory's name.
var benchLabelChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// resolveBenchExtra reads -impl upstream@VERSION or upstream@DIR.
func resolveBenchExtra(name string, stderr io.Writer) (benchExtra, error) {
	impl, ok, err := registry.LookupRelease(name, 0, stderr)
	if err != nil {
		return benchExtra{}, badf("-impl %v", err)
	}
	if !ok {
		return benchExtra{}, badf("-impl: unknown %q (known: %s, %s, upstream@DIR, all)", name, strings.Join(benchImplNames(), ", "), strings.Join(registry.ReleaseNames(), ", "))
	}
	r, ok := impl.(*releases.Impl)
	if !ok {
		return benchExtra{label: impl.Name()}, nil
	}
	label := r.Name()
	if t := r.Release().Tree; t != nil {
		label = "upstream@" + benchLabelChars.ReplaceAllString(filepath.Base(t.Dir), "-")
	}
	return benchExtra{label: label, name: name, impl: r}, nil
}

// runBenchJob builds the bench binary, runs the plan, writes the raw
// results and computes the comparison tables.
func runBenchJob(opts benchOptions, stderr io.Writer) (*benchcmp.Report, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runner, err := newBenchRunner()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "preemptbench-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	start := benchClock()
	elapsed := func() string {
		d := benchClock().Sub(start).Round(time.Second)
		return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
	}
	bin := filepath.Join(tmp, "bench.test")
	fmt.Fprintf(stderr, "compare: building the bench test binary (go test -c ./bench)\n")
	if err := runner.Build(ctx, bin); err != nil {
		return nil, err
	}
	// The children are built (and started once) before the runs: a run
	// must not time a build.
	var extras []string
	for _, x := range opts.extra {
		if _, err := x.impl.NewEvaluator(&preempt.Cluster{}); err != nil {
			return nil, fmt.Errorf("%s: %w", x.name, err)
		}
		x.impl.Close()
		extras = append(extras, x.label+"="+x.name)
	}
	plan := benchPlan(opts.stages, opts.shapes, opts.nodes, opts.impls, opts.count, opts.gangs)
	for i := range plan {
		plan[i].Preemptors = opts.preemptors
		plan[i].FeatureGates = opts.featureGates
		plan[i].Extra = strings.Join(extras, ",")
	}
	fmt.Fprintf(stderr, "compare: built in %s; %d runs: %d rounds of %d benchmarks x %d implementations, interleaved\n",
		elapsed(), len(plan), opts.count, len(opts.stages)*len(opts.shapes)*len(opts.nodes), len(opts.impls))
	var results bytes.Buffer
	width := len(strconv.Itoa(len(plan)))
	// An implementation that refuses a benchmark's cluster or gates (the
	// bench package skips it, naming why) is skipped in every round.
	skipped := map[string]bool{}
	for i, r := range plan {
		fmt.Fprintf(stderr, "[%*d/%d %s] %s, round %d/%d", width, i+1, len(plan), elapsed(), r.name(), r.Round, opts.count)
		if skipped[r.name()] {
			fmt.Fprintf(stderr, ": skipped, as in round 1\n")
			continue
		}
		fmt.Fprintln(stderr)
		out, err := runner.Run(ctx, bin, r.args(opts.benchtime))
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(out, []byte("Benchmark"+r.name())) {
			// Without -test.v a skipped benchmark prints nothing: ask
			// again with it for the reason.
			vout, err := runner.Run(ctx, bin, append(r.args(opts.benchtime), "-test.v"))
			why, ok := skipReason(vout, r.name())
			if err != nil || !ok {
				return nil, badf("run of %s printed no result:\n%s", r.name(), out)
			}
			fmt.Fprintf(stderr, "compare: %s skipped: %s\n", r.name(), why)
			skipped[r.name()] = true
			continue
		}
		results.Write(out)
	}
	fmt.Fprintf(stderr, "compare: %d runs done in %s\n", len(plan), elapsed())
	if results.Len() == 0 {
		return nil, badf("every run was skipped")
	}
	if err := writeRaw(opts.raw, results.Bytes(), stderr); err != nil {
		return nil, err
	}
	rs, err := benchcmp.Read(bytes.NewReader(results.Bytes()), "bench")
	if err != nil {
		return nil, err
	}
	if opts.plot != "" {
		if err := writePlot(opts.plot, rs, "", stderr); err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "compare: plot in %s\n", opts.plot)
	}
	rep, err := benchcmp.Stat(rs, statOptions())
	if err != nil {
		return nil, err
	}
	for _, w := range append(append([]string(nil), rep.Warnings...), rep.Mixed...) {
		fmt.Fprintf(stderr, "compare: warning: %s\n", w)
	}
	return rep, nil
}

// skipReason is why the verbose output of a test binary says it skipped
// the sub-benchmark name: the lines it logged before its "--- SKIP" line,
// without their file:line prefixes; ok is false when it did not skip it.
func skipReason(out []byte, name string) (why string, ok bool) {
	var logged []string
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case line == "Benchmark"+name:
			logged = logged[:0]
		case strings.HasPrefix(line, "    "):
			msg := strings.TrimSpace(line)
			if _, rest, found := strings.Cut(msg, ": "); found && strings.Contains(msg[:len(msg)-len(rest)], ".go:") {
				msg = rest
			}
			logged = append(logged, msg)
		case line == "--- SKIP: Benchmark"+name:
			return strings.Join(logged, "; "), true
		default:
			logged = logged[:0]
		}
	}
	return "", false
}

// writeRaw keeps the raw results in file, or in a new temporary file.
func writeRaw(file string, data []byte, stderr io.Writer) error {
	if file == "" {
		f, err := os.CreateTemp("", "preemptbench-bench-*.txt")
		if err != nil {
			return err
		}
		file = f.Name()
		f.Close()
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "compare: raw results in %s (compare stat %s)\n", file, file)
	return nil
}

// statOptions are benchcmp's defaults with the registry's baselines.
func statOptions() benchcmp.StatOptions {
	o := benchcmp.DefaultStatOptions()
	o.Baselines = registry.Baselines()
	return o
}

func renderBench(rep *benchcmp.Report, opts benchOptions, stdout io.Writer) error {
	var err error
	if opts.markdown {
		err = rep.WriteMarkdown(stdout)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfull suite (every stage, 5 to 15000 nodes): scripts/bench.sh, then compare stat FILE\n")
	for _, st := range opts.stages {
		n := slices.Max(opts.nodes)
		row := fmt.Sprintf("%s/shape=%s/nodes=%d", st, opts.shapes[0], n)
		if synth.IsGangShape(opts.shapes[0]) {
			g := opts.gangs
			if g == 0 {
				g = synth.DefaultGangs(n)
			}
			row += fmt.Sprintf("/gangs=%d", g)
		}
		fmt.Fprintln(stdout, verdict(rep, row))
	}
	return nil
}

// verdict names the fastest implementation on row (by median sec/op) and
// its ratio to each other one, with the p-value.
func verdict(rep *benchcmp.Report, row string) string {
	t := rep.Table("sec/op")
	if t == nil || t.Row(row) == nil {
		return "verdict: no sec/op result for " + row
	}
	r := t.Row(row)
	fastest := -1
	for i, c := range r.Cells {
		if c != nil && (fastest < 0 || c.Center < r.Cells[fastest].Center) {
			fastest = i
		}
	}
	f := r.Cells[fastest]
	var parts []string
	for i, c := range r.Cells {
		if i == fastest || c == nil {
			continue
		}
		cmp := benchcmp.Compare(c.Values, f.Values, benchcmp.DefaultAlpha)
		p := fmt.Sprintf("p=%.3f", cmp.P)
		if !cmp.Significant {
			p += ", not significant"
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", benchcmp.FormatRatio(cmp.Ratio), t.Columns[i], p))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("verdict: only %s ran on %s", t.Columns[fastest], row)
	}
	return fmt.Sprintf("verdict: %s is the fastest on %s: %s", t.Columns[fastest], row, strings.Join(parts, ", "))
}

const benchHelp = `With no command, compare runs the default benchmark job: it builds the
bench test binary once, runs BenchmarkDecide (FindCandidates and
SelectCandidate on a prepared snapshot) of shape basic at 5, 500 and 5000
nodes for every implementation, interleaved (A B C A B C ...) for -count
rounds, then prints benchstat-style tables and a verdict. For the full
suite run scripts/bench.sh.

`
