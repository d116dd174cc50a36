package conformance

import (
	"context"
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
	decide := func(t interface{ Fatalf(string, ...any) }, in Input) preempt.Decision {
		if err := in.Cluster.Validate(); err != nil {
			t.Fatalf("generator made an invalid cluster: %v", err)
		}
		for _, im := range []preempt.Implementation{impl, optimized.Impl{}} {
			if err := harness.Refusal(im, in.Cluster, in.Request.Pod); err != nil {
				t.Fatalf("%s refuses a generated claim problem: %v", im.Name(), err)
			}
		}
		d, err := harness.Run(context.Background(), impl, in.Cluster, in.Request, in.Faults...)
		if err != nil {
			t.Fatalf("%s: %v", impl.Name(), err)
		}
		return d
	}
	rapid.Check(t, func(t *rapid.T) {
		decide(t, AtRelease(GenClaims(6).Draw(t, "in"), impl))
	})
	reasons := exampleOutcomes(t, GenClaims(6), func(t interface{ Fatalf(string, ...any) }, in Input) preempt.Decision {
		return decide(t, AtRelease(in, impl))
	})
	if reasons["cannot allocate all claims"] == 0 {
		t.Errorf("no dry run failed DynamicResources' allocation: %v", reasons)
	}
}
