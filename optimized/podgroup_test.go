package optimized

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// groupNode is a node of 1 cpu and 10 pods, labelled with its hostname.
func groupNode(name string) *v1.Node {
	return testobj.MakeNode().Name(name).Hostname().Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourcePods: "10"}).Obj()
}

// groupPod is a pod labelled app=a asking 600m, bound to node ("" for
// none, no start time either way), in group ("" for none).
func groupPod(name, node, group string, prio int32) *testobj.PodWrapper {
	return testobj.MakePod().Namespace("default").Name(name).UID("uid-"+name).Label("app", "a").Node(node).Priority(prio).PodGroupName(group).
		Container("c").CPU("600m")
}

// groupObject is a PodGroup of no policy and no disruption mode (Single),
// of priority prio.
func groupObject(name string, prio int32) *testobj.PodGroupWrapper {
	return testobj.MakePodGroup().Namespace("default").Name(name).UID("pg-" + name).Priority(prio)
}

// TestGroupGaps: under GenericWorkload, optimized refuses a preemptor in a
// pod group, and a unit below the preemptor with members on several nodes
// when the preemptor has a DoNotSchedule spread constraint; nothing else
// (inter-pod affinity beside such a unit is modelled).
func TestGroupGaps(t *testing.T) {
	gates := preempt.Config{FeatureGates: map[string]bool{preempt.GenericWorkloadGate: true}}
	spread := func(all bool, prio int32) *preempt.Cluster {
		g := groupObject("g", prio)
		if all {
			g.DisruptionModeAll()
		}
		return &preempt.Cluster{Nodes: []*v1.Node{groupNode("n1"), groupNode("n2")},
			Pods:      []*v1.Pod{groupPod("v1", "n1", "g", 0).Obj(), groupPod("v2", "n2", "g", 0).Obj()},
			PodGroups: []*preempt.PodGroup{g.Obj()}}
	}
	together := spread(true, 0)
	together.Pods[1].Spec.NodeName = "n1"
	for _, tc := range []struct {
		name string
		c    *preempt.Cluster
		pod  *v1.Pod
		cfg  preempt.Config
		want string // in the refusal, "" for none
	}{
		{"a unit across nodes beside spread", spread(true, 0), groupPod("p", "", "", 10).SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, testobj.MakeLabelSelector().Label("app", "a").Obj(), nil, nil, nil, nil).Obj(), gates, "podgroup default/g has members on nodes n1 and n2"},
		{"a unit across nodes beside anti-affinity", spread(true, 0), groupPod("p", "", "", 10).PodAntiAffinity("kubernetes.io/hostname", testobj.MakeLabelSelector().Label("app", "other").Obj(), testobj.PodAntiAffinityWithRequiredReq).Obj(), gates, ""},
		{"the gate off", spread(true, 0), groupPod("p", "", "", 10).SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, testobj.MakeLabelSelector().Label("app", "a").Obj(), nil, nil, nil, nil).Obj(), preempt.Config{}, ""},
		{"no topology plugin runs", spread(true, 0), groupPod("p", "", "", 10).Obj(), gates, ""},
		{"the unit above the preemptor", spread(true, 20), groupPod("p", "", "", 10).SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, testobj.MakeLabelSelector().Label("app", "a").Obj(), nil, nil, nil, nil).Obj(), gates, ""},
		{"Single mode: no unit", spread(false, 0), groupPod("p", "", "", 10).SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, testobj.MakeLabelSelector().Label("app", "a").Obj(), nil, nil, nil, nil).Obj(), gates, ""},
		{"the unit on one node", together, groupPod("p", "", "", 10).SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, testobj.MakeLabelSelector().Label("app", "a").Obj(), nil, nil, nil, nil).Obj(), gates, ""},
		{"a preemptor in a pod group", spread(true, 0), groupPod("p", "", "g", 10).Obj(), gates, "pod default/p belongs to a pod group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := Impl{}.UnmodelledGateUse(tc.c, tc.pod, tc.cfg)
			switch {
			case tc.want == "" && u != nil:
				t.Errorf("refused: %v", u)
			case tc.want != "" && (u == nil || !strings.Contains(u.Error(), tc.want)):
				t.Errorf("refusal %v, want one saying %q", u, tc.want)
			}
		})
	}
}

