package optimized_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/testobj"
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
	node := func(name string) *v1.Node { return gangNode(name, "2", "10").Label("zone", "z").Obj() }
	all := testobj.MakePodGroup().Namespace("default").Name("all").UID("pg-all").Priority(1).DisruptionModeAll().Obj()
	single := testobj.MakePodGroup().Namespace("default").Name("single").UID("pg-single").Priority(2).Obj()
	c := &preempt.Cluster{Nodes: []*v1.Node{node("n1"), node("n2")},
		Pods: []*v1.Pod{gangPod("a1", "n1", "all", 0, "800m").Obj(), gangPod("s1", "n1", "single", 0, "800m").Obj(), gangPod("plain", "n1", "", 3, "300m").Obj(),
			gangPod("a2", "n2", "all", 0, "500m").Obj()},
		PodGroups: []*preempt.PodGroup{all, single}}
	preemptor := gangPod("p", "", "", 10, "1500m").PodAntiAffinity("zone", testobj.MakeLabelSelector().Label("app", "a2").Obj(), testobj.PodAntiAffinityWithRequiredReq).Obj()
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
	req := &preempt.Request{Pod: preemptor, Config: cfg, Now: testobj.Epoch}
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
