package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/internal/explain"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"

	"github.com/preemptbench/preemptbench/wire"
)

// implementations returns the implementations decide can run, by name
// (registry.All); the first is the one the others are compared with. A
// test swaps it for one with a broken implementation.
var implementations = registry.All

func implByName(name string) (preempt.Implementation, bool) {
	for _, impl := range implementations() {
		if impl.Name() == name {
			return impl, true
		}
	}
	return nil, false
}

func implNames() string {
	var names []string
	for _, impl := range implementations() {
		names = append(names, impl.Name())
	}
	return strings.Join(names, ", ")
}

// Outcome is what decide reports for one implementation: the filter phase
// and, when the pod fits nowhere, the preemption decision.
type Outcome struct {
	Implementation string
	harness.Result
}

// DecisionJSON is the JSON form of a decision, keys in this order.
type DecisionJSON struct {
	Implementation   string       `json:"implementation"`
	Status           preempt.Code `json:"status"`
	Message          string       `json:"message"`
	FeasibleNodes    []string     `json:"feasibleNodes"`
	NominatedNode    string       `json:"nominatedNode"`
	NumPDBViolations int          `json:"numPDBViolations"`
	// NumPodGroupDisruptions counts the chosen candidate's victims that are
	// pod groups (v1.37's candidate field; 0 for single pods).
	NumPodGroupDisruptions int                 `json:"numPodGroupDisruptions"`
	Victims                []preempt.Victim    `json:"victims"`
	Candidates             []preempt.Candidate `json:"candidates"`
	ClearedNominations     []preempt.PodRef    `json:"clearedNominations"`
	// Under asynchronous preemption, what failed in the background (only
	// when something did).
	ActuationErrors    []string `json:"actuationErrors,omitempty"`
	PreemptorActivated bool     `json:"preemptorActivated,omitempty"`
	// Actions are the API calls, with -actions or -fail.
	Actions []preempt.Action `json:"actions,omitempty"`
	// Explanation is why, with -explain.
	Explanation *explain.Explanation `json:"explanation,omitempty"`
	// ServerDryRun are the decision's API calls as the API server answered
	// them with dryRun=All, with -kubeconfig -apply=server-dry-run.
	ServerDryRun []preempt.Action `json:"serverDryRun,omitempty"`
}

// ToJSON converts an outcome, with every list non-nil.
func ToJSON(o Outcome) DecisionJSON {
	d := o.Decision
	out := DecisionJSON{
		Implementation:         o.Implementation,
		Status:                 d.Status,
		Message:                d.Message,
		FeasibleNodes:          append([]string{}, o.Feasible...),
		NominatedNode:          d.NominatedNode,
		NumPDBViolations:       d.NumPDBViolations,
		NumPodGroupDisruptions: d.NumPodGroupDisruptions,
		Victims:                append([]preempt.Victim{}, d.Victims...),
		Candidates:             []preempt.Candidate{},
		ClearedNominations:     harness.ClearedNominations(d.Actions),
		ActuationErrors:        d.ActuationErrors,
		PreemptorActivated:     d.PreemptorActivated,
	}
	sort.Strings(out.FeasibleNodes)
	for _, c := range d.Candidates {
		c.Victims = append([]preempt.Victim{}, c.Victims...)
		out.Candidates = append(out.Candidates, c)
	}
	return out
}

// decideOptions are decide's flags, checked.
type decideOptions struct {
	clusterFiles []string
	podFile      string
	podGroupFile string // -pod-group: a gang preemptor
	all          bool   // -impl all: the output is a list
	impls        []preempt.Implementation
	offset       int32
	now          time.Time
	text         bool
	cfg          preempt.Config
	sched        *schedulerConfig // -config
	faults       []harness.Fault
	actions      bool // report the API calls
	explain      bool
	loadOpts     loader.Options
	live         *liveOptions // -kubeconfig: the cluster an API server holds
}

// errDiffer is decide -pod-group's error when the implementations
// disagree (the diffs are on stderr): exit code ExitDiffer.
var errDiffer = errors.New("")

// badInput is an error on the command's input: exit code 2.
type badInput struct{ msg string }

func (e badInput) Error() string { return e.msg }

func badf(format string, a ...any) error { return badInput{fmt.Sprintf(format, a...)} }

