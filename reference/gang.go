package reference

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.PodGroupPreempter = gangEvaluator{}

// gangEvaluator is the reference's evaluator with gang preemption
// (preempt.PodGroupPreempter).
type gangEvaluator struct{ *evaluator }

// PreemptPodGroup is gang preemption: PodGroupPostFilter.
func (g gangEvaluator) PreemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest) preempt.PodGroupDecision {
	return g.preemptPodGroup(ctx, cs, req)
}

// Gang preemption: v1.37.2's DefaultPreemption.PodGroupPostFilter
// (PodGroupEvaluator.Preempt, podgrouppreemption.go) with the pod-group
// scheduling function of schedule_one_podgroup.go around the contract's
// placement (preempt.FirstFit unless the request names another).

// Messages of PodGroupEvaluator.Preempt and the scheduling function.
const (
	podGroupPrefix         = "pod group preemption: "
	msgOngoing             = "ongoing preemption on nominated nodes"
	msgNoVictimsForGroup   = "No preemption victims found for incoming preemptor"
	msgGroupUnschedulable  = "pod group is unschedulable"
	msgPreemptionNeverRule = "not eligible due to preemptionPolicy=Never."
)

// PreemptPodGroup is PodGroupPostFilter for the request's PodGroup or
// CompositePodGroup, actuated through cs. Not modelled (an Error decision
// says so): TopologyAwareWorkloadScheduling's placements of a group with
// a topology constraint (preempt.PodGroupRequest.Tree), as in the
// upstream adapter.
func (ev *evaluator) preemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest) preempt.PodGroupDecision {
	ev = ev.at(&preempt.Request{Config: req.Config, Now: req.Now})
	d := preempt.PodGroupDecision{Victims: []preempt.Victim{}, Nominations: []preempt.Nomination{}}
	tree, err := ev.checkGang(req)
	if err != nil {
		d.Status, d.Message = preempt.Error, err.Error()
		return d
	}
	// The request's groups replace the cluster's of the same names.
	g := groupsFor(req.WithGroups(ev.cluster), req.Config.FeatureGates, &ev.stages)

	status, msg, placed, victims := ev.preemptGang(ctx, cs, g, req, tree)
	d.Status, d.Message = status, podGroupPrefix+msg
	if status == preempt.Success {
		d.Nominations = nominations(req.Pods, placed)
	}
	if status == preempt.Success && victims != nil {
		d.Victims = flatten(g, victims.units)
		d.NumPDBViolations = victims.numPDBViolations
		for _, u := range victims.units {
			if u.isGroup() {
				d.NumPodGroupDisruptions++
			}
		}
	}
	return d
}

// checkGang is what the reference checks of a gang request before it
// schedules or preempts for it, and the gang's tree.
func (ev *evaluator) checkGang(req *preempt.PodGroupRequest) (*preempt.GroupNode, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if u := preempt.GateGaps(req.Config, Impl{}.ModelledGates()); u != nil {
		return nil, u
	}
	tree, err := req.Tree(ev.cluster)
	if err != nil {
		return nil, err
	}
	for _, p := range req.Pods {
		if ev.podByKey[podKey(p)] != nil {
			return nil, fmt.Errorf("member %s is also in the cluster", podKey(p))
		}
		if u := gangMemberGaps(ev.cluster, p); u != nil {
			return nil, u
		}
	}
	return tree, nil
}

// gangMemberGaps is what the reference refuses of a gang's member: what
// it refuses of a single pod (Impl.Unmodelled). preempt.DRACycleGaps'
// PostFilter part is DynamicResources' PodGroupPostFilter's too, which
// runs deallocateOrDeletePodClaims for each member before
// DefaultPreemption; its unreserving of PodGroup claims needs
// DRAWorkloadResourceClaims, off by default and refused as a gate.
// Extended resources a DeviceClass backs (the claim DynamicResources
// makes for them, allocated in flight by Reserve: gang_reserve.go) and
// claims allocated with binding conditions (their timeout read at the
// request's Now, as upstream reads its clock through the whole cycle)
// are modelled.
func gangMemberGaps(c *preempt.Cluster, p *v1.Pod) *preempt.Unmodelled {
	return (Impl{}).Unmodelled(c, p)
}

