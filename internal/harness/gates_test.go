package harness_test

import (
	"context"
	"errors"
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

// TestGateRefusals: reference and optimized refuse a gate they do not
// model (by name and value); a gate at its default, or GenericWorkload=true
// with or without pod groups among the victims, is answered; upstream
// answers all. (optimized's one refusal of victim groups, a unit across
// nodes beside the topology plugins, is optimized.TestGroupGaps.)
func TestGateRefusals(t *testing.T) {
	ctx := context.Background()
	now := testobj.Epoch
	node := testobj.MakeNode().Name("n").Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi", v1.ResourcePods: "10"}).Obj()
	victim := testobj.MakePod().Namespace("default").Name("v").UID("uid-v").Node("n").Priority(0).Container("c").CPU("2").Obj()
	grouped := testobj.MakePod().Namespace("default").Name("v").UID("uid-v").Node("n").Priority(0).Container("c").CPU("2").PodGroupName("g").Obj()
	preemptor := testobj.MakePod().Namespace("default").Name("p").UID("uid-p").Priority(10).Container("c").CPU("1").Obj()
	for _, tc := range []struct {
		name  string
		gates map[string]bool
		pods  []*v1.Pod
		want  string // the refusal of reference and optimized, "" for none
		only  string // the one implementation that refuses, "" for both
	}{
		{"defaults", map[string]bool{"GenericWorkload": false, "PodLevelResources": true}, []*v1.Pod{victim}, "", ""},
		{"GenericWorkload, single pods", map[string]bool{"GenericWorkload": true}, []*v1.Pod{victim}, "", ""},
		{"GenericWorkload, a pod group", map[string]bool{"GenericWorkload": true}, []*v1.Pod{grouped}, "", ""},
		{"an unmodelled gate", map[string]bool{"DynamicResourceAllocation": true, "DRANodeAllocatableResources": true}, []*v1.Pod{victim},
			"feature gate DRANodeAllocatableResources is not modelled: the configuration sets DRANodeAllocatableResources=true (" + preempt.CurrentRelease + "'s default is false)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &preempt.Cluster{Nodes: []*v1.Node{node}, Pods: tc.pods}
			cfg := preempt.DefaultConfig()
			cfg.FeatureGates = tc.gates
			for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}, upstream.Impl{}} {
				r, err := harness.Decide(ctx, impl, c, preemptor, cfg, 0, now)
				var u *preempt.Unmodelled
				switch {
				case tc.want != "" && impl.Name() != "upstream" && (tc.only == "" || tc.only == impl.Name()):
					if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("%s: %v, want the refusal %q", impl.Name(), err, tc.want)
					}
				case err != nil:
					t.Errorf("%s: %v", impl.Name(), err)
				case r.Decision.Status != preempt.Success:
					t.Errorf("%s: %s %s, want Success", impl.Name(), r.Decision.Status, r.Decision.Message)
				}
			}
		})
	}
}
