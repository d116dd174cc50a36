package conformance

// Ports of k8s.io/kubernetes at upstream.Version (v1.37.2)
// pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go
// and pkg/scheduler/framework/preemption/preemption_test.go, util_test.go
// and executor_test.go, each case named after upstream's, in this
// project's terms. Where upstream accepts several
// answers (map order, parallel timing) the contract's deterministic answer
// is pinned. Upstream's random offset (rand.NewSource(4)) becomes
// Request.Offset with the value that source gives: Int31n(1)=0,
// Int31n(2)=1, Int31n(3)=1, Int31n(4)=1, and for 5 nodes 4, 1, 3 in
// successive cycles.
//
// Skipped cases (the contract models neither custom plugins, pod groups
// (GenericWorkload, off by default in v1.37), DRA claims nor waiting pods;
// the extenders are in cases_extenders.go, the InterPodAffinity and
// PodTopologySpread cases in testUpstreamAffinityAndSpread):
//
// TestPostFilter:
//   - "preemption result filtered out by extenders" (extenders)
//   - "only one node but failed with TestPlugin",
//     "one failed with TestPlugin and the other pass" (fake PreFilter plugin
//     failing AddPod/RemovePod)
//   - "deferred pod resize preemption ..." (three cases: the
//     InPlacePodVerticalScalingSchedulerPreemption gate, alpha and off)
//   - the "Async API calls enabled: true" variants (API dispatcher)
//
// TestDryRunPreemption (defaultpreemption):
//   - "a pod that does not fit on any node" (FalseFilter plugin)
//   - "a pod that fits with no preemption" (TrueFilter + FakeFilter)
//   - "a pod that fits on one node with no preemption" (MatchFilter)
//   - "get Unschedulable in the preemption phase when the filter plugins
//     filtering the nodes" (FakeFilter returning Unschedulable)
//   - the three "Preemption with DRA Node Allocatable ..." cases (DRA
//     claims)
//   - expectedNumFilterCalled of every case (the reference has no filter
//     plugin call counter)
//
// TestPreempt:
//   - "Scheduler extenders allow only node1, otherwise node3 would have been
//     chosen", "Scheduler extenders do not allow any preemption", "One
//     scheduler extender allows only node1, the other returns error but
//     ignorable. Only node1 would be chosen", "One scheduler extender allows
//     only node1, but it is not interested in given pod, otherwise node1
//     would have been chosen" (extenders)
//   - the five "Preemptor with SchedulingGroup, ..." cases (pod groups)
//   - the async preemption and async API call variants
//
// TestSelectVictimsOnNode (new in v1.37): the "Workload Aware: ..." and
// "Cross-node PodGroup: ..." cases (pod groups).
//
// TestCustomSelection, TestCustomOrdering (custom IsEligiblePod /
// MoreImportantVictim functions), TestPreEnqueue (async preemption, pod
// groups), the TestDefaultPreemption_PodGroupPostFilter_* tests.
//
// preemption_test.go: TestDryRunPreemption and TestSelectCandidate (fake
// SelectVictimsOnNode and custom OrderedScoreFuncs), TestCallExtenders
// (extenders), TestGetVictimsOnNode (pod groups; without GenericWorkload
// every pod of the node is a victim of its own),
// TestPreemptionEvaluationDurationMetric (metrics).
//
// util_test.go: TestFilterVictimsWithPDBViolation "no victims, no PDBs" (no
// pod to split: SelectVictimsOnNode stops before the split) and the two
// "podgroup victim ..." cases (pod groups); TestMoreImportantVictim (its
// single-pod cases are priority then start time, the order
// SelectVictimsOnNodeOrder shows), TestGetPodPriority and
// TestTraverseHierarchyUp (pod groups). TestPodTerminatingByPreemption is
// ported through PodEligibleToPreemptOthers.
//
// executor_test.go: TestPrepareCandidateAsyncActivatesPreemptorAfterLastVictimInMemoryPreemption
// (victims preempted in memory are waiting pods or pods in PreBind, which
// the contract does not model: its victims are always deleted through the
// API), TestPreemptionExecutionDurationMetric (metrics),
// TestIsPodGroupRunningPreemption (pod groups).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

var (
	negPriority, lowPriority, midPriority, highPriority, veryHighPriority = int32(-100), int32(0), int32(100), int32(1000), int32(10000)

	smallRes     = map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "100"}
	mediumRes    = map[v1.ResourceName]string{v1.ResourceCPU: "200m", v1.ResourceMemory: "200"}
	largeRes     = map[v1.ResourceName]string{v1.ResourceCPU: "300m", v1.ResourceMemory: "300"}
	veryLargeRes = map[v1.ResourceName]string{v1.ResourceCPU: "500m", v1.ResourceMemory: "500"}

	epochTime  = time.Unix(0, 0)
	epochTime1 = time.Unix(0, 1)
	epochTime2 = time.Unix(0, 2)
	epochTime3 = time.Unix(0, 3)
	epochTime4 = time.Unix(0, 4)
	epochTime5 = time.Unix(0, 5)
	epochTime6 = time.Unix(0, 6)
)

const (
	labelKeyIsViolatingPDB    = "test.kubernetes.io/is-violating-pdb"
	labelValueViolatingPDB    = "violating"
	labelValueNonViolatingPDB = "non-violating"
)

// decisionOutcome is the part of a Decision upstream's tests look at, plus
// the API calls.
type decisionOutcome struct {
	Eligible         bool
	Status           preempt.Code
	Message          string
	NominatedNode    string
	NumPDBViolations int
	Victims          []preempt.Victim
	Actions          []preempt.Action
}

func outcomeOf(d preempt.Decision) decisionOutcome {
	return decisionOutcome{Eligible: d.Eligible, Status: d.Status, Message: d.Message, NominatedNode: d.NominatedNode,
		NumPDBViolations: d.NumPDBViolations, Victims: d.Victims, Actions: d.Actions}
}

// successMsg is Evaluator.Preempt's Success message from v1.37, without
// DefaultPreemption's "preemption: " prefix.
func successMsg(node string, victims int) string {
	return fmt.Sprintf("found a potential placement for pod on node %s, preempting %d victims", node, victims)
}

func runDecision(t *testing.T, impl preempt.Implementation, c *preempt.Cluster, r *preempt.Request) preempt.Decision {
	t.Helper()
	d, err := harness.Run(context.Background(), impl, c, r)
	if err != nil {
		t.Fatalf("preempt.Run: %v", err)
	}
	return d
}

// asyncOrder is a synchronous decision's API calls in the order
// asynchronous preemption makes them (actuation.Actuate): the preemptor's
// nomination first then, when a victim is preempted, the cleared
// nominations and the victims' calls.
func asyncOrder(sync []preempt.Action, preemptor string) []preempt.Action {
	var nominate, clears, victims []preempt.Action
	for _, a := range sync {
		switch {
		case a.Name == preemptor && len(a.Sets) == 1 && strings.HasPrefix(a.Sets[0], "nominatedNodeName="):
			nominate = append(nominate, a)
		case len(a.Sets) == 1 && a.Sets[0] == "nominatedNodeName=null":
			clears = append(clears, a)
		default:
			victims = append(victims, a)
		}
	}
	out := nominate
	if len(victims) > 0 {
		out = append(append(out, clears...), victims...)
	}
	return out
}