// nominations is PodGroupPostFilterResult's NominatingInfos on Success,
// in the members' order: every member with a node in placed (the placed
// members; on an ongoing preemption every member, with its current
// nomination or "").
func nominations(members []*v1.Pod, placed []*string) []preempt.Nomination {
	out := []preempt.Nomination{}
	for i, p := range members {
		if placed != nil && placed[i] != nil {
			out = append(out, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: *placed[i]})
		}
	}
	return out
}

// SchedulePodGroup is the pod-group cycle's scheduling attempt on the
// cluster as it is: the root's algorithm (scheduleGang's, nothing
// removed) and the members it places, those of groups that succeeded
// under ancestors that succeeded (what submitPodGroupAlgorithmResult
// binds).
func (g gangEvaluator) SchedulePodGroup(ctx context.Context, req *preempt.PodGroupRequest) preempt.PodGroupAttempt {
	ev := g.at(&preempt.Request{Config: req.Config, Now: req.Now})
	tree, err := ev.checkGang(req)
	if err != nil {
		return preempt.PodGroupAttempt{Status: preempt.Error, Message: err.Error()}
	}
	world := ev.world(map[*v1.Pod]bool{}, req.Pods)
	s, root, err := world.runGang(ctx, req, tree)
	if err != nil {
		return preempt.PodGroupAttempt{Status: preempt.Error, Message: err.Error()}
	}
	if root.status.code != preempt.Success {
		// A member tried had its PreFilter run (gangView.state) as far
		// as DynamicResources', which writes the pod-group state its
		// PodGroupPostFilter reads: a volume plugin's PreFilter, before
		// it, may have rejected every member tried. The placement may
		// have filtered members kube-scheduler never tries (after its
		// group could no longer meet its minCount): only the tried count.
		preFiltered := false
		for _, p := range s.tried {
			preFiltered = preFiltered || s.view.state(p).reachedDRA()
		}
		return preempt.PodGroupAttempt{Status: root.status.code, Message: root.status.message(), PreFiltered: preFiltered}
	}
	nodes := make([]string, len(req.Pods))
	var bind func(n *preempt.GroupNode)
	bind = func(n *preempt.GroupNode) {
		r := s.results[n]
		if r == nil || r.status.code != preempt.Success {
			return
		}
		for _, a := range r.placed {
			nodes[a.index] = a.node
		}
		for _, c := range n.Children {
			bind(c)
		}
	}
	bind(tree)
	at := preempt.PodGroupAttempt{Status: preempt.Success, PreFiltered: true}
	for i, p := range req.Pods {
		if nodes[i] != "" {
			at.Placement = append(at.Placement, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: nodes[i]})
		}
	}
	return at
}

// gangVictims are the units a gang preempts.
type gangVictims struct {
	units            []*unit
	numPDBViolations int
}

// preemptGang is PodGroupEvaluator.Preempt: the status, its message, each
// nominated member's node (nil for a member not nominated; nil for none)
// and the victims.
func (ev *evaluator) preemptGang(ctx context.Context, cs kubernetes.Interface, g *groups, req *preempt.PodGroupRequest, tree *preempt.GroupNode) (preempt.Code, string, []*string, *gangVictims) {
	members := req.Pods
	priority := req.PreemptorPriority()
	if preemptionPolicy(req, req.Config.FeatureGates[podGroupPreemptionPolicyGate]) == schedulingv1beta1.PreemptNever {
		return preempt.Unschedulable, msgPreemptionNeverRule, nil, nil
	}
	if ev.ongoingPreemption(g, members, priority) {
		nominated := make([]*string, len(members))
		for i, p := range members {
			nominated[i] = &p.Status.NominatedNodeName
		}
		return preempt.Success, msgOngoing, nominated, nil
	}

	// The domain is the whole cluster: every unit of every node.
	var names []string
	for _, n := range ev.nodes {
		names = append(names, n.Name)
	}
	var potential []*unit
	for _, u := range ev.unitsOn(g, names, req.Now) {
		if u.priority < priority {
			potential = append(potential, u)
		}
	}
	if len(potential) == 0 {
		return preempt.UnschedulableAndUnresolvable, msgNoVictimsForGroup, nil, nil
	}

	// The world without the potential victims, where the members are
	// placed.
	gone := map[*v1.Pod]bool{}
	for _, u := range potential {
		for _, p := range u.pods {
			gone[p] = true
		}
	}
	world := ev.world(gone, members)
	assignments, code, msg, err := world.scheduleGang(ctx, req, tree)
	if err != nil {
		return preempt.Error, err.Error(), nil, nil
	}
	if code != preempt.Success {
		return code, msg, nil, nil
	}

	sortUnits(potential)
	violating, counts, nonViolating := ev.splitUnitsByPDBViolation(potential)
	var chosen []*unit
	numViolations := 0
	for i, u := range violating {
		if !world.reprieveForGang(u, assignments) {
			chosen = append(chosen, u)
			numViolations += counts[i]
		}
	}
	for _, u := range nonViolating {
		if !world.reprieveForGang(u, assignments) {
			chosen = append(chosen, u)
		}
	}
	sortUnits(chosen)

	placed := make([]*string, len(members))
	for _, a := range assignments {
		placed[a.index] = &a.node
	}
	var pods []*v1.Pod
	for _, u := range chosen {
		pods = append(pods, u.pods...)
	}
	if err := actuateGang(ctx, cs, pods, ev.lowerNominated(gangCandidate, priority), req.Config.Synchronous); err != nil {
		return preempt.Error, err.Error(), placed, nil
	}
	return preempt.Success, fmt.Sprintf("found a placement for podgroup, preempting %d victims", len(pods)), placed,
		&gangVictims{units: chosen, numPDBViolations: numViolations}
}

