package conformance

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// TestCompositePodGroupOwnParent: a CompositePodGroup naming itself as its
// parent (which the API server's validation of one object cannot see). Going
// up, TraverseHierarchyUp stops at the repeat, so l1's unit is loop's (mode
// All); going down, GetPodGroupStates walks loop under loop until
// WorkloadMaxTreeDepth, collecting l's member at each level above it, so the unit
// holds l1 three times and removing it from its node the second time fails:
// v1.37.2 answers Error. The reference follows; optimized refuses such a
// hierarchy (its group view walks each one once and would answer Success).
func TestCompositePodGroupOwnParent(t *testing.T) {
	c := &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1").Obj()},
		Pods:               []*v1.Pod{pgPod("l1", "n1", "l", 0, "600m").Obj()},
		PodGroups:          []*preempt.PodGroup{pgGroup("l", 0).DisruptionModeSingle().ParentCompositePodGroup("loop").Obj()},
		CompositePodGroups: []*preempt.CompositePodGroup{pgComposite("loop", 0).DisruptionModeAll().ParentCompositePodGroup("loop").Obj()}}
	pod := pgPod("p", "", "", 10, "600m").Obj()
	for _, impl := range []preempt.Implementation{reference.Impl{}, upstream.Impl{}} {
		t.Run(impl.Name(), func(t *testing.T) {
			cfg := preempt.DefaultConfig()
			cfg.Synchronous = true
			cfg.FeatureGates = pgCompositeOn
			res, err := harness.Decide(context.Background(), harness.Deterministic(impl), c, pod, cfg, 0, testobj.Epoch)
			if err != nil {
				t.Fatal(err)
			}
			d := res.Decision
			if d.Status != preempt.Error || d.Message != "no corresponding pod l1 in pods of node n1" || len(d.Victims) != 0 {
				t.Errorf("status %s %q, %d victims; want Error %q and none", d.Status, d.Message, len(d.Victims), "no corresponding pod l1 in pods of node n1")
			}
			if got := deletedPods(d.Actions); len(got) != 0 {
				t.Errorf("deleted %v, want nothing", got)
			}
		})
	}
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = pgCompositeOn
	if err := harness.GateRefusal(optimized.Impl{}, c, pod, cfg); err == nil || !strings.Contains(err.Error(), "is its own ancestor") {
		t.Errorf("optimized: refusal %v, want the cycle named", err)
	}
	if err := harness.PodGroupRefusal(optimized.Impl{}, c, &preempt.PodGroupRequest{PodGroup: pgGang("gang", 10, 1).Obj(), Config: cfg}); err == nil {
		t.Error("optimized: a gang beside the cycle is not refused")
	}
}
