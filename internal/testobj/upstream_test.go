package testobj_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	st "k8s.io/kubernetes/pkg/scheduler/testing"

	"github.com/preemptbench/preemptbench/internal/testobj"
)

// TestSameAsUpstream: the methods named as upstream's wrappers' (the
// ones the suite's ported tables call) build what upstream's build, but
// for the documented differences (StartTime's argument, MakeNode's
// default capacity); the package itself imports no k8s.io/kubernetes
// package, only this test does.
func TestSameAsUpstream(t *testing.T) {
	start := time.Unix(0, 3)
	res := map[v1.ResourceName]string{v1.ResourceCPU: "300m", v1.ResourceMemory: "300"}
	cond := []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"pod",
			testobj.MakePod().Name("p").UID("p").Namespace("ns").Priority(10).Node("n").Req(res).Req(res).
				StartTime(start).Label("a", "b").Labels(map[string]string{"c": "d"}).NominatedNodeName("m").
				SchedulerName("s").PreemptionPolicy(v1.PreemptNever).PodGroupName("g").Conditions(cond).
				Condition(v1.PodReady, v1.ConditionTrue, "r").Phase(v1.PodRunning).Toleration("k").
				NodeSelector(map[string]string{"x": "y"}).Overhead(v1.ResourceList{}).Obj(),
			st.MakePod().Name("p").UID("p").Namespace("ns").Priority(10).Node("n").Req(res).Req(res).
				StartTime(metav1.NewTime(start)).Label("a", "b").Labels(map[string]string{"c": "d"}).NominatedNodeName("m").
				SchedulerName("s").PreemptionPolicy(v1.PreemptNever).PodGroupName("g").Conditions(cond).
				Condition(v1.PodReady, v1.ConditionTrue, "r").Phase(v1.PodRunning).Toleration("k").
				NodeSelector(map[string]string{"x": "y"}).Overhead(v1.ResourceList{}).Obj()},
		{"ports",
			testobj.MakePod().HostPort(80).ContainerPort([]v1.ContainerPort{{ContainerPort: 81}}).Obj(),
			st.MakePod().HostPort(80).ContainerPort([]v1.ContainerPort{{ContainerPort: 81}}).Obj()},
		{"affinity",
			testobj.MakePod().PodAntiAffinityExists("foo", "hostname", testobj.PodAntiAffinityWithRequiredReq).
				PodAffinityExists("bar", "zone", testobj.PodAffinityWithRequiredPreferredReq).
				PodAntiAffinity("zone", testobj.MakeLabelSelector().Label("a", "b").In("c", []string{"d"}).Obj(), testobj.PodAntiAffinityWithPreferredReq).
				PodAffinity("zone", testobj.MakeLabelSelector().NotIn("c", []string{"d"}).NotExist("e").Obj(), testobj.NilPodAffinity).
				SpreadConstraint(1, "zone", v1.DoNotSchedule, testobj.MakeLabelSelector().Label("a", "b").Obj(), nil, nil, nil, nil).Obj(),
			st.MakePod().PodAntiAffinityExists("foo", "hostname", st.PodAntiAffinityWithRequiredReq).
				PodAffinityExists("bar", "zone", st.PodAffinityWithRequiredPreferredReq).
				PodAntiAffinity("zone", st.MakeLabelSelector().Label("a", "b").In("c", []string{"d"}).Obj(), st.PodAntiAffinityWithPreferredReq).
				PodAffinity("zone", st.MakeLabelSelector().NotIn("c", []string{"d"}).NotExist("e").Obj(), st.NilPodAffinity).
				SpreadConstraint(1, "zone", v1.DoNotSchedule, st.MakeLabelSelector().Label("a", "b").Obj(), nil, nil, nil, nil).Obj()},
		{"node",
			testobj.MakeNode().Name("n").UID("u").Label("a", "b").Capacity(res).Taints([]v1.Taint{{Key: "k"}}).Unschedulable(true).Obj(),
			st.MakeNode().Name("n").UID("u").Label("a", "b").Capacity(res).Taints([]v1.Taint{{Key: "k"}}).Unschedulable(true).Obj()},
		{"node without capacity",
			testobj.MakeNode().Name("n").Capacity(nil).Obj(),
			st.MakeNode().Name("n").Obj()},
		{"pdb",
			testobj.MakePDB().Name("b").Namespace("ns").MatchLabel("a", "b").MatchLabel("c", "d").MinAvailable("100%").DisruptionsAllowed(3).Obj(),
			st.MakePDB().Name("b").Namespace("ns").MatchLabel("a", "b").MatchLabel("c", "d").MinAvailable("100%").DisruptionsAllowed(3).Obj()},
		{"pod group",
			testobj.MakePodGroup().Name("g").Namespace("ns").UID("u").Priority(5).BasicPolicy().MinCount(2).
				DisruptionModeAll().PreemptionPolicy("Never").ParentCompositePodGroup("c").TopologyKey("zone").Obj(),
			st.MakePodGroup().Name("g").Namespace("ns").UID("u").Priority(5).BasicPolicy().MinCount(2).
				DisruptionModeAll().PreemptionPolicy("Never").ParentCompositePodGroup("c").TopologyKey("zone").Obj()},
		{"pod group, single",
			testobj.MakePodGroup().DisruptionModeSingle().Obj(),
			st.MakePodGroup().DisruptionModeSingle().Obj()},
		{"composite pod group",
			testobj.MakeCompositePodGroup().Name("c").Namespace("ns").UID("u").Priority(5).BasicPolicy().MinGroupCount(2).
				DisruptionModeAll().ParentCompositePodGroup("p").PreemptionPolicy("Never").Obj(),
			st.MakeCompositePodGroup().Name("c").Namespace("ns").UID("u").Priority(5).BasicPolicy().MinGroupCount(2).
				DisruptionModeAll().ParentCompositePodGroup("p").PreemptionPolicy("Never").Obj()},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-upstream +testobj):\n%s", tc.name, diff)
		}
	}
}

// TestTerminating: Terminating sets the current time, as upstream's.
func TestTerminating(t *testing.T) {
	before := time.Now().Add(-time.Second)
	p := testobj.MakePod().Terminating().Obj()
	if p.DeletionTimestamp == nil || p.DeletionTimestamp.Before(&metav1.Time{Time: before}) {
		t.Errorf("deletionTimestamp %v, want the current time", p.DeletionTimestamp)
	}
}