// inBothModes runs f for synchronous and asynchronous preemption, with
// want's actions in the order of each.
func inBothModes(t *testing.T, r *preempt.Request, want decisionOutcome, f func(t *testing.T, r *preempt.Request, want decisionOutcome)) {
	for _, sync := range []bool{true, false} {
		mode, w := "sync", want
		if !sync {
			mode = "async"
			w.Actions = asyncOrder(want.Actions, r.Pod.Name)
		}
		rr := *r
		rr.Config.Synchronous = sync
		t.Run(mode, func(t *testing.T) { f(t, &rr, w) })
	}
}

func testUpstreamPostFilter(t *testing.T, impl preempt.Implementation) {
	onePodRes := map[v1.ResourceName]string{v1.ResourcePods: "1"}
	nodeRes := map[v1.ResourceName]string{v1.ResourceCPU: "200m", v1.ResourceMemory: "400"}
	def := v1.NamespaceDefault
	success := func(node string, pdbViolations int, victims []preempt.Victim) decisionOutcome {
		out := decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg(node, len(victims)), NominatedNode: node, NumPDBViolations: pdbViolations, Victims: victims}
		for _, v := range victims {
			out.Actions = append(out.Actions, patchOf(v.Namespace, v.Name, setsDisruption), deleteOf(v.Namespace, v.Name))
		}
		out.Actions = append(out.Actions, patchOf(def, "p", "nominatedNodeName="+node))
		return out
	}
	unschedulableOutcome := func(msg string) decisionOutcome {
		return decisionOutcome{Eligible: true, Status: preempt.Unschedulable, Message: msg}
	}
	tests := []struct {
		name   string
		pod    *v1.Pod
		pods   []*v1.Pod
		pdbs   []*policy.PodDisruptionBudget
		nodes  []*v1.Node
		filter map[string]preempt.Code
		want   decisionOutcome
	}{
		{
			name:   "pod with higher priority can be made schedulable",
			pod:    testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj()},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj()},
			filter: unschedulable("node1"),
			want:   success("node1", 0, []preempt.Victim{vic(def, "p1", 0)}),
		},
		{
			// v1.37: without GenericWorkload (off by default) the pod's
			// schedulingGroup changes nothing.
			name:   "pod with SchedulingGroup with GenericWorkload and TAS disabled should preempt",
			pod:    testobj.MakePod().Name("p").UID("p").Namespace(def).PodGroupName("foo").Priority(highPriority).Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj()},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj()},
			filter: unschedulable("node1"),
			want:   success("node1", 0, []preempt.Victim{vic(def, "p1", 0)}),
		},
		{
			name:   "pod with tied priority is still unschedulable",
			pod:    testobj.MakePod().Name("p").UID("p").Namespace(def).Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj()},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj()},
			filter: unschedulable("node1"),
			want:   unschedulableOutcome("0/1 nodes are available: 1 No preemption victims found for incoming pod."),
		},
		{
			name:   "preemption should respect filteredNodesStatuses",
			pod:    testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj()},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj()},
			filter: map[string]preempt.Code{"node1": preempt.UnschedulableAndUnresolvable},
			want:   unschedulableOutcome("0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
		},
		{
			name:   "preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
			pod:    testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj()},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj()},
			filter: map[string]preempt.Code{},
			want:   unschedulableOutcome("0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
		},
		{
			name: "pod can be made schedulable on one node",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(midPriority).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Namespace(def).Priority(highPriority).Node("node1").Obj(),
				testobj.MakePod().Name("p2").UID("p2").Namespace(def).Priority(lowPriority).Node("node2").Obj(),
			},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj(), testobj.MakeNode().Name("node2").Capacity(onePodRes).Obj()},
			filter: unschedulable("node1", "node2"),
			want:   success("node2", 0, []preempt.Victim{vic(def, "p2", lowPriority)}),
		},
		{
			name: "pod can be made schedulable on minHighestPriority node",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(veryHighPriority).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Label(labelKeyIsViolatingPDB, labelValueNonViolatingPDB).Namespace(def).Priority(highPriority).Node("node1").Obj(),
				testobj.MakePod().Name("p2").UID("p2").Label(labelKeyIsViolatingPDB, labelValueViolatingPDB).Namespace(def).Priority(lowPriority).Node("node1").Obj(),
				testobj.MakePod().Name("p3").UID("p3").Label(labelKeyIsViolatingPDB, labelValueViolatingPDB).Namespace(def).Priority(midPriority).Node("node2").Obj(),
			},
			pdbs: []*policy.PodDisruptionBudget{
				testobj.MakePDB().Name("violating-pdb").Namespace(def).MatchLabel(labelKeyIsViolatingPDB, labelValueViolatingPDB).MinAvailable("100%").Obj(),
				testobj.MakePDB().Name("non-violating-pdb").Namespace(def).MatchLabel(labelKeyIsViolatingPDB, labelValueNonViolatingPDB).MinAvailable("0").DisruptionsAllowed(math.MaxInt32).Obj(),
			},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj(), testobj.MakeNode().Name("node2").Capacity(onePodRes).Obj()},
			filter: unschedulable("node1", "node2"),
			want:   success("node2", 1, []preempt.Victim{vic(def, "p3", midPriority)}),
		},
		{
			name: "no candidate nodes found, no enough resource after removing low priority pods",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Req(largeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj(),
				testobj.MakePod().Name("p2").UID("p2").Namespace(def).Node("node2").Obj(),
			},
			nodes:  []*v1.Node{testobj.MakeNode().Name("node1").Capacity(nodeRes).Obj(), testobj.MakeNode().Name("node2").Capacity(nodeRes).Obj()},
			filter: unschedulable("node1", "node2"),
			want:   unschedulableOutcome("0/2 nodes are available: 2 Insufficient cpu."),
		},
		{
			name: "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Req(largeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Priority(highPriority).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Namespace(def).Node("node2").Obj(),
				testobj.MakePod().Name("p3").UID("p3").Namespace(def).Node("node3").Priority(highPriority).Obj(),
			},
			nodes: []*v1.Node{
				testobj.MakeNode().Name("node1").Capacity(onePodRes).Obj(),
				testobj.MakeNode().Name("node2").Capacity(nodeRes).Obj(),
				testobj.MakeNode().Name("node3").Capacity(onePodRes).Obj(),
			},
			filter: unschedulable("node1", "node2", "node3"),
			want:   unschedulableOutcome("0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."),
		},
		{
			name: "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have enough CPU resource",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Req(largeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Namespace(def).Node("node1").Obj(),
				testobj.MakePod().Name("p2").UID("p2").Namespace(def).Node("node2").Obj(),
			},
			nodes: []*v1.Node{
				testobj.MakeNode().Name("node1").Capacity(nodeRes).Obj(),
				testobj.MakeNode().Name("node2").Capacity(nodeRes).Obj(),
				testobj.MakeNode().Name("node3").Capacity(nodeRes).Obj(),
				testobj.MakeNode().Name("node4").Capacity(nodeRes).Obj(),
			},
			filter: map[string]preempt.Code{"node1": preempt.Unschedulable, "node2": preempt.Unschedulable, "node4": preempt.UnschedulableAndUnresolvable},
			want:   unschedulableOutcome("0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling."),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &preempt.Cluster{Nodes: tt.nodes, Pods: tt.pods, PDBs: tt.pdbs}
			r := &preempt.Request{Pod: tt.pod, Filter: tt.filter, Config: preempt.DefaultConfig(), Now: now}
			inBothModes(t, r, tt.want, func(t *testing.T, r *preempt.Request, want decisionOutcome) {
				got := outcomeOf(runDecision(t, impl, c, r))
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("PostFilter (-want +got):\n%s", diff)
				}
			})
		})
	}
}

