package explain_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		// The third asks for one device by the class's implicit
		// extended resource name, which no node advertises: the claim
		// DynamicResources makes for it blocks n1.
		{"testdata/dra/pod-extended.yaml", "extended resources deviceclass.resource.kubernetes.io/gpu.example.com: 1 (DeviceClass gpu.example.com)",
			"the node does not advertise them, and the claim DynamicResources makes for them finds no free device on the node; evicting pods frees none (DynamicResources has no RemovePod)",
			[]string{"gpu.example.com/n1/gpu-0 (claim default/low-gpu, pod default/low-with-gpu)"}},
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

// The shared claim of pod-allocated.yaml, on n2, with a binding condition
// not met and allocated 11 minutes before Request.Now: its binding timed
// out (600s), so DynamicResources fails n2 too, and -explain says why; 9
// minutes before, n2 is the candidate.
func TestExplainClaimBindingTimedOut(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago      time.Duration
		timedOut bool
	}{{11 * time.Minute, true}, {9 * time.Minute, false}} {
		c, _, err := loader.LoadPaths([]string{"testdata/dra/cluster.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range c.ResourceClaims {
			if rc.Name == "shared-gpu" {
				rc.Status.Allocation.Devices.Results[0].BindingConditions = []string{"attached"}
				rc.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: now.Add(-tc.ago)}
			}
		}
		data, err := os.ReadFile("testdata/dra/pod-allocated.yaml")
		if err != nil {
			t.Fatal(err)
		}
		pod, err := loader.LoadPod("pod-allocated.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		cfg := preempt.DefaultConfig()
		r, err := harness.Decide(context.Background(), reference.Impl{}, c, pod, cfg, 0, now)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Decision.NominatedNode == ""; got != tc.timedOut {
			t.Fatalf("%v: nominated %q, want none: %v", tc.ago, r.Decision.NominatedNode, tc.timedOut)
		}
		if !tc.timedOut {
			continue
		}
		ex := explain.Pod("reference", r, c, pod, cfg)
		why := ""
		for _, nc := range ex.NotCandidates {
			if nc.Node == "n2" && len(nc.Claims) == 1 {
				why = nc.Claims[0].Why
			}
		}
		if want := "allocated already at 2026-01-01T23:49:00Z, and device gpu.example.com/n2/gpu-1's binding conditions are not met 600s later (the binding timeout), before 2026-01-02T00:00:00Z"; why != want {
			t.Errorf("n2's claim: %q, want %q", why, want)
		}
	}
}
