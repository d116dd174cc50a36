package reference

import (
	"context"
	"fmt"
	"k8s.io/component-helpers/node/topology"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/internal/refstages"
	"github.com/preemptbench/preemptbench/postfilter"
	"github.com/preemptbench/preemptbench/preempt"
)

// Impl is the reference implementation.
type Impl struct {
	// stages are the pod-group stages (stages.go), nil for the
	// reference's own.
	stages *refstages.Stages
}

var _ preempt.Implementation = Impl{}

// Name is "reference".
func (Impl) Name() string { return "reference" }

// NewEvaluator indexes c. It keeps pointers to c's objects and never
// modifies them.
func (i Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	current, _ := preempt.ReleaseBehaviour(preempt.CurrentRelease)
	ev := &evaluator{
		stages:     ownStages(),
		b:          current,
		cluster:    c,
		nodeByName: map[string]*v1.Node{},
		podByKey:   map[string]*v1.Pod{},
		pdbs:       preempt.SortedPDBs(c.PDBs),
		namespaces: c.Namespaces,
	}
	if i.stages != nil {
		ev.stages = *i.stages
	}
	for _, n := range c.Nodes {
		ev.nodes = append(ev.nodes, n)
		ev.nodeByName[n.Name] = n
	}
	sort.Slice(ev.nodes, func(i, j int) bool { return ev.nodes[i].Name < ev.nodes[j].Name })
	ev.tree = nodeTreeOrder(c.Nodes)
	ev.bound, ev.nominated = preempt.PodsByNode(c)
	for _, p := range c.Pods {
		ev.podByKey[podKey(p)] = p
	}
	return gangEvaluator{ev}, nil
}

type evaluator struct {
	// stages are the pod-group paths' policy stages (stages.go).
	stages refstages.Stages
	// b is the behaviour of the release the evaluation reproduces
	// (preempt.Config.Behaviour); at gives a copy for a request's.
	b preempt.Behaviour
	// now is the clock DynamicResources reads (a claim's binding
	// timeout): Request.Now in a request's stages, the time given to
	// SetNow in Filter.
	now time.Time
	// states are the node states of a gang preemption's world (gang.go),
	// nil otherwise.
	states     map[string]*nodeState
	cluster    *preempt.Cluster
	nodes      []*v1.Node // in name order
	tree       []*v1.Node // in the scheduler snapshot's order (nodeTreeOrder)
	nodeByName map[string]*v1.Node
	bound      map[string][]*v1.Pod // node -> pods bound to it, in cluster order
	nominated  map[string][]*v1.Pod // node -> pods nominated to it, in cluster order
	podByKey   map[string]*v1.Pod
	pdbs       []*policyv1.PodDisruptionBudget
	namespaces []*v1.Namespace
	// reserved is what the Reserve plugins of a gang's placed members
	// left for the members after them (gang_reserve.go), nil outside a
	// gang's scheduling function.
	reserved *gangReserved
}

const reasonNoVictims = "No preemption victims found for incoming pod"

// nodeState builds the NodeInfo of a node from its bound pods.
var _ preempt.BehaviourSetter = (*evaluator)(nil)

// SetBehaviour sets the release behaviour Filter reproduces.
func (ev *evaluator) SetBehaviour(b preempt.Behaviour) { ev.b = b }

var _ preempt.ClockSetter = (*evaluator)(nil)

// SetNow sets the clock Filter reads.
func (ev *evaluator) SetNow(now time.Time) { ev.now = now }

// at is ev reproducing the release behaviour of req's configuration, at
// req's clock.
func (ev *evaluator) at(req *preempt.Request) *evaluator {
	if req == nil {
		return ev
	}
	b := req.Config.Behaviour()
	if b == ev.b && req.Now.Equal(ev.now) {
		return ev
	}
	c := *ev
	c.b, c.now = b, req.Now
	return &c
}

// placedRequests and incomingRequests are a pod's requests as the
// release's component-helpers compute them (ResizedPodRequests;
// PodLevelResizeRequests for the placed pods' pod-level requests).
func (ev *evaluator) placedRequests(p *v1.Pod) v1.ResourceList {
	if ev.b.ResizedPodRequests {
		return podinfo.PlacedPodRequestsGated(p, ev.b.PodLevelResizeRequests)
	}
	return podinfo.PlacedPodRequestsV036Gated(p, ev.b.PodLevelResizeRequests)
}