func testUpstreamDryRunPreemption(t *testing.T, impl preempt.Implementation) {
	type cycle struct {
		pod          *v1.Pod
		offset       int32
		want         []preempt.Candidate
		wantStatuses []preempt.NodeStatus
	}
	noVictims := func(node string) preempt.NodeStatus { return unresolvableStatus(node, reasonNoVictims) }
	cand := func(node string, violations int, victims ...preempt.Victim) preempt.Candidate {
		return preempt.Candidate{Node: node, NumPDBViolations: violations, Victims: victims}
	}
	p := func(name string) *v1.Pod {
		return testobj.MakePod().Name(name).UID(name).Priority(highPriority).Req(largeRes).Obj()
	}
	fooPDB := func(allowed int32, disrupted ...string) []*policy.PodDisruptionBudget {
		// Upstream's PDB has no name; a cluster's must have one.
		b := testobj.MakePDB().Name("pdb").MatchLabel("app", "foo").DisruptionsAllowed(allowed)
		for _, d := range disrupted {
			b.DisruptedPod(d, now)
		}
		return []*policy.PodDisruptionBudget{b.Obj()}
	}
	fooPod := func(name string) *v1.Pod {
		return testobj.MakePod().Name(name).UID(name).Node("node1").Label("app", "foo").Priority(midPriority).Req(mediumRes).Obj()
	}
	fiveMid := func() []*v1.Pod {
		var out []*v1.Pod
		for _, n := range []string{"1", "2", "3", "4", "5"} {
			out = append(out, testobj.MakePod().Name("p"+n).UID("p"+n).Node("node"+n).Priority(midPriority).Req(largeRes).Obj())
		}
		return out
	}
	five := []string{"node1", "node2", "node3", "node4", "node5"}
	limit2 := &preempt.Config{MinCandidateNodesPercentage: 40, MinCandidateNodesAbsolute: 1}
	tests := []struct {
		name      string
		cfg       *preempt.Config
		nodeNames []string
		initPods  []*v1.Pod
		pdbs      []*policy.PodDisruptionBudget
		cycles    []cycle
	}{
		{
			name:      "a pod that fits on both nodes when lower priority pods are preempted",
			nodeNames: []string{"node1", "node2"},
			initPods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Node("node1").Priority(midPriority).Req(largeRes).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(midPriority).Req(largeRes).Obj(),
			},
			cycles: []cycle{{pod: p("p"), offset: 1, want: []preempt.Candidate{
				cand("node2", 0, vic("", "p2", midPriority)),
				cand("node1", 0, vic("", "p1", midPriority)),
			}}},
		},
		{
			name:      "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
			nodeNames: []string{"node1", "node2"},
			initPods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Node("node1").Priority(midPriority).Req(largeRes).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(midPriority).Req(largeRes).Obj(),
			},
			cycles: []cycle{{pod: testobj.MakePod().Name("p").UID("p").Priority(lowPriority).Req(largeRes).Obj(), offset: 1,
				wantStatuses: []preempt.NodeStatus{noVictims("node1"), noVictims("node2")}}},
		},
		{
			name:      "medium priority pod is preempted, but lower priority one stays as it is small",
			nodeNames: []string{"node1", "node2"},
			initPods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(largeRes).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(midPriority).Req(largeRes).Obj(),
			},
			cycles: []cycle{{pod: p("p"), offset: 1, want: []preempt.Candidate{
				cand("node2", 0, vic("", "p2", midPriority)),
				cand("node1", 0, vic("", "p1.2", midPriority)),
			}}},
		},
		{
			// p1.1 and p1.3 tie on priority and (missing) start time: the
			// contract's name order reprieves p1.1, as upstream expects.
			name:      "mixed priority pods are preempted",
			nodeNames: []string{"node1", "node2"},
			initPods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.3").UID("p1.3").Node("node1").Priority(midPriority).Req(mediumRes).Obj(),
				testobj.MakePod().Name("p1.4").UID("p1.4").Node("node1").Priority(highPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(highPriority).Req(largeRes).Obj(),
			},
			cycles: []cycle{{pod: p("p"), offset: 1,
				want:         []preempt.Candidate{cand("node1", 0, vic("", "p1.3", midPriority), vic("", "p1.2", lowPriority))},
				wantStatuses: []preempt.NodeStatus{noVictims("node2")},
			}},
		},
		{
			name:      "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
			nodeNames: []string{"node1", "node2"},
			initPods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(lowPriority).Req(smallRes).StartTime(epochTime5).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(lowPriority).Req(smallRes).StartTime(epochTime4).Obj(),
				testobj.MakePod().Name("p1.3").UID("p1.3").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime3).Obj(),
				testobj.MakePod().Name("p1.4").UID("p1.4").Node("node1").Priority(highPriority).Req(smallRes).StartTime(epochTime2).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(highPriority).Req(largeRes).StartTime(epochTime1).Obj(),
			},
			cycles: []cycle{{pod: p("p"), offset: 1,
				want:         []preempt.Candidate{cand("node1", 0, vic("", "p1.3", midPriority), vic("", "p1.1", lowPriority))},
				wantStatuses: []preempt.NodeStatus{noVictims("node2")},
			}},
		},
		{
			name:      "preemption with violation of same pdb",
			nodeNames: []string{"node1"},
			initPods:  []*v1.Pod{fooPod("p1.1"), fooPod("p1.2")},
			pdbs:      fooPDB(1),
			cycles: []cycle{{pod: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(), offset: 0,
				want: []preempt.Candidate{cand("node1", 1, vic("", "p1.1", midPriority), vic("", "p1.2", midPriority))}}},
		},
		{
			name:      "preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to DisruptedPods",
			nodeNames: []string{"node1"},
			initPods:  []*v1.Pod{fooPod("p1.1"), fooPod("p1.2")},
			pdbs:      fooPDB(1, "p2"),
			cycles: []cycle{{pod: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(), offset: 0,
				want: []preempt.Candidate{cand("node1", 1, vic("", "p1.1", midPriority), vic("", "p1.2", midPriority))}}},
		},
		{
			name:      "preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to DisruptedPods",
			nodeNames: []string{"node1"},
			initPods:  []*v1.Pod{fooPod("p1.1"), fooPod("p1.2")},
			pdbs:      fooPDB(1, "p1.2"),
			cycles: []cycle{{pod: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(), offset: 0,
				want: []preempt.Candidate{cand("node1", 0, vic("", "p1.1", midPriority), vic("", "p1.2", midPriority))}}},
		},
		{
			name:      "preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to DisruptedPods is treated as 'nonViolating'",
			nodeNames: []string{"node1"},
			initPods:  []*v1.Pod{fooPod("p1.1"), fooPod("p1.2"), fooPod("p1.3")},
			pdbs:      fooPDB(1, "p1.3"),
			cycles: []cycle{{pod: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(), offset: 0,
				want: []preempt.Candidate{cand("node1", 1, vic("", "p1.1", midPriority), vic("", "p1.2", midPriority), vic("", "p1.3", midPriority))}}},
		},
		{
			// cycle=0 => offset=4 => node5 (yes), node1 (yes)
			name: "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", cfg: limit2,
			nodeNames: five, initPods: fiveMid(),
			cycles: []cycle{{pod: p("p"), offset: 4, want: []preempt.Candidate{
				cand("node5", 0, vic("", "p5", midPriority)),
				cand("node1", 0, vic("", "p1", midPriority)),
			}}},
		},
		{
			// cycle=0 => offset=4 => node5 (no), node1 (yes), node2 (no), node3 (yes)
			name: "some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", cfg: limit2,
			nodeNames: five,
			initPods: func() []*v1.Pod {
				ps := fiveMid()
				ps[1].Spec.Priority, ps[4].Spec.Priority = &veryHighPriority, &veryHighPriority
				return ps
			}(),
			cycles: []cycle{{pod: p("p"), offset: 4,
				want: []preempt.Candidate{
					cand("node1", 0, vic("", "p1", midPriority)),
					cand("node3", 0, vic("", "p3", midPriority)),
				},
				wantStatuses: []preempt.NodeStatus{noVictims("node2"), noVictims("node5")},
			}},
		},
		{
			name: "preemption offset across multiple scheduling cycles and wrap around", cfg: limit2,
			nodeNames: five, initPods: fiveMid(),
			cycles: []cycle{
				// cycle=0 => offset=4 => node5 (yes), node1 (yes)
				{pod: p("tp1"), offset: 4, want: []preempt.Candidate{cand("node5", 0, vic("", "p5", midPriority)), cand("node1", 0, vic("", "p1", midPriority))}},
				// cycle=1 => offset=1 => node2 (yes), node3 (yes)
				{pod: p("tp2"), offset: 1, want: []preempt.Candidate{cand("node2", 0, vic("", "p2", midPriority)), cand("node3", 0, vic("", "p3", midPriority))}},
				// cycle=2 => offset=3 => node4 (yes), node5 (yes)
				{pod: p("tp3"), offset: 3, want: []preempt.Candidate{cand("node4", 0, vic("", "p4", midPriority)), cand("node5", 0, vic("", "p5", midPriority))}},
			},
		},
		{
			// cycle=0 => offset=4 => node5 (yes, pdb), node1 (yes, pdb),
			// node2 (no, pdb: the violating list is full), node3 (yes)
			name:      "preemption looks past numCandidates until a non-PDB violating node is found",
			cfg:       &preempt.Config{MinCandidateNodesPercentage: 40, MinCandidateNodesAbsolute: 2},
			nodeNames: five,
			initPods: func() []*v1.Pod {
				ps := fiveMid()
				for _, i := range []int{0, 1, 4} {
					ps[i].Labels = map[string]string{"app": "foo"}
				}
				return ps
			}(),
			pdbs: fooPDB(0),
			cycles: []cycle{{pod: p("p"), offset: 4, want: []preempt.Candidate{
				cand("node3", 0, vic("", "p3", midPriority)),
				cand("node5", 1, vic("", "p5", midPriority)),
				cand("node1", 1, vic("", "p1", midPriority)),
			}}},
		},
	}
	labelKeys := []string{"hostname", "zone", "region"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*v1.Node
			for _, n := range tt.nodeNames {
				nodes = append(nodes, testobj.MakeNode().Name(n).Label(labelKeys[0], n).Capacity(veryLargeRes).Obj())
			}
			ev := newEvaluator(t, impl, &preempt.Cluster{Nodes: nodes, Pods: tt.initPods, PDBs: tt.pdbs})
			cfg := preempt.DefaultConfig()
			if tt.cfg != nil {
				cfg = *tt.cfg
			}
			for i, cy := range tt.cycles {
				r := &preempt.Request{Pod: cy.pod, Filter: unschedulable(tt.nodeNames...), Config: cfg, Offset: cy.offset, Now: now}
				got := ev.DryRunPreemption(context.Background(), r, tt.nodeNames, cy.offset, cfg.NumCandidates(int32(len(tt.nodeNames))))
				want := preempt.DryRun{Candidates: cy.want, NodeStatuses: cy.wantStatuses}
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("cycle %d: DryRunPreemption (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func testUpstreamSelectBestCandidate(t *testing.T, impl preempt.Implementation) {
	tests := []struct {
		name      string
		nodeNames []string
		pod       *v1.Pod
		pods      []*v1.Pod
		// Upstream accepts any of its expected nodes; the contract's pick.
		want preempt.Candidate
	}{
		{
			// Offset 1: node2 is visited first and wins the final tie
			// (upstream: node1 or node2).
			name:      "a pod that fits on both nodes when lower priority pods are preempted",
			nodeNames: []string{"node1", "node2"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(largeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1").UID("p1").Node("node1").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
			},
			want: preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("", "p2", midPriority)}},
		},
		{
			name:      "node with min highest priority pod is picked",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(lowPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(lowPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(lowPriority).Req(mediumRes).StartTime(epochTime).Obj(),
			},
			want: preempt.Candidate{Node: "node3", Victims: []preempt.Victim{vic("", "p3.1", lowPriority), vic("", "p3.2", lowPriority)}},
		},
		{
			name:      "when highest priorities are the same, minimum sum of priorities is picked",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(lowPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
			},
			want: preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("", "p2.1", midPriority), vic("", "p2.2", lowPriority)}},
		},
		{
			name:      "when highest priority and sum are the same, minimum number of pods is picked",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.3").UID("p1.3").Node("node1").Priority(midPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.4").UID("p1.4").Node("node1").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(negPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.3").UID("p3.3").Node("node3").Priority(lowPriority).Req(smallRes).StartTime(epochTime).Obj(),
			},
			want: preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("", "p2.1", midPriority), vic("", "p2.2", negPriority)}},
		},
		{
			name:      "sum of adjusted priorities is considered",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.3").UID("p1.3").Node("node1").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(negPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.3").UID("p3.3").Node("node3").Priority(lowPriority).Req(smallRes).StartTime(epochTime).Obj(),
			},
			want: preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("", "p2.1", midPriority), vic("", "p2.2", negPriority)}},
		},
		{
			name:      "non-overlapping lowest high priority, sum priorities, and number of pods",
			nodeNames: []string{"node1", "node2", "node3", "node4"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(veryHighPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(lowPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p1.3").UID("p1.3").Node("node1").Priority(lowPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(highPriority).Req(largeRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(lowPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.3").UID("p3.3").Node("node3").Priority(lowPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p3.4").UID("p3.4").Node("node3").Priority(lowPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p4.1").UID("p4.1").Node("node4").Priority(midPriority).Req(mediumRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p4.2").UID("p4.2").Node("node4").Priority(midPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p4.3").UID("p4.3").Node("node4").Priority(midPriority).Req(smallRes).StartTime(epochTime).Obj(),
				testobj.MakePod().Name("p4.4").UID("p4.4").Node("node4").Priority(negPriority).Req(smallRes).StartTime(epochTime).Obj(),
			},
			want: preempt.Candidate{Node: "node1", Victims: []preempt.Victim{vic("", "p1.1", midPriority), vic("", "p1.2", lowPriority), vic("", "p1.3", lowPriority)}},
		},
		{
			name:      "same priority, same number of victims, different start time for each node's pod",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime2).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime2).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(mediumRes).StartTime(epochTime3).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(midPriority).Req(mediumRes).StartTime(epochTime3).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime1).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime1).Obj(),
			},
			want: preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("", "p2.1", midPriority), vic("", "p2.2", midPriority)}},
		},
		{
			name:      "same priority, same number of victims, different start time for all pods",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime4).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime2).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(mediumRes).StartTime(epochTime5).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(midPriority).Req(mediumRes).StartTime(epochTime1).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime3).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime6).Obj(),
			},
			want: preempt.Candidate{Node: "node3", Victims: []preempt.Victim{vic("", "p3.1", midPriority), vic("", "p3.2", midPriority)}},
		},
		{
			name:      "different priority, same number of victims, different start time for all pods",
			nodeNames: []string{"node1", "node2", "node3"},
			pod:       testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(lowPriority).Req(mediumRes).StartTime(epochTime4).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(mediumRes).StartTime(epochTime2).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(midPriority).Req(mediumRes).StartTime(epochTime6).Obj(),
				testobj.MakePod().Name("p2.2").UID("p2.2").Node("node2").Priority(lowPriority).Req(mediumRes).StartTime(epochTime1).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(lowPriority).Req(mediumRes).StartTime(epochTime3).Obj(),
				testobj.MakePod().Name("p3.2").UID("p3.2").Node("node3").Priority(midPriority).Req(mediumRes).StartTime(epochTime5).Obj(),
			},
			want: preempt.Candidate{Node: "node2", Victims: []preempt.Victim{vic("", "p2.1", midPriority), vic("", "p2.2", lowPriority)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*v1.Node
			for _, n := range tt.nodeNames {
				nodes = append(nodes, testobj.MakeNode().Name(n).Capacity(veryLargeRes).Obj())
			}
			ev := newEvaluator(t, impl, &preempt.Cluster{Nodes: nodes, Pods: tt.pods})
			// rand.New(rand.NewSource(4)).Int31n(n) is 1 for n = 2, 3, 4.
			r := &preempt.Request{Pod: tt.pod, Filter: unschedulable(tt.nodeNames...), Config: preempt.DefaultConfig(), Offset: 1, Now: now}
			dr, err := ev.FindCandidates(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			got := ev.SelectCandidate(dr.Candidates, r)
			if got == nil {
				t.Fatalf("expected %s, but candidate is missing", tt.want.Node)
			}
			if tieAllowed(t, impl, &preempt.Cluster{Nodes: nodes, Pods: tt.pods}, dr.Candidates, r, tt.want.Node, got.Node) {
				return
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("SelectCandidate (-want +got):\n%s", diff)
			}
		})
	}
}

