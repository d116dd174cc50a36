package upstream_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// pgNode is a node of cpu and 100 pods, labelled with its hostname.
func pgNode(name, cpu string) *v1.Node {
	return testobj.MakeNode().Name(name).Hostname().Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourcePods: "100"}).Obj()
}

// pgPod is a pod of namespace default requesting cpu, bound to node
// (pending when ""), in group (none when ""), started an hour before the
// epoch when bound.
func pgPod(name, node, group string, prio int32, cpu string) *testobj.PodWrapper {
	return testobj.MakePod().Namespace("default").Name(name).UID("uid-"+name).Priority(prio).PodGroupName(group).
		Container("c").CPU(cpu).Bound(node, testobj.Epoch.Add(-time.Hour))
}

// group is a PodGroup of namespace default with the basic policy, of
// priority prio; the callers set its disruption mode and parent.
func group(name string, prio int32) *testobj.PodGroupWrapper {
	return testobj.MakePodGroup().Namespace("default").Name(name).UID("pg-" + name).Priority(prio).BasicPolicy()
}

// composite is a CompositePodGroup of namespace default, mode All.
func composite(name string, prio int32) *preempt.CompositePodGroup {
	return testobj.MakeCompositePodGroup().Namespace("default").Name(name).UID("cpg-" + name).Priority(prio).DisruptionModeAll().BasicPolicy().Obj()
}

// gang is a PodGroup of namespace default, mode All, with the gang policy
// of minCount.
func gang(name string, prio, minCount int32) *preempt.PodGroup {
	return testobj.MakePodGroup().Namespace("default").Name(name).UID("pg-" + name).Priority(prio).DisruptionModeAll().MinCount(minCount).Obj()
}

// twoNodes is nodes n1 and n2 of 1 CPU, running victims.
func twoNodes(victims ...*v1.Pod) *preempt.Cluster {
	return &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1")}, Pods: victims}
}

var (
	genericWorkload = map[string]bool{"GenericWorkload": true}
	compositeGates  = map[string]bool{"GenericWorkload": true, "CompositePodGroup": true, "TopologyAwareWorkloadScheduling": true}
)