func (ev *evaluator) incomingRequests(p *v1.Pod) v1.ResourceList {
	if ev.b.ResizedPodRequests {
		return podinfo.IncomingPodRequests(p)
	}
	return podinfo.IncomingPodRequestsV036(p)
}

func (ev *evaluator) nodeState(name string) *nodeState {
	s := newNodeState(ev.nodeByName[name], ev.placedRequests)
	for _, p := range ev.bound[name] {
		s.addPod(p)
	}
	return s
}

func (ev *evaluator) Filter(_ context.Context, pod *v1.Pod) preempt.FilterResult {
	res := preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	state := ev.preFilter(pod)
	res.PreFilterRejected = state.rejectedBeforeDRA()
	for _, n := range ev.nodes {
		st := ev.filtersWithNominatedPods(pod, state, ev.nodeState(n.Name))
		if st.IsSuccess() {
			res.Feasible = append(res.Feasible, n.Name)
			continue
		}
		res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: n.Name, Code: st.Code, Reasons: st.Reasons})
	}
	return res
}

// PodEligibleToPreemptOthers is upstream's, reading the terminating pods
// on the nominated node (at their priority as victims: their group's under
// GenericWorkload).
func (ev *evaluator) PodEligibleToPreemptOthers(req *preempt.Request) (bool, string) {
	ev = ev.at(req)
	pod := req.Pod
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		return true, ""
	}
	// A nominated node the filters call UnschedulableAndUnresolvable no
	// longer holds a place for the pod: let it preempt elsewhere.
	if code, ok := req.FilterCodes(ev.cluster)[nominated]; !ok || code == preempt.UnschedulableAndUnresolvable {
		return true, ""
	}
	g := groupsFor(ev.cluster, req.Config.FeatureGates, &ev.stages)
	for _, p := range ev.bound[nominated] {
		if g.priority(p) < corev1helpers.PodPriority(pod) && podinfo.TerminatingByPreemption(p) {
			return false, "not eligible due to a terminating pod on the nominated node."
		}
	}
	return true, ""
}

func (ev *evaluator) FindCandidates(ctx context.Context, req *preempt.Request) (preempt.DryRun, error) {
	ev = ev.at(req)
	if len(ev.nodes) == 0 {
		return preempt.DryRun{}, fmt.Errorf("no nodes available")
	}
	var potential []string
	filter := req.FilterCodes(ev.cluster)
	for _, n := range ev.nodes {
		if filter[n.Name] == preempt.Unschedulable {
			potential = append(potential, n.Name)
		}
	}
	if len(potential) == 0 {
		return preempt.DryRun{}, nil
	}
	num := req.Config.NumCandidates(int32(len(potential)))
	return ev.DryRunPreemption(ctx, req, potential, req.Offset, num), nil
}

// DryRunPreemption is upstream's with one worker: visit the potential nodes
// from offset, keep at most numCandidates candidates in each of the
// non-violating and violating lists, and stop before the next node once
// there is a non-violating candidate and enough candidates in all.
func (ev *evaluator) DryRunPreemption(ctx context.Context, req *preempt.Request, potential []string, offset, numCandidates int32) preempt.DryRun {
	ev = ev.at(req)
	var known []string // names that are not nodes of this cluster are dropped
	for _, node := range potential {
		if ev.nodeByName[node] != nil {
			known = append(known, node)
		}
	}
	potential = known
	var nonViolating, violating []preempt.Candidate
	var statuses []preempt.NodeStatus
	var errs []string
	state := ev.preFilter(req.Pod)
	for i := range potential {
		if len(nonViolating) > 0 && int32(len(nonViolating)+len(violating)) >= numCandidates {
			break
		}
		node := potential[(int(offset)+i)%len(potential)]
		victims, numViolations, st := ev.selectVictimsOnNode(req, node, state)
		if st.IsSuccess() && len(victims) > 0 {
			c := preempt.Candidate{Node: node, NumPDBViolations: numViolations, Victims: victims}
			if numViolations == 0 {
				if int32(len(nonViolating)) < numCandidates {
					nonViolating = append(nonViolating, c)
				}
			} else if int32(len(violating)) < numCandidates {
				violating = append(violating, c)
			}
			continue
		}
		if st.IsSuccess() {
			st = preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("expected at least one victim pod on node %q", node)}}
		}
		if st.Code == preempt.Error {
			errs = append(errs, st.Message())
		}
		statuses = append(statuses, preempt.NodeStatus{Node: node, Code: st.Code, Reasons: st.Reasons})
	}
	sort.Slice(statuses, func(i, j int) bool { return statuses[i].Node < statuses[j].Node })
	return preempt.DryRun{Candidates: append(nonViolating, violating...), NodeStatuses: statuses, Errors: errs}
}