func testUpstreamPodEligibleToPreemptOthers(t *testing.T, impl preempt.Implementation) {
	type result struct {
		Eligible bool
		Message  string
	}
	tests := []struct {
		name  string
		pod   *v1.Pod
		pods  []*v1.Pod
		nodes []string
		// nominatedNodeStatus: upstream passes the nominated node's filter
		// status; a nil status (Success) becomes Unschedulable here, the
		// only other code a Request can give a node.
		filter map[string]preempt.Code
		want   result
	}{
		{
			name:   "Pod with nominated node",
			pod:    testobj.MakePod().Name("p_with_nominated_node").UID("p").Priority(highPriority).NominatedNodeName("node1").Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Priority(lowPriority).Node("node1").Terminating().Obj()},
			nodes:  []string{"node1"},
			filter: map[string]preempt.Code{"node1": preempt.UnschedulableAndUnresolvable},
			want:   result{true, ""},
		},
		{
			name: "Pod without nominated node",
			pod:  testobj.MakePod().Name("p_without_nominated_node").UID("p").Priority(highPriority).Obj(),
			want: result{true, ""},
		},
		{
			name: "Pod with 'PreemptNever' preemption policy",
			pod:  testobj.MakePod().Name("p_with_preempt_never_policy").UID("p").Priority(highPriority).PreemptionPolicy(v1.PreemptNever).Obj(),
			want: result{false, "not eligible due to preemptionPolicy=Never."},
		},
		{
			name: "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
			pod:  testobj.MakePod().Name("p_with_nominated_node").UID("p").Priority(highPriority).NominatedNodeName("node1").Obj(),
			pods: []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Priority(lowPriority).Node("node1").Terminating().
				Condition(v1.DisruptionTarget, v1.ConditionTrue, v1.PodReasonPreemptionByScheduler).Obj()},
			nodes:  []string{"node1"},
			filter: unschedulable("node1"),
			want:   result{false, "not eligible due to a terminating pod on the nominated node."},
		},
		// util_test.go TestPodTerminatingByPreemption (v1.37), through the
		// nominated node's lower-priority pod.
		{
			name: "PodTerminatingByPreemption: pod without DeletionTimestamp",
			pod:  testobj.MakePod().Name("p_with_nominated_node").UID("p").Priority(highPriority).NominatedNodeName("node1").Obj(),
			pods: []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Priority(lowPriority).Node("node1").
				Condition(v1.DisruptionTarget, v1.ConditionTrue, v1.PodReasonPreemptionByScheduler).Obj()},
			nodes:  []string{"node1"},
			filter: unschedulable("node1"),
			want:   result{true, ""},
		},
		{
			name: "PodTerminatingByPreemption: pod with DeletionTimestamp, DisruptionTarget condition status False",
			pod:  testobj.MakePod().Name("p_with_nominated_node").UID("p").Priority(highPriority).NominatedNodeName("node1").Obj(),
			pods: []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Priority(lowPriority).Node("node1").Terminating().
				Condition(v1.DisruptionTarget, v1.ConditionFalse, v1.PodReasonPreemptionByScheduler).Obj()},
			nodes:  []string{"node1"},
			filter: unschedulable("node1"),
			want:   result{true, ""},
		},
		{
			name: "PodTerminatingByPreemption: pod with DeletionTimestamp, DisruptionTarget condition reason not PreemptionByScheduler",
			pod:  testobj.MakePod().Name("p_with_nominated_node").UID("p").Priority(highPriority).NominatedNodeName("node1").Obj(),
			pods: []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Priority(lowPriority).Node("node1").Terminating().
				Condition(v1.DisruptionTarget, v1.ConditionTrue, "EvictionByEvictionAPI").Obj()},
			nodes:  []string{"node1"},
			filter: unschedulable("node1"),
			want:   result{true, ""},
		},
		{
			name:   "non-victim Pods terminating",
			pod:    testobj.MakePod().Name("p_with_nominated_node").UID("p").Priority(highPriority).NominatedNodeName("node1").Obj(),
			pods:   []*v1.Pod{testobj.MakePod().Name("p1").UID("p1").Priority(lowPriority).Node("node1").Terminating().Obj()},
			nodes:  []string{"node1"},
			filter: unschedulable("node1"),
			want:   result{true, ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*v1.Node
			for _, n := range tt.nodes {
				nodes = append(nodes, testobj.MakeNode().Name(n).Capacity(nil).Obj())
			}
			ev := newEvaluator(t, impl, &preempt.Cluster{Nodes: nodes, Pods: tt.pods})
			ok, msg := ev.PodEligibleToPreemptOthers(&preempt.Request{Pod: tt.pod, Filter: tt.filter, Config: preempt.DefaultConfig(), Now: now})
			if diff := cmp.Diff(tt.want, result{ok, msg}); diff != "" {
				t.Errorf("PodEligibleToPreemptOthers (-want +got):\n%s", diff)
			}
		})
	}
}

