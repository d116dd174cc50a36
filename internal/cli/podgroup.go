package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/explain"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/preempt"
)

// PodGroupDecisionJSON is `decide -pod-group`'s output for one
// implementation.
type PodGroupDecisionJSON struct {
	Implementation string       `json:"implementation"`
	Status         preempt.Code `json:"status"`
	// Message is PodGroupPostFilter's, "pod group preemption: " prefix
	// included.
	Message string `json:"message"`
	// Nominations are PodGroupPostFilterResult's NominatingInfos as the
	// scheduler applies them: the members it nominates on Success (every
	// member, "" an explicit clear, on an ongoing preemption); none
	// otherwise.
	Nominations []preempt.Nomination `json:"nominations"`
	// Placement is where the cycle's attempt placed the members when the
	// gang fits as the cluster is (status Schedulable): no preemption.
	Placement []preempt.Nomination `json:"placement,omitempty"`
	// Skipped are the members the cycle skipped, being deleted.
	Skipped                []preempt.PodRef `json:"skipped,omitempty"`
	NumPDBViolations       int              `json:"numPDBViolations"`
	NumPodGroupDisruptions int              `json:"numPodGroupDisruptions"`
	Victims                []preempt.Victim `json:"victims"`
	// ClearedNominations are the pods whose nomination the preemption's
	// API calls cleared, as in the single-pod output.
	ClearedNominations []preempt.PodRef `json:"clearedNominations"`
	Actions            []preempt.Action `json:"actions,omitempty"`
	// Explanation is -explain's (explainGang).
	Explanation *explain.GangExplanation `json:"explanation,omitempty"`
}

// loadPodGroup reads -pod-group: one PodGroup and its unscheduled member
// pods, or one CompositePodGroup, its PodGroups and their unscheduled
// member pods, in the file's order (the queue order of each group's
// members; the child groups are taken in (type, name) order, not the
// file's: preempt.GroupNode).
func loadPodGroup(opts decideOptions, stderr io.Writer) (*preempt.PodGroupRequest, error) {
	data, err := loader.ReadInput(opts.podGroupFile, opts.loadOpts)
	if err != nil {
		return nil, badf("%v", err)
	}
	// A member nominated from an earlier attempt names a node of the
	// cluster, not of this file: kept.
	lo := opts.loadOpts
	lo.KeepNominated = true
	g, notes, err := loader.LoadClusterWith(opts.podGroupFile, data, lo)
	if err != nil {
		return nil, badf("-pod-group: %v", err)
	}
	// The loader's notes as every input path prints them; under -strict
	// each is an error here, as the file is the gang itself: an object
	// left out (a member bound to a node, or finished) changes the gang.
	for _, n := range notes {
		if lo.Strict {
			return nil, badf("-pod-group %s (-strict): %s", opts.podGroupFile, n)
		}
		fmt.Fprintf(stderr, "compare decide: note: %s\n", n)
	}
	switch {
	case len(g.CompositePodGroups) > 1:
		return nil, badf("-pod-group %s: want one CompositePodGroup (the preemptor) and its PodGroups, found %d CompositePodGroups", opts.podGroupFile, len(g.CompositePodGroups))
	case len(g.CompositePodGroups) == 0 && len(g.PodGroups) != 1:
		return nil, badf("-pod-group %s: want one PodGroup (or one CompositePodGroup and its PodGroups), found %d PodGroups", opts.podGroupFile, len(g.PodGroups))
	case len(g.CompositePodGroups) == 1 && len(g.PodGroups) == 0:
		return nil, badf("-pod-group %s: CompositePodGroup %s comes without its PodGroups", opts.podGroupFile, preempt.Key(g.CompositePodGroups[0].Namespace, g.CompositePodGroups[0].Name))
	case len(g.Pods) == 0:
		return nil, badf("-pod-group %s: no member pods", opts.podGroupFile)
	}
	req := &preempt.PodGroupRequest{Pods: g.Pods, Config: opts.cfg, Now: opts.now}
	if len(g.CompositePodGroups) == 1 {
		req.CompositePodGroup, req.PodGroups = g.CompositePodGroups[0], g.PodGroups
	} else {
		req.PodGroup = g.PodGroups[0]
	}
	if err := req.Validate(); err != nil {
		return nil, badf("-pod-group %s: %v", opts.podGroupFile, err)
	}
	return req, nil
}