func runDecide(args []string, stdout, stderr io.Writer) int {
	quietKlog()
	opts, err := parseDecide(args, stderr)
	defer closeImpls(opts.impls)
	if err == nil && opts.live != nil && opts.live.pending {
		var code int
		if code, err = decidePending(opts, stdout, stderr); err == nil {
			return code
		}
	} else if err == nil {
		if opts.podGroupFile != "" {
			if err = decidePodGroup(opts, stdout, stderr); err == nil {
				return ExitOK
			}
			if err == errDiffer {
				return ExitDiffer
			}
		} else {
			var res decideResult
			if res, err = decide(opts, stderr); err == nil {
				return renderDecide(res, opts, stdout, stderr)
			}
		}
	}
	if err == flag.ErrHelp {
		return ExitOK // asked for the usage, which the flag package printed
	}
	if err.Error() != "" {
		fmt.Fprintf(stderr, "compare decide: %v\n", err)
	}
	return ExitBadInput
}

// closeImpls stops what the implementations run (an exec: child and its
// process group, a release's child), removing their temporary
// directories.
func closeImpls(impls []preempt.Implementation) {
	for _, impl := range impls {
		if c, ok := impl.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

// quietKlog silences klog's global logger, once: upstream's asynchronous
// executor logs the API errors it meets to it (the decision reports them),
// and its goroutine may still log after a decision returned, so the logger
// is set before any decision and never again.
var quietKlog = sync.OnceFunc(func() { klog.SetLogger(logr.Discard()) })

func parseDecide(args []string, stderr io.Writer) (decideOptions, error) {
	fs := flag.NewFlagSet("decide", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var clusterFiles stringList
	fs.Var(&clusterFiles, "cluster", "cluster `file or directory`: kubectl output (a List, typed lists, objects; YAML or JSON) or a `kubectl cluster-info dump --output-directory`; repeat it to read several as one cluster")
	podFile := fs.String("pod", "", "the preemptor pod (YAML or JSON)")
	podGroupFile := fs.String("pod-group", "", "a gang preemptor instead of -pod (needs -feature-gates GenericWorkload=true): a `file` holding one PodGroup and its unscheduled member pods in queue order; runs PodGroupPostFilter with the placement -placer names")
	placer := fs.String("placer", placerFirstFit, "with -pod-group, how the members are placed once the potential victims are gone: "+placerFirstFit+" (the contract's first fit, every implementation) or "+placerScheduler+" (kube-scheduler's own pod-group scheduling cycle: filter, score, one of the best nodes at random; -impl upstream only)")
	implName := fs.String("impl", "reference", "implementation: "+implNames()+", "+strings.Join(registry.ReleaseNames(), ", ")+" (upstream at that release: an earlier one is its module releases/VERSION, built on first use and run as a child process), upstream@DIR (a kubernetes source tree, built the same way, answering as the newest release at or below its version), exec:COMMAND (an implementation served over package wire's protocol by a child process), a comma-separated list of those (compared with the first), or all")
	execTimeout := fs.Duration("exec-timeout", wire.DefaultTimeout, "how long an exec: implementation, or an earlier release, may take to answer one call before it is killed")
	offset := fs.Int("offset", 0, "dry-run offset into the potential nodes (upstream draws it at random)")
	nowFlag := fs.String("now", "", "RFC3339 time used as start time of pods without one (default: the current time)")
	output := fs.String("o", "json", "output: json or text")
	pct := fs.Int("min-candidate-nodes-percentage", int(preempt.DefaultConfig().MinCandidateNodesPercentage), "DefaultPreemptionArgs.minCandidateNodesPercentage")
	abs := fs.Int("min-candidate-nodes-absolute", int(preempt.DefaultConfig().MinCandidateNodesAbsolute), "DefaultPreemptionArgs.minCandidateNodesAbsolute")
	configFile := fs.String("config", "", "a KubeSchedulerConfiguration `file` (kube-scheduler's --config): its extenders and the DefaultPreemption args of the pod's profile")
	async := fs.Bool("async", true, "asynchronous preemption (SchedulerAsyncPreemption, on by default since v1.33); -async=false is the synchronous path of earlier releases")
	var gates featureGatesFlag
	fs.Var(&gates, "feature-gates", "kube-scheduler's --feature-gates: `K=V,...` set on top of "+preempt.CurrentRelease+"'s defaults (unknown gates, bad values and gates locked to their default are errors; repeated, the flags merge, later keys overriding); an implementation that does not model a gate set away from its default refuses")
	var faults stringList
	fs.Var(&faults, "fail", "make one API call fail: `VERB:NAMESPACE/NAME[/status]` (delete, or patch of the status); repeatable")
	actions := fs.Bool("actions", false, "report the API calls in the output (always with -fail)")
	strict := fs.Bool("strict", false, "refuse unknown and duplicate fields (by default each is named in a note on stderr), as the API server's strict field validation")
	maxInput := fs.Int64("max-input-bytes", loader.MaxInputBytes, "the largest input file read, in bytes (what bounds memory is -max-decoded-bytes)")
	maxDecoded := fs.Int64("max-decoded-bytes", loader.MaxDecodedBytes, "the most memory the cluster's objects may take once decoded, in bytes: what bounds decide's memory (under the default, 1 GB whatever the input), where the bytes of text do not (an object takes 1 to 30 times its text)")
	release := fs.String("release", "", "the release whose behaviour reference and optimized reproduce ("+strings.Join(preempt.Releases, ", ")+"; default: each upstream@VERSION its own, the others "+preempt.CurrentRelease+"); an upstream adapter of another release refuses")
	kubeconfig := fs.String("kubeconfig", "", "read the cluster from the API server this kubeconfig `file` names, instead of -cluster; -pod is then NAMESPACE/NAME of a pod it holds (or -pending); nothing is changed")
	kubeContext := fs.String("context", "", "with -kubeconfig: the kubeconfig context to use (default: its current context)")
	pending := fs.Bool("pending", false, "with -kubeconfig: decide for every pod the API server holds unschedulable (pending, PodScheduled=False with reason Unschedulable), in queue order, each on the cluster as it is")
	apply := fs.String("apply", "", "with -kubeconfig: server-dry-run sends the decision's API calls to the API server with dryRun=All (it validates and admits each, and changes nothing) and reports its answers (serverDryRun)")
	kubeTimeout := fs.Duration("kube-timeout", liveExchangeTimeout, "with -kubeconfig: the bound on each exchange with the API server as a whole (reading the cluster and the pod, -pending's listing, -apply's calls), besides the bound on each request")
	explainFlag := fs.Bool("explain", false, "explain the decision: the dry run's sampling window, every candidate's five criteria and the one that eliminated it, why every other node is not a candidate, the events upstream would record")
	if err := fs.Parse(args); err != nil {
		return decideOptions{}, parseError(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	opts := decideOptions{clusterFiles: clusterFiles, podFile: *podFile, podGroupFile: *podGroupFile, text: *output == "text", all: *implName == "all" || strings.Contains(*implName, ",")}
	if _, err := preempt.ReleaseBehaviour(*release); err != nil {
		return opts, badf("-release: %v", err)
	}
	if *kubeconfig != "" {
		live, err := parseLive(*kubeconfig, *kubeContext, *podFile, *pending, *apply, *kubeTimeout, clusterFiles, *podGroupFile)
		if err != nil {
			return opts, err
		}
		opts.live, opts.podFile = live, ""
	} else if *kubeContext != "" || *pending || *apply != "" || set["kube-timeout"] {
		return opts, badf("-context, -pending, -apply and -kube-timeout read a live cluster: they need -kubeconfig")
	}
	switch {
	case fs.NArg() > 0:
		return opts, badf("unexpected arguments %q", fs.Args())
	case *podFile != "" && *podGroupFile != "":
		return opts, badf("-pod and -pod-group exclude each other")
	case opts.live == nil && (len(clusterFiles) == 0 || (*podFile == "" && *podGroupFile == "")):
		return opts, badf("-cluster and -pod (or -pod-group) are required, or -kubeconfig and -pod NAMESPACE/NAME (or -pending)")
	case *output != "json" && *output != "text":
		return opts, badf("-o must be json or text, not %q", *output)
	case *offset < 0 || *offset > 1<<31-1:
		return opts, badf("-offset %d out of range 0..%d", *offset, 1<<31-1)
	case *pct < -1<<31 || *pct > 1<<31-1 || *abs < -1<<31 || *abs > 1<<31-1:
		return opts, badf("candidate settings out of int32 range")
	}
	opts.offset = int32(*offset)
	opts.cfg = preempt.Config{MinCandidateNodesPercentage: int32(*pct), MinCandidateNodesAbsolute: int32(*abs), Synchronous: !*async, Release: *release}
	fg, err := parseFeatureGates(gates.String())
	if err != nil {
		return opts, err
	}
	if v, ok := fg[preempt.AsyncPreemptionGate]; ok {
		if set["async"] && v != *async {
			return opts, badf("-feature-gates %s=%t contradicts -async=%t", preempt.AsyncPreemptionGate, v, *async)
		}
		opts.cfg.Synchronous = !v
	}
	opts.cfg.FeatureGates = fg
	if err := opts.cfg.Validate(); err != nil {
		return opts, badf("invalid candidate settings: %v", err)
	}
	if *configFile != "" {
		if set["min-candidate-nodes-percentage"] || set["min-candidate-nodes-absolute"] {
			return opts, badf("-config sets the DefaultPreemption args: drop -min-candidate-nodes-percentage and -min-candidate-nodes-absolute")
		}
		sc, err := readSchedulerConfig(*configFile)
		if err != nil {
			return opts, badf("-config %v", err)
		}
		opts.sched = sc
	}
	for _, f := range faults {
		fault, err := harness.ParseFault(f)
		if err != nil {
			return opts, badf("-fail: %v", err)
		}
		opts.faults = append(opts.faults, fault)
	}
	opts.actions = *actions || len(opts.faults) > 0
	opts.explain = *explainFlag
	if *maxInput <= 0 {
		return opts, badf("-max-input-bytes %d: want a positive size", *maxInput)
	}
	if *maxDecoded <= 0 {
		return opts, badf("-max-decoded-bytes %d: want a positive size", *maxDecoded)
	}
	opts.loadOpts = loader.Options{Strict: *strict, MaxBytes: *maxInput, MaxDecodedBytes: *maxDecoded}
	if *podFile == "-" && slices.Contains(clusterFiles, "-") {
		return opts, badf("-cluster - and -pod - cannot both read standard input")
	}
	opts.now = time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return opts, badf("-now: %v", err)
		}
		opts.now = t
	}
	if err := checkPlacer(*placer, *implName, *podGroupFile); err != nil {
		return opts, err
	}
	if *implName == "all" {
		opts.impls = implementations()
		return opts, nil
	}
	if *execTimeout <= 0 {
		return opts, badf("-exec-timeout %v: want a positive duration", *execTimeout)
	}
	for _, name := range strings.Split(*implName, ",") {
		name = strings.TrimSpace(name)
		if cmd, ok := strings.CutPrefix(name, "exec:"); ok {
			args := strings.Fields(cmd)
			if len(args) == 0 {
				return opts, badf("-impl %q: exec: wants a command", name)
			}
			opts.impls = append(opts.impls, wire.Command(*execTimeout, args...))
			continue
		}
		if impl, ok, err := registry.LookupRelease(name, *execTimeout, stderr); ok {
			if err != nil {
				return opts, badf("-impl %v", err)
			}
			opts.impls = append(opts.impls, impl)
			continue
		}
		impl, ok := implByName(name)
		if !ok {
			return opts, badf("unknown implementation %q (known: %s, %s, upstream@DIR, exec:COMMAND, all)", name, implNames(), strings.Join(registry.ReleaseNames(), ", "))
		}
		opts.impls = append(opts.impls, impl)
	}
	opts.impls = withPlacer(opts.impls, *placer)
	return opts, nil
}

// featureGatesFlag is -feature-gates, repeatable as kube-scheduler's
// --feature-gates is: component-base's flag (cliflag's
// ColonSeparatedMultimapStringString under the component globals
// registry) keeps every value and sets the gates from them joined with
// commas, once, so that a later key overrides an earlier one and the
// others are kept, and the gates' dependencies are checked on the whole.
type featureGatesFlag []string

func (f *featureGatesFlag) String() string { return strings.Join(*f, ",") }

func (f *featureGatesFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// parseFeatureGates parses -feature-gates as kube-scheduler parses
// --feature-gates (preempt.ParseFeatureGates), its error a usage error
// naming the flag.
func parseFeatureGates(value string) (map[string]bool, error) {
	fg, err := preempt.ParseFeatureGates(value)
	if err != nil {
		return nil, badf("-feature-gates: %v", err)
	}
	return fg, nil
}

// loadGCPercent is the garbage collector's target while decide loads.
const loadGCPercent = 60

// load reads the cluster and the preemptor, and notes on stderr what the
// loader left out as kube-scheduler would; it refuses a preemptor with
// scheduling gates (gatedPod), for which no scheduling cycle runs.
func (opts decideOptions) load(stderr io.Writer) (*preempt.Cluster, *v1.Pod, error) {
	cluster, pod, err := opts.loadAny(stderr)
	if err == nil {
		err = gatedPod(pod)
	}
	return cluster, pod, err
}

// loadAny is load without the refusal of a gated pod.
func (opts decideOptions) loadAny(stderr io.Writer) (*preempt.Cluster, *v1.Pod, error) {
	// The loader keeps the cluster it reads, and a YAML dump's items go
	// through go-yaml, which leaves some forty times their size in
	// garbage: under the default target the heap reaches twice the
	// cluster at each cycle, and the process's peak of memory comes while
	// loading. A target of 60 keeps that peak under the decision's (some
	// 30 MB less at 5000 nodes and 20000 pods, for a sixth more CPU time
	// in loading); the decision runs under the default target again. GOGC
	// set by the user is left as it is.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(loadGCPercent))
	}
	if opts.live != nil {
		return opts.live.load(opts.loadOpts, stderr)
	}
	cluster, opts, err := opts.loadCluster(stderr)
	if err != nil {
		return nil, nil, err
	}
	podData, err := loader.ReadPodInput(opts.podFile, opts.loadOpts)
	if err != nil {
		return nil, nil, badf("%v", err)
	}
	podName := opts.podFile
	if podName == "-" {
		podName = "standard input"
	}
	pod, podNotes, err := loader.LoadPodWith(podName, podData, opts.loadOpts)
	if err != nil {
		return nil, nil, badf("%v", err)
	}
	for _, n := range podNotes {
		fmt.Fprintf(stderr, "compare decide: note: %s\n", n)
	}
	// LoadPathsWith validated the cluster, and a valid cluster without
	// some of its pods is valid: validating it again would take a tenth
	// of a second at 20000 pods, for nothing.
	return withoutPod(cluster, pod), pod, nil
}

// loadCluster reads -cluster, its notes on stderr; the options it
// returns carry the notifier.
func (opts decideOptions) loadCluster(stderr io.Writer) (*preempt.Cluster, decideOptions, error) {
	opts.loadOpts.Notify = func(n string) { fmt.Fprintf(stderr, "compare decide: note: %s\n", n) }
	cluster, notes, err := loader.LoadPathsWith(opts.clusterFiles, opts.loadOpts)
	if err != nil {
		return nil, opts, badf("%v", err)
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "compare decide: note: %s\n", n)
	}
	return cluster, opts, nil
}

// decideResult is every implementation's decision (outs) and what each
// must equal (wants: the first's, upstream's final tie reconciled), plus
// the disagreements found on the way.
type decideResult struct {
	outs, wants []DecisionJSON
	diffErrs    []string
	refused     []string // names of the implementations that refused
}

func decide(opts decideOptions, stderr io.Writer) (decideResult, error) {
	cluster, pod, err := opts.load(stderr)
	if err != nil {
		return decideResult{}, err
	}
	ctx := context.Background()
	cfg := opts.cfg
	if opts.sched != nil {
		if cfg, err = opts.sched.preemptConfig(pod, opts.cfg.Synchronous); err != nil {
			return decideResult{}, badf("-config %v", err)
		}
		cfg.FeatureGates = opts.cfg.FeatureGates
		cfg.Release = opts.cfg.Release
	}
	var outcomes []Outcome
	var answered []preempt.Implementation
	var refusals, refused []string
	for _, impl := range opts.impls {
		// load validated the cluster (LoadPathsWith, then a subset of it).
		cfg := releaseFor(impl, cfg)
		r, err := harness.DecideValid(ctx, impl, cluster, pod, cfg, opts.offset, opts.now, opts.faults...)
		if err == nil && len(r.Feasible) > 0 {
			if url := filterExtenderFor(cfg.Extenders, pod); url != "" {
				return decideResult{}, badf("the filters let %s through; kube-scheduler would then call the filter verb of extender %s, which is not modelled", strings.Join(r.Feasible, ", "), url)
			}
		}
		var u *preempt.Unmodelled
		if errors.As(err, &u) {
			refusals = append(refusals, fmt.Sprintf("%s: %v", impl.Name(), err))
			refused = append(refused, impl.Name())
			continue
		}
		if err != nil {
			return decideResult{}, badf("%s: %v", impl.Name(), err)
		}
		outcomes = append(outcomes, Outcome{Implementation: impl.Name(), Result: r})
		answered = append(answered, impl)
	}
	if len(outcomes) == 0 {
		hint := ""
		if !opts.all && harness.Refusal(upstream.Impl{}, cluster, pod) == nil {
			hint = " (-impl upstream runs kube-scheduler's own filters, the whole default profile)"
		}
		return decideResult{}, badf("%s%s", strings.Join(refusals, "; "), hint)
	}
	for _, r := range refusals {
		fmt.Fprintf(stderr, "compare decide: note: %s; the others answer\n", r)
	}
	for _, o := range outcomes {
		if o.Filter.PreFilterRejected && o.Decision.Status == preempt.Error {
			reason := ""
			if len(o.Filter.NodeStatuses) > 0 {
				reason = " (" + strings.Join(o.Filter.NodeStatuses[0].Reasons, "; ") + ")"
			}
			fmt.Fprintf(stderr, "compare decide: note: a PreFilter plugin before DynamicResources rejected the pod on every node%s; kube-scheduler then runs DynamicResources' PostFilter first, which fails reading the state its PreFilter never wrote (%q), and DefaultPreemption never runs: nothing is preempted and the pod's nomination is left as it is\n", reason, o.Decision.Message)
			break
		}
	}
	for _, o := range outcomes {
		for _, f := range unmatchedFaults(opts.faults, o.Decision.Actions) {
			fmt.Fprintf(stderr, "compare decide: note: -fail %s matched no API call of %s's decision (%s); nothing failed\n", f, o.Implementation, callsOf(o.Decision.Actions))
		}
	}
	res := decideResult{refused: refused}
	for _, o := range outcomes {
		j := ToJSON(o)
		if opts.actions {
			j.Actions = o.Decision.Actions
		}
		if opts.explain {
			ex := explain.Pod(o.Implementation, o.Result, cluster, pod, cfg)
			j.Explanation = &ex
		}
		if opts.live != nil && opts.live.serverDryRun {
			ctx, cancel := opts.live.exchange()
			j.ServerDryRun = harness.Replay(ctx, opts.live.client, o.Calls)
			cancel()
			if j.ServerDryRun == nil {
				j.ServerDryRun = []preempt.Action{}
			}
		}
		res.outs = append(res.outs, j)
	}
	res.wants = make([]DecisionJSON, len(res.outs))
	for i := range res.wants {
		res.wants[i] = res.outs[0]
	}
	ref := outcomes[0]
	for i, o := range outcomes[1:] {
		if ref.Request == nil || o.Request == nil {
			continue
		}
		refEv, err := answered[0].NewEvaluator(cluster)
		if err != nil {
			return decideResult{}, badf("%v", err)
		}
		want, note, err := agreement.Expected(ctx, refEv, cluster, ref.Request, ref.Decision, o.Decision, answered[i+1], opts.faults...)
		if err != nil {
			res.diffErrs = append(res.diffErrs, err.Error())
			continue
		}
		if note != "" {
			fmt.Fprintf(stderr, "compare decide: note: %s\n", note)
			reconciled := ref
			reconciled.Decision = want
			res.wants[i+1] = ToJSON(reconciled)
			if opts.actions {
				res.wants[i+1].Actions = want.Actions
			}
		}
	}
	return res, nil
}

// renderDecide prints the decisions (JSON, or text for people) and, when
// they differ, the diffs: on stderr with JSON, inline with text.
func renderDecide(res decideResult, opts decideOptions, stdout, stderr io.Writer) int {
	var buf bytes.Buffer
	diffOut := io.Writer(&buf)
	if opts.text {
		for _, o := range res.outs {
			writeText(&buf, o)
		}
	} else {
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		var v any = res.outs[0]
		if opts.all {
			v = res.outs
		}
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "compare decide: %v\n", err)
			return ExitBadInput
		}
		diffOut = stderr
	}
	code := ExitOK
	for _, e := range res.diffErrs {
		fmt.Fprintf(diffOut, "%s\n", e)
		code = ExitDiffer
	}
	first := res.outs[0].Implementation
	for i, o := range res.outs[1:] {
		name := o.Implementation
		want := res.wants[i+1]
		want.Implementation, o.Implementation = "", ""
		// Each explains its own decision, and its calls reach the API
		// server on their own; the decisions are compared.
		want.Explanation, o.Explanation = nil, nil
		want.ServerDryRun, o.ServerDryRun = nil, nil
		if diff := cmp.Diff(want, o); diff != "" {
			fmt.Fprintf(diffOut, "%s differs from %s (-%s +%s):\n%s", name, first, first, name, diff)
			code = ExitDiffer
		}
	}
	if opts.all {
		writeAgreement(diffOut, res, code == ExitOK, !opts.text)
	}
	stdout.Write(buf.Bytes())
	return code
}

