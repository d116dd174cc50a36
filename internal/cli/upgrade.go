package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/releases"

	"github.com/preemptbench/preemptbench/wire"
)

// Exit codes of upgrade: ExitOK when the decision (node, victims, status,
// violations, candidates) stays the same, even if its message changes;
// ExitDiffer when it changes; ExitBadInput on bad input.

// UpgradeJSON is upgrade's answer.
type UpgradeJSON struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Changed bool   `json:"changed"`
	// DecisionChanged: something other than the message changed (the
	// node, the victims, the status, the violations, the candidates).
	DecisionChanged bool `json:"decisionChanged"`
	// MessageChanged: the message changed.
	MessageChanged bool           `json:"messageChanged"`
	Decisions      []DecisionJSON `json:"decisions"`
	// Causes are the named changes that explain the difference: with each
	// of them set back to From's behaviour (the others at To's), the
	// reference gives From's answer; Explained is false when no switch,
	// alone or all together, reproduces it.
	Causes    []UpgradeCause `json:"causes"`
	Explained bool           `json:"explained"`
	// Note says what the reference could not reproduce, when it could not.
	Note string `json:"note,omitempty"`
}

// UpgradeCause is one named behaviour change.
type UpgradeCause struct {
	Switch   preempt.Switch `json:"switch"`
	Since    string         `json:"since"`
	Upstream string         `json:"upstream"`
	Change   string         `json:"change"`
	// Explains is "decision" or "message".
	Explains string `json:"explains"`
}

// defaultFrom is upgrade's -from default: the oldest release.
var defaultFrom = preempt.Releases[0]

// upgradeSide is one side of an upgrade: a release, or a kubernetes
// source tree (upstream@DIR) answering as its base release.
type upgradeSide struct {
	given string // as -from or -to says it: v1.36.3, or DIR
	name  string // the implementation: upstream@v1.36.3, upstream@DIR
	rel   string // the release whose behaviour switches it has
	tree  string // the tree's absolute directory, "" for a release
}

// resolveSide reads -from or -to: a release of preempt.Releases, or a
// kubernetes source tree (a directory, with or without "upstream@").
func resolveSide(flagName, v string) (upgradeSide, error) {
	given := strings.TrimPrefix(v, "upstream@")
	if slices.Contains(preempt.Releases, given) {
		return upgradeSide{given: given, name: "upstream@" + given, rel: given}, nil
	}
	if fi, err := os.Stat(given); releases.TreeRef(given) || (err == nil && fi.IsDir()) {
		r, err := registry.Tree(given, nil) // LookupRelease notes the base release
		if err != nil {
			return upgradeSide{}, fmt.Errorf("-%s %v", flagName, err)
		}
		return upgradeSide{given: given, name: r.Name(), rel: r.Version, tree: r.Tree.Dir}, nil
	}
	if _, err := preempt.ReleaseBehaviour(given); err != nil {
		return upgradeSide{}, fmt.Errorf("-%s: %v (or a kubernetes source tree: a directory)", flagName, err)
	}
	return upgradeSide{given: given, name: "upstream@" + given, rel: given}, nil
}

