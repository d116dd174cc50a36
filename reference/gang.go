package reference

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/actuation"
	"github.com/preemptbench/preemptbench/podinfo"
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

// PreemptPodGroup is PodGroupPostFilter for the request's PodGroup,
// actuated through cs. Not modelled (an Error decision says so): a
// CompositePodGroup preemptor and TopologyAwareWorkloadScheduling's
// placement algorithm, as in the upstream adapter.
func (ev *evaluator) preemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest) preempt.PodGroupDecision {
	ev = ev.at(&preempt.Request{Config: req.Config})
	d := preempt.PodGroupDecision{Victims: []preempt.Victim{}, Nominations: []preempt.Nomination{}}
	fail := func(err error) preempt.PodGroupDecision {
		d.Status, d.Message = preempt.Error, err.Error()
		return d
	}
	if err := req.Validate(); err != nil {
		return fail(err)
	}
	if u := preempt.GateGaps(req.Config, Impl{}.ModelledGates()); u != nil {
		return fail(u)
	}
	gates := req.Config.FeatureGates
	switch {
	case req.CompositePodGroup != nil:
		return fail(errors.New("a CompositePodGroup preemptor is not modelled by the reference yet"))
	case gates[topologyAwareGate]:
		return fail(errors.New("TopologyAwareWorkloadScheduling's placement algorithm is not modelled: gang preemption runs the default pod-group algorithm only"))
	}
	pg := req.PodGroup
	for _, p := range req.Pods {
		if name, _ := preempt.PodGroupName(p); name != pg.Name || p.Namespace != pg.Namespace {
			return fail(fmt.Errorf("member %s belongs to pod group %s/%s, not %s", preempt.Key(p.Namespace, p.Name), p.Namespace, name, preempt.Key(pg.Namespace, pg.Name)))
		}
		if ev.podByKey[podKey(p)] != nil {
			return fail(fmt.Errorf("member %s is also in the cluster", podKey(p)))
		}
		if u := preempt.VolumeAndClaimGaps(ev.cluster, p); u != nil {
			return fail(u)
		}
	}
	// The request's group replaces the cluster's of the same name.
	c := *ev.cluster
	c.PodGroups = []*preempt.PodGroup{pg}
	for _, other := range ev.cluster.PodGroups {
		if other.Namespace != pg.Namespace || other.Name != pg.Name {
			c.PodGroups = append(c.PodGroups, other)
		}
	}
	g := groupsFor(&c, gates, ev.bug)

	status, msg, placed, victims := ev.preemptGang(ctx, cs, g, req)
	d.Status, d.Message = status, podGroupPrefix+msg
	for i, p := range req.Pods {
		n := preempt.Nomination{Namespace: p.Namespace, Name: p.Name}
		if placed != nil {
			n.Node = placed[i]
		}
		d.Nominations = append(d.Nominations, n)
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

// gangVictims are the units a gang preempts.
type gangVictims struct {
	units            []*unit
	numPDBViolations int
}

// preemptGang is PodGroupEvaluator.Preempt: the status, its message, each
// member's node (nil for none: the members keep no nomination) and the
// victims.
func (ev *evaluator) preemptGang(ctx context.Context, cs kubernetes.Interface, g *groups, req *preempt.PodGroupRequest) (preempt.Code, string, []string, *gangVictims) {
	pg, members := req.PodGroup, req.Pods
	priority := preempt.PodGroupPriority(pg)
	if preemptionPolicy(pg, members, req.Config.FeatureGates[podGroupPreemptionPolicyGate]) == schedulingv1beta1.PreemptNever {
		return preempt.Unschedulable, msgPreemptionNeverRule, nil, nil
	}
	if ev.ongoingPreemption(g, members, priority) {
		nominated := make([]string, len(members))
		for i, p := range members {
			nominated[i] = p.Status.NominatedNodeName
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
	assignments, code, msg, err := world.scheduleGang(ctx, req)
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

	placed := make([]string, len(members))
	for _, a := range assignments {
		placed[a.index] = a.node
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

// preemptionPolicy is upstream's resolvePreemptionPolicy: the group's
// (PreemptLowerPriority when unset) under PodGroupPreemptionPolicy, else
// Never when any member says Never.
func preemptionPolicy(pg *preempt.PodGroup, members []*v1.Pod, groupPolicy bool) schedulingv1beta1.PreemptionPolicy {
	if groupPolicy {
		if pg.Spec.PreemptionPolicy != nil {
			return *pg.Spec.PreemptionPolicy
		}
		return schedulingv1beta1.PreemptLowerPriority
	}
	for _, p := range members {
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
	for _, m := range members {
		node := m.Status.NominatedNodeName
		if node == "" {
			continue
		}
		for _, p := range ev.bound[node] {
			if g.priority(p) < priority && podinfo.TerminatingByPreemption(p) {
				return true
			}
		}
		if ev.bug == OngoingOnFirstNominatedNode {
			return false
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

// scheduleGang is the pod-group scheduling function (schedule_one_podgroup.go's
// podGroupSchedulingDefaultAlgorithm) with the request's placement
// choosing the hosts: GangScheduling's PlacementFeasible before and after
// each member, every placement reverted on return. It returns the placed
// members, or the Unschedulable code and message of a failed gang.
func (w *evaluator) scheduleGang(ctx context.Context, req *preempt.PodGroupRequest) ([]assignment, preempt.Code, string, error) {
	pg, members := req.PodGroup, req.Pods
	// ScheduledPodsCount: the group's bound members left in the world
	// (the potential victims are gone).
	scheduled := 0
	for _, pods := range w.bound {
		for _, p := range pods {
			if name, ok := preempt.PodGroupName(p); ok && name == pg.Name && p.Namespace == pg.Namespace {
				scheduled++
			}
		}
	}
	minCount := 1 // GangScheduling's getMinCount: 1 for a basic group
	if pg.Spec.SchedulingPolicy.Gang != nil {
		minCount = int(preempt.PodGroupMinCount(pg))
	}
	feasible := func(remaining, scheduled int) (preempt.Code, string) {
		switch {
		case remaining+scheduled < minCount:
			return preempt.Unschedulable, fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining)
		case scheduled < minCount:
			return "Wait", fmt.Sprintf("minCount (%d) is not yet satisfied: %d scheduled, %d remaining", minCount, scheduled, remaining)
		}
		return preempt.Success, ""
	}
	unschedulable := func(reason string) ([]assignment, preempt.Code, string, error) {
		msg := msgGroupUnschedulable
		if reason != "" {
			msg += ", " + reason
		}
		return nil, preempt.Unschedulable, msg, nil
	}
	remaining := len(members)
	code, reason := feasible(remaining, scheduled)
	if code == preempt.Unschedulable {
		return unschedulable(reason)
	}

	view := &gangView{w: w.clone(), states: map[*v1.Pod]*cycleState{}}
	placement := req.Placement
	if placement == nil {
		placement = preempt.FirstFit
	}
	nodes, err := placement(ctx, view, members)
	if err != nil {
		return nil, "", "", err
	}
	var out []assignment
	anyScheduled := false
	for i, p := range members {
		remaining--
		placed := i < len(nodes) && nodes[i] != ""
		if placed {
			scheduled++
			out = append(out, assignment{index: i, pod: view.assumed[p], node: nodes[i], state: view.states[p]})
		}
		code, reason = feasible(remaining, scheduled)
		if code == preempt.Unschedulable {
			break
		}
		anyScheduled = anyScheduled || placed
	}
	switch {
	case code != preempt.Success:
		return unschedulable(reason)
	case !anyScheduled:
		return unschedulable("")
	}
	return out, preempt.Success, "", nil
}

// gangView is preempt.PlacementView over a world: each member's PreFilter
// runs once, when it is first tried, with the members placed before it
// there; a placed member is bound to its node in the world and no longer
// waits on its nominated node.
type gangView struct {
	w       *evaluator
	states  map[*v1.Pod]*cycleState
	assumed map[*v1.Pod]*v1.Pod
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
	v.state(pod)
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	if v.assumed == nil {
		v.assumed = map[*v1.Pod]*v1.Pod{}
	}
	v.assumed[pod] = assumed
	v.w.bound[node] = append(v.w.bound[node], assumed)
	v.w.node(node).addPod(assumed)
	if nn := pod.Status.NominatedNodeName; nn != "" {
		var kept []*v1.Pod
		for _, p := range v.w.nominated[nn] {
			if p.UID != pod.UID {
				kept = append(kept, p)
			}
		}
		v.w.nominated[nn] = kept
	}
	return true, nil
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
