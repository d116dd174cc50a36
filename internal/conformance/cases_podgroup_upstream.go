package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's own pod-group preemption tests (k8s.io/kubernetes v1.37.2)
// ported to the contract, each case named after upstream's and asserting
// upstream's expectation (victims, nominations, status):
//
//   - pkg/scheduler/framework/preemption/podgrouppreemption_test.go:
//     TestPodGroupEvaluator_SelectVictimsOnDomain (and its _NominatedNodes
//     variant) and TestPodGroupEvaluator_Preempt;
//   - test/integration/scheduler/preemption/podgroup/podgrouppreemption_test.go:
//     TestPodGroupPreemption, the cases one PodGroupPostFilter call
//     expresses.
//
// The unit tests' mockFilterPlugin (a node holds "capacity" pods, a pod
// takes its "size" label, 1 by default) is NodeResourcesFit here: a node
// of capacity c has c CPUs, a pod of size s requests s CPUs. Their
// mockSchedulingFunc, which places each member on the first node it fits
// from the node after the previous member's (round robin), is
// roundRobinPlacement, so their expectations hold as upstream wrote them.
// Upstream's priorities there are lowPriority 10, midPriority 100 and
// highPriority 1000. The integration tests run the whole scheduler with its
// scoring; here the contract's preempt.FirstFit places the members, and
// where upstream's expectation depends on that placement, or on scheduling
// cycles before the PodGroupPostFilter call, the case says so.
//
// Not ported, the contract having no way to say them: the integration
// cases with a custom Reserve plugin ("Reserve plugins are called during
// preemption simulation, so second pod fails"), those that bind members in
// a cycle before preempting ("Binding first before preemption ..."),
// TopologyAwareWorkloadScheduling's placement ("Topology-Aware Preemption:
// ...") and CompositePodGroup preemptors (TestCompositePodGroupPreemption:
// neither the reference nor the upstream adapter models one; see
// gangCase.composite); TestPodGroupPreemptionEvaluationDurationMetric
// (a metric).

const (
	upLow, upMid, upHigh = int32(10), int32(100), int32(1000)
)

// upGang is a PodGroup with the gang policy of minCount and no
// disruption mode (st.MakePodGroup().MinCount(n)); pgGroup is upstream's
// st.MakePodGroup().BasicPolicy().
func upGang(name string, prio, minCount int32) *testobj.PodGroupWrapper {
	return testobj.MakePodGroup().Namespace("default").Name(name).UID("pg-" + name).Priority(prio).MinCount(minCount)
}

// upNodes are nodes node1, node2, ... of the given CPUs.
func upNodes(cpus ...string) []*v1.Node {
	var out []*v1.Node
	for i, c := range cpus {
		out = append(out, pgNode(fmt.Sprintf("node%d", i+1), c).Obj())
	}
	return out
}

// upFound is PodGroupEvaluator.Preempt's message on success.
func upFound(n int) string {
	return fmt.Sprintf("pod group preemption: found a placement for podgroup, preempting %d victims", n)
}

const (
	upNoVictims = "pod group preemption: No preemption victims found for incoming preemptor"
	upNeverMsg  = "pod group preemption: not eligible due to preemptionPolicy=Never."
	upOngoing   = "pod group preemption: ongoing preemption on nominated nodes"
)

var pgPolicyGates = map[string]bool{preempt.GenericWorkloadGate: true, "PodGroupPreemptionPolicy": true}

// roundRobinPlacement is the scheduling function of upstream's
// TestPodGroupEvaluator_SelectVictimsOnDomain (mockSchedulingFunc): each
// member, in order, goes to the first node it fits counting from the node
// after the previous member's, wrapping around; one that fits nowhere
// stays unplaced.
func roundRobinPlacement(ctx context.Context, view preempt.PlacementView, members []*v1.Pod) ([]string, error) {
	nodes := view.Nodes()
	out := make([]string, len(members))
	next := 0
	for i, p := range members {
		for step := range nodes {
			j := (next + step) % len(nodes)
			ok, err := view.Fits(ctx, p, nodes[j])
			if err != nil {
				return out, err
			}
			if !ok {
				continue
			}
			placed, err := view.Place(ctx, p, nodes[j])
			if err != nil {
				return out, err
			}
			if placed {
				out[i] = nodes[j]
				next = (j + 1) % len(nodes)
			}
			break
		}
	}
	return out, nil
}

// upCluster is a cluster of nodes, pods, pod groups and PDBs.
func upCluster(nodes []*v1.Node, pods []*v1.Pod, groups []*preempt.PodGroup, pdbs ...*policyv1.PodDisruptionBudget) *preempt.Cluster {
	return &preempt.Cluster{Nodes: nodes, Pods: pods, PodGroups: groups, PDBs: pdbs}
}

// upMembers are pods name... of preemptor-pg at prio requesting cpu.
func upMembers(group string, prio int32, cpu string, names ...string) []*v1.Pod {
	var out []*v1.Pod
	for _, n := range names {
		out = append(out, pgPod(n, "", group, prio, cpu).Obj())
	}
	return out
}

