package synth

import (
	"fmt"
	"slices"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/preemptbench/preemptbench/preempt"
)

// PodGroupSpec describes a PodGroup to add.
type PodGroupSpec struct {
	Name      string
	Namespace string
	Priority  int32
	// MinCount is the gang's minCount (schedulingPolicy.gang).
	MinCount int32
	// Mode is the disruption mode, "single" or "all"; "" is what the API
	// server stores for a PodGroup that sets none: single.
	Mode string
}

// PodGroup adds a scheduling.k8s.io/v1beta1 PodGroup with a gang policy,
// as scheduler_perf's templates/podgroup.yaml makes one.
func (b *B) PodGroup(s PodGroupSpec) *preempt.PodGroup {
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	mode := &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	if s.Mode == "all" {
		mode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	prio := s.Priority
	pg := &preempt.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: types.UID("podgroup-uid-" + s.Namespace + "-" + s.Name)},
		Spec: schedulingv1beta1.PodGroupSpec{
			Priority:         &prio,
			DisruptionMode:   mode,
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: s.MinCount}},
		},
	}
	if b.emit != nil {
		b.emit.add(kindPodGroup, pg)
		return pg
	}
	b.cluster.PodGroups = append(b.cluster.PodGroups, pg)
	return pg
}

// The namespaces of scheduler_perf's workload-preemption workloads
// (createNamespaces with prefix gang-preempt): the preemptors in the
// first, the pods they preempt and their groups in the second.
const (
	preemptorNamespace = "gang-preempt-0"
	lowNamespace       = "gang-preempt-1"
)

// buildPodGroupNone, buildPodGroupSingle and buildPodGroupAll are
// scheduler_perf's PreemptionPodGroupDisruptionMode at upstream v1.37.2
// (test/integration/scheduler_perf/default_preemption), with disruption
// mode "" (NoPodGroup), "single" and "all": see podGroupVictims.
func buildPodGroupNone(b *B, nodes int)   { podGroupVictims(b, nodes, "") }
func buildPodGroupSingle(b *B, nodes int) { podGroupVictims(b, nodes, "single") }
func buildPodGroupAll(b *B, nodes int)    { podGroupVictims(b, nodes, "all") }

// upstreamSizes are the node counts of the scheduler_perf workloads a
// shape is, for the shapes whose workloads come in a few fixed sizes.
var upstreamSizes = map[string][]int{
	// PreemptionPodGroupDisruptionMode's FastTest_* and 1000Nodes_1000Candidates_*.
	"podgroup-none": {2, 1000}, "podgroup-single": {2, 1000}, "podgroup-all": {2, 1000},
}

// UpstreamSizes are the node counts scheduler_perf runs the shape's
// workload at, in increasing order, or nil for a shape without fixed
// sizes.
func UpstreamSizes(shape string) []int { return slices.Clone(upstreamSizes[shape]) }

// PodGroupMembers is how many pods a group of the podgroup shapes has
// at the given node count: scheduler_perf's podsPerGroup, 2 in its
// FastTest (2 nodes) and 10 at 1000 nodes; min(10, nodes) in general.
func PodGroupMembers(nodes int) int { return min(10, max(1, nodes)) }

// podGroupVictims builds PreemptionPodGroupDisruptionMode's cluster:
// nodes of 4 cpu, 32Gi and 110 pods (templates/node-default.yaml); one
// PodGroup per node (lowPriorityGroups: 2 at 2 nodes, 1000 at 1000), of
// priority 1000, minCount PodGroupMembers and the given disruption mode
// (templates/podgroup.yaml); and PodGroupMembers pods per group at
// priority 1000, 50Mi and 3000m/PodGroupMembers cpu (1500m at 2 nodes,
// 300m at 1000: default_preemption/templates/gang-pod.yaml), members of
// their group unless the mode is "" (then they are plain pods and the
// groups have no members, as upstream's NoPodGroup). Every node is then
// 3000m full and the preemptor, 3970m/500Mi at priority 9999999
// (default_preemption/templates/pod-high-priority.yaml), evicts every pod
// of its node: with mode "all", their whole groups, on other nodes too.
// MeasurePods is nodes/10, at least 1 (1 at 2 nodes, 100 at 1000); the
// gate is GenericWorkload=true. The workload's SchedulerAsyncAPICalls=false
// is not carried: it changes how API calls are dispatched, not what is
// decided, and the streams actuate synchronously anyway.
//
// Upstream schedules the groups onto the empty cluster before measuring
// (a barrier on Scheduled): its scoring spreads them, level by level, the
// nodes of a level tied and picked at random. Here pod i (members of
// group g numbered g*PodGroupMembers on) goes on node perm_L[i mod nodes]
// of level L = i / nodes, perm_L a seeded permutation of the nodes: every
// node gets PodGroupMembers pods, a group's members sit on distinct nodes
// (when nodes is a multiple of PodGroupMembers, as at both of upstream's
// sizes), and the nodes a group spans are drawn, not neighbours.
func podGroupVictims(b *B, nodes int, mode string) {
	b.gates = map[string]bool{preempt.GenericWorkloadGate: true}
	b.measurePods = max(1, nodes/10)
	members := PodGroupMembers(nodes)
	for i := range nodes {
		b.Node(nodeName(i), 4000, 32*gi, 110, nil)
	}
	for g := range nodes {
		b.PodGroup(PodGroupSpec{Name: fmt.Sprintf("gang-%d", g), Namespace: lowNamespace, Priority: 1000, MinCount: int32(members), Mode: mode})
	}
	var perm []int
	for i := range nodes * members {
		if i%nodes == 0 {
			perm = b.rng.Perm(nodes)
		}
		group := ""
		if mode != "" {
			group = fmt.Sprintf("gang-%d", i/members)
		}
		b.Pod(PodSpec{Name: fmt.Sprintf("gang-pod-%d", i), Namespace: lowNamespace, Node: nodeName(perm[i%nodes]), Priority: 1000,
			MilliCPU: int64(3000 / members), Memory: 50 * mi, PodGroup: group, Age: time.Duration(b.rng.IntN(3600)) * time.Second})
	}
	b.Preemptor(PodSpec{Namespace: preemptorNamespace, Priority: 9999999, MilliCPU: 3970, Memory: 500 * mi})
}
