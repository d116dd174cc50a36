package synth

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/preemptbench/preemptbench/preempt"
)

// Gang is one preemptor gang of a gang shape: its PodGroup (also in the
// cluster, as scheduler_perf creates the groups before their pods) and
// its members, unscheduled, in creation (queue) order.
type Gang struct {
	PodGroup *preempt.PodGroup
	Members  []*v1.Pod
}

// The gang shapes are v1.37.2's workload_preemption tests of
// scheduler_perf (test/integration/scheduler_perf/workload_preemption):
// a cluster, then preemptor gangs that each preempt as one
// (PodGroupPostFilter) under GenericWorkload=true. They have no single
// preemptor (Scenario.Pod is nil) and are built by BuildGangs, not Build:
// only the gang streams (bench.PreemptionStream) run them.
var gangShapes = map[string]gangBuilder{
	"gang-basic":     buildGangBasic,
	"gang-podgroups": buildGangPodGroups,
	"gang-affinity":  buildGangAffinity,
}

// gangBuilder builds a gang shape at nodes with podsPerGroup members a
// gang (podsPerGroup divides nodes).
type gangBuilder func(b *B, nodes, podsPerGroup int)

func init() {
	// GangPreemption*'s 2Nodes_* (short) and 100Nodes_* (performance).
	for shape := range gangShapes {
		upstreamSizes[shape] = []int{2, 100}
	}
}

// GangShapes lists the gang shape names in order.
func GangShapes() []string { return slices.Sorted(maps.Keys(gangShapes)) }

// IsGangShape says whether shape is a gang shape (GangShapes).
func IsGangShape(shape string) bool { _, ok := gangShapes[shape]; return ok }

// DefaultGangs is the number of preemptor gangs of a gang shape at nodes
// when none is asked for: nodes/m gangs of m members, m the largest
// divisor of nodes up to 10. At upstream's sizes that is 1 gang of 2 at 2
// nodes (the short workloads) and 10 gangs of 10 at 100 nodes: the
// 100Nodes_10PreemptorGangs_10Pods workload of GangPreemptionBasic and
// GangPreemptionAffinity (100Nodes_10PreemptorGangs_10Pods_Evicting_50LowPriorityGangs
// of GangPreemptionPodGroups), rather than their 1-gang-of-100 one, because
// ten gangs make a stream: the cluster changes between the gangs and each
// gang's cycle runs on what the ones before it left, as the podgroup
// streams' preemptors do. BuildGangs with gangs 1 builds the other.
func DefaultGangs(nodes int) int {
	for m := min(10, nodes); m > 1; m-- {
		if nodes%m == 0 {
			return nodes / m
		}
	}
	return max(1, nodes)
}

// CheckGangs says whether BuildGangs makes the gang shape with that many
// nodes and gangs (0: DefaultGangs).
func CheckGangs(shape string, nodes, gangs int) error {
	if !IsGangShape(shape) {
		return fmt.Errorf("unknown gang shape %q (known: %s)", shape, strings.Join(GangShapes(), ", "))
	}
	if nodes < 1 {
		return fmt.Errorf("shape %s: %d nodes; a gang shape needs at least one", shape, nodes)
	}
	if nodes > MaxNodes {
		return fmt.Errorf("shape %s: %d nodes, more than the %d a scenario may have", shape, nodes, MaxNodes)
	}
	if gangs == 0 {
		return nil
	}
	if gangs < 0 || gangs > nodes || nodes%gangs != 0 {
		return fmt.Errorf("shape %s: %d gangs at %d nodes; the gangs share the nodes, one member a node: give a divisor of the node count", shape, gangs, nodes)
	}
	return nil
}

// BuildGangs makes the named gang shape with the given number of nodes
// and preemptor gangs (0: DefaultGangs(nodes)), of nodes/gangs members
// each: one member a node in all. The same arguments always give the same
// scenario. Its Gangs are the preemptor gangs in creation order, its
// MeasurePods their members (scheduler_perf's collectMetrics pods).
func BuildGangs(shape string, nodes, gangs int, seed uint64) (*Scenario, error) {
	if err := CheckGangs(shape, nodes, gangs); err != nil {
		return nil, err
	}
	if gangs == 0 {
		gangs = DefaultGangs(nodes)
	}
	b := newB(seed)
	b.gates = map[string]bool{preempt.GenericWorkloadGate: true}
	b.measurePods = nodes
	gangShapes[shape](b, nodes, nodes/gangs)
	s := b.scenario(shape)
	s.Gangs = b.gangs
	return s, nil
}

// MustBuildGangs is BuildGangs for arguments known to be valid.
func MustBuildGangs(shape string, nodes, gangs int, seed uint64) *Scenario {
	s, err := BuildGangs(shape, nodes, gangs, seed)
	if err != nil {
		panic(err)
	}
	return s
}

// The namespaces of workload_preemption (createNamespaces, prefix
// gang-preempt): the preemptor gangs in gang-preempt-0, the pods they
// preempt in gang-preempt-1, GangPreemptionAffinity's anchors in
// gang-preempt-2.
const anchorNamespace = "gang-preempt-2"