// writeAgreement ends -impl all with one line saying whether the
// implementations that answered agree, and which refused.
func writeAgreement(w io.Writer, res decideResult, agree, onStderr bool) {
	var names []string
	for _, o := range res.outs {
		names = append(names, o.Implementation)
	}
	var line string
	switch {
	case len(names) == 1:
		line = "only " + names[0] + " answered"
	case agree && len(names) == 3:
		line = "all three agree (" + strings.Join(names, ", ") + ")"
	case agree:
		line = joinAnd(names) + " agree"
	default:
		line = fmt.Sprintf("%s DISAGREE (exit %d)", joinAnd(names), ExitDiffer)
		if from, to, ok := releaseSpan(names); ok {
			line += fmt.Sprintf("; they are releases %s to %s, whose differences `compare upgrade -from %s -to %s` explains by the switches between them", from, to, from, to)
		}
	}
	if len(res.refused) > 0 {
		line += "; " + joinAnd(res.refused) + " refused (see the note above)"
	}
	if onStderr {
		fmt.Fprintf(w, "compare decide: %s\n", line)
		return
	}
	fmt.Fprintf(w, "agreement: %s\n", line)
}

// releaseSpan is the oldest and newest of the releases the upstream
// adapters among names answer as (upstream: the current release;
// upstream@VERSION: that one), when there are two or more.
func releaseSpan(names []string) (from, to string, ok bool) {
	var vs []string
	for _, n := range names {
		switch v, isRelease := strings.CutPrefix(n, "upstream@"); {
		case n == "upstream":
			vs = append(vs, preempt.CurrentRelease)
		case isRelease && slices.Contains(preempt.Releases, v):
			vs = append(vs, v)
		}
	}
	slices.SortFunc(vs, func(a, b string) int { return slices.Index(preempt.Releases, a) - slices.Index(preempt.Releases, b) })
	vs = slices.Compact(vs)
	if len(vs) < 2 {
		return "", "", false
	}
	return vs[0], vs[len(vs)-1], true
}

