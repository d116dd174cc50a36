// Package cli is the logic of the compare command; main only calls Run.
package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"

	"github.com/preemptbench/preemptbench/upstream"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitDiffer   = 1 // implementations disagree (decide -impl all)
	ExitBadInput = 2
	ExitBug      = 3 // a crash: recovered, reported on stderr
)

var usage = `usage: compare [<command>] [flags]

with no command: the default benchmark job (as compare bench): build the
bench test binary once, run BenchmarkDecide (shape basic, 5, 500 and 5000
nodes) for every implementation, interleaved, 6 rounds; print the tables and
a verdict. The full suite is scripts/bench.sh.

commands:
  bench   [-bench NAMES] [-shape NAMES] [-nodes N,...] [-impl NAMES|all] [-count N] [-benchtime D] [-o text|markdown] [-raw FILE] [-plot FILE.svg]
          the default benchmark job, with its choices
  plot    [-o FILE.svg] [-filter F] FILE...
          draw time/op and allocs/op against node count (log-log, a line per
          implementation) from benchmark results
  stat    [-table P] [-row P] [-col P] [-ignore P] [-filter F] [-alpha A] [-confidence C] [-o text|markdown|csv|json] FILE...
          benchstat-style tables of benchmark results: a column per
          implementation, ratios and p-values against reference and upstream
  gate    -base FILE -head FILE [-base-impl A -head-impl B] [-max-time 5%] [-max-bytes 0%] [-max-allocs 0%] [-alpha 0.05] [-o text|markdown]
          fail (exit 1) on a significant regression of head against base
  decide  -cluster FILE -pod FILE [-impl NAME|all] [-offset N] [-now RFC3339] [-config FILE] [-async=false] [-fail CALL] [-actions] [-explain] [-o json|text]
          run the filter phase and preemption on a cluster, as kube-scheduler
          ` + upstream.Version + ` would, and print the decision; with -kubeconfig FILE
          [-context NAME] -pod NAMESPACE/NAME (or -pending) on the cluster an
          API server holds, read-only unless -apply=server-dry-run
  scenario -shape NAME -nodes N (1 to 20000) [-seed S] [-dir DIR]
          write a built cluster as DIR/cluster.yaml and DIR/pod.yaml; shapes:
` + wrap(synth.Shapes(), "          ", 78) + `
  upgrade -cluster FILE -pod FILE [-from ` + defaultFrom + `] [-to ` + preempt.CurrentRelease + `] [-now RFC3339] [-offset N] [-feature-gates K=V,...] [-o text|json]
          decide with upstream's own code at both releases; say whether the
          decision changes and which named behaviour change causes it
          (exit 1 when the decision changes, 0 when only its message does);
          -from/-to may be a kubernetes source tree (a directory), and
          -fuzztime D [-out DIR] draws problems instead of -cluster/-pod and
          writes the smallest whose decision changes unexplained (exit 1)
  e2e     [-workload W[,W...]] [-nodes N] [-impl default,optimized[,...]] [-count K] [-raw FILE] [-cpuprofile DIR] [-o text|markdown]
          run upstream's scheduler_perf (its preemption workloads, a real
          kube-apiserver, etcd and kube-scheduler in process) with the stock
          DefaultPreemption and with implementations plugged as its PostFilter,
          interleaved; print SchedulingThroughput and attempt latency tables
  version print this build's version, the upstream release it models and
          the earlier releases -impl upstream@VERSION runs
`

// wrap joins words with ", " into lines of at most width bytes, each
// after indent, the last without a newline.
func wrap(words []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, w := range words {
		if i < len(words)-1 {
			w += ","
		}
		if line != indent && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line)
	return b.String()
}

// commands are the subcommands by name.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"bench":    runBench,
	"stat":     runStat,
	"gate":     runGate,
	"decide":   runDecide,
	"scenario": runScenario,
	"plot":     runPlot,
	"version":  runVersion,
	"upgrade":  runUpgrade,
	"e2e":      runE2E,
}

// parseError is what a command returns for fs.Parse's error: flag.ErrHelp
// (-h, -help: the usage was printed; exit 0), or badInput (the flag
// package said why on stderr; exit 2).
func parseError(err error) error {
	if err == flag.ErrHelp {
		return err
	}
	return badInput{}
}

// parseExit is the exit code of fs.Parse's error: 0 when asked for the
// usage (-h, -help), which the flag package printed; 2 otherwise, the flag
// package having said why.
func parseExit(err error) int {
	if err == flag.ErrHelp {
		return ExitOK
	}
	return ExitBadInput
}

// runVersion prints the module's version, upstream.Version and the
// releases -impl upstream@VERSION runs.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "compare version: takes no arguments, got %q\n", args)
		return ExitBadInput
	}
	v := "(devel)"
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		v = info.Main.Version
	}
	fmt.Fprintf(stdout, "preemptbench %s\nupstream k8s.io/kubernetes %s (kube-scheduler's DefaultPreemption, default profile)\n", v, upstream.Version)
	fmt.Fprintf(stdout, "releases (-impl upstream@VERSION; an earlier one is the module releases/VERSION, built on first use):\n")
	for _, r := range registry.Releases() {
		state := "not built yet"
		if _, err := r.Dir(); err != nil {
			state = err.Error()
		} else if bin := r.Built(); bin != "" {
			state = "built: " + bin
		}
		fmt.Fprintf(stdout, "  %s: k8s.io/kubernetes %s, run as a child process (%s)\n", r.Name(), r.Version, state)
	}
	fmt.Fprintf(stdout, "  upstream@%s: in process (the same as upstream)\n", upstream.Version)
	return ExitOK
}

// memoryLimit is the garbage collector's soft limit
// (debug.SetMemoryLimit) while a command runs: a decision's garbage
// (go-yaml's while loading, the API calls of a decision with many
// victims, kube-scheduler's own) would otherwise take the process to
// twice what it keeps, past 1 GB on inputs well within -max-input-bytes.
// Every command that reads input or decides (decide, upgrade, scenario,
// stat, gate, plot, bench's reading of results) runs under it; e2e does
// not (unlimited), and GOMEMLIMIT set by the user is left as it is. The
// children a command starts over the wire (releases of upstream, exec:
// implementations) run under the same limit (wire passes it on as
// GOMEMLIMIT). It
// bounds nothing by itself: what the objects take is bounded by
// -max-decoded-bytes, and what is live past it only makes the collector
// run more.
const memoryLimit = 768 << 20

// unlimited are the commands that run without memoryLimit: e2e runs a
// kube-apiserver, etcd and kube-scheduler in process, whose heap at
// thousands of nodes is what it measures, and would only be slowed.
var unlimited = map[string]bool{"e2e": true}

// Run executes the command line args and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		// A crash is a bug, never bad input: exit 3 with what to report.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "compare: internal error, please report it with the command and its input: %v\n%s", r, debug.Stack())
			code = ExitBug
		}
	}()
	if os.Getenv("GOMEMLIMIT") == "" && (len(args) == 0 || !unlimited[args[0]]) {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	if len(args) == 0 {
		return runBench(nil, stdout, stderr)
	}
	if cmd, ok := commands[args[0]]; ok {
		return cmd(args[1:], stdout, stderr)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	default:
		if strings.HasPrefix(args[0], "-") { // `compare -count 10`: the default job's flags
			return runBench(args, stdout, stderr)
		}
		fmt.Fprintf(stderr, "compare: unknown command %q\n%s", args[0], usage)
		return ExitBadInput
	}
}
