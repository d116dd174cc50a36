package conformance

import (
	"context"
	"testing"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/reference"
)

// Each of PickSeeds is decided by its criterion: the reference, which
// restates pickOneNodeForPreemption's order, picks the node the criterion
// prefers, and both nodes are candidates.
func TestPickSeeds(t *testing.T) {
	want := map[string]string{"PDBViolations": "node-01", "HighestPriority": "node-00", "SumOfPriorities": "node-00", "NumVictims": "node-01"}
	seeds := PickSeeds()
	if len(seeds) != len(want) {
		t.Fatalf("%d seeds, want %d", len(seeds), len(want))
	}
	for name, s := range seeds {
		in := s.Build()
		d, err := harness.Run(context.Background(), reference.Impl{}, in.Cluster, in.Request)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.NominatedNode != want[name] || len(d.Candidates) != 2 {
			t.Errorf("%s: nominated %q with %d candidates, want %s of 2 (%+v)", name, d.NominatedNode, len(d.Candidates), want[name], d.Candidates)
		}
	}
}
