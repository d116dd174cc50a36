package fuzz

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// The seeds reach the outcomes they are named for.
func TestSeedsReachTheirOutcomes(t *testing.T) {
	want := []preempt.Code{preempt.Success, preempt.Success, preempt.Success, preempt.Success, preempt.Success, preempt.Success, preempt.Unschedulable, preempt.Unschedulable, preempt.Unschedulable}
	var got []preempt.Code
	for _, s := range Seeds() {
		d, err := preempt.Run(context.Background(), reference.Impl{}, s.Build().Cluster, s.Build().Request)
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