// namespaces adds the namespaces gang-preempt-0 to gang-preempt-(n-1), as
// the API server stores them (the kubernetes.io/metadata.name label).
func (b *B) namespaces(n int) {
	for i := range n {
		name := fmt.Sprintf("gang-preempt-%d", i)
		b.cluster.Namespaces = append(b.cluster.Namespaces, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: types.UID("namespace-uid-" + name), Labels: map[string]string{v1.LabelMetadataName: name}}})
	}
}

// blueLabels are the labels of workload_preemption's pod-low-priority.yaml
// and pod-anchor-high-priority.yaml, which pod-gang-affinity.yaml's
// required pod affinity selects.
func blueLabels() map[string]string {
	return map[string]string{"app": "blue", "label1": "value1", "label2": "value2", "label3": "value3", "label4": "value4"}
}

// The priorities of the templates: gang-pod.yaml, pod-gang-affinity.yaml
// and podgroup.yaml without a priority parameter, and the anchors' and
// GangPreemptionPodGroups' preemptors.
const (
	gangDefaultPriority int32 = 8888888
	gangHighPriority    int32 = 9999999
)

// lowPodsPerNode is how many pod-low-priority.yaml pods GangPreemptionBasic
// and GangPreemptionAffinity put on a node: initPods/initNodes, 5 in the
// short workloads (10 pods on 2 nodes) and 10 in the performance ones
// (1000 on 100); 5 below 10 nodes, 10 from there on.
func lowPodsPerNode(nodes int) int {
	if nodes < 10 {
		return 5
	}
	return 10
}

// lowPriorityPods adds initPods = k*nodes pods of pod-low-priority.yaml
// (k = lowPodsPerNode): priority 0, 40m/100Mi, blueLabels, host port
// 8000 + i mod k. The port allows one pod of each port a node, and there
// are as many pods of a port as nodes: the scheduler leaves exactly one
// of each on every node, k pods of 40m a node. Which pod of a port lands
// on which node its scoring leaves to chance; here pod i of port j goes
// to node perm_j[i/k], perm_j a permutation drawn from the seed.
// generateName's random suffix is left out of the names.
func lowPriorityPods(b *B, nodes int) {
	k := lowPodsPerNode(nodes)
	perms := make([][]int, k)
	for j := range perms {
		perms[j] = b.rng.Perm(nodes)
	}
	ages := b.distinctAges(k * nodes)
	for i := range k * nodes {
		b.Pod(PodSpec{Name: fmt.Sprintf("pod-low-priority-%d", i), Namespace: lowNamespace, Node: nodeName(perms[i%k][i/k]),
			Priority: 0, MilliCPU: 40, Memory: 100 * mi, HostPorts: []int32{int32(8000 + i%k)}, Labels: blueLabels(), Age: ages[i]})
	}
}

// distinctAges are n ages in whole seconds, all different, drawn from
// the last hour (or the last n seconds when n is larger). The gang path
// orders victims equal on MoreImportantVictim (two pods started in the
// same second) as upstream's snapshot lists them, which the contract does
// not pin (docs/divergences.md, "Gang victims equal on
// MoreImportantVictim"): the gang shapes have no such tie.
func (b *B) distinctAges(n int) []time.Duration {
	perm := b.rng.Perm(max(3600, n))
	ages := make([]time.Duration, n)
	for i := range ages {
		ages[i] = time.Duration(perm[i]) * time.Second
	}
	return ages
}

// gangNodes adds the nodes of templates/node-default.yaml: 4 cpu, 32Gi,
// 110 pods.
func gangNodes(b *B, nodes int) {
	for i := range nodes {
		b.Node(nodeName(i), 4000, 32*gi, 110, nil)
	}
}

// preemptorGangs adds the preemptor gangs: nodes/podsPerGroup PodGroups
// gang-g of gang-preempt-0 (podgroup.yaml: minCount podsPerGroup, the
// given priority, no disruption mode) and their members pod-gang-i,
// member of gang-(i/podsPerGroup), made by member (gang-pod.yaml or
// pod-gang-affinity.yaml), unscheduled and not yet started.
func preemptorGangs(b *B, nodes, podsPerGroup int, priority int32, member func(i, g int) PodSpec) {
	for g := range nodes / podsPerGroup {
		pg := b.PodGroup(PodGroupSpec{Name: fmt.Sprintf("gang-%d", g), Namespace: preemptorNamespace, Priority: priority, MinCount: int32(podsPerGroup)})
		gang := Gang{PodGroup: pg}
		for i := g * podsPerGroup; i < (g+1)*podsPerGroup; i++ {
			s := member(i, g)
			s.Name, s.Namespace, s.Priority, s.PodGroup, s.Age = fmt.Sprintf("pod-gang-%d", i), preemptorNamespace, priority, pg.Name, -1
			gang.Members = append(gang.Members, NewPod(s))
		}
		b.gangs = append(b.gangs, gang)
	}
}