func runUpgrade(args []string, stdout, stderr io.Writer) int {
	quietKlog()
	fs := flag.NewFlagSet("upgrade", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var clusterFiles stringList
	fs.Var(&clusterFiles, "cluster", "cluster `file or directory`, as decide reads it; repeatable")
	podFile := fs.String("pod", "", "the preemptor pod (YAML or JSON)")
	from := fs.String("from", defaultFrom, "the release running now, or a kubernetes source `tree` (a directory: a git checkout, or an unpacked module directory)")
	to := fs.String("to", preempt.CurrentRelease, "the release to upgrade to, or a kubernetes source `tree`")
	fuzztime := fs.Duration("fuzztime", 0, "instead of -cluster and -pod: draw problems for this long, and print the smallest one whose decision changes in a way no named behaviour change explains (exit 1), written as files decide reads")
	outDir := fs.String("out", "", "with -fuzztime: the `directory` the smallest problem found is written to (default: a new temporary directory)")
	offset := fs.Int("offset", 0, "dry-run offset into the potential nodes (upstream draws it at random)")
	pct := fs.Int("min-candidate-nodes-percentage", int(preempt.DefaultConfig().MinCandidateNodesPercentage), "DefaultPreemptionArgs.minCandidateNodesPercentage")
	abs := fs.Int("min-candidate-nodes-absolute", int(preempt.DefaultConfig().MinCandidateNodesAbsolute), "DefaultPreemptionArgs.minCandidateNodesAbsolute")
	nowFlag := fs.String("now", "", "RFC3339 time used as start time of pods without one (default: the current time)")
	var gates featureGatesFlag
	fs.Var(&gates, "feature-gates", "kube-scheduler's --feature-gates, `K=V,...`, the same in both releases (repeated, the flags merge, later keys overriding)")
	async := fs.Bool("async", true, "asynchronous preemption (SchedulerAsyncPreemption)")
	execTimeout := fs.Duration("exec-timeout", wire.DefaultTimeout, "how long an earlier release's child may take to answer one call")
	output := fs.String("o", "text", "output: text or json")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare upgrade: "+format+"\n", a...)
		return ExitBadInput
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected arguments %q", fs.Args())
	case *fuzztime < 0:
		return bad("-fuzztime %v: want a positive duration", *fuzztime)
	case *fuzztime > 0 && (len(clusterFiles) > 0 || *podFile != ""):
		return bad("-fuzztime draws its own problems: no -cluster or -pod with it")
	case *fuzztime == 0 && *outDir != "":
		return bad("-out goes with -fuzztime")
	case *fuzztime == 0 && (len(clusterFiles) == 0 || *podFile == ""):
		return bad("-cluster and -pod are required (or -fuzztime)")
	case *output != "text" && *output != "json":
		return bad("-o %q: want text or json", *output)
	}
	fromSide, err := resolveSide("from", *from)
	if err != nil {
		return bad("%v", err)
	}
	toSide, err := resolveSide("to", *to)
	if err != nil {
		return bad("%v", err)
	}
	fi, ti := slices.Index(preempt.Releases, fromSide.rel), slices.Index(preempt.Releases, toSide.rel)
	switch {
	case fromSide.tree == "" && toSide.tree == "" && fi >= ti:
		return bad("-from %s must be an earlier release than -to %s", *from, *to)
	case fi > ti:
		return bad("-from %s (%s) must not be a later release than -to %s (%s)", *from, fromSide.rel, *to, toSide.rel)
	case fromSide.name == toSide.name || (fromSide.tree != "" && fromSide.tree == toSide.tree):
		return bad("-from %s and -to %s are the same", *from, *to)
	}
	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return bad("-now: %v", err)
		}
		now = t
	}
	fg, err := parseFeatureGates(gates.String())
	if err != nil {
		return bad("%v", err) // it names the flag
	}
	cfg := preempt.DefaultConfig()
	cfg.Synchronous, cfg.FeatureGates = !*async, fg
	cfg.MinCandidateNodesPercentage, cfg.MinCandidateNodesAbsolute = int32(*pct), int32(*abs)
	if err := cfg.Validate(); err != nil {
		return bad("%v", err)
	}
	if *fuzztime > 0 {
		return fuzzUpgrade(fromSide, toSide, cfg, *fuzztime, *outDir, *execTimeout, *output, stdout, stderr)
	}
	opts := decideOptions{clusterFiles: clusterFiles, podFile: *podFile}
	opts.loadOpts = loader.Options{MaxBytes: loader.MaxInputBytes}
	cluster, pod, err := opts.load(stderr)
	if err != nil {
		return bad("%v", err)
	}
	res, err := upgrade(cluster, pod, cfg, int32(*offset), now, fromSide, toSide, *execTimeout, stderr)
	if err != nil {
		return bad("%v", err)
	}
	if *output == "json" {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		writeUpgrade(stdout, res)
	}
	if res.DecisionChanged {
		return ExitDiffer
	}
	return ExitOK
}