// preemptionPolicy is upstream's resolvePreemptionPolicy (and
// resolveCompositePreemptionPolicy): the group's (PreemptLowerPriority
// when unset) under PodGroupPreemptionPolicy, else Never when any member
// says Never.
func preemptionPolicy(req *preempt.PodGroupRequest, groupPolicy bool) schedulingv1beta1.PreemptionPolicy {
	if groupPolicy {
		if cpg := req.CompositePodGroup; cpg != nil {
			if cpg.Spec.PreemptionPolicy != nil && *cpg.Spec.PreemptionPolicy != schedulingv1alpha3.PreemptLowerPriority {
				return schedulingv1beta1.PreemptNever
			}
			return schedulingv1beta1.PreemptLowerPriority
		}
		if req.PodGroup.Spec.PreemptionPolicy != nil {
			return *req.PodGroup.Spec.PreemptionPolicy
		}
		return schedulingv1beta1.PreemptLowerPriority
	}
	for _, p := range req.Pods {
		if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == v1.PreemptNever {
			return schedulingv1beta1.PreemptNever
		}
	}
	return schedulingv1beta1.PreemptLowerPriority
}

// ongoingPreemption is upstream's isOngoingPreemption: a pod terminating
// by preemption, below the gang's priority as a victim, on a node some
// member is nominated to.
func (ev *evaluator) ongoingPreemption(g *groups, members []*v1.Pod, priority int32) bool {
	for _, node := range ev.stages.OngoingNodes(members) {
		for _, p := range ev.bound[node] {
			if g.priority(p) < priority && podinfo.TerminatingByPreemption(p) {
				return true
			}
		}
	}
	return false
}

// world is the evaluator of the cluster with the pods of gone removed,
// where the gang's nominated members wait on their nominated nodes:
// PreFilter, the node states and the nominated pods all read it.
func (ev *evaluator) world(gone map[*v1.Pod]bool, members []*v1.Pod) *evaluator {
	w := *ev
	w.bound = map[string][]*v1.Pod{}
	for node, pods := range ev.bound {
		for _, p := range pods {
			if !gone[p] {
				w.bound[node] = append(w.bound[node], p)
			}
		}
	}
	// The node states are the snapshot's NodeInfos after RemovePod of
	// each potential victim: a removed pod frees its host ports even when
	// a pod left on the node declares the same one (HostPortInfo is a set).
	w.states = map[string]*nodeState{}
	for _, n := range ev.nodes {
		st := ev.nodeState(n.Name)
		for _, p := range ev.bound[n.Name] {
			if gone[p] {
				_ = st.removePod(p)
			}
		}
		w.states[n.Name] = st
	}
	w.nominated = map[string][]*v1.Pod{}
	for node, pods := range ev.nominated {
		w.nominated[node] = append([]*v1.Pod(nil), pods...)
	}
	for _, m := range members {
		if node := m.Status.NominatedNodeName; node != "" {
			w.nominated[node] = append(w.nominated[node], nominatorStub(m))
		}
	}
	return &w
}