// buildGangBasic is GangPreemptionBasic: nodes of node-default.yaml, k
// pods of 40m at priority 0 on each (lowPriorityPods; 5 at 2 nodes, 10 at
// 100) and preemptor gangs of gang-pod.yaml without host ports: members
// of 3970m/100Mi at priority 8888888, each evicting every pod of its
// node (4000m - 3970m leaves room for none of 40m).
func buildGangBasic(b *B, nodes, podsPerGroup int) {
	b.namespaces(2)
	gangNodes(b, nodes)
	lowPriorityPods(b, nodes)
	preemptorGangs(b, nodes, podsPerGroup, gangDefaultPriority, func(int, int) PodSpec {
		return PodSpec{MilliCPU: 3970, Memory: 100 * mi}
	})
}

// lowGangPodsPerNode is how many members of low-priority groups
// GangPreemptionPodGroups puts on a node: 2 in the short workload (2
// groups of 2 on 2 nodes), 5 in the performance ones (5 of 100, or 50 of
// 10, on 100); 2 below 10 nodes, 5 from there on.
func lowGangPodsPerNode(nodes int) int {
	if nodes < 10 {
		return 2
	}
	return 5
}

// buildGangPodGroups is GangPreemptionPodGroups: lowPriorityGroups =
// k*nodes/podsPerGroup PodGroups gang-g of gang-preempt-1 (priority 1000,
// minCount podsPerGroup), whose members pod-gang-i (gang-pod.yaml: 600m,
// 100Mi, priority 1000, host port 8000+g) fill each node with k of them
// (lowGangPodsPerNode: 1200m at 2 nodes, 3000m at 100); then preemptor
// gangs of priority 9999999 whose members ask 3500m/100Mi and host port
// 9000+g, each evicting every pod of its node (one 600m pod left would
// leave 3400m). The host port keeps a group's members on distinct nodes;
// the scheduler's scoring spreads the groups evenly, its ties at random:
// here pod i goes to node perm_L[i mod nodes] of level L = i/nodes, as in
// the podgroup shapes (podGroupVictims), every level holding whole
// groups since podsPerGroup divides nodes.
func buildGangPodGroups(b *B, nodes, podsPerGroup int) {
	b.namespaces(2)
	gangNodes(b, nodes)
	k := lowGangPodsPerNode(nodes)
	for g := range k * nodes / podsPerGroup {
		b.PodGroup(PodGroupSpec{Name: fmt.Sprintf("gang-%d", g), Namespace: lowNamespace, Priority: 1000, MinCount: int32(podsPerGroup)})
	}
	var perm []int
	ages := b.distinctAges(k * nodes)
	for i := range k * nodes {
		if i%nodes == 0 {
			perm = b.rng.Perm(nodes)
		}
		g := i / podsPerGroup
		b.Pod(PodSpec{Name: fmt.Sprintf("pod-gang-%d", i), Namespace: lowNamespace, Node: nodeName(perm[i%nodes]), Priority: 1000,
			MilliCPU: 600, Memory: 100 * mi, HostPorts: []int32{int32(8000 + g)}, PodGroup: fmt.Sprintf("gang-%d", g), Age: ages[i]})
	}
	preemptorGangs(b, nodes, podsPerGroup, gangHighPriority, func(_, g int) PodSpec {
		return PodSpec{MilliCPU: 3500, Memory: 100 * mi, HostPorts: []int32{int32(9000 + g)}}
	})
}

// buildGangAffinity is GangPreemptionAffinity: an anchor pod a node in
// gang-preempt-2 (pod-anchor-high-priority.yaml: priority 9999999,
// 10m/100Mi, blueLabels, host port 7000, which puts one on every node;
// anchor i on node perm[i]), GangPreemptionBasic's low-priority pods, and
// preemptor gangs of pod-gang-affinity.yaml: members of 3970m/500Mi at
// priority 8888888 with a required pod affinity to blueLabels in every
// namespace (namespaceSelector {}) on the same host. Each member evicts
// the low pods of its node and keeps the anchor, above its priority,
// which its affinity needs once the low pods (blue too) are gone.
func buildGangAffinity(b *B, nodes, podsPerGroup int) {
	b.namespaces(3)
	gangNodes(b, nodes)
	ages := b.distinctAges(nodes)
	for i, n := range b.rng.Perm(nodes) {
		b.Pod(PodSpec{Name: fmt.Sprintf("pod-anchor-%d", i), Namespace: anchorNamespace, Node: nodeName(n), Priority: gangHighPriority,
			MilliCPU: 10, Memory: 100 * mi, HostPorts: []int32{7000}, Labels: blueLabels(), Age: ages[i]})
	}
	lowPriorityPods(b, nodes)
	preemptorGangs(b, nodes, podsPerGroup, gangDefaultPriority, func(int, int) PodSpec {
		return PodSpec{MilliCPU: 3970, Memory: 500 * mi}
	})
	for _, g := range b.gangs {
		for _, p := range g.Members {
			p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: blueLabels()}, TopologyKey: v1.LabelHostname, NamespaceSelector: &metav1.LabelSelector{}}}}}
		}
	}
}