func startTime(p *v1.Pod, now time.Time) time.Time {
	if p != nil && p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// SelectVictimsOnNode is upstream's: remove every lower-priority victim,
// check the preemptor fits, then reprieve the removed victims from the
// most important down, PDB-violating ones first; the victims that cannot
// be reprieved are preempted. Under GenericWorkload a victim is a unit
// (podgroup.go) whose pods may run on other nodes.
func (ev *evaluator) SelectVictimsOnNode(_ context.Context, req *preempt.Request, node string) ([]preempt.Victim, int, preempt.Status) {
	ev = ev.at(req)
	return ev.selectVictimsOnNode(req, node, ev.preFilter(req.Pod))
}

// selectVictimsOnNode is SelectVictimsOnNode with the cycle state of the
// request's pod computed by the caller: the dry run runs PreFilter once, as
// upstream's scheduling cycle does, and each node works on a copy of it.
// Every pod taken off or put back goes through the plugins' RemovePod and
// AddPod; only the node's own pods change the node: a unit's pods on other
// nodes (remote members) go through RemovePod and AddPod with their node
// as it is, as upstream does, so that the inter-pod affinity and spread
// counts move.
func (ev *evaluator) selectVictimsOnNode(req *preempt.Request, node string, cycle *cycleState) ([]preempt.Victim, int, preempt.Status) {
	pod := req.Pod
	if ev.nodeByName[node] == nil {
		return nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("nodeinfo not found for node name %q", node)}}
	}
	g := groupsFor(ev.cluster, req.Config.FeatureGates, &ev.stages)
	s, state := ev.nodeState(node), cycle.clone()
	remote := map[string]*nodeState{}
	nodeOf := func(p *v1.Pod) *nodeState {
		if p.Spec.NodeName == node {
			return s
		}
		if remote[p.Spec.NodeName] == nil {
			remote[p.Spec.NodeName] = ev.nodeState(p.Spec.NodeName)
		}
		return remote[p.Spec.NodeName]
	}
	removeUnit := func(u *unit) error {
		for _, p := range u.pods {
			if p.Spec.NodeName == node {
				if err := s.removePod(p); err != nil {
					return err
				}
			}
			if ev.stages.MovesPreemptorState(p, node) {
				if err := state.removePodFailure(); err != nil {
					return err
				}
				state.removePod(pod, p, nodeOf(p))
			}
		}
		return nil
	}
	addUnit := func(u *unit) {
		for _, p := range u.pods {
			if p.Spec.NodeName == node {
				s.addPod(p)
			}
			if ev.stages.MovesPreemptorState(p, node) {
				state.addPod(pod, p, nodeOf(p))
			}
		}
	}
	var potential []*unit
	for _, u := range ev.unitsOn(g, []string{node}, req.Now) {
		if u.priority < corev1helpers.PodPriority(pod) {
			potential = append(potential, u)
		}
	}
	if len(potential) == 0 {
		return nil, 0, unresolvable(reasonNoVictims)
	}
	for _, u := range potential {
		if err := removeUnit(u); err != nil {
			return nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{err.Error()}}
		}
	}
	if st := ev.filtersWithNominatedPods(pod, state, s); !st.IsSuccess() {
		return nil, 0, st
	}

	sortUnits(potential)
	violating, counts, nonViolating := ev.splitUnitsByPDBViolation(potential)

	var victims []*unit
	reprieve := func(u *unit) (fits bool) {
		addUnit(u)
		if ev.filtersWithNominatedPods(pod, state, s).IsSuccess() {
			return true
		}
		_ = removeUnit(u) // just added
		victims = append(victims, u)
		return false
	}
	numViolating := 0
	for i, u := range violating {
		if !reprieve(u) {
			numViolating += counts[i]
		}
	}
	for _, u := range nonViolating {
		reprieve(u)
	}
	sortUnits(victims)
	return flatten(g, victims), numViolating, preempt.Status{Code: preempt.Success}
}