// nominatorStub is what the scheduler's NominatedPodsForNode gives for a
// member of the gang being scheduled: the nominator keeps a reference
// (name, namespace, UID, scheduling group) and looks the pod up in the
// queue, where a group in flight is not, so it makes a pod of the
// reference alone (nominatedPodToInfo): priority 0, no containers. A
// member nominated from an earlier attempt thus takes a pod slot on its
// node, requests nothing, and counts only for members of priority 0 or
// less (docs/upstream-findings.md).
func nominatorStub(m *v1.Pod) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID},
		Spec: v1.PodSpec{SchedulingGroup: m.Spec.SchedulingGroup}}
}

// clone is w with its own bound and nominated lists, to change.
func (w *evaluator) clone() *evaluator {
	out := *w
	out.bound, out.nominated = map[string][]*v1.Pod{}, map[string][]*v1.Pod{}
	for node, pods := range w.bound {
		out.bound[node] = append([]*v1.Pod(nil), pods...)
	}
	for node, pods := range w.nominated {
		out.nominated[node] = append([]*v1.Pod(nil), pods...)
	}
	out.states = map[string]*nodeState{}
	for node, st := range w.states {
		out.states[node] = st.clone()
	}
	return &out
}

// node is the world's state of node.
func (w *evaluator) node(name string) *nodeState { return w.states[name] }

// assignment is a placed member (upstream's ProposedAssignment): its
// place in the request, its node and the cycle state its PreFilter made
// in the scheduling function.
type assignment struct {
	index int
	pod   *v1.Pod
	node  string
	state *cycleState
}

// pgStatus is a status of the pod-group scheduling function: its code
// (Success, Unschedulable, or "Wait" from PlacementFeasible), its
// reasons, and whether it carries the scheduler's errPodGroupUnschedulable
// ("pod group is unschedulable"), which then leads its message and is all
// Status.AsError gives.
type pgStatus struct {
	code    preempt.Code
	reasons []string
	err     bool
}

const codeWait preempt.Code = "Wait"

func (s pgStatus) message() string {
	r := s.reasons
	if s.err {
		r = append([]string{msgGroupUnschedulable}, r...)
	}
	return strings.Join(r, ", ")
}

// asError is Status.AsError's text.
func (s pgStatus) asError() string {
	if s.err {
		return msgGroupUnschedulable
	}
	return s.message()
}

