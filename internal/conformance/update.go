package conformance

import (
	"context"
	"fmt"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// A ChangeSpec is one scheduling cycle's change to a problem's cluster
// (preempt.Change), as indices into it: the pods at Remove (modulo the pod
// count, duplicates once) leave, and when Bind >= 0 a copy of the
// preemptor joins, bound to node Bind (modulo the node count), as the
// scheduler binds a preemptor once its victims are gone.
type ChangeSpec struct {
	Remove []int
	Bind   int
}

// GenChange draws ChangeSpecs: up to four pods removed, and a bound
// preemptor two times in three.
func GenChange() *rapid.Generator[ChangeSpec] {
	return rapid.Custom(func(t *rapid.T) ChangeSpec {
		cs := ChangeSpec{Bind: rapid.IntRange(-1, MaxNodes).Draw(t, "bind")}
		if rapid.IntRange(0, 2).Draw(t, "bindOrNot") == 0 {
			cs.Bind = -1
		}
		for range rapid.IntRange(0, 4).Draw(t, "removed") {
			cs.Remove = append(cs.Remove, rapid.IntRange(0, 1000).Draw(t, "remove"))
		}
		return cs
	})
}

// Change returns cs on c with preemptor: the change and the cluster after
// it (the same objects but for the pods).
func (cs ChangeSpec) Change(c *preempt.Cluster, preemptor *v1.Pod) (*preempt.Cluster, preempt.Change, error) {
	var ch preempt.Change
	seen := map[preempt.PodRef]bool{}
	for _, i := range cs.Remove {
		if len(c.Pods) == 0 {
			break
		}
		p := c.Pods[i%len(c.Pods)]
		ref := preempt.PodRef{Namespace: p.Namespace, Name: p.Name}
		if !seen[ref] {
			seen[ref] = true
			ch.Removed = append(ch.Removed, ref)
		}
	}
	if cs.Bind >= 0 && len(c.Nodes) > 0 {
		bound := preemptor.DeepCopy()
		bound.Name += "-bound"
		bound.UID = types.UID(fmt.Sprintf("%s-bound", bound.UID))
		bound.Spec.NodeName = c.Nodes[cs.Bind%len(c.Nodes)].Name
		bound.Status.NominatedNodeName = ""
		ch.Added = append(ch.Added, bound)
	}
	pods, err := ch.Apply(c.Pods)
	if err != nil {
		return nil, ch, err
	}
	after := *c
	after.Pods = pods
	return &after, ch, nil
}

// CheckUpdate checks preempt.Updater's promise: an evaluator of other that
// has answered a request on in's cluster and is then updated to the
// cluster after cs answers as a new evaluator of that cluster would,
// which the reference's evaluator of it stands for: the filter phase, the
// dry run, and the whole decision. It is NotApplicable when other's
// evaluator is not an Updater, Refused when other refuses either cluster.
func CheckUpdate(t TB, in Input, cs ChangeSpec, other preempt.Implementation) Outcome {
	t.Helper()
	in = AtRelease(in, other)
	if refused(t, in, other) {
		return Refused
	}
	ctx := context.Background()
	before := deepCopy(in)
	ev, err := other.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatalf("%s: %v", other.Name(), err)
	}
	u, ok := ev.(preempt.Updater)
	if !ok {
		return NotApplicable
	}
	after, ch, err := cs.Change(in.Cluster, in.Request.Pod)
	if err != nil {
		t.Fatalf("change %+v: %v", cs, err)
	}
	if err := after.Validate(); err != nil {
		return NotApplicable // the bound copy conflicts with the cluster (a UID, a name): not a cycle a scheduler makes
	}
	if refused(t, Input{Cluster: after, Request: in.Request}, other) {
		return Refused
	}
	// The evaluator has served a cycle before it follows the cluster.
	harness.Preempt(ctx, ev, in.Cluster, in.Request)
	if err := u.Update(after, ch); err != nil {
		t.Fatalf("%s: Update(%+v): %v", other.Name(), ch, err)
	}

	ref := newReferenceEvaluator(t, Input{Cluster: after})
	preempt.SetFilterConfig(ref, in.Request.Config)
	preempt.SetFilterConfig(ev, in.Request.Config)
	preempt.SetFilterNow(ref, in.Request.Now)
	preempt.SetFilterNow(ev, in.Request.Now)
	fr := ref.Filter(ctx, in.Request.Pod)
	if d := cmp.Diff(fr, ev.Filter(ctx, in.Request.Pod)); d != "" {
		t.Fatalf("Filter after Update(%+v) (-new reference evaluator +updated %s):\n%s", ch, other.Name(), d)
	}
	req := in.Request.DeepCopy()
	req.Filter, req.Codes = fr.Codes(), nil
	if in.Request.Codes != nil {
		req.Filter, req.Codes = nil, preempt.NewNodeOrder(after).Codes(fr, nil)
	}
	req.ReuseOutput = false
	wantDR, wantErr := ref.FindCandidates(ctx, req)
	gotDR, gotErr := ev.FindCandidates(ctx, req)
	if d := cmp.Diff([]any{wantDR, errString(wantErr)}, []any{gotDR, errString(gotErr)}); d != "" {
		t.Fatalf("FindCandidates after Update(%+v) (-new reference evaluator +updated %s):\n%s", ch, other.Name(), d)
	}
	want := harness.Preempt(ctx, ref, after, req)
	got := harness.Preempt(ctx, ev, after, req)
	if want.NominatedNode != got.NominatedNode && tieAllowed(t, other, after, want.Candidates, req, want.NominatedNode, got.NominatedNode) {
		return Compared // upstream broke the final tie another way
	}
	if answerOrderAllowed(other, after, want, got) {
		return Compared // upstream read an extender's bad answer in another order
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("decision after Update(%+v) (-new reference evaluator +updated %s):\n%s", ch, other.Name(), d)
	}
	checkUnchanged(t, before, in)
	return Compared
}