// upgrade decides with upstream's own code at both releases and, when
// the answers differ, finds the switches that explain it with the
// reference: each switch made after from, set back to from's behaviour
// alone (the others at to's), and then all of them together.
func upgrade(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config, offset int32, now time.Time, fromSide, toSide upgradeSide, timeout time.Duration, progress io.Writer) (UpgradeJSON, error) {
	impls, err := upgradeImpls(fromSide, toSide, timeout, progress)
	if err != nil {
		return UpgradeJSON{From: fromSide.given, To: toSide.given}, err
	}
	defer closeImpls(impls[:])
	return upgradeWith(c, pod, cfg, offset, now, fromSide, toSide, impls)
}

// upgradeImpls are the implementations of both sides, each breaking the
// final tie of the node pick in list order (the children do; the
// in-process upstream would draw it from a map's order), so that a
// difference is never a tie drawn two ways.
func upgradeImpls(fromSide, toSide upgradeSide, timeout time.Duration, progress io.Writer) ([2]preempt.Implementation, error) {
	var impls [2]preempt.Implementation
	for i, side := range []upgradeSide{fromSide, toSide} {
		impl, ok, err := registry.LookupRelease(side.name, timeout, progress)
		if err == nil && !ok {
			err = fmt.Errorf("no upstream implementation of %s", side.given)
		}
		if err != nil {
			closeImpls(impls[:i])
			return impls, err
		}
		impls[i] = harness.Deterministic(impl)
	}
	return impls, nil
}

// upgradeWith is upgrade with both sides' implementations.
func upgradeWith(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config, offset int32, now time.Time, fromSide, toSide upgradeSide, impls [2]preempt.Implementation) (UpgradeJSON, error) {
	from, to := fromSide.rel, toSide.rel
	res := UpgradeJSON{From: fromSide.given, To: toSide.given, Causes: []UpgradeCause{}}
	var answers []DecisionJSON
	for i, side := range []upgradeSide{fromSide, toSide} {
		j, err := decideAt(impls[i], c, pod, cfg, side.rel, offset, now)
		if err != nil {
			return res, err
		}
		j.Implementation = side.name
		answers = append(answers, j)
	}
	res.Decisions = answers
	old, cur := answers[0], answers[1]
	res.DecisionChanged = !sameDecision(old, cur)
	res.MessageChanged = old.Message != cur.Message
	res.Changed = res.DecisionChanged || res.MessageChanged
	if !res.Changed {
		res.Explained = true
		return res, nil
	}
	// The reference must give both releases' answers first.
	ref := reference.Impl{}
	for i, side := range []upgradeSide{fromSide, toSide} {
		j, err := decideAt(ref, c, pod, cfg, side.rel, offset, now)
		if err != nil {
			return res, err
		}
		if !sameDecision(j, answers[i]) || j.Message != answers[i].Message {
			res.Note = fmt.Sprintf("the reference at %s does not give %s's answer: the difference is not one of the named changes", side.rel, side.name)
			return res, nil
		}
	}
	fromB, _ := preempt.ReleaseBehaviour(from)
	toB, _ := preempt.ReleaseBehaviour(to)
	var changed []preempt.SwitchInfo
	for _, si := range preempt.Switches {
		if fromB.On(si.Switch) != toB.On(si.Switch) {
			changed = append(changed, si)
		}
	}
	decisionExplained, messageExplained := !res.DecisionChanged, !res.MessageChanged
	for _, si := range changed {
		cfg := cfg
		cfg.Switches = map[preempt.Switch]bool{si.Switch: fromB.On(si.Switch)}
		j, err := decideAt(ref, c, pod, cfg, to, offset, now)
		if err != nil {
			return res, err
		}
		cause := UpgradeCause{Switch: si.Switch, Since: si.Since, Upstream: si.Upstream, Change: si.Change}
		if res.DecisionChanged && sameDecision(j, old) {
			cause.Explains, decisionExplained = "decision", true
			res.Causes = append(res.Causes, cause)
			// A message that comes with the decision (an Unschedulable
			// one) changes with it.
			messageExplained = messageExplained || j.Message == old.Message
		}
		if res.MessageChanged && j.Message == old.Message && sameDecision(j, cur) {
			cause.Explains, messageExplained = "message", true
			res.Causes = append(res.Causes, cause)
		}
	}
	if !decisionExplained && len(changed) == 0 {
		res.Note = fmt.Sprintf("no named change lies between %s and %s", from, to)
	} else if !decisionExplained {
		// Several changes together: every switch back is from's answer
		// (checked above); name them all.
		for _, si := range changed {
			if si.Switch != preempt.SwitchSuccessMessage {
				res.Causes = append(res.Causes, UpgradeCause{Switch: si.Switch, Since: si.Since, Upstream: si.Upstream, Change: si.Change, Explains: "decision (together)"})
			}
		}
		res.Note = "no single change explains the new decision: the changes named together do"
		decisionExplained = true
	}
	if !messageExplained && res.DecisionChanged {
		// The message changes with the decision (v1.36.3 -> v1.37.2's
		// Unschedulable in place of a Success without a message): every
		// switch back is from's answer, message included (checked
		// above), so the changes named explain it together.
		if res.Note == "" {
			res.Note = "the message changes with the decision: the changes named explain it together"
		}
		messageExplained = true
	}
	res.Explained = decisionExplained && messageExplained
	return res, nil
}

