package reference

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/podinfo"
	"github.com/preemptbench/preemptbench/postfilter"
	"github.com/preemptbench/preemptbench/preempt"
)

// Impl is the reference implementation.
type Impl struct{}

var _ preempt.Implementation = Impl{}

// Name is "reference".
func (Impl) Name() string { return "reference" }

// NewEvaluator indexes c. It keeps pointers to c's objects and never
// modifies them.
func (Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	ev := &evaluator{
		cluster:    c,
		nodeByName: map[string]*v1.Node{},
		podByKey:   map[string]*v1.Pod{},
		pdbs:       preempt.SortedPDBs(c.PDBs),
		namespaces: c.Namespaces,
	}
	for _, n := range c.Nodes {
		ev.nodes = append(ev.nodes, n)
		ev.nodeByName[n.Name] = n
	}
	sort.Slice(ev.nodes, func(i, j int) bool { return ev.nodes[i].Name < ev.nodes[j].Name })
	ev.bound, ev.nominated = preempt.PodsByNode(c)
	for _, p := range c.Pods {
		ev.podByKey[podKey(p)] = p
	}
	return ev, nil
}

type evaluator struct {
	cluster    *preempt.Cluster
	nodes      []*v1.Node // in name order
	nodeByName map[string]*v1.Node
	bound      map[string][]*v1.Pod // node -> pods bound to it, in cluster order
	nominated  map[string][]*v1.Pod // node -> pods nominated to it, in cluster order
	podByKey   map[string]*v1.Pod
	pdbs       []*policyv1.PodDisruptionBudget
	namespaces []*v1.Namespace
}

const reasonNoVictims = "No preemption victims found for incoming pod"

// nodeState builds the NodeInfo of a node from its bound pods.
func (ev *evaluator) nodeState(name string) *nodeState {
	s := newNodeState(ev.nodeByName[name])
	for _, p := range ev.bound[name] {
		s.addPod(p)
	}
	return s
}

func (ev *evaluator) Filter(_ context.Context, pod *v1.Pod) preempt.FilterResult {
	res := preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	state := ev.preFilter(pod)
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
// on the nominated node.
func (ev *evaluator) PodEligibleToPreemptOthers(req *preempt.Request) (bool, string) {
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
	for _, p := range ev.bound[nominated] {
		if corev1helpers.PodPriority(p) < corev1helpers.PodPriority(pod) && podinfo.TerminatingByPreemption(p) {
			return false, "not eligible due to a terminating pod on the nominated node."
		}
	}
	return true, ""
}

func (ev *evaluator) FindCandidates(ctx context.Context, req *preempt.Request) (preempt.DryRun, error) {
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

// moreImportant orders pods by priority (high first), then start time
// (early first), then namespace, name and UID, the final key the contract
// adds so that the order is total.
func moreImportant(a, b *v1.Pod, now time.Time) bool {
	pa, pb := corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	ta, tb := startTime(a, now), startTime(b, now)
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.UID < b.UID
}

func startTime(p *v1.Pod, now time.Time) time.Time {
	if p != nil && p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// SelectVictimsOnNode is upstream's: remove every lower-priority pod, check
// the preemptor fits, then reprieve the removed pods from the most important
// down, PDB-violating ones first; the pods that cannot be reprieved are the
// victims.
func (ev *evaluator) SelectVictimsOnNode(_ context.Context, req *preempt.Request, node string) ([]preempt.Victim, int, preempt.Status) {
	return ev.selectVictimsOnNode(req, node, ev.preFilter(req.Pod))
}

// selectVictimsOnNode is SelectVictimsOnNode with the cycle state of the
// request's pod computed by the caller: the dry run runs PreFilter once, as
// upstream's scheduling cycle does, and each node works on a copy of it.
// Every pod taken off or put back on the node goes through the plugins'
// RemovePod and AddPod.
func (ev *evaluator) selectVictimsOnNode(req *preempt.Request, node string, cycle *cycleState) ([]preempt.Victim, int, preempt.Status) {
	pod := req.Pod
	if ev.nodeByName[node] == nil {
		return nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("nodeinfo not found for node name %q", node)}}
	}
	s, state := ev.nodeState(node), cycle.clone()
	removePod := func(p *v1.Pod) error {
		if err := s.removePod(p); err != nil {
			return err
		}
		state.removePod(pod, p, s)
		return nil
	}
	addPod := func(p *v1.Pod) {
		s.addPod(p)
		state.addPod(pod, p, s)
	}
	var potential []*v1.Pod
	for _, p := range ev.bound[node] {
		if corev1helpers.PodPriority(p) < corev1helpers.PodPriority(pod) {
			potential = append(potential, p)
		}
	}
	for _, p := range potential {
		if err := removePod(p); err != nil {
			return nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{err.Error()}}
		}
	}
	if len(potential) == 0 {
		return nil, 0, unresolvable(reasonNoVictims)
	}
	if st := ev.filtersWithNominatedPods(pod, state, s); !st.IsSuccess() {
		return nil, 0, st
	}

	sort.SliceStable(potential, func(i, j int) bool { return moreImportant(potential[i], potential[j], req.Now) })
	violating, nonViolating := ev.splitByPDBViolation(potential)

	var victims []*v1.Pod
	reprieve := func(p *v1.Pod) (fits bool) {
		addPod(p)
		if ev.filtersWithNominatedPods(pod, state, s).IsSuccess() {
			return true
		}
		_ = removePod(p) // just added
		victims = append(victims, p)
		return false
	}
	numViolating := 0
	for _, p := range violating {
		if !reprieve(p) {
			numViolating++
		}
	}
	for _, p := range nonViolating {
		reprieve(p)
	}
	sort.SliceStable(victims, func(i, j int) bool { return moreImportant(victims[i], victims[j], req.Now) })

	out := make([]preempt.Victim, 0, len(victims))
	for _, p := range victims {
		out = append(out, preempt.Victim{Namespace: p.Namespace, Name: p.Name, Priority: corev1helpers.PodPriority(p)})
	}
	return out, numViolating, preempt.Status{Code: preempt.Success}
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
					break
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
	return postfilter.PreemptWithStages(ctx, ev, cs, req, ev.cluster)
}
