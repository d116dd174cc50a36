package optimized_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TestSelectGroupVictimsAllocatesNothing: on a node whose pods name pod
// groups (a mode-All group with a member on another node, a Single-mode
// member, a plain pod), beside a preemptor whose required anti-affinity
// the remote member breaks, zone-wide (it must leave InterPodAffinity's
// state for the preemptor to fit), the
// group-aware SelectVictimsOnNode gives the reference's victims and, once
// warm, allocates nothing.
func TestSelectGroupVictimsAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	node := func(name string) *v1.Node {
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "zone": "z"}},
			Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourcePods: resource.MustParse("10")}}}
	}
	pod := func(name, node, group string, prio int32, cpu string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": name}},
			Spec: v1.PodSpec{NodeName: node, Priority: ptr.To(prio),
				Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}}}}}
		if group != "" {
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptr.To(group)}
		}
		if node != "" {
			start := metav1.NewTime(now.Add(-time.Hour))
			p.Status.StartTime = &start
		}
		return p
	}
	all := &preempt.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "all", UID: "pg-all"},
		Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To(int32(1)), DisruptionMode: &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}}}
	single := &preempt.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "single", UID: "pg-single"},
		Spec: schedulingv1beta1.PodGroupSpec{Priority: ptr.To(int32(2))}}
	c := &preempt.Cluster{Nodes: []*v1.Node{node("n1"), node("n2")},
		Pods: []*v1.Pod{pod("a1", "n1", "all", 0, "800m"), pod("s1", "n1", "single", 0, "800m"), pod("plain", "n1", "", 3, "300m"),
			pod("a2", "n2", "all", 0, "500m")},
		PodGroups: []*preempt.PodGroup{all, single}}
	preemptor := pod("p", "", "", 10, "1500m")
	preemptor.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a2"}}, TopologyKey: "zone"}}}}
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
	req := &preempt.Request{Pod: preemptor, Config: cfg, Now: now}
	ctx := context.Background()

	ref, err := reference.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	want, wantViolations, wantStatus := ref.SelectVictimsOnNode(ctx, req, "n1")
	if !wantStatus.IsSuccess() || len(want) != 3 || want[2].Name != "a2" {
		t.Fatalf("reference: victims %v status %+v: the case should evict the group across nodes", want, wantStatus)
	}
	ev, err := optimized.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	got, violations, st := ev.SelectVictimsOnNode(ctx, req, "n1") // warms the scratch buffers
	if diff := cmp.Diff([]any{want, wantViolations, wantStatus}, []any{got, violations, st}); diff != "" {
		t.Fatalf("SelectVictimsOnNode (-reference +optimized):\n%s", diff)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if v, _, st := ev.SelectVictimsOnNode(ctx, req, "n1"); !st.IsSuccess() || len(v) != len(want) {
			t.Fatalf("victims %v status %+v", v, st)
		}
	})
	if allocs != 0 {
		t.Errorf("SelectVictimsOnNode on a node with pod groups allocates %v times per call, want 0", allocs)
	}
}