// sameDecision compares two answers but for the implementation and the
// message.
func sameDecision(a, b DecisionJSON) bool {
	a.Implementation, b.Implementation = "", ""
	a.Message, b.Message = "", ""
	return cmp.Equal(a, b)
}

// decideAt is impl's decision at release r; for an implementation that
// breaks the node pick's final tie at random (a tree), the reference's
// choice among the equal-best nodes when it chose another
// (conformance.Untie), so that a draw is not a change.
func decideAt(impl preempt.Implementation, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config, r string, offset int32, now time.Time) (DecisionJSON, error) {
	cfg.Release = r
	ctx := context.Background()
	res, err := harness.DecideValid(ctx, impl, c, pod, cfg, offset, now)
	if err == nil && agreement.TieIsRandom(impl) {
		res.Decision, err = conformance.Untie(ctx, c, pod, cfg, offset, now, impl, res)
	}
	if err != nil {
		return DecisionJSON{}, fmt.Errorf("%s at %s: %w", impl.Name(), r, err)
	}
	return ToJSON(Outcome{Implementation: impl.Name(), Result: res}), nil
}

// writeUpgrade prints res for an operator.
func writeUpgrade(w io.Writer, res UpgradeJSON) {
	if !res.Changed {
		fmt.Fprintf(w, "upgrade %s -> %s: the same decision\n", res.From, res.To)
		writeText(w, res.Decisions[1])
		return
	}
	what := "the decision changes"
	if !res.DecisionChanged {
		what = "the same decision, a different message"
	}
	fmt.Fprintf(w, "upgrade %s -> %s: %s\n", res.From, res.To, what)
	for _, d := range res.Decisions {
		fmt.Fprintf(w, "  %s: %s\n", d.Implementation, summary(d))
	}
	for _, c := range res.Causes {
		fmt.Fprintf(w, "  cause (%s): %s since %s: %s [%s]\n", c.Explains, c.Switch, c.Since, c.Change, c.Upstream)
	}
	if res.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", res.Note)
	}
}

// summary is a decision on one line.
func summary(d DecisionJSON) string {
	var b strings.Builder
	b.WriteString(string(d.Status))
	if d.NominatedNode != "" {
		fmt.Fprintf(&b, " on %s", d.NominatedNode)
	}
	if len(d.Victims) > 0 {
		var vs []string
		for _, v := range d.Victims {
			vs = append(vs, preempt.Key(v.Namespace, v.Name))
		}
		fmt.Fprintf(&b, ", victims %s", strings.Join(vs, ", "))
	}
	fmt.Fprintf(&b, ", %d PDB violation(s)", d.NumPDBViolations)
	if d.Message != "" {
		fmt.Fprintf(&b, ", message %q", d.Message)
	} else {
		b.WriteString(", no message")
	}
	return b.String()
}