// joinAnd joins names as "a, b and c".
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// withoutPod drops the preemptor's own copy from the cluster (a dump taken
// while it was pending holds it); a bound copy is an error Validate reports.
func withoutPod(c *preempt.Cluster, pod *v1.Pod) *preempt.Cluster {
	out := *c
	out.Pods = nil
	for _, p := range c.Pods {
		if p.Namespace == pod.Namespace && p.Name == pod.Name && !preempt.IsBound(p) {
			continue
		}
		out.Pods = append(out.Pods, p)
	}
	return &out
}

func writeText(w io.Writer, d DecisionJSON) {
	fmt.Fprintf(w, "implementation: %s\nstatus:         %s\n", d.Implementation, d.Status)
	if d.Message != "" {
		fmt.Fprintf(w, "message:        %s\n", d.Message)
	}
	if len(d.FeasibleNodes) > 0 {
		fmt.Fprintf(w, "feasible nodes: %s\n", strings.Join(d.FeasibleNodes, ", "))
	}
	if d.NominatedNode != "" {
		fmt.Fprintf(w, "nominated node: %s (%d PDB violations)\n", d.NominatedNode, d.NumPDBViolations)
		for _, v := range d.Victims {
			fmt.Fprintf(w, "  victim %s/%s priority %d", v.Namespace, v.Name, v.Priority)
			if v.PodGroup != "" {
				fmt.Fprintf(w, " podGroup %s", v.PodGroup)
			}
			fmt.Fprintln(w)
		}
	}
	if len(d.Candidates) > 0 {
		fmt.Fprintf(w, "candidates:\n")
		for _, c := range d.Candidates {
			fmt.Fprintf(w, "  %s: %d victims, %d PDB violations\n", c.Node, len(c.Victims), c.NumPDBViolations)
		}
	}
	for _, p := range d.ClearedNominations {
		fmt.Fprintf(w, "cleared nomination: %s/%s\n", p.Namespace, p.Name)
	}
	for _, e := range d.ActuationErrors {
		fmt.Fprintf(w, "failed in the background: %s\n", e)
	}
	if d.PreemptorActivated {
		fmt.Fprintf(w, "the preemptor is moved back to the active queue\n")
	}
	for _, a := range d.Actions {
		fmt.Fprintf(w, "api call: %s\n", a)
	}
	if d.ServerDryRun != nil {
		fmt.Fprintf(w, "server dry run (dryRun=All): %d call(s)\n", len(d.ServerDryRun))
		for _, a := range d.ServerDryRun {
			verdict := "accepted"
			if a.Error != "" {
				verdict = "refused: " + a.Error
			}
			a.Error = ""
			fmt.Fprintf(w, "  %s: %s\n", a, verdict)
		}
	}
	if d.Explanation != nil {
		explain.WriteText(w, *d.Explanation)
	}
	fmt.Fprintln(w)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	if v == "" {
		return fmt.Errorf("empty path")
	}
	*l = append(*l, v)
	return nil
}

