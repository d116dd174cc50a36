package explain_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/preemptbench/preemptbench/internal/explain"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// Two nodes of one GPU each: n1's held by a low-priority pod's claim, n2
// full of cpu. The preemptor's claim cannot be allocated on n1 (the
// victim's device stays allocated), so preemption clears n2; -explain
// names the claim that blocks n1 and the claim and pod that hold its GPU.
// A second preemptor's claim, allocated already to n2's other GPU and
// shared with another pod, blocks n1 as unreachable.
func TestExplainClaimsBlockingANode(t *testing.T) {
	c, _, err := loader.LoadPaths([]string{"testdata/dra/cluster.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pod, claim, why string
		held            []string
	}{
		{"testdata/dra/pod.yaml", "default/high-gpu", "its requests find no free device on the node; evicting pods frees none (DynamicResources has no RemovePod)",
			[]string{"gpu.example.com/n1/gpu-0 (claim default/low-gpu, pod default/low-with-gpu)"}},
		{"testdata/dra/pod-allocated.yaml", "default/shared-gpu", "allocated already, to devices this node cannot reach (status.allocation.nodeSelector)", nil},
	} {
		t.Run(tc.pod, func(t *testing.T) {
			data, err := os.ReadFile(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			pod, err := loader.LoadPod(tc.pod, data)
			if err != nil {
				t.Fatal(err)
			}
			cfg := preempt.DefaultConfig()
			r, err := harness.Decide(context.Background(), reference.Impl{}, c, pod, cfg, 0, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if r.Decision.Status != preempt.Success || r.Decision.NominatedNode != "n2" {
				t.Fatalf("decision %s on %q, want Success on n2", r.Decision.Status, r.Decision.NominatedNode)
			}
			ex := explain.Pod("reference", r, c, pod, cfg)
			var n1 *explain.NodeExplanation
			for i := range ex.NotCandidates {
				if ex.NotCandidates[i].Node == "n1" {
					n1 = &ex.NotCandidates[i]
				}
			}
			if n1 == nil || len(n1.Claims) != 1 {
				t.Fatalf("n1: %+v, want one blocked claim", n1)
			}
			b := n1.Claims[0]
			if b.Claim != tc.claim || b.Why != tc.why || !slices.Equal(b.Held, tc.held) {
				t.Errorf("n1's claim: %+v, want %s: %q, held %q", b, tc.claim, tc.why, tc.held)
			}
		})
	}
}
