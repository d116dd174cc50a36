package conformance

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// Issue 32: the generator of claim problems makes clusters that validate,
// that no implementation modelling DynamicResources refuses, and problems
// of every outcome, with DynamicResources' reasons among the dry run's.
func TestClaimProblemsAreAnswered(t *testing.T) {
	impl := harness.Deterministic(upstream.Impl{})
	codes := map[preempt.Code]int{}
	reasons := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		in := AtRelease(GenClaims(6).Draw(t, "in"), impl)
		if err := in.Cluster.Validate(); err != nil {
			t.Fatalf("generator made an invalid cluster: %v", err)
		}
		for _, im := range []preempt.Implementation{impl, optimized.Impl{}} {
			if err := harness.Refusal(im, in.Cluster, in.Request.Pod); err != nil {
				t.Fatalf("%s refuses a generated claim problem: %v", im.Name(), err)
			}
		}
		d, err := harness.Run(t.Context(), impl, in.Cluster, in.Request, in.Faults...)
		if err != nil {
			t.Fatalf("%s: %v", impl.Name(), err)
		}
		codes[d.Status]++
		for _, ns := range d.NodeStatuses {
			reasons[strings.Join(ns.Reasons, ", ")]++
		}
	})
	t.Logf("decisions by status: %v", codes)
	for r, n := range reasons {
		t.Logf("dry-run node status %q: %d", r, n)
	}
	if codes[preempt.Success] == 0 || codes[preempt.Unschedulable]+codes[preempt.UnschedulableAndUnresolvable] == 0 {
		t.Errorf("the generator made no problem of some outcome: %v", codes)
	}
	if reasons["cannot allocate all claims"] == 0 {
		t.Errorf("no dry run failed DynamicResources' allocation: %v", reasons)
	}
}