func testUpstreamPodGroupSelectVictimsOnDomain(t *testing.T, impl preempt.Implementation) {
	fooPDB := pdbFor("pdb", "foo", 0)
	one := func(prio int32) []*v1.Pod { return upMembers("preemptor-pg", prio, "1", "p") }
	threeNodesMixed := func() []*v1.Pod {
		return []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Obj(), pgPod("p2", "node2", "pg1", upLow, "1").Obj(), pgPod("p3", "node3", "pg2", upLow, "1").Obj()}
	}
	singles := []*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeSingle().Obj(), pgGroup("pg2", upLow).DisruptionModeSingle().Obj()}
	for _, tc := range []gangCase{
		{
			name: "Priority: mix of no groups and pod groups",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Obj(), pgPod("p2", "node1", "pg1", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeSingle().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			// p1 is less important than p2 because it's not part of a pod group
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			name: "Priority: StartTime of pods from same group with disruption mode single ",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("p1", "node1", "pg1", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour + time.Second)).Obj(), pgPod("p2", "node1", "pg1", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour)).Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeSingle().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			// p1 is less important than p2 because of later StartTime
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "pg1")}, groups: 1, deleted: []string{"p1"},
		},
		{
			name: "Pod group with disruption mode group not reprieved",
			c: upCluster(upNodes("1", "1"), []*v1.Pod{pgPod("p1", "node1", "pg1", upLow, "1").Obj(), pgPod("p2", "node2", "pg1", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "pg1"), pgVictim("p2", upLow, "pg1")}, groups: 1, deleted: []string{"p1", "p2"},
		},
		{
			// Round robin puts p-1, p-2, p-3 on node1, node2, node3; only
			// p2 (node2 holds one pod) cannot come back. FirstFit would
			// put p-1 and p-2 on node1 and evict p1 too.
			name: "Complex Mixed: Shared, different, and no groups",
			c: upCluster(upNodes("2", "1", "2", "2", "2"), []*v1.Pod{
				pgPod("p1", "node1", "pg1", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour + 2*time.Second)).Obj(), pgPod("p2", "node2", "pg1", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour + time.Second)).Obj(),
				pgPod("p3", "node3", "pg2", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour)).Obj(), pgPod("p4", "node4", "", upMid, "1").Obj(),
				pgPod("p5", "node5", "pg3", upHigh, "1").StartTime(testobj.Epoch.Add(-time.Hour)).Obj(),
			}, []*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeSingle().Obj(), pgGroup("pg2", upLow).DisruptionModeSingle().Obj(), pgGroup("pg3", upHigh).DisruptionModeSingle().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: upMembers("preemptor-pg", upHigh, "1", "p-1", "p-2", "p-3"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node2", "node3"},
			victims: []preempt.Victim{pgVictim("p2", upLow, "pg1")}, groups: 1, deleted: []string{"p2"},
		},
		{
			// pg1 is not in the cluster: each pod is a victim of its own,
			// typed as a pod group (NewPodVictim), at its own priority.
			name: "PDB: Mixed groups",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("victim-pdb", "node1", "pg1", upLow, "1").Label("app", "foo").Obj(), pgPod("victim-no-pdb", "node1", "pg1", upLow, "1").Obj()},
				nil, fooPDB),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("victim-no-pdb", upLow, "pg1")}, groups: 1, deleted: []string{"victim-no-pdb"},
		},
		{
			name: "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption",
			c:    upCluster(upNodes("1", "1", "1"), threeNodesMixed(), nil),
			pg:   pgGroup("preemptor-pg", upHigh).Obj(), members: upMembers("preemptor-pg", upHigh, "1", "p-1"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			// The group's policy wins over the member's under
			// PodGroupPreemptionPolicy.
			name:    "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, ignoring member pod preemption policy",
			c:       upCluster(upNodes("1", "1", "1"), threeNodesMixed(), nil),
			pg:      pgGroup("preemptor-pg", upHigh).PreemptionPolicy(schedulingv1beta1.PreemptLowerPriority).Obj(),
			members: []*v1.Pod{pgPod("p-1", "", "preemptor-pg", upHigh, "1").PreemptionPolicy(v1.PreemptNever).Obj()}, gates: pgPolicyGates,
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			name: "Preemptor group is eligible if terminating pods are on non-nominated nodes",
			c: upCluster(upNodes("1", "1"), []*v1.Pod{pgPod("victim", "node2", "", upLow, "1").DeletionTimestamp(testobj.Epoch.Add(-time.Minute)).PreemptedByScheduler().Obj(),
				pgPod("other-victim", "node1", "", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour - time.Minute)).Obj()}, nil),
			pg:      pgGroup("preemptor-pg", upHigh).Obj(),
			members: []*v1.Pod{pgPod("p1", "", "preemptor-pg", upHigh, "1").Obj(), pgPod("p2", "", "preemptor-pg", upHigh, "1").NominatedNodeName("node1").Obj()},
			status:  preempt.Success, message: upFound(2), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("other-victim", upLow, ""), pgVictim("victim", upLow, "")}, deleted: []string{"other-victim"},
		},
		{
			name: "Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher priority",
			c: upCluster(upNodes("2", "1"), []*v1.Pod{pgPod("victim", "node1", "victim-pg", upLow, "1").DeletionTimestamp(testobj.Epoch.Add(-time.Minute)).PreemptedByScheduler().Obj(), pgPod("other-victim", "node1", "", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("victim-pg", upHigh).DisruptionModeAll().Obj()}),
			pg:      pgGroup("preemptor-pg", upMid).Obj(),
			members: []*v1.Pod{pgPod("p1", "", "preemptor-pg", upMid, "1").Obj(), pgPod("p2", "", "preemptor-pg", upMid, "1").NominatedNodeName("node1").Obj()},
			status:  preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("other-victim", upLow, "")}, deleted: []string{"other-victim"},
		},
		{
			name: "Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher priority with nil DisruptionMode",
			c: upCluster(upNodes("2", "1"), []*v1.Pod{pgPod("victim", "node1", "victim-pg", upLow, "1").DeletionTimestamp(testobj.Epoch.Add(-time.Minute)).PreemptedByScheduler().Obj(), pgPod("other-victim", "node1", "", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("victim-pg", upHigh).DisruptionModeSingle().Obj()}),
			pg:      pgGroup("preemptor-pg", upMid).Obj(),
			members: []*v1.Pod{pgPod("p1", "", "preemptor-pg", upMid, "1").Obj(), pgPod("p2", "", "preemptor-pg", upMid, "1").NominatedNodeName("node1").Obj()},
			status:  preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("other-victim", upLow, "")}, deleted: []string{"other-victim"},
		},
		{
			name: "Preempt single lower priority pod",
			c:    upCluster(upNodes("1"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Obj()}, nil),
			pg:   pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			name: "Priority: Prefer lower priority victim",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Obj(), pgPod("p2", "node1", "", upMid, "1").Obj(), pgPod("p3", "node1", "", upHigh, "1").Obj()},
				nil),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p2", upMid, ""), pgVictim("p1", upLow, "")}, deleted: []string{"p2", "p1"},
		},
		{
			// Upstream leaves p1..p4 tied (no start time) and reprieves
			// them in snapshot order (docs/upstream-findings.md, "Gang
			// victims equal on MoreImportantVictim come in snapshot
			// order"); here they start a second apart in that order, so
			// MoreImportantVictim decides.
			name: "Efficiency: Preempt minimum number of victims",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour)).Obj(), pgPod("p2", "node1", "", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour + time.Second)).Obj(),
				pgPod("p3", "node1", "", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour + 2*time.Second)).Obj(), pgPod("p4", "node1", "", upLow, "1").StartTime(testobj.Epoch.Add(-time.Hour + 3*time.Second)).Obj()}, nil),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p3", upLow, ""), pgVictim("p4", upLow, "")}, deleted: []string{"p3", "p4"},
		},
		{
			name: "PDB: Prefer non-violating victim",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("victim-pdb", "node1", "", upLow, "1").Label("app", "foo").Obj(), pgPod("victim-no-pdb", "node1", "", upLow, "1").Obj()},
				nil, fooPDB),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("victim-no-pdb", upLow, "")}, deleted: []string{"victim-no-pdb"},
		},
		{
			name: "PDB: Prefer removing non-violating victim over lower priority violating victim",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("victim-pdb", "node1", "", upLow, "1").Label("app", "foo").Obj(), pgPod("victim-no-pdb", "node1", "", upMid, "1").Obj()},
				nil, fooPDB),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("victim-no-pdb", upMid, "")}, deleted: []string{"victim-no-pdb"},
		},
		{
			name: "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims",
			c:    upCluster(upNodes("1", "1", "1"), threeNodesMixed(), singles),
			pg:   pgGroup("preemptor-pg", upHigh).Obj(), members: upMembers("preemptor-pg", upHigh, "1", "p-1"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			// The group sets no policy: under PodGroupPreemptionPolicy that
			// is PreemptLowerPriority, whatever the member says.
			name: "PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims, ignoring member pod preemption policy",
			c:    upCluster(upNodes("1", "1", "1"), threeNodesMixed(), singles),
			pg:   pgGroup("preemptor-pg", upHigh).Obj(), members: []*v1.Pod{pgPod("p-1", "", "preemptor-pg", upHigh, "1").PreemptionPolicy(v1.PreemptNever).Obj()}, gates: pgPolicyGates,
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			name: "PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
			c: upCluster(upNodes("2"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Label("app", "foo").Obj(), pgPod("p2", "node1", "", upMid, "1").Label("app", "foo").Obj()},
				nil, fooPDB),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, violations: 1, deleted: []string{"p1"},
		},
		{
			// Upstream's fixture names node1 twice in its capacities (the
			// mock reads node2 as holding nothing); node2 takes 2 here.
			// Either way the preemptor goes to node1.
			name: "PodGroup: Preempt group as a whole",
			c: upCluster(upNodes("1", "2"), []*v1.Pod{pgPod("p1", "node1", "pg1", upLow, "1").Obj(), pgPod("p2", "node2", "pg1", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "pg1"), pgVictim("p2", upLow, "pg1")}, groups: 1, deleted: []string{"p1", "p2"},
		},
		{
			name: "PodGroup: Prefer single pod over podGroup for preemption candidate",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Obj(), pgPod("g1-1", "node1", "pg1", upLow, "1").Obj(), pgPod("g1-2", "node1", "pg1", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			name: "PodGroup: Preempt group as a whole on single node",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("g1-1", "node1", "pg1", upLow, "1").Obj(), pgPod("g1-2", "node1", "pg1", upLow, "1").Obj(), pgPod("p1", "node1", "", upMid, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("g1-1", upLow, "pg1"), pgVictim("g1-2", upLow, "pg1")}, groups: 1, deleted: []string{"g1-1", "g1-2"},
		},
		{
			name: "PDB: Unit violation if any member violates",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("g1-1", "node1", "pg1", upLow, "1").Label("app", "foo").Obj(), pgPod("g1-2", "node1", "pg1", upLow, "1").Obj(), pgPod("p1", "node1", "", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeAll().Obj()}, fooPDB),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upLow, "")}, deleted: []string{"p1"},
		},
		{
			name: "Failure: Cannot preempt the victim with higher priority",
			c:    upCluster(upNodes("100"), []*v1.Pod{pgPod("p1", "node1", "", upHigh, "1").Obj()}, nil),
			pg:   pgGroup("preemptor-pg", upMid).Obj(), members: one(upMid),
			status: preempt.UnschedulableAndUnresolvable, message: upNoVictims, nominations: []string{""},
		},
		{
			name: "Failure: Cannot preempt the victim with equal priority",
			c:    upCluster(upNodes("100"), []*v1.Pod{pgPod("p1", "node1", "", upMid, "1").Obj()}, nil),
			pg:   pgGroup("preemptor-pg", upMid).Obj(), members: one(upMid),
			status: preempt.UnschedulableAndUnresolvable, message: upNoVictims, nominations: []string{""},
		},
		{
			name: "Failure: Cannot preempt if node is empty",
			c:    upCluster(upNodes("100"), nil, nil),
			pg:   pgGroup("preemptor-pg", upMid).Obj(), members: one(upMid),
			status: preempt.UnschedulableAndUnresolvable, message: upNoVictims, nominations: []string{""},
		},
		{
			name: "Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group",
			c: upCluster(upNodes("1", "1"), []*v1.Pod{pgPod("p1", "node1", "pg1", upHigh, "1").Obj(), pgPod("p2", "node2", "pg1", upHigh, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upMid).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: one(upHigh),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("p1", upHigh, "pg1"), pgVictim("p2", upHigh, "pg1")}, groups: 1, deleted: []string{"p1", "p2"},
		},
		{
			name: "Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group",
			c: upCluster(upNodes("1", "1"), []*v1.Pod{pgPod("p1", "node1", "pg1", upLow, "1").Obj(), pgPod("p2", "node2", "pg1", upLow, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg1", upMid).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upMid).Obj(), members: one(upMid),
			status: preempt.UnschedulableAndUnresolvable, message: upNoVictims, nominations: []string{""},
		},
		upGangsAsMany("Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still more than minCount",
			upGang("preemptor-pg", upHigh, 1).Obj(), upLow, upHigh, upHigh, nil),
		upGangsDoNotReprieve("Gang scheduling: do not reprieve victim pod group of lower priority",
			upGang("preemptor-pg", upHigh, 1).Obj(), upLow, upMid, upHigh, nil),
		upGangsPartial("Gang scheduling: preempt a pod group victim but do not schedule full pod group",
			upGang("preemptor-pg", upHigh, 1).DisruptionModeAll().Obj(), upMid, upHigh, upHigh, nil),
		upGangsAsMany("Basic scheduling: schedule as many pods as possible without preempting higher priority pods",
			pgGroup("preemptor-pg", upHigh).Obj(), upLow, upHigh, upHigh, nil),
		upGangsDoNotReprieve("Basic scheduling: do not reprieve victim pod group of lower priority",
			pgGroup("preemptor-pg", upHigh).Obj(), upLow, upMid, upHigh, nil),
		upGangsPartial("Basic scheduling: preempt a pod group victim but do not schedule full pod group",
			pgGroup("preemptor-pg", upHigh).DisruptionModeAll().Obj(), upMid, upHigh, upHigh, nil),
		{
			// TestPodGroupEvaluator_SelectVictimsOnDomain_NominatedNodes:
			// only p1 is placed; p2 gets no nomination.
			name: "NominatedNodes",
			c:    upCluster(upNodes("1"), []*v1.Pod{pgPod("p3", "node1", "", upLow, "1").Obj()}, nil),
			pg:   pgGroup("preemptor-pg", upHigh).Obj(), members: upMembers("preemptor-pg", upHigh, "1", "p1", "p2"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", ""},
			victims: []preempt.Victim{pgVictim("p3", upLow, "")}, deleted: []string{"p3"},
		},
	} {
		tc.placement = roundRobinPlacement
		t.Run(tc.name, func(t *testing.T) { runGangCase(t, impl, tc) })
	}
}

// upGangsAsMany is upstream's "... schedule as many pods as possible
// without preempting higher priority pods": p1, p2 (at low) and p3, p4
// (at high) on four one-CPU nodes, three members of pg at prio; p-c finds
// no node. p1 starts first, so the victims' order is MoreImportantVictim's,
// not the snapshot's.
func upGangsAsMany(name string, pg *preempt.PodGroup, low, high, prio int32, placement preempt.Placement) gangCase {
	return gangCase{
		name: name,
		c: upCluster(upNodes("1", "1", "1", "1"), []*v1.Pod{pgPod("p1", "node1", "", low, "1").StartTime(testobj.Epoch.Add(-time.Hour)).Obj(), pgPod("p2", "node2", "", low, "1").StartTime(testobj.Epoch.Add(-time.Hour + time.Second)).Obj(),
			pgPod("p3", "node3", "", high, "1").Obj(), pgPod("p4", "node4", "", high, "1").Obj()}, nil),
		pg: pg, members: upMembers(pg.Name, prio, "1", "p-a", "p-b", "p-c"), placement: placement,
		status: preempt.Success, message: upFound(2), nominations: []string{"node1", "node2", ""},
		victims: []preempt.Victim{pgVictim("p1", low, ""), pgVictim("p2", low, "")}, deleted: []string{"p1", "p2"},
	}
}

// upGangsDoNotReprieve is upstream's "... do not reprieve victim pod group
// of lower priority": victim-pg (mode All, at mid) on node1 and node2, v3
// (at low) on node3; three members of pg take all three nodes.
func upGangsDoNotReprieve(name string, pg *preempt.PodGroup, low, mid, prio int32, placement preempt.Placement) gangCase {
	return gangCase{
		name: name,
		c: upCluster(upNodes("1", "1", "1"), []*v1.Pod{pgPod("v1", "node1", "victim-pg", mid, "1").Obj(), pgPod("v2", "node2", "victim-pg", mid, "1").Obj(),
			pgPod("v3", "node3", "", low, "1").Obj()}, []*preempt.PodGroup{upGang("victim-pg", mid, 1).DisruptionModeAll().Obj()}),
		pg: pg, members: upMembers(pg.Name, prio, "1", "p-a", "p-b", "p-c"), placement: placement,
		status: preempt.Success, message: upFound(3), nominations: []string{"node1", "node2", "node3"},
		victims: []preempt.Victim{pgVictim("v1", mid, "victim-pg"), pgVictim("v2", mid, "victim-pg"), pgVictim("v3", low, "")},
		groups:  1, deleted: []string{"v1", "v2", "v3"},
	}
}

// upGangsPartial is upstream's "... preempt a pod group victim but do not
// schedule full pod group": victim-pg (mode All, at mid) on node1 and
// node2, victim-pg2 (mode All, at high) on node3 and node4; of three
// members of pg, p-c finds no node.
func upGangsPartial(name string, pg *preempt.PodGroup, mid, high, prio int32, placement preempt.Placement) gangCase {
	return gangCase{
		name: name,
		c: upCluster(upNodes("1", "1", "1", "1"), []*v1.Pod{pgPod("v1", "node1", "victim-pg", mid, "1").Obj(), pgPod("v2", "node2", "victim-pg", mid, "1").Obj(),
			pgPod("v3", "node3", "victim-pg2", high, "1").Obj(), pgPod("v4", "node4", "victim-pg2", high, "1").Obj()},
			[]*preempt.PodGroup{upGang("victim-pg", mid, 2).DisruptionModeAll().Obj(), upGang("victim-pg2", high, 2).DisruptionModeAll().Obj()}),
		pg: pg, members: upMembers(pg.Name, prio, "1", "p-a", "p-b", "p-c"), placement: placement,
		status: preempt.Success, message: upFound(2), nominations: []string{"node1", "node2", ""},
		victims: []preempt.Victim{pgVictim("v1", mid, "victim-pg"), pgVictim("v2", mid, "victim-pg")},
		groups:  1, deleted: []string{"v1", "v2"},
	}
}

func testUpstreamPodGroupPreempt(t *testing.T, impl preempt.Implementation) {
	nominatedSecond := func(prio int32) []*v1.Pod {
		return []*v1.Pod{pgPod("p1", "", "preemptor-pg", prio, "1").Obj(), pgPod("p2", "", "preemptor-pg", prio, "1").NominatedNodeName("node1").Obj()}
	}
	threeNodes := func(withGroups bool) *preempt.Cluster {
		var groups []*preempt.PodGroup
		if withGroups {
			groups = []*preempt.PodGroup{pgGroup("pg1", upLow).DisruptionModeSingle().Obj(), pgGroup("pg2", upLow).DisruptionModeSingle().Obj()}
		}
		return upCluster(upNodes("1", "1", "1"), []*v1.Pod{pgPod("p1", "node1", "", upLow, "1").Obj(), pgPod("p2", "node2", "pg1", upLow, "1").Obj(),
			pgPod("p3", "node3", "pg2", upLow, "1").Obj()}, groups)
	}
	for _, tc := range []gangCase{
		{
			name: "Preemptor group returns success with current nominating infos if member has nominated node with terminating pods",
			c:    upCluster(upNodes("1"), []*v1.Pod{pgPod("victim", "node1", "", upLow, "1").DeletionTimestamp(testobj.Epoch.Add(-time.Minute)).PreemptedByScheduler().Obj()}, nil),
			pg:   pgGroup("preemptor-pg", upHigh).Obj(), members: nominatedSecond(upHigh),
			status: preempt.Success, message: upOngoing, nominations: []string{"", "node1"},
		},
		{
			name: "Preemptor group returns success with current nominating infos if nominated node has terminating pod belonging to a pod group of lower priority",
			c: upCluster(upNodes("1"), []*v1.Pod{pgPod("victim", "node1", "victim-pg", upHigh, "1").DeletionTimestamp(testobj.Epoch.Add(-time.Minute)).PreemptedByScheduler().Obj()},
				[]*preempt.PodGroup{pgGroup("victim-pg", upLow).DisruptionModeAll().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: nominatedSecond(upHigh),
			status: preempt.Success, message: upOngoing, nominations: []string{"", "node1"},
		},
		{
			name: "Preemptor group returns success with current nominating infos if nominated node has terminating pod belonging to a pod group of lower priority with DisruptionModePod",
			c: upCluster(upNodes("1"), []*v1.Pod{pgPod("victim", "node1", "victim-pg", upHigh, "1").DeletionTimestamp(testobj.Epoch.Add(-time.Minute)).PreemptedByScheduler().Obj()},
				[]*preempt.PodGroup{pgGroup("victim-pg", upLow).DisruptionModeSingle().Obj()}),
			pg: pgGroup("preemptor-pg", upHigh).Obj(), members: nominatedSecond(upHigh),
			status: preempt.Success, message: upOngoing, nominations: []string{"", "node1"},
		},
		{
			name: "PodGroup preemptor with PreemptNever policy does not perform preemption",
			c:    threeNodes(false),
			pg:   pgGroup("preemptor-pg", upHigh).PreemptionPolicy(schedulingv1beta1.PreemptNever).Obj(), members: upMembers("preemptor-pg", upHigh, "1", "p-1", "p-2"),
			status: preempt.Unschedulable, message: upNeverMsg, nominations: []string{"", ""},
		},
		{
			name: "PodGroup preemptor with PreemptNever preemption policy does not perform preemption with PodGroup victims",
			c:    threeNodes(true),
			pg:   pgGroup("preemptor-pg", upHigh).PreemptionPolicy(schedulingv1beta1.PreemptNever).Obj(), members: upMembers("preemptor-pg", upHigh, "1", "p-1", "p-2"),
			status: preempt.Unschedulable, message: upNeverMsg, nominations: []string{"", ""},
		},
	} {
		// Upstream's test runs every case under PodGroupPreemptionPolicy.
		tc.gates = pgPolicyGates
		t.Run(tc.name, func(t *testing.T) { runGangCase(t, impl, tc) })
	}
}

func testUpstreamPodGroupIntegration(t *testing.T, impl preempt.Implementation) {
	// low-i starts i seconds after low-0 would: equal pods of upstream's
	// fixtures, ordered by start (not by the snapshot) here.
	low := func(i int, node string) *v1.Pod {
		return pgPod(fmt.Sprintf("low-%d", i), node, "", 10, "1").StartTime(testobj.Epoch.Add(-time.Hour + time.Duration(i)*time.Second)).Obj()
	}
	lows := func(node string, n int) []*v1.Pod {
		var out []*v1.Pod
		for i := 1; i <= n; i++ {
			out = append(out, low(i, node))
		}
		return out
	}
	lowVictims := func(n int) []preempt.Victim {
		var out []preempt.Victim
		for i := 1; i <= n; i++ {
			out = append(out, pgVictim(fmt.Sprintf("low-%d", i), 10, ""))
		}
		return out
	}
	lowNames := func(n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("low-%d", i))
		}
		return out
	}
	highs := func(n int, cpu string) []*v1.Pod {
		var out []*v1.Pod
		for i := 1; i <= n; i++ {
			out = append(out, pgPod(fmt.Sprintf("high-%d", i), "", "pg1", 100, cpu).Obj())
		}
		return out
	}
	// The preemptors' variants, each on a member's wrapper.
	type with = func(*testobj.PodWrapper) *testobj.PodWrapper
	antiAffinity := func(p *testobj.PodWrapper) *testobj.PodWrapper {
		return p.PodAntiAffinityExists("app", HostnameKey, testobj.PodAntiAffinityWithRequiredReq)
	}
	hostPort := func(p *testobj.PodWrapper) *testobj.PodWrapper {
		return p.Ports(v1.ContainerPort{ContainerPort: 8080, HostPort: 8080})
	}
	spread := func(p *testobj.PodWrapper) *testobj.PodWrapper {
		return p.SpreadConstraint(2, HostnameKey, v1.DoNotSchedule, testobj.MakeLabelSelector().Label("app", "foo").Obj(), ptr.To(int32(10)), nil, nil, nil).
			HostnameSelector("node1").Label("app", "foo")
	}
	same := func(p *testobj.PodWrapper) *testobj.PodWrapper { return p }
	preemptors := func(cpu string, with with) []*v1.Pod {
		return []*v1.Pod{with(pgPod("preemptor-1", "", "preemptor-pg", 100, cpu)).Obj(), with(pgPod("preemptor-2", "", "preemptor-pg", 100, cpu)).Obj()}
	}
	initial := func(cpu string) *testobj.PodWrapper {
		return pgPod("initial-pod", "node1", "", 10, cpu).Label("app", "initial")
	}
	fooPDB := pdbFor("foo-pdb", "foo", 0)
	for _, tc := range []gangCase{
		{
			name: "Full PodGroup Preemption",
			c:    upCluster(upNodes("3"), lows("node1", 3), nil),
			pg:   upGang("pg1", 100, 3).Obj(), members: highs(3, "1"),
			status: preempt.Success, message: upFound(3), nominations: []string{"node1", "node1", "node1"},
			victims: lowVictims(3), deleted: lowNames(3),
		},
		{
			name: "Full PodGroup Preemption for basic policy",
			c:    upCluster(upNodes("3"), lows("node1", 3), nil),
			pg:   pgGroup("pg1", 100).Obj(), members: highs(3, "1"),
			status: preempt.Success, message: upFound(3), nominations: []string{"node1", "node1", "node1"},
			victims: lowVictims(3), deleted: lowNames(3),
		},
		{
			// Upstream's score plugin prefers node1; FirstFit takes it
			// first too.
			name: "Partial Preemption",
			c:    upCluster(upNodes("2", "2"), []*v1.Pod{pgPod("low-1", "node1", "", 10, "2").Obj(), pgPod("low-2", "node2", "", 10, "1").Obj()}, nil),
			pg:   upGang("pg1", 100, 3).Obj(), members: highs(3, "1"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node1", "node2"},
			victims: []preempt.Victim{pgVictim("low-1", 10, "")}, deleted: []string{"low-1"},
		},
		{
			// Upstream binds two members without preemption first and
			// expects no nominations; one PodGroupPostFilter call with all
			// three members nominates each and evicts the same low-1.
			name: "Partial Preemption with basic policy",
			c:    upCluster(upNodes("2", "2"), []*v1.Pod{pgPod("low-1", "node1", "", 10, "1").Obj(), pgPod("very-low-1", "node2", "", 5, "1").Obj()}, nil),
			pg:   pgGroup("pg1", 100).Obj(), members: highs(3, "1"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node1", "node2"},
			victims: []preempt.Victim{pgVictim("low-1", 10, "")}, deleted: []string{"low-1"},
		},
		{
			// minAvailable 2 of the two foo pods: the disruption
			// controller allows none.
			name: "PDB Violation Handling (Reprieve)",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("low-1", "node1", "", 10, "1").Label("app", "foo").Obj(), pgPod("low-2", "node1", "", 10, "1").Label("app", "foo").Obj(),
				pgPod("low-3", "node1", "", 10, "1").Obj()}, nil, fooPDB),
			pg: upGang("pg1", 100, 2).Obj(), members: highs(2, "500m"),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node1"},
			victims: []preempt.Victim{pgVictim("low-3", 10, "")}, deleted: []string{"low-3"},
		},
		{
			name: "Multi-node Preemption",
			c:    upCluster(upNodes("2", "2"), append(lows("node1", 2), low(3, "node2"), low(4, "node2")), nil),
			pg:   upGang("pg1", 100, 4).Obj(), members: highs(4, "1"),
			status: preempt.Success, message: upFound(4), nominations: []string{"node1", "node1", "node2", "node2"},
			victims: lowVictims(4), deleted: lowNames(4),
		},
		{
			name: "Insufficient Resources (No Preemption)",
			c:    upCluster(upNodes("3"), append([]*v1.Pod{pgPod("mid-1", "node1", "", 500, "1").Obj()}, lows("node1", 2)...), nil),
			pg:   upGang("pg1", 100, 3).Obj(), members: highs(3, "1"),
			status: preempt.Unschedulable, nominations: []string{"", "", ""},
			message: "pod group preemption: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining",
		},
		{
			name: "Priority-based Victim Selection",
			c:    upCluster(upNodes("3"), append([]*v1.Pod{pgPod("mid-1", "node1", "", 50, "1").Obj()}, lows("node1", 2)...), nil),
			pg:   upGang("pg1", 100, 2).Obj(), members: highs(2, "1"),
			status: preempt.Success, message: upFound(2), nominations: []string{"node1", "node1"},
			victims: lowVictims(2), deleted: lowNames(2),
		},
		{
			name: "Preempt the whole PodGroup even if preempting a single Pod would suffice",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("low-1", "node1", "pg2", 10, "1").Obj(), pgPod("low-2", "node1", "pg2", 10, "1").Obj(), pgPod("low-3", "node1", "pg2", 10, "1").Obj()},
				[]*preempt.PodGroup{upGang("pg2", 10, 3).DisruptionModeAll().Obj()}),
			pg: upGang("pg1", 100, 1).Obj(), members: highs(1, "1"),
			status: preempt.Success, message: upFound(3), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("low-1", 10, "pg2"), pgVictim("low-2", 10, "pg2"), pgVictim("low-3", 10, "pg2")},
			groups:  1, deleted: lowNames(3),
		},
		{
			name: "Preempt the whole basic PodGroup with a PodGroup disruption mode",
			c: upCluster(upNodes("3"), []*v1.Pod{pgPod("low-1", "node1", "pg2", 10, "1").Obj(), pgPod("low-2", "node1", "pg2", 10, "1").Obj(), pgPod("low-3", "node1", "pg2", 10, "1").Obj()},
				[]*preempt.PodGroup{pgGroup("pg2", 10).DisruptionModeAll().Obj()}),
			pg: upGang("pg1", 100, 1).Obj(), members: highs(1, "1"),
			status: preempt.Success, message: upFound(3), nominations: []string{"node1"},
			victims: []preempt.Victim{pgVictim("low-1", 10, "pg2"), pgVictim("low-2", 10, "pg2"), pgVictim("low-3", 10, "pg2")},
			groups:  1, deleted: lowNames(3),
		},
		upGangsAsMany("Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still more than minCount",
			upGang("preemptor-pg", 100, 1).Obj(), 10, 200, 100, nil),
		upGangsDoNotReprieve("Gang scheduling: do not reprieve victim pod group of lower priority",
			upGang("preemptor-pg", 100, 3).Obj(), 10, 50, 100, nil),
		// Upstream expects a nomination for p-a only: p-b binds in a
		// cycle of its own; one call nominates both.
		upGangsPartial("Gang scheduling: preempt a pod group victim but do not schedule full pod group",
			upGang("preemptor-pg", 100, 1).DisruptionModeAll().Obj(), 50, 200, 100, nil),
		upGangsAsMany("Basic scheduling: schedule as many pods as possible without preempting higher priority pods",
			pgGroup("preemptor-pg", 100).Obj(), 10, 200, 100, nil),
		upGangsDoNotReprieve("Basic scheduling: do not reprieve victim pod group of lower priority",
			pgGroup("preemptor-pg", 100).Obj(), 10, 50, 100, nil),
		upGangsPartial("Basic scheduling: preempt a pod group victim but do not schedule full pod group",
			pgGroup("preemptor-pg", 100).DisruptionModeAll().Obj(), 50, 200, 100, nil),
		{
			name:    "PodGroup with PreemptNever preemption policy does not perform preemption, with PodGroupPreemptionPolicy enabled",
			c:       upCluster(upNodes("3"), lows("node1", 3), nil),
			pg:      upGang("pg1", 100, 3).PreemptionPolicy(schedulingv1beta1.PreemptNever).Obj(),
			members: []*v1.Pod{pgPod("high-1", "", "pg1", 100, "1").PreemptionPolicy(v1.PreemptNever).Obj(), pgPod("high-2", "", "pg1", 100, "1").PreemptionPolicy(v1.PreemptNever).Obj(), pgPod("high-3", "", "pg1", 100, "1").PreemptionPolicy(v1.PreemptNever).Obj()},
			gates:   pgPolicyGates,
			status:  preempt.Unschedulable, message: upNeverMsg, nominations: []string{"", "", ""},
		},
		{
			name: "PodGroup with PreemptLowerPriority preemption policy performs preemption, with PodGroupPreemptionPolicy enabled",
			c:    upCluster(upNodes("3"), lows("node1", 3), nil),
			pg:   upGang("pg1", 100, 3).PreemptionPolicy(schedulingv1beta1.PreemptLowerPriority).Obj(), members: highs(3, "1"), gates: pgPolicyGates,
			status: preempt.Success, message: upFound(3), nominations: []string{"node1", "node1", "node1"},
			victims: lowVictims(3), deleted: lowNames(3),
		},
		{
			name: "PodGroup with default preemption policy performs preemption, with PodGroupPreemptionPolicy enabled",
			c:    upCluster(upNodes("3"), lows("node1", 3), nil),
			pg:   upGang("pg1", 100, 3).Obj(), members: highs(3, "1"), gates: pgPolicyGates,
			status: preempt.Success, message: upFound(3), nominations: []string{"node1", "node1", "node1"},
			victims: lowVictims(3), deleted: lowNames(3),
		},
		{
			name:    "PodGroup with PreemptNever preemption policy in all pods does not perform preemption, with PodGroupPreemptionPolicy disabled",
			c:       upCluster(upNodes("3"), lows("node1", 3), nil),
			pg:      upGang("pg1", 100, 3).Obj(),
			members: []*v1.Pod{pgPod("high-1", "", "pg1", 100, "1").PreemptionPolicy(v1.PreemptNever).Obj(), pgPod("high-2", "", "pg1", 100, "1").PreemptionPolicy(v1.PreemptNever).Obj(), pgPod("high-3", "", "pg1", 100, "1").PreemptionPolicy(v1.PreemptNever).Obj()},
			status:  preempt.Unschedulable, message: upNeverMsg, nominations: []string{"", "", ""},
		},
		{
			name: "Gang scheduling: preemption with node resources",
			c:    upCluster(upNodes("2", "2"), []*v1.Pod{initial("2").Obj()}, nil),
			pg:   upGang("preemptor-pg", 100, 2).Obj(), members: preemptors("2", same),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("initial-pod", 10, "")}, deleted: []string{"initial-pod"},
		},
		{
			name: "Gang scheduling: preemption with node resources, prioritizes reprieval of higher priority pods",
			c: upCluster(upNodes("2", "2"), []*v1.Pod{pgPod("initial-pod-1", "node1", "", 5, "1").Label("app", "initial").Obj(),
				pgPod("initial-pod-2", "node1", "", 10, "1").Label("app", "initial").Obj()}, nil),
			pg:      upGang("preemptor-pg", 100, 2).Obj(),
			members: []*v1.Pod{pgPod("preemptor-1", "", "preemptor-pg", 100, "1").HostnameSelector("node1").Obj(), pgPod("preemptor-2", "", "preemptor-pg", 100, "1").HostnameSelector("node2").Obj()},
			status:  preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("initial-pod-1", 5, "")}, deleted: []string{"initial-pod-1"},
		},
		{
			name: "Gang scheduling: preemption with pod level resources",
			c:    upCluster(upNodes("2", "2"), []*v1.Pod{initial("2").ContainerRequests(nil).Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}).Obj()}, nil),
			pg:   upGang("preemptor-pg", 100, 2).Obj(), members: preemptors("2", func(p *testobj.PodWrapper) *testobj.PodWrapper {
				return antiAffinity(p.ContainerRequests(nil).Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}))
			}),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("initial-pod", 10, "")}, deleted: []string{"initial-pod"},
		},
		{
			// Even though there is enough resources to keep initial pod
			// when scheduling preemptor due to the pod anti affinity it
			// cannot be reprieved.
			name: "Gang scheduling: preemption with pod anti-affinity constraints",
			c:    upCluster(upNodes("2", "2"), []*v1.Pod{initial("250m").Obj()}, nil),
			pg:   upGang("preemptor-pg", 100, 2).Obj(), members: preemptors("1500m", antiAffinity),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("initial-pod", 10, "")}, deleted: []string{"initial-pod"},
		},
		{
			name: "Gang scheduling: preemption with pod node port",
			c:    upCluster(upNodes("2", "2"), []*v1.Pod{pgPod("initial-pod", "node1", "", 10, "250m").Ports(v1.ContainerPort{ContainerPort: 8080, HostPort: 8080}).Obj()}, nil),
			pg:   upGang("preemptor-pg", 100, 2).Obj(), members: preemptors("1500m", hostPort),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node2"},
			victims: []preempt.Victim{pgVictim("initial-pod", 10, "")}, deleted: []string{"initial-pod"},
		},
		{
			name: "Gang scheduling: preemption with pod topology spread constraints",
			c:    upCluster(upNodes("16", "16"), []*v1.Pod{pgPod("initial-pod", "node1", "", 10, "1").Label("app", "foo").Obj()}, nil),
			pg:   upGang("preemptor-pg", 100, 2).Obj(), members: preemptors("1", spread),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node1"},
			victims: []preempt.Victim{pgVictim("initial-pod", 10, "")}, deleted: []string{"initial-pod"},
		},
		{
			// initial-pod-2 can be reprieved even though it has lower
			// priority, because it won't cause skew.
			name: "Gang scheduling: preemption with pod topology spread constraints, single reprieve",
			c: upCluster(upNodes("16", "16"), []*v1.Pod{pgPod("initial-pod", "node1", "", 10, "1").Label("app", "foo").Obj(),
				pgPod("initial-pod-2", "node2", "", 5, "1").Label("app", "foo").Obj()}, nil),
			pg: upGang("preemptor-pg", 100, 2).Obj(), members: preemptors("1", spread),
			status: preempt.Success, message: upFound(1), nominations: []string{"node1", "node1"},
			victims: []preempt.Victim{pgVictim("initial-pod", 10, "")}, deleted: []string{"initial-pod"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { runGangCase(t, impl, tc) })
	}
}
