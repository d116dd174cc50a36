package conformance

import (
	"context"
	"slices"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
)

// CheckStages compares every stage of other with the reference's on in:
// eligibility, FindCandidates, DryRunPreemption, SelectVictimsOnNode on
// every node, and SelectCandidate on the candidate list and on its reverse
// (any equal-best candidate when other breaks the final tie at random).
//
// It reports whether it compared anything: false when other refuses in.
func CheckStages(t TB, in Input, other preempt.Implementation) (compared bool) {
	t.Helper()
	in = AtRelease(in, other)
	if refused(t, in, other) {
		return false
	}
	before := deepCopy(in)
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

	preempt.SetFilterConfig(ref, req.Config)
	preempt.SetFilterConfig(ev, req.Config)
	preempt.SetFilterNow(ref, req.Now)
	preempt.SetFilterNow(ev, req.Now)
	if cf, ok := ev.(preempt.CodeFilter); ok {
		want := preempt.NewNodeOrder(in.Cluster).Codes(ref.Filter(ctx, req.Pod), nil)
		diff("FilterCodes", want, cf.FilterCodes(ctx, req.Pod, nil))
	}

	okRef, msgRef := ref.PodEligibleToPreemptOthers(req)
	okOther, msgOther := ev.PodEligibleToPreemptOthers(req)
	diff("PodEligibleToPreemptOthers", []any{okRef, msgRef}, []any{okOther, msgOther})

	drRef, errRef := ref.FindCandidates(ctx, req)
	owned := *req // the caller's result, whatever the drawn request says
	owned.ReuseOutput = false
	drOther, errOther := ev.FindCandidates(ctx, &owned)
	diff("FindCandidates", drRef, drOther)
	diff("FindCandidates error", errString(errRef), errString(errOther))
	// drOther is the caller's (no ReuseOutput): no later call may touch it
	// (checked by checkReuseOutput).
	keptOther := cloneDryRun(drOther)

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

	checkReuseOutput(t, in, ev, drRef, diff, drOther, keptOther)
	checkUnchanged(t, before, in)
	return true
}

// checkReuseOutput runs FindCandidates with Request.ReuseOutput: the same
// answer as the reference's (want), unchanged by every call the contract
// lets the caller make before the next FindCandidates, DryRunPreemption
// or Preempt. Then another answer is written, and owned, a result of an
// earlier call without ReuseOutput, must still equal kept.
func checkReuseOutput(t TB, in Input, ev preempt.Evaluator, want preempt.DryRun, diff func(stage string, want, got any), owned, kept preempt.DryRun) {
	t.Helper()
	ctx := context.Background()
	req := *in.Request
	req.ReuseOutput = true
	dr, _ := ev.FindCandidates(ctx, &req)
	diff("FindCandidates with ReuseOutput", want, dr)
	keptReused := cloneDryRun(dr)
	ev.Filter(ctx, req.Pod)
	ev.PodEligibleToPreemptOthers(&req)
	for _, n := range in.Cluster.Nodes {
		ev.SelectVictimsOnNode(ctx, &req, n.Name)
	}
	if best := ev.SelectCandidate(dr.Candidates, &req); best != nil {
		_ = ev.PrepareCandidate(ctx, harness.NewClientset(in.Cluster, req.Pod), best, &req)
	}
	diff("FindCandidates' result with ReuseOutput, after Filter, PodEligibleToPreemptOthers, SelectVictimsOnNode, SelectCandidate and PrepareCandidate", keptReused, dr)
	// Another answer written into the buffers (the dry run starting one
	// node later), then the first request again: the same answer.
	shifted := req
	shifted.Offset++
	ev.FindCandidates(ctx, &shifted)
	diff("FindCandidates' result without ReuseOutput, after every other stage and more dry runs", kept, owned)
	dr2, _ := ev.FindCandidates(ctx, &req)
	diff("FindCandidates with ReuseOutput, again", want, dr2)
}

// cloneDryRun is a deep copy of dr.
func cloneDryRun(dr preempt.DryRun) preempt.DryRun {
	out := preempt.DryRun{Errors: slices.Clone(dr.Errors)}
	if dr.Candidates != nil {
		out.Candidates = make([]preempt.Candidate, len(dr.Candidates))
		for i, c := range dr.Candidates {
			c.Victims = slices.Clone(c.Victims)
			out.Candidates[i] = c
		}
	}
	if dr.NodeStatuses != nil {
		out.NodeStatuses = make([]preempt.NodeStatus, len(dr.NodeStatuses))
		for i, s := range dr.NodeStatuses {
			s.Reasons = slices.Clone(s.Reasons)
			out.NodeStatuses[i] = s
		}
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// CheckReuse runs the requests of ins, all on one cluster, on a single
// evaluator of other and on a fresh evaluator each, and requires the same
// decisions: nothing a decision leaves behind changes the next. It
// reports whether it compared anything: false when other refused every
// request.
func CheckReuse(t TB, ins []Input, other preempt.Implementation) (compared bool) {
	t.Helper()
	ctx := context.Background()
	shared, err := other.NewEvaluator(ins[0].Cluster)
	if err != nil {
		t.Fatalf("%v", err)
	}
	for i, in := range ins {
		in = AtRelease(in, other)
		if refused(t, in, other) {
			continue
		}
		compared = true
		fresh, err := other.NewEvaluator(in.Cluster)
		if err != nil {
			t.Fatalf("%v", err)
		}
		want := fresh.Preempt(ctx, harness.NewClientset(in.Cluster, in.Request.Pod), in.Request)
		got := shared.Preempt(ctx, harness.NewClientset(in.Cluster, in.Request.Pod), in.Request)
		if want.NominatedNode != got.NominatedNode && tieAllowed(t, other, in.Cluster, want.Candidates, in.Request, want.NominatedNode, got.NominatedNode) {
			continue // upstream broke the final tie another way
		}
		if answerOrderAllowed(other, in.Cluster, want, got) || answerOrderAllowed(other, in.Cluster, got, want) {
			continue // upstream read an extender's bad answer in another order (either run)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("request %d of %d on a reused evaluator differs (-fresh +reused):\n%s", i+1, len(ins), d)
		}
	}
	return compared
}