// splitByPDBViolation is upstream's FilterVictimsWithPDBViolation (v1.37):
// walking the pods in order, and for each pod the PDBs in the contract's
// order (namespace, name), each matching PDB (same namespace, a valid
// non-empty selector that matches the pod's labels, pod not in
// DisruptedPods) has its budget counted down, until one goes below zero:
// the pod violates, and the PDBs after that one keep their budget.
// The order within each group is kept.
func (ev *evaluator) splitByPDBViolation(pods []*v1.Pod) (violating, nonViolating []*v1.Pod) {
	allowed := make([]int32, len(ev.pdbs))
	for i, pdb := range ev.pdbs {
		allowed[i] = pdb.Status.DisruptionsAllowed
	}
	for _, p := range pods {
		violates := false
		if len(p.Labels) != 0 {
			for i, pdb := range ev.pdbs {
				if pdb.Namespace != p.Namespace {
					continue
				}
				selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
				if err != nil || selector.Empty() || !selector.Matches(labels.Set(p.Labels)) {
					continue
				}
				if _, disrupted := pdb.Status.DisruptedPods[p.Name]; disrupted {
					continue
				}
				allowed[i]--
				if allowed[i] < 0 {
					violates = true
					if ev.b.PDBStopAtFirstViolation {
						break
					}
				}
			}
		}
		if violates {
			violating = append(violating, p)
		} else {
			nonViolating = append(nonViolating, p)
		}
	}
	return violating, nonViolating
}

// SelectCandidate is pickOneNodeForPreemption: five criteria in turn, each
// keeping the candidates with the best score; the first candidate in list
// order wins the last tie (Pick).
func (ev *evaluator) SelectCandidate(candidates []preempt.Candidate, req *preempt.Request) *preempt.Candidate {
	if len(candidates) == 0 {
		return nil
	}
	if len(candidates) == 1 {
		return &candidates[0]
	}
	startOf := func(v preempt.Victim) time.Time {
		return startTime(ev.podByKey[preempt.Key(v.Namespace, v.Name)], req.Now)
	}
	winner, _ := Pick(candidates, criteria(startOf))
	return &candidates[winner]
}

// Preempt is Evaluator.Preempt over the stages above, followed by the
// nomination.
func (ev *evaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	ev = ev.at(req)
	d := postfilter.PreemptWithStages(ctx, ev, cs, req, ev.cluster)
	// An extender's answer names pods only: each victim's pod group comes
	// from the cluster's pod, whatever the gates (the pod names it).
	ev.annotate(d.Victims)
	for i := range d.Candidates {
		ev.annotate(d.Candidates[i].Victims)
	}
	return d
}

// annotate names each victim's PodGroup from the cluster's pod.
func (ev *evaluator) annotate(vs []preempt.Victim) {
	for i, v := range vs {
		if p := ev.podByKey[preempt.Key(v.Namespace, v.Name)]; p != nil {
			if name, ok := preempt.PodGroupName(p); ok {
				vs[i].PodGroup = preempt.Key(p.Namespace, name)
			}
		}
	}
}

// treeOrder is the nodes in the order of the scheduler snapshot's node
// list.
func (ev *evaluator) treeOrder() []*v1.Node { return ev.tree }

// nodeTreeOrder is the scheduler cache's nodeTree.list() of nodes added in
// the cluster's order: the zones (region and zone labels) in the order
// their first node came, one node of each zone in turn.
func nodeTreeOrder(nodes []*v1.Node) []*v1.Node {
	var zones []string
	byZone := map[string][]*v1.Node{}
	for _, n := range nodes {
		z := topology.GetZoneKey(n)
		if _, ok := byZone[z]; !ok {
			zones = append(zones, z)
		}
		byZone[z] = append(byZone[z], n)
	}
	out := make([]*v1.Node, 0, len(nodes))
	for i := 0; len(out) < len(nodes); i++ {
		for _, z := range zones {
			if i < len(byZone[z]) {
				out = append(out, byZone[z][i])
			}
		}
	}
	return out
}