// testUpstreamSelectVictimsOnNode is default_preemption_test.go's
// TestSelectVictimsOnNode (new in v1.37), its single-pod cases: nodes of
// veryLargeRes, the default profile's filters (upstream registers
// NodeResourcesFit only, the one that fails for these pods).
func testUpstreamSelectVictimsOnNode(t *testing.T, impl preempt.Implementation) {
	pdbFoo := []*policy.PodDisruptionBudget{testobj.MakePDB().Name("pdb").MatchLabel("app", "foo").DisruptionsAllowed(0).Obj()}
	ok := preempt.Status{Code: preempt.Success}
	tests := []struct {
		name      string
		initPods  []*v1.Pod
		preemptor *v1.Pod
		pdbs      []*policy.PodDisruptionBudget
		want      victimsResult
	}{
		{
			name:      "Basic: Preempt single lower priority pod",
			initPods:  []*v1.Pod{testobj.MakePod().Name("victim").UID("v1").Node("node1").Priority(lowPriority).Req(largeRes).Obj()},
			preemptor: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(largeRes).Obj(),
			want:      victimsResult{[]preempt.Victim{vic("", "victim", lowPriority)}, 0, ok},
		},
		{
			name: "Priority: Prefer lower priority victim",
			initPods: []*v1.Pod{
				testobj.MakePod().Name("high-prio").UID("v3").Node("node1").Priority(highPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("mid-prio").UID("v2").Node("node1").Priority(midPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("low-prio").UID("v1").Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
			},
			preemptor: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(largeRes).Obj(),
			want:      victimsResult{[]preempt.Victim{vic("", "low-prio", lowPriority)}, 0, ok},
		},
		{
			name: "PDB: Prefer non-violating victim with higher priority over violating victim with lower priority",
			initPods: []*v1.Pod{
				testobj.MakePod().Name("victim-pdb").UID("v1").Node("node1").Label("app", "foo").Priority(lowPriority).Req(mediumRes).Obj(),
				testobj.MakePod().Name("victim-no-pdb").UID("v2").Node("node1").Priority(midPriority).Req(mediumRes).Obj(),
			},
			pdbs:      pdbFoo,
			preemptor: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(largeRes).Obj(),
			want:      victimsResult{[]preempt.Victim{vic("", "victim-no-pdb", midPriority)}, 0, ok},
		},
		{
			name: "PDB: Prefer lower prioirity pod for preemption, when preemption without pdb violation is not possible",
			initPods: []*v1.Pod{
				testobj.MakePod().Name("v1").UID("v1").Node("node1").Label("app", "foo").Priority(lowPriority).Req(mediumRes).Obj(),
				testobj.MakePod().Name("v2").UID("v2").Node("node1").Label("app", "foo").Priority(midPriority).Req(mediumRes).Obj(),
			},
			pdbs:      pdbFoo,
			preemptor: testobj.MakePod().Name("p").UID("p").Priority(highPriority).Req(largeRes).Obj(),
			want:      victimsResult{[]preempt.Victim{vic("", "v1", lowPriority)}, 1, ok},
		},
		{
			name:      "Failure: Cannot preempt the victim with higher priority",
			initPods:  []*v1.Pod{testobj.MakePod().Name("victim").UID("v1").Node("node1").Priority(highPriority).Obj()},
			preemptor: testobj.MakePod().Name("p").UID("p").Priority(midPriority).Obj(),
			want:      victimsResult{nil, 0, preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{reasonNoVictims}}},
		},
		{
			name:      "Failure: Cannot preempt if node is empty",
			preemptor: testobj.MakePod().Name("p").UID("p").Priority(midPriority).Obj(),
			want:      victimsResult{nil, 0, preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{reasonNoVictims}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &preempt.Cluster{Nodes: []*v1.Node{testobj.MakeNode().Name("node1").Capacity(veryLargeRes).Obj()}, Pods: tt.initPods, PDBs: tt.pdbs}
			got := selectVictims(t, impl, c, tt.preemptor, "node1")
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("SelectVictimsOnNode (-want +got):\n%s", diff)
			}
		})
	}
}