// Victims under GenericWorkload, as v1.37.2's GetVictimsOnNode groups
// them (getCrossNodesVictims): the expected answers follow upstream's
// code, and the cases follow default_preemption_test.go's pod-group ones
// (TestSelectVictimsOnNode..., "filter for matching pod group").
func TestUpstreamPodGroupVictims(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c         *preempt.Cluster
		pod       *v1.Pod
		gates     map[string]bool
		status    preempt.Code
		node      string
		victims   []preempt.Victim
		deleted   []string
		numGroups int
	}{
		{
			// A mode-All group is one victim: evicting it for n1 evicts
			// its member on n2 too.
			name: "mode All group across nodes is preempted whole",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1")},
				Pods:      []*v1.Pod{pgPod("v1", "n1", "pg1", 0, "600m").Obj(), pgPod("v2", "n2", "pg1", 0, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{group("pg1", 0).DisruptionModeAll().Obj()}},
			pod: pgPod("p", "", "", 10, "600m").Obj(), gates: genericWorkload,
			status: preempt.Success, node: "n1",
			victims: []preempt.Victim{{Namespace: "default", Name: "v1", PodGroup: "default/pg1"}, {Namespace: "default", Name: "v2", PodGroup: "default/pg1"}},
			deleted: []string{"v1", "v2"},
		},
		{
			// The same cluster with the gate off: two plain pods, one
			// victim.
			name: "gate off: members are plain pods",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1")},
				Pods:      []*v1.Pod{pgPod("v1", "n1", "pg1", 0, "600m").Obj(), pgPod("v2", "n2", "pg1", 0, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{group("pg1", 0).DisruptionModeAll().Obj()}},
			pod:    pgPod("p", "", "", 10, "600m").Obj(),
			status: preempt.Success, node: "n1",
			// Each still names its group (issue 28).
			victims: []preempt.Victim{{Namespace: "default", Name: "v1", PodGroup: "default/pg1"}},
			deleted: []string{"v1"},
		},
		{
			// Single mode: members go one by one, at the group's
			// priority (100), above the preemptor's (10) though their
			// own is 0 (#139030).
			name: "Single mode members take the group's priority",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1")},
				Pods:      []*v1.Pod{pgPod("v1", "n1", "pg1", 0, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{group("pg1", 100).DisruptionModeSingle().Obj()}},
			pod: pgPod("p", "", "", 10, "600m").Obj(), gates: genericWorkload,
			status: preempt.Unschedulable,
		},
		{
			// Single mode, group priority below the preemptor's: the
			// member alone is a victim.
			name: "Single mode member is a single victim",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1")},
				Pods:      []*v1.Pod{pgPod("v1", "n1", "pg1", 50, "600m").Obj(), pgPod("v2", "n2", "pg1", 50, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{group("pg1", 1).DisruptionModeSingle().Obj()}},
			pod: pgPod("p", "", "", 10, "600m").Obj(), gates: genericWorkload,
			status: preempt.Success, node: "n1",
			victims: []preempt.Victim{{Namespace: "default", Name: "v1", Priority: 50, PodGroup: "default/pg1"}},
			deleted: []string{"v1"},
		},
		{
			// A CompositePodGroup with mode All: the unit is every
			// scheduled member of every leaf group under it.
			name: "composite mode All takes both leaf groups",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1"), pgNode("n2", "1"), pgNode("n3", "1")},
				Pods:               []*v1.Pod{pgPod("a1", "n1", "pga", 0, "600m").Obj(), pgPod("b1", "n2", "pgb", 0, "600m").Obj(), pgPod("b2", "n3", "pgb", 0, "600m").Obj()},
				PodGroups:          []*preempt.PodGroup{group("pga", 0).DisruptionModeSingle().ParentCompositePodGroup("job").Obj(), group("pgb", 0).DisruptionModeSingle().ParentCompositePodGroup("job").Obj()},
				CompositePodGroups: []*preempt.CompositePodGroup{composite("job", 0)}},
			pod: pgPod("p", "", "", 10, "600m").Obj(), gates: compositeGates,
			status: preempt.Success, node: "n1",
			victims: []preempt.Victim{{Namespace: "default", Name: "a1", PodGroup: "default/pga"}, {Namespace: "default", Name: "b1", PodGroup: "default/pgb"}, {Namespace: "default", Name: "b2", PodGroup: "default/pgb"}},
			deleted: []string{"a1", "b1", "b2"},
		},
		{
			// A group member's priority comes from the composite (90)
			// above the preemptor's: nothing to preempt.
			name: "composite priority protects its members",
			c: &preempt.Cluster{Nodes: []*v1.Node{pgNode("n1", "1")},
				Pods:               []*v1.Pod{pgPod("a1", "n1", "pga", 0, "600m").Obj()},
				PodGroups:          []*preempt.PodGroup{group("pga", 0).DisruptionModeAll().ParentCompositePodGroup("job").Obj()},
				CompositePodGroups: []*preempt.CompositePodGroup{composite("job", 90)}},
			pod: pgPod("p", "", "", 10, "600m").Obj(), gates: compositeGates,
			status: preempt.Unschedulable,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := preempt.DefaultConfig()
			cfg.Synchronous = true
			cfg.FeatureGates = tc.gates
			res, err := harness.Decide(context.Background(), upstream.Impl{ListOrderTie: true}, tc.c, tc.pod, cfg, 0, testobj.Epoch)
			if err != nil {
				t.Fatal(err)
			}
			d := res.Decision
			if d.Status != tc.status || d.NominatedNode != tc.node {
				t.Fatalf("status %s node %q (%s), want %s %q", d.Status, d.NominatedNode, d.Message, tc.status, tc.node)
			}
			if tc.victims == nil {
				tc.victims = []preempt.Victim{}
			}
			if diff := cmp.Diff(tc.victims, d.Victims); diff != "" {
				t.Errorf("victims (-want +got):\n%s", diff)
			}
			var deleted []string
			for _, a := range d.Actions {
				if a.Verb == "delete" {
					deleted = append(deleted, a.Name)
				}
			}
			if diff := cmp.Diff(tc.deleted, deleted); diff != "" {
				t.Errorf("deleted pods (-want +got):\n%s", diff)
			}
			if d.NumPodGroupDisruptions != tc.numGroups {
				t.Errorf("numPodGroupDisruptions %d, want %d", d.NumPodGroupDisruptions, tc.numGroups)
			}
		})
	}
}

// Gang preemption (PodGroupPostFilter) with first-fit placement, the
// cases of podgrouppreemption_test.go's TestPodGroupPreemption shapes:
// the gang's priority against victims', minCount, PDBs, unplaceable
// members.
func TestUpstreamGangPreemption(t *testing.T) {
	for _, tc := range []struct {
		name        string
		c           *preempt.Cluster
		pg          *preempt.PodGroup
		members     []*v1.Pod
		status      preempt.Code
		message     string
		nominations []string
		victims     []string
		deleted     []string
	}{
		{
			name:    "gang of two preempts one pod on each node",
			c:       twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			pg:      gang("g", 10, 2),
			members: []*v1.Pod{pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj()},
			status:  preempt.Success, message: "pod group preemption: found a placement for podgroup, preempting 2 victims",
			nominations: []string{"n1", "n2"}, victims: []string{"v1", "v2"}, deleted: []string{"v1", "v2"},
		},
		{
			// The reprieve keeps what the gang does not need.
			name:    "one member fits without preemption, the other takes one victim",
			c:       twoNodes(pgPod("v1", "n1", "", 0, "300m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			pg:      gang("g", 10, 2),
			members: []*v1.Pod{pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj()},
			status:  preempt.Success, message: "pod group preemption: found a placement for podgroup, preempting 1 victims",
			nominations: []string{"n1", "n2"}, victims: []string{"v2"}, deleted: []string{"v2"},
		},
		{
			// Victims must be below the group's priority (10), whatever
			// the members' own (100).
			name:    "no victim below the group's priority",
			c:       twoNodes(pgPod("v1", "n1", "", 20, "600m").Obj(), pgPod("v2", "n2", "", 20, "600m").Obj()),
			pg:      gang("g", 10, 2),
			members: []*v1.Pod{pgPod("m0", "", "g", 100, "600m").Obj(), pgPod("m1", "", "g", 100, "600m").Obj()},
			status:  preempt.UnschedulableAndUnresolvable, message: "pod group preemption: No preemption victims found for incoming preemptor",
			nominations: []string{"", ""},
		},
		{
			// Three members need 3 nodes' room, minCount 3: first fit
			// places two, the gang fails.
			name:    "minCount out of reach",
			c:       twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			pg:      gang("g", 10, 3),
			members: []*v1.Pod{pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj(), pgPod("m2", "", "g", 10, "600m").Obj()},
			status:  preempt.Unschedulable, nominations: []string{"", "", ""},
			message: "pod group preemption: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
		},
		{
			// minCount 2 of 3: the third member stays unplaced.
			name:    "members beyond minCount may stay unplaced",
			c:       twoNodes(pgPod("v1", "n1", "", 0, "600m").Obj(), pgPod("v2", "n2", "", 0, "600m").Obj()),
			pg:      gang("g", 10, 2),
			members: []*v1.Pod{pgPod("m0", "", "g", 10, "600m").Obj(), pgPod("m1", "", "g", 10, "600m").Obj(), pgPod("m2", "", "g", 10, "600m").Obj()},
			status:  preempt.Success, message: "pod group preemption: found a placement for podgroup, preempting 2 victims",
			nominations: []string{"n1", "n2", ""}, victims: []string{"v1", "v2"}, deleted: []string{"v1", "v2"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := preempt.DefaultConfig()
			cfg.Synchronous = true
			cfg.FeatureGates = genericWorkload
			ev, err := upstream.Impl{}.NewEvaluator(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			cs := harness.NewClientset(tc.c, nil)
			req := &preempt.PodGroupRequest{PodGroup: tc.pg, Pods: tc.members, Config: cfg, Now: testobj.Epoch}
			d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), cs, req)
			if d.Status != tc.status || d.Message != tc.message {
				t.Fatalf("status %s %q, want %s %q", d.Status, d.Message, tc.status, tc.message)
			}
			// The decision's nominations are upstream's NominatingInfos:
			// the placed members on Success, none otherwise.
			var wantNoms, noms, victims, deleted []string
			for _, n := range tc.nominations {
				if n != "" && d.Status == preempt.Success {
					wantNoms = append(wantNoms, n)
				}
			}
			for _, n := range d.Nominations {
				noms = append(noms, n.Node)
			}
			for _, v := range d.Victims {
				victims = append(victims, v.Name)
			}
			for _, a := range harness.Actions(cs.Actions()) {
				if a.Verb == "delete" {
					deleted = append(deleted, a.Name)
				}
			}
			if diff := cmp.Diff(wantNoms, noms); diff != "" {
				t.Errorf("nominations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.victims, victims); diff != "" {
				t.Errorf("victims (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deleted, deleted); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
		})
	}
}