// placementFeasible is GangScheduling's PlacementFeasible for a group of
// minCount: Unschedulable when the members (or child groups) left cannot
// reach it, Wait until they have, Success after.
func placementFeasible(minCount, remaining, scheduled int) pgStatus {
	switch {
	case remaining+scheduled < minCount:
		return pgStatus{code: preempt.Unschedulable, reasons: []string{fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining)}}
	case scheduled < minCount:
		return pgStatus{code: codeWait, reasons: []string{fmt.Sprintf("minCount (%d) is not yet satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining)}}
	}
	return pgStatus{code: preempt.Success}
}

// groupResult is a group's podGroupAlgorithmResult: its status, whether it
// scheduled a member, and its placed members; a group that failed keeps
// the members placed before it failed (upstream reverts their
// assumption, not their results).
type groupResult struct {
	status pgStatus
	any    bool
	placed []assignment
}

// gangScheduler runs the scheduler's pod-group algorithms over one view.
type gangScheduler struct {
	view      *gangView
	req       *preempt.PodGroupRequest
	placement preempt.Placement
	// tas is TopologyAwareWorkloadScheduling: every group then goes
	// through the placement algorithm, here its one placement of every
	// node (preempt.PodGroupRequest.Tree refuses topology constraints).
	tas     bool
	results map[*preempt.GroupNode]*groupResult
	// tried are the members podGroupSchedulingDefaultAlgorithm
	// evaluates: in each group's order until PlacementFeasible says the
	// group cannot meet its minCount, and none of a group its composite
	// parent stopped before. Only their PreFilters run.
	tried []*v1.Pod
}

// scheduleGang is the pod-group scheduling function the scheduler hands
// PodGroupPostFilter (podGroupCycle's closure around
// runRootSchedulingAlgorithm, schedule_one_podgroup.go) with the
// request's placement choosing the hosts: a PodGroup through
// podGroupSchedulingDefaultAlgorithm (GangScheduling's PlacementFeasible
// before and after each member), a CompositePodGroup through
// compositePodGroupSchedulingDefaultAlgorithm over its children in
// order (PlacementFeasible over the children), each under
// TopologyAwareWorkloadScheduling inside the placement algorithm of its
// one placement; every placement reverted on return. It returns the
// proposals of every group evaluated (failed child groups' too, as the
// closure gathers every result: docs/upstream-findings.md), or the
// Unschedulable code and message of a failed gang.
func (w *evaluator) scheduleGang(ctx context.Context, req *preempt.PodGroupRequest, tree *preempt.GroupNode) ([]assignment, preempt.Code, string, error) {
	s, root, err := w.runGang(ctx, req, tree)
	if err != nil {
		return nil, "", "", err
	}
	if root.status.code != preempt.Success {
		return nil, preempt.Unschedulable, root.status.message(), nil
	}
	var out []assignment
	tree.Walk(func(n *preempt.GroupNode) {
		if r := s.results[n]; r != nil && w.stages.KeepsProposals(r.status.code == preempt.Success) {
			out = append(out, r.placed...)
		}
	})
	return out, preempt.Success, "", nil
}

// runGang is runRootSchedulingAlgorithm on w with the request's
// placement: every group's result, and the root's (Unschedulable when it
// succeeded without scheduling a member).
func (w *evaluator) runGang(ctx context.Context, req *preempt.PodGroupRequest, tree *preempt.GroupNode) (*gangScheduler, *groupResult, error) {
	world := w.clone()
	world.reserved = &gangReserved{assumed: map[*v1.Pod]bool{}, pvs: map[string]*v1.PersistentVolume{}, pvcs: map[string]*v1.PersistentVolumeClaim{},
		pending: map[types.UID]*resourcev1.AllocationResult{}, pendingIn: map[types.UID]string{}}
	s := &gangScheduler{
		view:      &gangView{w: world, states: map[*v1.Pod]*cycleState{}},
		req:       req,
		placement: req.Placement,
		tas:       req.Config.FeatureGates[preempt.TopologyAwareGate],
		results:   map[*preempt.GroupNode]*groupResult{},
	}
	if s.placement == nil {
		s.placement = preempt.FirstFit
	}
	root, err := s.group(ctx, tree)
	if err != nil {
		return nil, nil, err
	}
	if root.status.code == preempt.Success && !root.any {
		// The framework needs a scheduled pod for a success.
		root.status = pgStatus{code: preempt.Unschedulable, err: true}
	}
	return s, root, nil
}

// group is podGroupSchedulingRecursiveAlgorithm for n.
func (s *gangScheduler) group(ctx context.Context, n *preempt.GroupNode) (*groupResult, error) {
	mark := len(s.view.undo)
	r := &groupResult{}
	s.results[n] = r
	var err error
	if n.CompositePodGroup != nil {
		err = s.composite(ctx, n, r)
	} else {
		err = s.leaf(ctx, n, r)
	}
	if err != nil {
		return nil, err
	}
	if r.status.code == codeWait {
		r.status = pgStatus{code: preempt.Unschedulable, reasons: r.status.reasons, err: true}
	}
	if r.status.code != preempt.Success {
		s.view.revert(mark)
		r.any = false
		if s.tas || n.CompositePodGroup != nil {
			// The placement algorithm's report when no placement works.
			r.status = pgStatus{code: preempt.Unschedulable, err: true,
				reasons: []string{"0/1 placements are available, first placement status: " + r.status.asError()}}
		}
	}
	return r, nil
}

// leaf is podGroupSchedulingDefaultAlgorithm for the PodGroup of n.
func (s *gangScheduler) leaf(ctx context.Context, n *preempt.GroupNode, r *groupResult) error {
	pg := n.PodGroup
	// ScheduledPodsCount: the group's bound members left in the world
	// (the potential victims are gone).
	scheduled := 0
	for _, pods := range s.view.w.bound {
		for _, p := range pods {
			if name, ok := preempt.PodGroupName(p); ok && name == pg.Name && p.Namespace == pg.Namespace {
				scheduled++
			}
		}
	}
	minCount := n.MinCount()
	remaining := len(n.Members)
	r.status = placementFeasible(minCount, remaining, scheduled)
	if r.status.code == preempt.Unschedulable {
		r.status.err = true
		return nil
	}
	members := make([]*v1.Pod, len(n.Members))
	for i, m := range n.Members {
		members[i] = s.req.Pods[m]
	}
	nodes, err := s.placement(ctx, s.view, members)
	if err != nil {
		return err
	}
	for i, p := range members {
		s.tried = append(s.tried, p)
		remaining--
		placed := i < len(nodes) && nodes[i] != ""
		if placed {
			scheduled++
			r.placed = append(r.placed, assignment{index: n.Members[i], pod: s.view.assumed[p], node: nodes[i], state: s.view.states[p]})
		}
		r.status = placementFeasible(minCount, remaining, scheduled)
		if r.status.code == preempt.Unschedulable {
			break
		}
		r.any = r.any || placed
	}
	return nil
}

// composite is compositePodGroupSchedulingDefaultAlgorithm for the
// CompositePodGroup of n: its children in order, PlacementFeasible over
// them (the children already scheduled are not counted: upstream starts
// at 0).
func (s *gangScheduler) composite(ctx context.Context, n *preempt.GroupNode, r *groupResult) error {
	minCount := n.MinCount()
	remaining, scheduled := len(n.Children), 0
	r.status = placementFeasible(minCount, remaining, scheduled)
	if r.status.code == preempt.Unschedulable {
		return nil
	}
	for _, c := range s.view.w.stages.ChildOrder(n.Children) {
		cr, err := s.group(ctx, c)
		if err != nil {
			return err
		}
		r.any = r.any || cr.any
		remaining--
		if cr.status.code == preempt.Success {
			scheduled++
		}
		r.status = placementFeasible(minCount, remaining, scheduled)
		if r.status.code == preempt.Unschedulable {
			break
		}
	}
	return nil
}

// gangView is preempt.PlacementView over a world: each member's PreFilter
// runs once, when it is first tried, with the members placed before it
// there; a placed member is bound to its node in the world and no longer
// waits on its nominated node, until its group fails and is reverted.
type gangView struct {
	w       *evaluator
	states  map[*v1.Pod]*cycleState
	assumed map[*v1.Pod]*v1.Pod
	undo    []func()
}

func (v *gangView) Nodes() []string {
	var out []string
	for _, n := range v.w.nodes {
		out = append(out, n.Name)
	}
	return out
}

func (v *gangView) state(pod *v1.Pod) *cycleState {
	if v.states[pod] == nil {
		v.states[pod] = v.w.preFilter(pod)
	}
	return v.states[pod]
}

func (v *gangView) Fits(_ context.Context, pod *v1.Pod, node string) (bool, error) {
	if v.w.nodeByName[node] == nil {
		return false, nil
	}
	return v.w.filtersWithNominatedPods(pod, v.state(pod), v.w.node(node).clone()).IsSuccess(), nil
}

func (v *gangView) Place(_ context.Context, pod *v1.Pod, node string) (bool, error) {
	cs := v.state(pod)
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	if v.assumed == nil {
		v.assumed = map[*v1.Pod]*v1.Pod{}
	}
	v.assumed[pod] = assumed
	v.w.bound[node] = append(v.w.bound[node], assumed)
	v.w.node(node).addPod(assumed)
	nn := pod.Status.NominatedNodeName
	var dropped []*v1.Pod
	if nn != "" {
		var kept []*v1.Pod
		for _, p := range v.w.nominated[nn] {
			if p.UID != pod.UID {
				kept = append(kept, p)
			} else {
				dropped = append(dropped, p)
			}
		}
		v.w.nominated[nn] = kept
	}
	unreserve := v.w.reserve(assumed, cs, v.w.nodeByName[node])
	v.w.reserved.assumed[assumed] = true
	v.undo = append(v.undo, func() {
		delete(v.w.reserved.assumed, assumed)
		unreserve()
		v.w.bound[node] = without(v.w.bound[node], assumed)
		_ = v.w.node(node).removePod(assumed)
		if nn != "" {
			v.w.nominated[nn] = append(v.w.nominated[nn], dropped...)
		}
	})
	return true, nil
}

// revert takes back the placements made since mark (the scheduler's
// revert functions of a group that failed).
func (v *gangView) revert(mark int) {
	for i := len(v.undo) - 1; i >= mark; i-- {
		v.undo[i]()
	}
	v.undo = v.undo[:mark]
}

// reprieveForGang is selectVictimsOnDomain's reprieveVictim on the world
// w (potential victims removed): put u's pods back (through every placed
// member's AddPod), then check each placed member in order on its node,
// the members before it assumed there. It reports whether the gang still
// fits; when it does not, u's pods are removed again.
func (w *evaluator) reprieveForGang(u *unit, assignments []assignment) bool {
	for _, p := range u.pods {
		node := p.Spec.NodeName
		w.bound[node] = append(append([]*v1.Pod(nil), w.bound[node]...), p)
		w.node(node).addPod(p)
		for _, a := range assignments {
			a.state.addPod(a.pod, p, w.node(node))
		}
	}
	var assumed []assignment
	fits := true
	for _, a := range assignments {
		if !w.filtersWithNominatedPods(a.pod, a.state, w.node(a.node)).IsSuccess() {
			fits = false
			break
		}
		// Assumed for the members after it; forgotten below.
		w.node(a.node).addPod(a.pod)
		assumed = append(assumed, a)
	}
	if !fits {
		for _, p := range u.pods {
			node := p.Spec.NodeName
			w.bound[node] = without(w.bound[node], p)
			_ = w.node(node).removePod(p)
			for _, a := range assignments {
				a.state.removePod(a.pod, p, w.node(node))
			}
		}
	}
	for i := len(assumed) - 1; i >= 0; i-- {
		_ = w.node(assumed[i].node).removePod(assumed[i].pod)
	}
	return fits
}

func without(pods []*v1.Pod, gone *v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if p != gone {
			out = append(out, p)
		}
	}
	return out
}

// gangCandidate is the name PodGroupEvaluator.Preempt gives the candidate
// it actuates: the domain, not a node.
const gangCandidate = "cluster"

// lowerNominated is the executor's getLowerPriorityNominatedPods for a
// candidate named node: the pods nominated to node (in nominator order)
// whose own priority is below priority (the gang's). For a gang the name
// is gangCandidate, so only the nominations to a node really named
// "cluster" are cleared, wherever the gang goes
// (docs/upstream-findings.md, docs/divergences.md). A member of the gang
// nominated there is in no queue: the nominator gives a stub without a
// nominated node, which clearNominatedNodeName skips, so members are left
// out here.
func (ev *evaluator) lowerNominated(node string, priority int32) []*v1.Pod {
	var out []*v1.Pod
	for _, np := range ev.nominated[node] {
		if corev1helpers.PodPriority(np) < priority {
			out = append(out, np)
		}
	}
	return out
}

// actuateGang is the executor's prepareCandidate or
// prepareCandidateAsync for the candidate "cluster", with
// lowerNominated the pods whose nominations it clears. Synchronous: every
// victim not already terminating is preempted, the first error failing
// the preemption (nothing cleared then); then the nominations are
// cleared (errors ignored), even when no victim was left to preempt.
// Asynchronous: nothing at all when no victim is left to preempt;
// otherwise the nominations are cleared first, then all victims but the
// last, stopping at the first error, then the last unless one failed
// (errors are the executor's to log). No member is nominated here (the
// decision's nominations are the scheduler's to apply).
func actuateGang(ctx context.Context, cs kubernetes.Interface, victims, lowerNominated []*v1.Pod, synchronous bool) error {
	if cs == nil {
		return nil // decide without acting (preempt.PodGroupPreempter)
	}
	var live []*v1.Pod
	for _, v := range victims {
		if v.DeletionTimestamp == nil {
			live = append(live, v)
		}
	}
	if synchronous {
		for _, v := range live {
			if err := preemptForGroup(ctx, cs, v); err != nil {
				return err
			}
		}
		_ = actuation.ClearNominations(ctx, cs, lowerNominated)
		return nil
	}
	if len(live) == 0 {
		return nil
	}
	_ = actuation.ClearNominations(ctx, cs, lowerNominated)
	for i, v := range live {
		if err := preemptForGroup(ctx, cs, v); err != nil && i < len(live)-1 {
			break
		}
	}
	return nil
}

// preemptForGroup is the executor's PreemptPod for a pod-group preemptor:
// the DisruptionTarget condition, then the delete; a pod already gone is
// no error.
func preemptForGroup(ctx context.Context, cs kubernetes.Interface, victim *v1.Pod) error {
	return actuation.PreemptPodAs(ctx, cs, v1.DefaultSchedulerName, "podgroup", victim)
}