// decidePodGroup runs `decide -pod-group`: kube-scheduler's pod-group
// cycle for the gang with each implementation (harness.DecidePodGroup:
// validatePodGroup, the members being deleted skipped, the attempt on the
// cluster as it is, PodGroupPostFilter only when that fails), through a
// fake clientset of the cluster. An implementation that does not model
// gang preemption, or a feature this gang uses (preempt.PodGroupLimited),
// is refused with a note (an error when it is the only one asked), and so
// is a gang no cycle would take; the others are compared with the first
// that answered, field by field.
func decidePodGroup(opts decideOptions, stdout, stderr io.Writer) error {
	if opts.sched != nil {
		return badf("-pod-group does not take -config yet")
	}
	cluster, opts, err := opts.loadCluster(stderr)
	if err != nil {
		return err
	}
	req, err := loadPodGroup(opts, stderr)
	if err != nil {
		return err
	}
	tree, err := req.Tree(cluster)
	if err != nil {
		return badf("-pod-group %s: %v", opts.podGroupFile, err)
	}
	if u := preempt.PodGroupGap(req.Config, "pod group "+req.PreemptorName()); u != nil {
		return badf("-pod-group %s: %v", opts.podGroupFile, u)
	}
	if _, others := req.OfDefaultScheduler(); len(others) > 0 {
		fmt.Fprintf(stderr, "compare decide: note: -pod-group %s: %s name another scheduler than %q: kube-scheduler's queue never takes them, and its cycle runs without them\n", opts.podGroupFile, refList(others), v1.DefaultSchedulerName)
	}
	var outs []PodGroupDecisionJSON
	var decisions []preempt.PodGroupDecision
	var refused, reasons []string // reasons[i] is why refused[i]
	for _, impl := range opts.impls {
		ev, err := impl.NewEvaluator(cluster)
		if err != nil {
			return err
		}
		pg, ok := ev.(preempt.PodGroupPreempter)
		if !ok {
			refused = append(refused, impl.Name())
			reasons = append(reasons, fmt.Sprintf("%s does not model gang preemption (pod groups, %s=true)", impl.Name(), preempt.GenericWorkloadGate))
			continue
		}
		cs := harness.NewClient(cluster, nil, opts.faults...)
		for _, p := range req.Pods {
			_ = cs.Tracker().Add(p)
		}
		cs.ClearActions()
		d, err := harness.DecidePodGroup(context.Background(), impl, pg, cluster, req, cs)
		var noCycle *preempt.NoCycle
		if errors.As(err, &noCycle) {
			return badf("-pod-group %s: %v", opts.podGroupFile, err)
		}
		if err != nil {
			refused = append(refused, impl.Name())
			reasons = append(reasons, fmt.Sprintf("%s refuses this gang: %v", impl.Name(), err))
			continue
		}
		out := PodGroupDecisionJSON{Implementation: impl.Name(), Status: d.Status, Message: d.Message, Nominations: d.Nominations,
			Placement: d.Placement, Skipped: d.Skipped,
			NumPDBViolations: d.NumPDBViolations, NumPodGroupDisruptions: d.NumPodGroupDisruptions, Victims: d.Victims,
			ClearedNominations: harness.ClearedNominations(d.Actions)}
		if opts.actions {
			out.Actions = d.Actions
		}
		if opts.explain {
			ex := explain.Gang(cluster, req, tree, explain.GangDecision{Status: out.Status, Nominations: out.Nominations, Placement: out.Placement, Skipped: out.Skipped, Victims: out.Victims})
			out.Explanation = &ex
		}
		outs = append(outs, out)
		decisions = append(decisions, d)
	}
	for _, msg := range reasons {
		if len(outs) == 0 {
			return badf("%s", msg)
		}
		fmt.Fprintf(stderr, "compare decide: note: %s; the others answer\n", msg)
	}
	for i, d := range decisions {
		for _, f := range unmatchedFaults(opts.faults, d.Actions) {
			fmt.Fprintf(stderr, "compare decide: note: -fail %s matched no API call of %s's decision (%s); nothing failed\n", f, outs[i].Implementation, callsOf(d.Actions))
		}
	}
	code := ExitOK
	first := outs[0]
	for i, o := range outs[1:] {
		w := first
		w.Implementation = ""
		got := o
		got.Implementation = ""
		if !opts.actions {
			w.Actions, got.Actions = nil, nil
		}
		w.Explanation, got.Explanation = nil, nil // each follows its decision
		if !opts.actions && !cmp.Equal(decisions[0].Actions, decisions[i+1].Actions) {
			fmt.Fprintf(stderr, "%s's API calls differ from %s's (-%s +%s):\n%s", o.Implementation, first.Implementation, first.Implementation, o.Implementation, cmp.Diff(decisions[0].Actions, decisions[i+1].Actions))
			code = ExitDiffer
		}
		if diff := cmp.Diff(w, got); diff != "" {
			fmt.Fprintf(stderr, "%s differs from %s (-%s +%s):\n%s", o.Implementation, first.Implementation, first.Implementation, o.Implementation, diff)
			code = ExitDiffer
		}
	}
	if opts.all {
		res := decideResult{refused: refused}
		for _, o := range outs {
			res.outs = append(res.outs, DecisionJSON{Implementation: o.Implementation})
		}
		writeAgreement(stderr, res, code == ExitOK, true)
	}
	if opts.text {
		for _, o := range outs {
			writePodGroupText(stdout, o)
		}
		if code != ExitOK {
			return errDiffer
		}
		return nil
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	var v any = outs[0]
	if opts.all {
		v = outs
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing the decision: %w", err)
	}
	if code != ExitOK {
		return errDiffer
	}
	return nil
}

// writePodGroupText is -o text for a gang: writeText's layout, with a
// line per member bound, nominated or skipped.
func writePodGroupText(w io.Writer, d PodGroupDecisionJSON) {
	fmt.Fprintf(w, "implementation: %s\nstatus:         %s\n", d.Implementation, d.Status)
	if d.Message != "" {
		fmt.Fprintf(w, "message:        %s\n", d.Message)
	}
	for _, n := range d.Placement {
		fmt.Fprintf(w, "  member %s/%s bound to %s\n", n.Namespace, n.Name, n.Node)
	}
	for _, n := range d.Nominations {
		if n.Node == "" {
			fmt.Fprintf(w, "  member %s/%s nomination cleared\n", n.Namespace, n.Name)
			continue
		}
		fmt.Fprintf(w, "  member %s/%s nominated to %s\n", n.Namespace, n.Name, n.Node)
	}
	for _, p := range d.Skipped {
		fmt.Fprintf(w, "  member %s skipped (being deleted)\n", p)
	}
	for _, p := range d.ClearedNominations {
		fmt.Fprintf(w, "  cleared nomination of %s\n", p)
	}
	if len(d.Victims) > 0 {
		fmt.Fprintf(w, "victims: %d (%d PDB violations, %d pod group disruptions)\n", len(d.Victims), d.NumPDBViolations, d.NumPodGroupDisruptions)
		for _, v := range d.Victims {
			fmt.Fprintf(w, "  victim %s/%s priority %d", v.Namespace, v.Name, v.Priority)
			if v.PodGroup != "" {
				fmt.Fprintf(w, " podGroup %s", v.PodGroup)
			}
			fmt.Fprintln(w)
		}
	}
	for _, a := range d.Actions {
		fmt.Fprintf(w, "api call: %s\n", a)
	}
	if d.Explanation != nil {
		explain.WriteGangText(w, *d.Explanation)
	}
	fmt.Fprintln(w)
}

// refList is refs as "a/b, c/d".
func refList(refs []preempt.PodRef) string {
	var out []string
	for _, r := range refs {
		out = append(out, r.String())
	}
	return strings.Join(out, ", ")
}
