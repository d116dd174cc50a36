package preempttest

import (
	"context"
	"slices"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// CheckStages compares every stage of other with the reference's on in:
// eligibility, FindCandidates, DryRunPreemption, SelectVictimsOnNode on
// every node, and SelectCandidate on the candidate list and on its reverse
// (any equal-best candidate when other breaks the final tie at random).
func CheckStages(t TB, in Input, other preempt.Implementation) {
	t.Helper()
	if refused(t, in, other) {
		return
	}
	ctx := context.Background()
	req := in.Request
	ref := newReferenceEvaluator(t, in)
	ev, err := other.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatalf("%s: %v", other.Name(), err)
	}
	diff := func(stage string, want, got any) {
		t.Helper()
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s differs on %v (-reference +%s):\n%s", stage, in, other.Name(), d)
		}
	}

	if cf, ok := ev.(preempt.CodeFilter); ok {
		want := preempt.NewNodeOrder(in.Cluster).Codes(ref.Filter(ctx, req.Pod), nil)
		diff("FilterCodes", want, cf.FilterCodes(ctx, req.Pod, nil))
	}

	okRef, msgRef := ref.PodEligibleToPreemptOthers(req)
	okOther, msgOther := ev.PodEligibleToPreemptOthers(req)
	diff("PodEligibleToPreemptOthers", []any{okRef, msgRef}, []any{okOther, msgOther})

	drRef, errRef := ref.FindCandidates(ctx, req)
	drOther, errOther := ev.FindCandidates(ctx, req)
	diff("FindCandidates", drRef, drOther)
	diff("FindCandidates error", errString(errRef), errString(errOther))

	var potential []string
	filter := req.FilterCodes(in.Cluster)
	for _, n := range in.Cluster.Nodes {
		if filter[n.Name] == preempt.Unschedulable {
			potential = append(potential, n.Name)
		}
	}
	slices.Sort(potential)
	if len(potential) > 0 {
		for _, num := range []int32{1, req.Config.NumCandidates(int32(len(potential))), int32(len(potential))} {
			diff("DryRunPreemption", ref.DryRunPreemption(ctx, req, potential, req.Offset, num), ev.DryRunPreemption(ctx, req, potential, req.Offset, num))
		}
	}

	for _, n := range in.Cluster.Nodes {
		vr, nr, sr := ref.SelectVictimsOnNode(ctx, req, n.Name)
		vo, no, so := ev.SelectVictimsOnNode(ctx, req, n.Name)
		diff("SelectVictimsOnNode("+n.Name+")", []any{slices.Clone(vr), nr, sr}, []any{slices.Clone(vo), no, so})
	}

	cands := drRef.Candidates
	for range 2 {
		checkSelectCandidate(t, ref, ev, cands, req, other)
		cands = slices.Clone(cands)
		slices.Reverse(cands)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// CheckReuse runs the requests of ins, all on one cluster, on a single
// evaluator of other and on a fresh evaluator each, and requires the same
// decisions: nothing a decision leaves behind changes the next.
func CheckReuse(t TB, ins []Input, other preempt.Implementation) {
	t.Helper()
	ctx := context.Background()
	shared, err := other.NewEvaluator(ins[0].Cluster)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for i, in := range ins {
		if refused(t, in, other) {
			continue
		}
		fresh, err := other.NewEvaluator(in.Cluster)
		if err != nil {
			t.Fatalf("%v", err)
		}
		want := fresh.Preempt(ctx, harness.NewClientset(in.Cluster, in.Request.Pod), in.Request)
		got := shared.Preempt(ctx, harness.NewClientset(in.Cluster, in.Request.Pod), in.Request)
		if want.NominatedNode != got.NominatedNode && tieAllowed(t, other, in.Cluster, want.Candidates, in.Request, want.NominatedNode, got.NominatedNode) {
			continue // upstream broke the final tie another way
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("request %d of %d on a reused evaluator differs (-fresh +reused):\n%s", i+1, len(ins), d)
		}
	}
}
