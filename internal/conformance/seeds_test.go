package conformance

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// The seeds reach the outcomes they are named for.
func TestSeedsReachTheirOutcomes(t *testing.T) {
	want := []preempt.Code{preempt.Success, preempt.Success, preempt.Success, preempt.Success, preempt.Success, preempt.Success, preempt.Unschedulable, preempt.Unschedulable, preempt.Unschedulable}
	var got []preempt.Code
	for _, s := range Seeds() {
		d, err := harness.Run(context.Background(), reference.Impl{}, s.Build().Cluster, s.Build().Request)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Status)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seed outcomes (-want +got):\n%s", diff)
	}
}

// Regression (found by TestOptimizedStagesAgreeWithReference): on a node
// where the pod fits without preemption SelectVictimsOnNode succeeds with
// no victims, and optimized returned nil where the reference returns an
// empty list.
func TestRegressionEmptyVictimsNotNil(t *testing.T) {
	s := Seeds()[0]
	s.Nodes[0].Bound = s.Nodes[0].Bound[:1] // room for the preemptor
	in := s.Build()
	for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
		ev, _ := impl.NewEvaluator(in.Cluster)
		v, n, st := ev.SelectVictimsOnNode(context.Background(), in.Request, "node-00")
		if v == nil || len(v) != 0 || n != 0 || !st.IsSuccess() {
			t.Errorf("%s: victims %#v, %d violations, status %+v; want an empty, non-nil list", impl.Name(), v, n, st)
		}
	}
}

// SelectCandidate on a candidate list the caller reordered in place gives
// the reference's answer (optimized remembers scores of its own output).
func TestSelectCandidateOnListReorderedInPlace(t *testing.T) {
	s := Seeds()[0]
	for i := range s.Nodes[0].Bound {
		s.Nodes[0].Bound[i].Start = 6 // node-00's victims start last: it wins
	}
	in := s.Build()
	ref, _ := reference.Impl{}.NewEvaluator(in.Cluster)
	opt, _ := optimized.Impl{}.NewEvaluator(in.Cluster)
	dr, err := opt.FindCandidates(context.Background(), in.Request)
	if err != nil || len(dr.Candidates) != 3 {
		t.Fatalf("%d candidates: %v", len(dr.Candidates), err)
	}
	slices.Reverse(dr.Candidates)
	want, got := ref.SelectCandidate(dr.Candidates, in.Request), opt.SelectCandidate(dr.Candidates, in.Request)
	if diff := cmp.Diff(want, got); diff != "" || got.Node != "node-00" {
		t.Errorf("(-reference +optimized):\n%s (picked %s, want node-00)", diff, got.Node)
	}
}