// unmatchedFaults are the faults of fs that no call of actions met.
func unmatchedFaults(fs []harness.Fault, actions []preempt.Action) []harness.Fault {
	var out []harness.Fault
	for _, f := range fs {
		met := false
		for _, a := range actions {
			if a.Verb == f.Verb && a.Subresource == f.Subresource && a.Namespace == f.Namespace && a.Name == f.Name {
				met = true
				break
			}
		}
		if !met {
			out = append(out, f)
		}
	}
	return out
}

// callsOf names the calls of actions, for a note.
func callsOf(actions []preempt.Action) string {
	if len(actions) == 0 {
		return "it made none"
	}
	var calls []string
	for _, a := range actions {
		c := a.Verb + " " + preempt.Key(a.Namespace, a.Name)
		if a.Subresource != "" {
			c += "/" + a.Subresource
		}
		calls = append(calls, c)
	}
	return "its calls: " + strings.Join(calls, ", ")
}

// releaseFor is cfg for impl: an upstream adapter of one release
// (preempt.ReleaseFixed) answers as its own release when cfg names none.
func releaseFor(impl preempt.Implementation, cfg preempt.Config) preempt.Config {
	if r, ok := impl.(preempt.ReleaseFixed); ok && cfg.Release == "" {
		cfg.Release = r.UpstreamRelease()
	}
	return cfg
}

// gatedPod refuses a pod with scheduling gates: kube-scheduler's
// SchedulingGates plugin (PreEnqueue) keeps it out of the scheduling queue
// until its gates are removed, so no scheduling cycle, and no PostFilter,
// runs for it.
func gatedPod(pod *v1.Pod) error {
	if len(pod.Spec.SchedulingGates) == 0 {
		return nil
	}
	names := make([]string, len(pod.Spec.SchedulingGates))
	for i, g := range pod.Spec.SchedulingGates {
		names[i] = g.Name
	}
	return badf("pod %s has scheduling gates (%s): kube-scheduler's SchedulingGates plugin keeps it out of the scheduling queue until they are removed, so no scheduling cycle, and no preemption, runs for it", preempt.Key(pod.Namespace, pod.Name), strings.Join(names, ", "))
}
