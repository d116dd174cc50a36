package floor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/bench/floor"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
)

// TestFloorPicksAsOptimized: on the clusters the floor takes (resource-only
// ones: the basic shapes, mixed, ties), its candidates and its pick are
// optimized's, so the floor measures the same decision; it refuses the
// shapes it does not model (PDBs, host ports, affinity, spread, nominated
// pods, pod groups, volumes), naming why.
func TestFloorPicksAsOptimized(t *testing.T) {
	ctx := context.Background()
	for _, shape := range synth.Shapes() {
		for _, nodes := range []int{1, 7, 300} {
			s := synth.MustBuild(shape, nodes, 3)
			ev, err := optimized.Impl{}.NewEvaluator(s.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			fr := ev.Filter(ctx, s.Pod)
			codes := preempt.NewNodeOrder(s.Cluster).Codes(fr, nil)
			f, err := floor.New(s.Cluster, s.Pod, codes, s.Now)
			refused := map[string]bool{"pdb": true, "hostports": true, "affinity": true, "spread": true, "nominated": true, "heterogeneous": true, "pvs": true}
			// A cluster with pod groups (the podgroup-single and -all
			// shapes) is refused too: the floor has no groups.
			if refused[shape] || len(s.Cluster.PodGroups) > 0 {
				if err == nil || !strings.Contains(err.Error(), "the floor does not model this cluster") {
					t.Errorf("%s/%d: New error %v, want a refusal", shape, nodes, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s/%d: %v", shape, nodes, err)
			}
			req := &preempt.Request{Pod: s.Pod, Codes: codes, Config: preempt.DefaultConfig(), Now: s.Now}
			dr, err := ev.FindCandidates(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want := ev.SelectCandidate(dr.Candidates, req)
			cands, best, _ := f.Decide()
			if d := cmp.Diff(dr.Candidates, cands); d != "" {
				t.Errorf("%s/%d: candidates (-optimized +floor):\n%s", shape, nodes, d)
			}
			if want == nil || best < 0 || cands[best].Node != want.Node {
				t.Errorf("%s/%d: floor picks %d of %d, optimized %v", shape, nodes, best, len(cands), want)
			}
		}
	}
}
