package harness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

func gatePod(name, node string, prio int32, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: node, Priority: &prio, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}},
	}
}

// TestGateRefusals: reference and optimized refuse a gate they do not
// model (by name and value); a gate at its default, or GenericWorkload=true
// with or without pod groups among the victims, is answered; upstream
// answers all. (optimized's one refusal of victim groups, a unit across
// nodes beside the topology plugins, is optimized.TestGroupGaps.)
func TestGateRefusals(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("10")}}}
	victim := gatePod("v", "n", 0, "2")
	grouped := victim.DeepCopy()
	group := "g"
	grouped.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	preemptor := gatePod("p", "", 10, "1")
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
			"feature gate DRANodeAllocatableResources is not modelled: the configuration sets DRANodeAllocatableResources=true (v1.37.2's default is false)", ""},
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