func testUpstreamPreempt(t *testing.T, impl preempt.Implementation) {
	def := v1.NamespaceDefault
	tests := []struct {
		name      string
		pod       *v1.Pod
		pods      []*v1.Pod
		nodeNames []string
		want      decisionOutcome
	}{
		{
			name: "basic preemption logic",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Req(veryLargeRes).PreemptionPolicy(v1.PreemptLowerPriority).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Node("node2").Priority(highPriority).Req(largeRes).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Node("node3").Priority(midPriority).Req(mediumRes).Obj(),
			},
			nodeNames: []string{"node1", "node2", "node3"},
			want: decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg("node1", 2), NominatedNode: "node1",
				Victims: []preempt.Victim{vic("", "p1.1", lowPriority), vic("", "p1.2", lowPriority)},
				Actions: []preempt.Action{
					patchOf("", "p1.1", setsDisruption), deleteOf("", "p1.1"),
					patchOf("", "p1.2", setsDisruption), deleteOf("", "p1.2"),
					patchOf(def, "p", "nominatedNodeName=node1"),
				}},
		},
		{
			name: "no preempting in pod",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Req(veryLargeRes).PreemptionPolicy(v1.PreemptNever).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Namespace(def).Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Namespace(def).Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Namespace(def).Node("node2").Priority(highPriority).Req(largeRes).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Namespace(def).Node("node3").Priority(midPriority).Req(mediumRes).Obj(),
			},
			nodeNames: []string{"node1", "node2", "node3"},
			want:      decisionOutcome{Eligible: false, Status: preempt.Unschedulable, Message: "not eligible due to preemptionPolicy=Never."},
		},
		{
			name: "PreemptionPolicy is nil",
			pod:  testobj.MakePod().Name("p").UID("p").Namespace(def).Priority(highPriority).Req(veryLargeRes).Obj(),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Namespace(def).Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Namespace(def).Node("node1").Priority(lowPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p2.1").UID("p2.1").Namespace(def).Node("node2").Priority(highPriority).Req(largeRes).Obj(),
				testobj.MakePod().Name("p3.1").UID("p3.1").Namespace(def).Node("node3").Priority(midPriority).Req(mediumRes).Obj(),
			},
			nodeNames: []string{"node1", "node2", "node3"},
			want: decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg("node1", 2), NominatedNode: "node1",
				Victims: []preempt.Victim{vic(def, "p1.1", lowPriority), vic(def, "p1.2", lowPriority)},
				Actions: []preempt.Action{
					patchOf(def, "p1.1", setsDisruption), deleteOf(def, "p1.1"),
					patchOf(def, "p1.2", setsDisruption), deleteOf(def, "p1.2"),
					patchOf(def, "p", "nominatedNodeName=node1"),
				}},
		},
	}
	labelKeys := []string{"hostname", "zone", "region"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var nodes []*v1.Node
			for _, n := range tt.nodeNames {
				nodes = append(nodes, testobj.MakeNode().Name(n).Label(labelKeys[0], n).Capacity(veryLargeRes).Obj())
			}
			testPod := tt.pod.DeepCopy()
			testPods := make([]*v1.Pod, len(tt.pods))
			for i := range tt.pods {
				testPods[i] = tt.pods[i].DeepCopy()
			}
			r := &preempt.Request{Pod: testPod, Filter: unschedulable(tt.nodeNames...), Config: preempt.DefaultConfig(), Now: now}
			var got decisionOutcome
			inBothModes(t, r, tt.want, func(t *testing.T, r *preempt.Request, want decisionOutcome) {
				got = outcomeOf(runDecision(t, impl, &preempt.Cluster{Nodes: nodes, Pods: testPods}, r))
				if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Preempt (-want +got):\n%s", diff)
				}
			})

			// As upstream: nominate the preemptor, mark the victims
			// deleted and preempt again with every node absent from the
			// filter statuses: no more preemption.
			testPod.Status.NominatedNodeName = got.NominatedNode
			for _, p := range testPods {
				for _, v := range got.Victims {
					if p.Namespace == v.Namespace && p.Name == v.Name {
						ts := metav1.NewTime(now)
						p.DeletionTimestamp = &ts
					}
				}
			}
			r2 := &preempt.Request{Pod: testPod, Filter: map[string]preempt.Code{}, Config: preempt.DefaultConfig(), Now: now}
			got2 := outcomeOf(runDecision(t, impl, &preempt.Cluster{Nodes: nodes, Pods: testPods}, r2))
			want2 := decisionOutcome{Eligible: tt.want.Eligible, Status: preempt.Unschedulable, Message: tt.want.Message}
			if tt.want.Eligible {
				want2.Message = "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
			}
			if diff := cmp.Diff(want2, got2, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("second Preempt (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpstreamFilterVictimsWithPDBViolation ports preemption_test.go's
// TestFilterVictimsWithPDBViolation single-pod cases through
// SelectVictimsOnNode: each victim is a 500m pod on a 1000m node. With a
// 1000m preemptor every pod goes and NumViolations counts the violating
// ones; with a 500m preemptor one pod stays, the violating one being
// reprieved first.
func testUpstreamFilterVictimsWithPDBViolation(t *testing.T, impl preempt.Implementation) {
	def := metav1.NamespaceDefault
	mk := func(w *testobj.PodWrapper, age int) *v1.Pod {
		return w.UID("uid-" + w.ObjectMeta.Namespace + "-" + w.ObjectMeta.Name).Node("n").Priority(1).Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m"}).
			StartTime(now.Add(-time.Duration(age) * time.Hour)).Obj()
	}
	viNoPDBMatch := func() *v1.Pod { return mk(testobj.MakePod().Name("p1").Label("app", "foo"), 2) }
	viMatchPDB := func() *v1.Pod { return mk(testobj.MakePod().Name("p1").Namespace(def).Label("app", "foo"), 2) }
	viMatchPDB2 := func() *v1.Pod { return mk(testobj.MakePod().Name("p2").Namespace(def).Label("app", "foo"), 1) }
	viMatchMultiplePDBs := func() *v1.Pod {
		return mk(testobj.MakePod().Name("p1").Namespace(def).Label("app", "foo").Label("tier", "backend"), 2)
	}
	numPDBs := 0
	mkPDB := func(sel *metav1.LabelSelector, allowed int32) *policy.PodDisruptionBudget {
		numPDBs++
		return testobj.MakePDB().Namespace(def).Name(fmt.Sprintf("pdb-%d", numPDBs)).Selector(sel).DisruptionsAllowed(allowed).Obj()
	}
	ok := preempt.Status{Code: preempt.Success}
	tests := []struct {
		name      string
		victims   []*v1.Pod
		pdbs      []*policy.PodDisruptionBudget
		preemptor string // cpu
		want      victimsResult
	}{
		{
			name: "victim with no matching PDBs", victims: []*v1.Pod{viNoPDBMatch()}, preemptor: "1000m",
			pdbs: []*policy.PodDisruptionBudget{mkPDB(matchLabels("app", "bar"), 0)},
			want: victimsResult{[]preempt.Victim{vic("", "p1", 1)}, 0, ok},
		},
		{
			name: "victim matching PDB, adequate DisruptionsAllowed", victims: []*v1.Pod{viMatchPDB()}, preemptor: "1000m",
			pdbs: []*policy.PodDisruptionBudget{mkPDB(matchLabels("app", "foo"), 1)},
			want: victimsResult{[]preempt.Victim{vic(def, "p1", 1)}, 0, ok},
		},
		{
			name: "victim matching PDB, no DisruptionsAllowed", victims: []*v1.Pod{viMatchPDB()}, preemptor: "1000m",
			pdbs: []*policy.PodDisruptionBudget{mkPDB(matchLabels("app", "foo"), 0)},
			want: victimsResult{[]preempt.Victim{vic(def, "p1", 1)}, 1, ok},
		},
		{
			// Violating: p2. It is reprieved first and stays; p1 goes.
			name: "multiple victims matching the same PDB", victims: []*v1.Pod{viMatchPDB(), viMatchPDB2()}, preemptor: "500m",
			pdbs: []*policy.PodDisruptionBudget{mkPDB(matchLabels("app", "foo"), 1)},
			want: victimsResult{[]preempt.Victim{vic(def, "p1", 1)}, 0, ok},
		},
		{
			name: "pod in DisruptedPods is ignored", victims: []*v1.Pod{viMatchPDB()}, preemptor: "1000m",
			pdbs: []*policy.PodDisruptionBudget{func() *policy.PodDisruptionBudget {
				b := mkPDB(matchLabels("app", "foo"), 0)
				b.Status.DisruptedPods = map[string]metav1.Time{"p1": metav1.NewTime(now)}
				return b
			}()},
			want: victimsResult{[]preempt.Victim{vic(def, "p1", 1)}, 0, ok},
		},
		{
			name: "PDB with empty selector", victims: []*v1.Pod{viMatchPDB()}, preemptor: "1000m",
			pdbs: []*policy.PodDisruptionBudget{mkPDB(&metav1.LabelSelector{}, 0)},
			want: victimsResult{[]preempt.Victim{vic(def, "p1", 1)}, 0, ok},
		},
		{
			name: "Multiple PDBs", victims: []*v1.Pod{viMatchMultiplePDBs()}, preemptor: "1000m",
			pdbs: []*policy.PodDisruptionBudget{mkPDB(matchLabels("app", "foo"), 1), mkPDB(matchLabels("tier", "backend"), 0)},
			want: victimsResult{[]preempt.Victim{vic(def, "p1", 1)}, 1, ok},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &preempt.Cluster{Nodes: []*v1.Node{node("n", "1000m").Obj()}, Pods: tt.victims, PDBs: tt.pdbs}
			got := selectVictims(t, impl, c, pod(def, "preemptor", 10).CPU(tt.preemptor).Obj(), "n")
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("SelectVictimsOnNode (-want +got):\n%s", diff)
			}
		})
	}
}

