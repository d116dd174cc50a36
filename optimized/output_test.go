package optimized_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TestParallelOutputIsSequentialOutput: from 256 candidates output writes
// its rows on two goroutines; on every shape with that many (3000 nodes:
// 300 candidates), the dry run and the pick equal one worker's, and the
// reference's on the shapes it decides quickly.
func TestParallelOutputIsSequentialOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 3000-node clusters")
	}
	ctx := context.Background()
	for _, shape := range []string{"basic", "basic-v1.36", "pdb", "mixed", "ties", "nominated", "hostports"} {
		c, req := shapeRequest(t, shape, 3000)
		decide := func(impl preempt.Implementation) (preempt.DryRun, *preempt.Candidate) {
			ev, err := impl.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			dr, err := ev.FindCandidates(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			return dr, ev.SelectCandidate(dr.Candidates, req)
		}
		oneDR, oneBest := decide(optimized.Impl{Workers: 1})
		if len(oneDR.Candidates) < 256 {
			t.Fatalf("%s: %d candidates, want at least 256 for output's second writer", shape, len(oneDR.Candidates))
		}
		twoDR, twoBest := decide(optimized.Impl{Workers: 2})
		if d := cmp.Diff(oneDR, twoDR); d != "" {
			t.Errorf("%s: dry run, one worker against two (-one +two):\n%s", shape, d)
		}
		if d := cmp.Diff(oneBest, twoBest); d != "" {
			t.Errorf("%s: pick, one worker against two (-one +two):\n%s", shape, d)
		}
		if shape == "basic" || shape == "pdb" {
			refDR, refBest := decide(reference.Impl{})
			if d := cmp.Diff(refDR.Candidates, twoDR.Candidates); d != "" {
				t.Errorf("%s: candidates (-reference +optimized):\n%s", shape, d)
			}
			if d := cmp.Diff(refBest, twoBest); d != "" {
				t.Errorf("%s: pick (-reference +optimized):\n%s", shape, d)
			}
		}
	}
}