// TestGroupViewFollowsUpdate: after Update, the pod-group view of an
// owned snapshot holds what a view built afresh on the new cluster holds.
func TestGroupViewFollowsUpdate(t *testing.T) {
	gates := map[string]bool{preempt.GenericWorkloadGate: true}
	c, e := groupTestEvaluator(t)
	if e.s.groupsFor(gates) == nil {
		t.Fatal("no view of a cluster with pod groups")
	}
	ch := preempt.Change{Removed: []preempt.PodRef{{Namespace: "default", Name: "b"}, {Namespace: "default", Name: "x"}},
		Added: []*v1.Pod{groupPod("c", "n1", "g", 0).Obj(), groupPod("aa", "n1", "g", 0).Obj(), groupPod("y", "", "h", 0).Obj()}}
	pods, err := ch.Apply(c.Pods)
	if err != nil {
		t.Fatal(err)
	}
	after := &preempt.Cluster{Nodes: c.Nodes, Pods: pods, PodGroups: c.PodGroups}
	if err := e.Update(after, ch); err != nil {
		t.Fatal(err)
	}
	fresh, err := Prepare(after)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(describeView(fresh, fresh.groupsFor(gates)), describeView(e.s, e.s.groupsFor(gates))); diff != "" {
		t.Errorf("view after Update (-fresh +updated):\n%s", diff)
	}
}

// describeView is v by pod and node names: each live pod's priority as a
// victim, victim record and unit, each unit's members and start, the
// grouped pods per node.
func describeView(s *Snapshot, v *groupView) map[string]any {
	out := map[string]any{}
	for p := range int32(len(s.pods)) {
		if !s.live(p) {
			continue
		}
		unit := "-"
		if u := v.unitOf[p]; u >= 0 {
			var names []string
			for _, m := range v.units[u].members {
				names = append(names, s.podName[m])
			}
			x := v.units[u]
			unit = strings.Join(names, ",") + " " + cmp.Diff(nil, []any{x.rank, x.minStart, x.started, x.unstarted})
		}
		out["pod "+s.podName[p]] = []any{v.prio[p], v.victim[p], v.typed[p], unit}
	}
	for n, k := range v.typedOn {
		out["node "+s.names[n]] = k
	}
	out["live"] = v.live
	return out
}

// The final tie read from the view's ranks orders pods as their names do,
// pods added by Update (without a rank) among them.
func TestGroupRanksFollowNames(t *testing.T) {
	gates := map[string]bool{preempt.GenericWorkloadGate: true}
	c, e := groupTestEvaluator(t)
	if g := e.s.groupsFor(gates); g == nil || len(g.rank) != len(c.Pods) {
		t.Fatal("no ranks in the snapshot's view")
	}
	ch := preempt.Change{Added: []*v1.Pod{groupPod("aa", "n1", "g", 0).Obj(), groupPod("c", "n1", "", 0).Obj(), groupPod("0", "n2", "h", 0).Obj()}}
	pods, err := ch.Apply(c.Pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Update(&preempt.Cluster{Nodes: c.Nodes, Pods: pods, PodGroups: c.PodGroups}, ch); err != nil {
		t.Fatal(err)
	}
	d := &decision{s: e.s, groups: e.s.groupsFor(gates)}
	if len(d.groups.rank) >= len(e.s.pods) {
		t.Fatal("the added pods have ranks: the string path is not exercised")
	}
	n := int32(len(e.s.pods))
	for a := range n {
		for b := range n {
			ua, ub := unitRef{pod: a}, unitRef{pod: b}
			if got, want := d.compareUnits(&ua, &ub), e.s.compareNames(a, b); got != want {
				t.Errorf("%s vs %s: %d, want %d", e.s.podName[a], e.s.podName[b], got, want)
			}
		}
	}
}

// groupTestEvaluator is optimized's evaluator on two nodes with a mode-All
// group g across them, a Single group h and a plain pod.
func groupTestEvaluator(t *testing.T) (*preempt.Cluster, *evaluator) {
	t.Helper()
	c := &preempt.Cluster{Nodes: []*v1.Node{groupNode("n1"), groupNode("n2")},
		Pods:      []*v1.Pod{groupPod("b", "n1", "g", 0).Obj(), groupPod("a", "n2", "g", 0).Obj(), groupPod("x", "n2", "h", 5).Obj(), groupPod("plain", "n1", "", 1).Obj()},
		PodGroups: []*preempt.PodGroup{groupObject("g", 3).DisruptionModeAll().Obj(), groupObject("h", 7).Obj()}}
	ev, err := Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, ev.(*evaluator)
}