// testUpstreamAffinityAndSpread ports the InterPodAffinity and
// PodTopologySpread cases of default_preemption_test.go ("pod with
// anti-affinity is preempted" and "preemption to resolve pod topology
// spread filter failure" of TestDryRunPreemption, "preemption for topology
// spread constraints" of TestPreempt). Node "name/zone" carries the labels
// hostname=name and zone=zone, as upstream's tests build it. An
// implementation that does not model a filter must refuse the input
// (preempt.Limited) rather than answer.
func testUpstreamAffinityAndSpread(t *testing.T, impl preempt.Implementation) {
	nodes := func(names ...string) []*v1.Node {
		var out []*v1.Node
		for _, nz := range names {
			name, zone, _ := strings.Cut(nz, "/")
			n := testobj.MakeNode().Name(name).Label("hostname", name).Capacity(veryLargeRes)
			if zone != "" {
				n.Label("zone", zone)
			}
			out = append(out, n.Obj())
		}
		return out
	}
	foo := testobj.MakeLabelSelector().Exists("foo").Obj()
	spreadPod := testobj.MakePod().Name("p").UID("p").Namespace(v1.NamespaceDefault).Label("foo", "").Priority(highPriority).
		SpreadConstraint(1, "zone", v1.DoNotSchedule, foo, nil, nil, nil, nil).
		SpreadConstraint(1, "hostname", v1.DoNotSchedule, foo, nil, nil, nil, nil).Obj()
	tests := []struct {
		name    string
		pod     *v1.Pod
		pods    []*v1.Pod
		nodes   []*v1.Node
		want    []preempt.Candidate // dry run over every node from offset 0, all candidates
		wantPre *decisionOutcome    // or the whole decision
	}{
		{
			name:  "pod with anti-affinity is preempted",
			pod:   testobj.MakePod().Name("p").UID("p").Label("foo", "").Priority(highPriority).Req(smallRes).Obj(),
			nodes: nodes("node1", "node2"),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p1.1").UID("p1.1").Node("node1").Label("foo", "").Priority(lowPriority).Req(smallRes).
					PodAntiAffinityExists("foo", "hostname", testobj.PodAntiAffinityWithRequiredReq).Obj(),
				testobj.MakePod().Name("p1.2").UID("p1.2").Node("node1").Priority(midPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p1.3").UID("p1.3").Node("node1").Priority(highPriority).Req(smallRes).Obj(),
				testobj.MakePod().Name("p2").UID("p2").Node("node2").Priority(highPriority).Req(smallRes).Obj(),
			},
			want: []preempt.Candidate{{Node: "node1", Victims: []preempt.Victim{vic("", "p1.1", lowPriority)}}},
		},
		{
			name: "preemption to resolve pod topology spread filter failure",
			pod: testobj.MakePod().Name("p").UID("p").Label("foo", "").Priority(highPriority).
				SpreadConstraint(1, "zone", v1.DoNotSchedule, foo, nil, nil, nil, nil).
				SpreadConstraint(1, "hostname", v1.DoNotSchedule, foo, nil, nil, nil, nil).Obj(),
			nodes: nodes("node-a/zone1", "node-b/zone1", "node-x/zone2"),
			pods: []*v1.Pod{
				testobj.MakePod().Name("pod-a1").UID("pod-a1").Node("node-a").Label("foo", "").Priority(midPriority).Obj(),
				testobj.MakePod().Name("pod-a2").UID("pod-a2").Node("node-a").Label("foo", "").Priority(lowPriority).Obj(),
				testobj.MakePod().Name("pod-b1").UID("pod-b1").Node("node-b").Label("foo", "").Priority(lowPriority).Obj(),
				testobj.MakePod().Name("pod-x1").UID("pod-x1").Node("node-x").Label("foo", "").Priority(highPriority).Obj(),
				testobj.MakePod().Name("pod-x2").UID("pod-x2").Node("node-x").Label("foo", "").Priority(highPriority).Obj(),
			},
			want: []preempt.Candidate{
				{Node: "node-a", Victims: []preempt.Victim{vic("", "pod-a2", lowPriority)}},
				{Node: "node-b", Victims: []preempt.Victim{vic("", "pod-b1", lowPriority)}},
			},
		},
		{
			name:  "preemption for topology spread constraints",
			pod:   spreadPod,
			nodes: nodes("node-a/zone1", "node-b/zone1", "node-x/zone2"),
			pods: []*v1.Pod{
				testobj.MakePod().Name("p-a1").UID("p-a1").Namespace(v1.NamespaceDefault).Node("node-a").Label("foo", "").Priority(highPriority).Obj(),
				testobj.MakePod().Name("p-a2").UID("p-a2").Namespace(v1.NamespaceDefault).Node("node-a").Label("foo", "").Priority(highPriority).Obj(),
				testobj.MakePod().Name("p-b1").UID("p-b1").Namespace(v1.NamespaceDefault).Node("node-b").Label("foo", "").Priority(lowPriority).Obj(),
				testobj.MakePod().Name("p-x1").UID("p-x1").Namespace(v1.NamespaceDefault).Node("node-x").Label("foo", "").Priority(highPriority).Obj(),
				testobj.MakePod().Name("p-x2").UID("p-x2").Namespace(v1.NamespaceDefault).Node("node-x").Label("foo", "").Priority(highPriority).Obj(),
			},
			wantPre: &decisionOutcome{Eligible: true, Status: preempt.Success, Message: successMsg("node-b", 1), NominatedNode: "node-b",
				Victims: []preempt.Victim{vic(v1.NamespaceDefault, "p-b1", lowPriority)},
				Actions: []preempt.Action{patchOf(v1.NamespaceDefault, "p-b1", setsDisruption), deleteOf(v1.NamespaceDefault, "p-b1"),
					patchOf(v1.NamespaceDefault, "p", "nominatedNodeName=node-b")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &preempt.Cluster{Nodes: tt.nodes, Pods: tt.pods}
			var names []string
			for _, n := range tt.nodes {
				names = append(names, n.Name)
			}
			if err := harness.Refusal(impl, c, tt.pod); err != nil {
				var u *preempt.Unmodelled
				if !errors.As(err, &u) {
					t.Fatalf("refusal %v is not a preempt.Unmodelled", err)
				}
				t.Logf("%s refuses: %v", impl.Name(), err) // allowed: it does not model the filter
				return
			}
			r := &preempt.Request{Pod: tt.pod, Filter: unschedulable(names...), Config: preempt.Config{MinCandidateNodesPercentage: 100, MinCandidateNodesAbsolute: 100}, Now: now}
			if tt.wantPre != nil {
				r.Config, r.Offset = preempt.DefaultConfig(), 0
				r.Config.Synchronous = true
				got := outcomeOf(runDecision(t, impl, c, r))
				if got.NominatedNode != tt.wantPre.NominatedNode && tieAllowed(t, impl, c, runDecision(t, reference.Impl{}, c, r).Candidates, r, tt.wantPre.NominatedNode, got.NominatedNode) {
					return
				}
				if diff := cmp.Diff(*tt.wantPre, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("Preempt (-want +got):\n%s", diff)
				}
				return
			}
			dr := newEvaluator(t, impl, c).DryRunPreemption(context.Background(), r, names, 0, int32(len(names)))
			if diff := cmp.Diff(tt.want, dr.Candidates, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("DryRunPreemption candidates (-want +got):\n%s", diff)
			}
		})
	}
}
