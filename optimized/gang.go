package optimized

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

// Gang preemption: v1.37.2's DefaultPreemption.PodGroupPostFilter
// (PodGroupEvaluator.Preempt, podgrouppreemption.go), the reference's
// preemptGang (reference/gang.go) on this package's flat state. The
// world the members are placed in is the snapshot's per-node sums with
// every potential victim taken off (gangWorld), the members' filters are
// each member's decision (its PreFilter state; the topology plugins'
// made over the world, gang_affinity.go and gang_spread.go), and the
// reprieve rechecks the nodes a unit's pods come back to, or every
// assignment node when a placed member's topology counts moved: whether
// the gang still fits is a conjunction of per-node checks.
//
// A CompositePodGroup preemptor and TopologyAwareWorkloadScheduling's
// placement are errors, as in the reference.

var _ preempt.PodGroupPreempter = (*evaluator)(nil)

// Messages of PodGroupEvaluator.Preempt and the scheduling function (the
// reference's).
const (
	gangPrefix             = "pod group preemption: "
	msgGangOngoing         = "ongoing preemption on nominated nodes"
	msgNoVictimsForGroup   = "No preemption victims found for incoming preemptor"
	msgGroupUnschedulable  = "pod group is unschedulable"
	msgPreemptionNeverRule = "not eligible due to preemptionPolicy=Never."
	podGroupPolicyGate     = "PodGroupPreemptionPolicy"
	topologyAwareGate      = "TopologyAwareWorkloadScheduling"
	// gangCandidate is the candidate PodGroupEvaluator.Preempt actuates:
	// the nominations it clears are those to a node named so.
	gangCandidate = "cluster"
	// placementsReport leads the placement algorithm's report of a failed
	// group under TopologyAwareWorkloadScheduling (its one placement).
	placementsReport = "0/1 placements are available, first placement status: "
)

// PreemptPodGroup is PodGroupPostFilter for the request's PodGroup or
// CompositePodGroup (gang_composite.go), actuated through cs.
func (ev *evaluator) PreemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest) preempt.PodGroupDecision {
	ev = ev.at(&preempt.Request{Config: req.Config})
	d := preempt.PodGroupDecision{Victims: []preempt.Victim{}, Nominations: []preempt.Nomination{}}
	tree, err := ev.checkGang(req)
	if err != nil {
		d.Status, d.Message = preempt.Error, err.Error()
		return d
	}
	s := ev.s
	if ev.gang == nil {
		ev.gang = &gangWorld{}
	}
	w := ev.gang
	status, msg, placed, ok := w.preempt(ctx, ev, cs, req, tree)
	d.Status, d.Message = status, gangPrefix+msg
	if status == preempt.Success {
		// PodGroupPostFilterResult's NominatingInfos: the placed members
		// (every member on an ongoing preemption, nominated or "").
		for i, p := range req.Pods {
			if placed != nil && (placed[i] != "" || !ok) {
				d.Nominations = append(d.Nominations, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: placed[i]})
			}
		}
	}
	if status == preempt.Success && ok {
		recs := s.victim
		if w.g != nil {
			recs = w.g.victim
		}
		for i := range w.chosen {
			r := &w.chosen[i]
			for _, p := range w.unitPods(r) {
				d.Victims = append(d.Victims, recs[p])
			}
			if r.rank >= 2 {
				d.NumPodGroupDisruptions++
			}
		}
		d.NumPDBViolations = w.numViolations
	}
	w.release()
	return d
}

// checkGang is what optimized checks of a gang request before it
// schedules or preempts for it, and the gang's tree.
func (ev *evaluator) checkGang(req *preempt.PodGroupRequest) (*preempt.GroupNode, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if u := preempt.GateGaps(req.Config, Impl{}.ModelledGates()); u != nil {
		return nil, u
	}
	tree, err := req.Tree(ev.s.cluster)
	if err != nil {
		return nil, err
	}
	s := ev.s
	for _, p := range req.Pods {
		if _, in := s.podIndex[podKey{p.Namespace, p.Name}]; in {
			return nil, fmt.Errorf("member %s is also in the cluster", preempt.Key(p.Namespace, p.Name))
		}
		if u := gangMemberGaps(s.cluster, p); u != nil {
			return nil, u
		}
	}
	return tree, nil
}

// SchedulePodGroup is the pod-group cycle's scheduling attempt on the
// cluster as it is: the scheduling function of PreemptPodGroup with no
// potential victim removed, and the members it places in groups that
// succeeded under ancestors that succeeded (those the scheduler binds).
func (ev *evaluator) SchedulePodGroup(ctx context.Context, req *preempt.PodGroupRequest) preempt.PodGroupAttempt {
	ev = ev.at(&preempt.Request{Config: req.Config})
	tree, err := ev.checkGang(req)
	if err != nil {
		return preempt.PodGroupAttempt{Status: preempt.Error, Message: err.Error()}
	}
	if ev.gang == nil {
		ev.gang = &gangWorld{}
	}
	w := ev.gang
	defer w.release()
	w.s = ev.s
	w.g = w.gangGroups(ev, req)
	w.setMembers(ev, req.Pods, req.Now.UnixNano())
	w.potential = w.potential[:0]
	w.buildWorld()
	var nodes []string
	var code preempt.Code
	var msg string
	if req.CompositePodGroup != nil {
		w.attempted = len(req.Pods) // DynamicResources' PodGroupPostFilter skips a composite
		nodes, code, msg, err = w.scheduleComposite(ctx, req, tree)
		if err == nil && code == preempt.Success {
			for _, i := range w.unbound {
				nodes[i] = ""
			}
		}
	} else {
		nodes, code, msg, err = w.scheduleGang(ctx, req)
	}
	if err != nil {
		return preempt.PodGroupAttempt{Status: preempt.Error, Message: err.Error()}
	}
	if code != preempt.Success {
		// A member tried had its PreFilter run (gangPreFilter); the
		// placement tries members kube-scheduler does not, after its
		// group could no longer meet its minCount (w.attempted).
		preFiltered := false
		for i := range w.tried {
			preFiltered = preFiltered || (i < w.attempted && w.volumePreFiltered(i))
		}
		return preempt.PodGroupAttempt{Status: code, Message: msg, PreFiltered: preFiltered}
	}
	at := preempt.PodGroupAttempt{Status: preempt.Success, PreFiltered: true}
	for i, p := range req.Pods {
		if nodes[i] != "" {
			at.Placement = append(at.Placement, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: nodes[i]})
		}
	}
	return at
}

// gangWorld is one gang request's state, kept by the evaluator for the
// next: the members' decisions, the world's per-node state (the
// snapshot's with the potential victims off), the placement and the
// reprieve.
type gangWorld struct {
	s       *Snapshot
	g       *groupView
	members []*v1.Pod
	dec     []*decision
	req     [][]int64            // member -> its placed requests, per dimension
	ports   [][]podinfo.HostPort // member -> its host ports
	stub    []int32              // member -> the node it waits on (nominated), -1 for none
	inView  []bool               // member placed during the placement: its stub is gone
	anyPort bool                 // some member has host ports: the world keeps port sets
	// attempted is how many members, in order, kube-scheduler's
	// podGroupSchedulingDefaultAlgorithm evaluates before PlacementFeasible
	// stops it (scheduleGang; every member of a composite's groups): only
	// their PreFilters run there, though the placement tried more.
	attempted int

	// The topology plugins (gang_affinity.go, gang_spread.go): whether
	// each member's PreFilter ran, the node the placement put it on (-1
	// none), its required anti-affinity terms, its PodTopologySpread
	// state (nil: Skip), and whether some placed member's topology plugin
	// runs; the node-tree order of the cluster treeOf in snapshot treeS.
	tried       []bool
	viewNode    []int32
	memberAnti  [][]fwk.AffinityTerm
	spread      []*gangSpread
	anyTopology bool
	spreadAdded []int
	tree        []int32
	treeOf      *preempt.Cluster
	treeS       *Snapshot

	// The world: per node, requested sums (node*dims), pod counts and,
	// when anyPort, the host ports in use (a set, as HostPortInfo).
	used  []int64
	pods  []int64
	portz [][]podinfo.HostPort
	gone  []uint32 // pod -> epoch it was taken off as a potential victim
	epoch uint32

	// undo is the placement's log: the world rows of the nodes it
	// changed, restored after it.
	undo []gangUndo
	// trail logs every Place of a composite's placement (trailing), so
	// that a child group that fails is taken back (gang_composite.go).
	trail    []gangTrail
	trailing bool

	self []int32 // p at p: a pod of its own as a member list
	// groupPods are the live bound pods naming the request's PodGroup, in
	// name order (its ScheduledPods); view and its buffers are
	// gangGroups' overlay.
	groupPods          []int32
	view               groupView
	prioBuf, unitOfBuf []int32
	unitsBuf           []groupUnit
	potential          []unitRef
	chosen             []unitRef
	sc                 scratch
	// onNode lists, per node, the members placed there in order; nodeOK
	// says whether they all fit there; bad counts the assignment nodes
	// where they do not.
	onNode     [][]int32
	assignedTo []int32 // member -> node, -1 unplaced
	// unbound are the members of the composite's groups that failed
	// (scheduleComposite): placed, but not bound by an attempt.
	unbound   []int
	nodeOK    []bool
	bad       int
	seenNode  []uint32
	nodeEpoch uint32
	tmp       []int64
	tmpPorts  []podinfo.HostPort
	use, nom  nodeUse

	// local is each placed member's narrowed topology bookkeeping,
	// affected the members a reprieve's move touched, doms the topology
	// keys' domains (gang_reprieve.go).
	local    []gangLocal
	affected []bool
	doms     map[string][]int32
	near     [][]int32 // node -> the narrowed members it can move
	anyLocal bool
	// bases are the request's InterPodAffinity PreFilter bases, one per
	// kind of member (gang_affinity_base.go).
	bases []*affinityBase
	// keys and sortBuf are sortUnitsKeyed's scratch (gang_sort.go).
	keys, keyTmp []unitKey
	sortBuf      []unitRef

	// vols is the volume plugins' world, for a gang whose members have
	// volumes or claims (gang_volumes.go).
	vols gangVolumes

	numViolations int
	names         []string  // Nodes(): s.names, copied once per snapshot
	namesOf       *Snapshot // the snapshot names was copied from
	lastMember    int       // the member the view looked up last
	nextName      int       // the node after the one the view looked up last (gang_names.go)
}

// restoreUndo puts back the world rows the placement's undo log
// recorded.
func (w *gangWorld) restoreUndo() {
	w.revertVolumes(0)
	s := w.s
	for i := len(w.undo) - 1; i >= 0; i-- {
		u := &w.undo[i]
		copy(w.used[int(u.n)*s.dims:int(u.n+1)*s.dims], u.used)
		w.pods[u.n] = u.pods
		if w.anyPort {
			w.portz[u.n] = append(w.portz[u.n][:0], u.ports...)
		}
	}
}

type gangUndo struct {
	n     int32
	used  []int64
	pods  int64
	ports []podinfo.HostPort
}

// release drops what points into the request (pods, decisions), keeping
// the buffers.
func (w *gangWorld) release() {
	clear(w.members)
	clear(w.dec)
	w.members, w.dec = w.members[:0], w.dec[:0]
	w.g = nil
}

// gangGroups is the pod-group view of the snapshot with the request's
// PodGroup in place of the cluster's of its name (w.groupPods are then
// the group's live bound members): the snapshot's own when no pod names
// the group or the cluster holds the same object; else, with
// CompositePodGroup off, the snapshot's with the group's members moved
// (overlay); else one built for the request.
func (w *gangWorld) gangGroups(ev *evaluator, req *preempt.PodGroupRequest) *groupView {
	s, pg, gates := ev.s, req.PodGroup, req.Config.FeatureGates
	w.groupPods = w.groupPods[:0]
	base := s.groupsFor(gates)
	if base == nil {
		return nil // no pod names a group
	}
	if req.CompositePodGroup != nil {
		// Every group of the request in place (CompositePodGroup is on);
		// each leaf counts its scheduled members itself.
		return newGroupView(s, req.WithGroups(s.cluster), true)
	}
	named := false
	for p, pod := range s.pods {
		if name, ok := preempt.PodGroupName(pod); ok && name == pg.Name && pod.Namespace == pg.Namespace && s.live(int32(p)) {
			named = true
			if s.podNode[p] >= 0 {
				w.groupPods = append(w.groupPods, int32(p))
			}
		}
	}
	if !named {
		return base
	}
	slices.SortFunc(w.groupPods, func(a, b int32) int { return strings.Compare(s.podName[a], s.podName[b]) })
	for _, other := range s.cluster.PodGroups {
		if other.Namespace == pg.Namespace && other.Name == pg.Name && (other == pg || equality.Semantic.DeepEqual(other, pg)) {
			return base
		}
	}
	if base.composite {
		c := *s.cluster
		c.PodGroups = []*preempt.PodGroup{pg}
		for _, other := range s.cluster.PodGroups {
			if other.Namespace != pg.Namespace || other.Name != pg.Name {
				c.PodGroups = append(c.PodGroups, other)
			}
		}
		return newGroupView(s, &c, true)
	}
	return w.overlay(base, pg)
}

// overlay is base with the request's PodGroup pg in place (CompositePodGroup
// off): a pod naming pg is a victim at pg's priority, preempted with every
// bound member of pg (a new unit) when pg's disruption mode is All, alone
// otherwise; nothing else changes (GroupKey and VictimPriority read only
// a pod's own PodGroup without composites). The view shares base's
// read-only parts and copies the two per-pod vectors it changes.
func (w *gangWorld) overlay(base *groupView, pg *preempt.PodGroup) *groupView {
	s := w.s
	g := &w.view
	*g = *base
	w.prioBuf = append(w.prioBuf[:0], base.prio...)
	w.unitOfBuf = append(w.unitOfBuf[:0], base.unitOf...)
	w.unitsBuf = append(w.unitsBuf[:0], base.units...)
	g.prio, g.unitOf, g.units = w.prioBuf, w.unitOfBuf, w.unitsBuf
	g.index, g.leaves, g.leafIndex, g.unitIndex, g.touched = nil, nil, nil, nil, nil // not read on the gang path
	unit := int32(-1)
	if preempt.PodGroupModeAll(pg) {
		unit = int32(len(g.units))
		x := groupUnit{rank: 2, members: w.groupPods}
		for _, p := range w.groupPods {
			switch {
			case !s.hasStart[p]:
				x.unstarted = true
			case !x.started || s.startNanos[p] < x.minStart:
				x.started, x.minStart = true, s.startNanos[p]
			}
		}
		g.units = append(g.units, x)
	}
	prio := preempt.PodGroupPriority(pg)
	for p, pod := range s.pods {
		if name, ok := preempt.PodGroupName(pod); ok && name == pg.Name && pod.Namespace == pg.Namespace {
			g.prio[p], g.unitOf[p] = prio, unit
		}
	}
	return g
}

// preempt is PodGroupEvaluator.Preempt: the status, its message, each
// member's node (nil for none) and whether victims were chosen
// (w.chosen, w.numViolations).
func (w *gangWorld) preempt(ctx context.Context, ev *evaluator, cs kubernetes.Interface, req *preempt.PodGroupRequest, tree *preempt.GroupNode) (preempt.Code, string, []string, bool) {
	s := ev.s
	members := req.Pods
	priority, policy := gangPriorityAndPolicy(req, req.Config.FeatureGates[podGroupPolicyGate])
	if policy == schedulingv1beta1.PreemptNever {
		return preempt.Unschedulable, msgPreemptionNeverRule, nil, false
	}
	w.s = s
	w.g = w.gangGroups(ev, req)
	prio := s.priority
	if w.g != nil {
		prio = w.g.prio
	}
	// isOngoingPreemption: a pod below the gang terminating by preemption
	// on a node some member is nominated to.
	for _, m := range members {
		n, ok := s.nodeIndex[m.Status.NominatedNodeName]
		if !ok {
			continue
		}
		for _, p := range s.boundOf[n] {
			if prio[p] < priority && s.terminating[p] {
				nominated := make([]string, len(members))
				for i, m := range members {
					nominated[i] = m.Status.NominatedNodeName
				}
				return preempt.Success, msgGangOngoing, nominated, false
			}
		}
	}

	now := req.Now.UnixNano()
	w.setMembers(ev, members, now)
	// The potential victims: every unit of every node below the gang, in
	// the order of their first pod (nodes in name order).
	w.potentialUnits(priority, now)
	if len(w.potential) == 0 {
		return preempt.UnschedulableAndUnresolvable, msgNoVictimsForGroup, nil, false
	}
	w.buildWorld()

	var nodes []string
	var code preempt.Code
	var msg string
	var err error
	if req.CompositePodGroup != nil {
		nodes, code, msg, err = w.scheduleComposite(ctx, req, tree)
	} else {
		nodes, code, msg, err = w.scheduleGang(ctx, req)
	}
	if err != nil {
		return preempt.Error, err.Error(), nil, false
	}
	if code != preempt.Success {
		return code, msg, nil, false
	}
	placed := nodes

	w.reprieveAll()
	var pods []*v1.Pod
	for i := range w.chosen {
		for _, p := range w.unitPods(&w.chosen[i]) {
			pods = append(pods, s.pods[p])
		}
	}
	var lower []*v1.Pod
	if n, ok := s.nodeIndex[gangCandidate]; ok {
		for _, p := range s.nomOf[n] {
			if s.priority[p] < priority {
				lower = append(lower, s.pods[p])
			}
		}
	}
	if err := actuateGang(ctx, cs, pods, lower, req.Config.Synchronous); err != nil {
		return preempt.Error, err.Error(), placed, false
	}
	return preempt.Success, fmt.Sprintf("found a placement for podgroup, preempting %d victims", len(pods)), placed, true
}

// gangPolicy is upstream's resolvePreemptionPolicy: the group's
// (PreemptLowerPriority when unset) under PodGroupPreemptionPolicy, else
// Never when any member says Never.
func gangPolicy(pg *preempt.PodGroup, members []*v1.Pod, groupPolicy bool) schedulingv1beta1.PreemptionPolicy {
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

// setMembers makes each member's decision (its PreFilter state but the
// topology plugins', made when the placement first tries it:
// gangPreFilter), its placed requests and ports, and its stub's node.
func (w *gangWorld) setMembers(ev *evaluator, members []*v1.Pod, now int64) {
	s := w.s
	w.members = append(w.members[:0], members...)
	w.dec = w.dec[:0]
	w.stub, w.inView, w.assignedTo = w.stub[:0], w.inView[:0], w.assignedTo[:0]
	w.tried, w.viewNode = w.tried[:0], w.viewNode[:0]
	clear(w.memberAnti)
	clear(w.spread)
	clear(w.bases)
	w.bases = w.bases[:0]
	w.memberAnti, w.spread = w.memberAnti[:0], w.spread[:0]
	w.anyPort, w.anyTopology = false, false
	maxWants := 0
	for len(w.req) < len(members) {
		w.req = append(w.req, nil)
		w.ports = append(w.ports, nil)
	}
	for i, m := range members {
		d := newPlainDecision(s, m, now, time.Unix(0, now), ev.b)
		d.groups = w.g
		w.dec = append(w.dec, d)
		maxWants = max(maxWants, len(d.fit.wants))
		row := resize(w.req[i], s.dims)
		clear(row)
		if s.reqs == 0 && reqModeOf(ev.b) == 0 && placedIsIncoming(m) {
			// The requests the member's PreFilter computed, without a
			// second PodRequests.
			for _, want := range d.fit.wants {
				if want.dim >= 0 {
					row[want.dim] += want.amount
				}
			}
		} else {
			s.addList(row, placedRequests(m, s.reqs), 1)
		}
		w.req[i] = row
		w.ports[i] = podinfo.AppendHostPorts(w.ports[i][:0], m)
		w.anyPort = w.anyPort || len(w.ports[i]) > 0
		stub := int32(-1)
		if n, ok := s.nodeIndex[m.Status.NominatedNodeName]; ok {
			stub = n
		}
		w.stub = append(w.stub, stub)
		w.inView = append(w.inView, false)
		w.assignedTo = append(w.assignedTo, -1)
		w.tried, w.viewNode = append(w.tried, false), append(w.viewNode, -1)
		w.memberAnti = append(w.memberAnti, memberAntiTerms(m))
		w.spread = append(w.spread, nil)
	}
	for p := int32(len(w.self)); p < int32(len(s.pods)); p++ {
		w.self = append(w.self, p)
	}
	w.use.used = resize(w.use.used, maxWants)
	w.nom.used = resize(w.nom.used, maxWants)
	w.setVolumes(members, ev.b)
	w.sc.reset(w.dec[0])
}

// placedIsIncoming reports whether component-helpers v0.37's requests of
// pod placed on a node (podinfo.PlacedPodRequests: the status's resources
// and DRA allocations read) are its requests as an incoming pod
// (IncomingPodRequests): its status says nothing those read, as for a
// pod never run.
func placedIsIncoming(pod *v1.Pod) bool {
	st := &pod.Status
	return len(st.ContainerStatuses) == 0 && len(st.InitContainerStatuses) == 0 && st.Resources == nil &&
		st.AllocatedResources == nil && len(st.NodeAllocatableResourceClaimStatuses) == 0 && len(st.Conditions) == 0
}

// potentialUnits is getCrossNodesVictims over every node, kept below
// priority: units as selectGroupVictims makes them on one node.
func (w *gangWorld) potentialUnits(priority int32, now int64) {
	s, g := w.s, w.g
	w.potential = w.potential[:0]
	gs := &w.sc.grp
	if g != nil {
		gs.next(len(g.units))
	}
	for n := range s.nodes {
		for _, p := range s.boundOf[n] {
			r := unitRef{unit: -1, pod: p, prio: s.priority[p], rank: 1, size: 1, earliest: now}
			if s.hasStart[p] {
				r.earliest = s.startNanos[p]
			}
			if g != nil {
				r.prio = g.prio[p]
				if g.typed[p] {
					r.rank = 2
				}
				if x := g.unitOf[p]; x >= 0 {
					if gs.seen[x] == gs.epoch {
						continue
					}
					gs.seen[x] = gs.epoch
					if ux := &g.units[x]; len(ux.members) > 0 {
						r = unitRef{unit: x, pod: ux.members[0], prio: g.prio[p], rank: ux.rank, size: int32(len(ux.members)), earliest: ux.earliest(now)}
					}
				}
			}
			if r.prio < priority {
				w.potential = append(w.potential, r)
			}
		}
	}
}

// buildWorld is the world without the potential victims: each node's
// sums, pod count and (when a member has host ports) port set, after
// RemovePod of each potential victim on it.
func (w *gangWorld) buildWorld() {
	s := w.s
	nn := len(s.nodes)
	w.used = append(w.used[:0], s.requested...)
	w.pods = w.pods[:0]
	for n := range nn {
		w.pods = append(w.pods, int64(len(s.boundOf[n])))
	}
	if len(w.gone) < len(s.pods) {
		w.gone = make([]uint32, len(s.pods)+len(s.pods)/2)
		w.epoch = 0
	}
	w.epoch++
	if w.epoch == 0 {
		clear(w.gone)
		w.epoch = 1
	}
	if w.anyPort {
		for len(w.portz) < nn {
			w.portz = append(w.portz, nil)
		}
		for n := range nn {
			u := nodeUse{ports: w.portz[n][:0]}
			for _, p := range s.boundOf[n] {
				u.addPorts(s.ports[s.portStart[p]:s.portStart[p+1]])
			}
			w.portz[n] = u.ports
		}
	}
	for i := range w.potential {
		for _, p := range w.unitPods(&w.potential[i]) {
			w.gone[p] = w.epoch
			w.move(p, -1)
		}
	}
	w.resetBack()
}

// unitPods are unit r's pods: a pod of its own, or the unit's members.
func (w *gangWorld) unitPods(r *unitRef) []int32 {
	if r.unit >= 0 {
		return w.g.units[r.unit].members
	}
	return w.self[r.pod : r.pod+1 : r.pod+1]
}

// move adds (sign 1) or removes (-1) pod p on its node in the world.
func (w *gangWorld) move(p int32, sign int64) {
	s := w.s
	n := s.podNode[p]
	row := w.used[int(n)*s.dims : int(n+1)*s.dims]
	req := s.req[int(p)*s.dims : int(p+1)*s.dims]
	for k := range row {
		row[k] += sign * req[k]
	}
	w.pods[n] += sign
	if w.anyPort {
		u := nodeUse{ports: w.portz[n]}
		if ps := s.ports[s.portStart[p]:s.portStart[p+1]]; sign > 0 {
			u.addPorts(ps)
		} else {
			u.removePorts(ps)
		}
		w.portz[n] = u.ports
	}
}

// nominated sums into w.nom what member i sees nominated on node n: the
// cluster's nominated pods of its priority or more, and the other
// members' stubs waiting there (priority 0, a pod slot and nothing else:
// reference/gang.go nominatorStub); view drops the stubs of the members
// the placement has placed.
func (w *gangWorld) nominated(i int, n int32, view bool) {
	s, d, nom := w.s, w.dec[i], &w.nom
	clear(nom.used)
	nom.node, nom.pods, nom.ports = n, 0, nom.ports[:0]
	nom.vols, nom.disk, nom.rwop = nom.vols[:0], 0, 0
	if d.topo != nil {
		nom.topo = resize32(nom.topo, d.topo.counters())
		clear(nom.topo)
	}
	for _, p := range s.nomOf[n] {
		if s.priority[p] < d.priority || s.podUID[p] == string(d.pod.UID) {
			continue
		}
		d.addPod(nom, p, 1)
	}
	if d.priority > 0 {
		return
	}
	for j, node := range w.stub {
		if node == n && !(view && w.inView[j]) && w.members[j].UID != d.pod.UID {
			nom.pods++
			w.stubContribution(i, j, n, nom)
		}
	}
}

// fitsOn runs member i's filters on node n whose state is used (all
// dimensions), pods and ports, with its nominated pods counted.
func (w *gangWorld) fitsOn(i int, n int32, used []int64, pods int64, ports []podinfo.HostPort, view bool) bool {
	d := w.dec[i]
	if d.nodeFilters(n) != nil {
		return false
	}
	u := &w.use
	for k, dim := range d.fit.dims {
		u.used[k] = used[dim]
	}
	u.node, u.pods, u.ports = n, pods, ports
	if w.vols.on && !w.volumeUse(i, n, u, view) {
		return false
	}
	if d.topo != nil {
		// The member's counts are its state's own: nothing changed here.
		u.topo = resize32(u.topo, d.topo.counters())
		clear(u.topo)
	}
	w.nominated(i, n, view)
	code, _, _ := d.fits(n, u, &w.nom)
	return code == preempt.Success && w.spreadFits(i, n, view)
}

// gangView is preempt.PlacementView over the world: a placed member is
// on its node until the placement returns (the undo log) and no longer
// waits on its nominated node.
type gangView struct{ w *gangWorld }

func (v gangView) Nodes() []string { return v.w.names }

func (v gangView) member(pod *v1.Pod) (int, error) {
	w := v.w
	if w.lastMember < len(w.members) && w.members[w.lastMember] == pod {
		return w.lastMember, nil // a placement tries one member on node after node
	}
	for i, m := range w.members {
		if m == pod {
			w.lastMember = i
			return i, nil
		}
	}
	return 0, fmt.Errorf("pod %s is not a member of the gang", preempt.Key(pod.Namespace, pod.Name))
}

func (v gangView) Fits(_ context.Context, pod *v1.Pod, node string) (bool, error) {
	w := v.w
	i, err := v.member(pod)
	if err != nil {
		return false, err
	}
	n, ok := w.nodeOf(node)
	if !ok {
		return false, nil
	}
	if !w.tried[i] {
		w.gangPreFilter(i)
	}
	dims := w.s.dims
	var ports []podinfo.HostPort
	if w.anyPort {
		ports = w.portz[n]
	}
	return w.fitsOn(i, n, w.used[int(n)*dims:int(n+1)*dims], w.pods[n], ports, true), nil
}

func (v gangView) Place(_ context.Context, pod *v1.Pod, node string) (bool, error) {
	w := v.w
	i, err := v.member(pod)
	if err != nil {
		return false, err
	}
	if !w.tried[i] {
		w.gangPreFilter(i)
	}
	n, ok := w.s.nodeIndex[node]
	if !ok {
		return false, fmt.Errorf("placement: no node %q", node)
	}
	w.trailPlace(i, n)
	dims := w.s.dims
	row := w.used[int(n)*dims : int(n+1)*dims]
	logged := false
	for _, u := range w.undo {
		logged = logged || u.n == n
	}
	if !logged {
		u := gangUndo{n: n, used: append([]int64(nil), row...), pods: w.pods[n]}
		if w.anyPort {
			u.ports = append([]podinfo.HostPort(nil), w.portz[n]...)
		}
		w.undo = append(w.undo, u)
	}
	for k := range row {
		row[k] += w.req[i][k]
	}
	w.pods[n]++
	if w.anyPort {
		u := nodeUse{ports: w.portz[n]}
		u.addPorts(w.ports[i])
		w.portz[n] = u.ports
	}
	w.inView[i] = true
	w.viewNode[i] = n
	w.volumeReserve(i, int32(n))
	return true, nil
}

// scheduleGang is the pod-group scheduling function around the request's
// placement (the reference's scheduleGang): GangScheduling's
// PlacementFeasible before and after each member, every placement
// reverted on return. It returns each member's node ("" unplaced), or the
// Unschedulable code and message of a failed gang.
func (w *gangWorld) scheduleGang(ctx context.Context, req *preempt.PodGroupRequest) ([]string, preempt.Code, string, error) {
	s, pg, members := w.s, req.PodGroup, req.Pods
	// ScheduledPodsCount: the group's bound members left in the world.
	scheduled := 0
	for _, p := range w.groupPods {
		if w.gone[p] != w.epoch {
			scheduled++
		}
	}
	minCount := 1
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
	unschedulable := func(reason string) ([]string, preempt.Code, string, error) {
		msg := msgGroupUnschedulable
		if reason != "" {
			msg += ", " + reason
		}
		return nil, preempt.Unschedulable, msg, nil
	}
	// failed is the group's failure: PlacementFeasible's reason, led by
	// the scheduler's error when withErr; under
	// TopologyAwareWorkloadScheduling, the placement algorithm's report
	// of its one placement (the error's text alone when it carries one).
	tas := req.Config.FeatureGates[topologyAwareGate]
	failed := func(reason string, withErr bool) ([]string, preempt.Code, string, error) {
		switch {
		case tas && withErr:
			return unschedulable(placementsReport + msgGroupUnschedulable)
		case tas:
			return unschedulable(placementsReport + reason)
		case withErr:
			return unschedulable(reason)
		}
		return nil, preempt.Unschedulable, reason, nil
	}
	remaining := len(members)
	w.attempted = 0
	code, reason := feasible(remaining, scheduled)
	if code == preempt.Unschedulable {
		return failed(reason, true)
	}

	if w.namesOf != s || len(w.names) != len(s.names) {
		// The view's own copy: a placement cannot reorder the snapshot's.
		w.names, w.namesOf = append([]string(nil), s.names...), s
	}
	placement := req.Placement
	if placement == nil {
		placement = preempt.FirstFit
	}
	w.undo = w.undo[:0]
	nodes, err := placement(ctx, gangView{w}, members)
	w.restoreUndo()
	if err != nil {
		return nil, "", "", err
	}
	anyScheduled := false
	for i := range members {
		w.attempted = i + 1
		remaining--
		placed := i < len(nodes) && nodes[i] != ""
		if placed {
			n, ok := s.nodeIndex[nodes[i]]
			if !ok {
				return nil, "", "", fmt.Errorf("placement: no node %q", nodes[i])
			}
			scheduled++
			w.assignedTo[i] = n
		}
		code, reason = feasible(remaining, scheduled)
		if code == preempt.Unschedulable {
			break
		}
		anyScheduled = anyScheduled || placed
	}
	switch {
	case code == preempt.Unschedulable:
		// PlacementFeasible's own status, without the scheduler's error
		// (podGroupSchedulingDefaultAlgorithm).
		return failed(reason, false)
	case code != preempt.Success:
		return failed(reason, true)
	case !anyScheduled:
		return unschedulable("")
	}
	out := make([]string, len(members))
	for i, n := range w.assignedTo {
		if n >= 0 {
			out[i] = s.names[n]
		}
	}
	return out, preempt.Success, "", nil
}

// reprieveAll is the reprieve of selectVictimsOnDomain: the potential
// units in MoreImportantVictim order, PDB-violating first, each put back
// when the placed members all still fit; w.chosen are the others, in
// that order.
func (w *gangWorld) reprieveAll() {
	s, d, sc := w.s, w.dec[0], &w.sc
	nn := len(s.nodes)
	// The assignments per node, in member order, and whether they fit.
	if cap(w.onNode) < nn {
		w.onNode = make([][]int32, nn)
		w.nodeOK = make([]bool, nn)
		w.seenNode = make([]uint32, nn)
		w.nodeEpoch = 0
	}
	w.onNode, w.nodeOK = w.onNode[:nn], w.nodeOK[:nn]
	for i, n := range w.assignedTo {
		w.anyTopology = w.anyTopology || (n >= 0 && (w.dec[i].topo != nil || w.spread[i] != nil))
	}
	w.setLocal()
	for _, n := range w.assignedTo {
		if n >= 0 {
			w.onNode[n] = w.onNode[n][:0]
		}
	}
	for i, n := range w.assignedTo {
		if n >= 0 {
			w.onNode[n] = append(w.onNode[n], int32(i))
		}
	}
	w.bad = 0
	w.nextNodeEpoch()
	for _, n := range w.assignedTo {
		if n >= 0 && w.seenNode[n] != w.nodeEpoch {
			w.seenNode[n] = w.nodeEpoch
			w.nodeOK[n] = w.nodeFits(n)
			if !w.nodeOK[n] {
				w.bad++
			}
		}
	}

	w.keys, w.keyTmp, w.sortBuf = d.sortUnitsKeyed(w.potential, w.keys, w.keyTmp, w.sortBuf)
	sc.potential = sc.potential[:0]
	for i := range w.potential {
		sc.potential = append(sc.potential, w.unitPods(&w.potential[i])...)
	}
	d.splitByPDBViolation(sc)
	gs := &sc.grp
	gs.violating, gs.nonViolating = gs.violating[:0], gs.nonViolating[:0]
	bad := sc.violating
	for i := range w.potential {
		r := w.potential[i]
		r.violations = 0
		for _, p := range w.unitPods(&r) {
			if len(bad) > 0 && bad[0] == p {
				r.violations++
				bad = bad[1:]
			}
		}
		if r.violations > 0 {
			gs.violating = append(gs.violating, r)
		} else {
			gs.nonViolating = append(gs.nonViolating, r)
		}
	}
	w.chosen = w.chosen[:0]
	w.numViolations = 0
	for i := range gs.violating {
		if !w.reprieve(&gs.violating[i]) {
			w.chosen = append(w.chosen, gs.violating[i])
			w.numViolations += int(gs.violating[i].violations)
		}
	}
	for i := range gs.nonViolating {
		if !w.reprieve(&gs.nonViolating[i]) {
			w.chosen = append(w.chosen, gs.nonViolating[i])
		}
	}
	w.keys, w.keyTmp, w.sortBuf = d.sortUnitsKeyed(w.chosen, w.keys, w.keyTmp, w.sortBuf)
}

func (w *gangWorld) nextNodeEpoch() {
	w.nodeEpoch++
	if w.nodeEpoch == 0 {
		clear(w.seenNode)
		w.nodeEpoch = 1
	}
}

// nodeFits checks the members placed on node n in order, each with the
// ones before it assumed there and every stub still waiting (the
// reprieve's world is the scheduling function's before placement).
func (w *gangWorld) nodeFits(n int32) bool {
	s := w.s
	w.tmp = append(w.tmp[:0], w.used[int(n)*s.dims:int(n+1)*s.dims]...)
	pods := w.pods[n]
	var ports []podinfo.HostPort
	if w.anyPort {
		w.tmpPorts = append(w.tmpPorts[:0], w.portz[n]...)
		ports = w.tmpPorts
	}
	for _, i := range w.onNode[n] {
		if !w.fitsOn(int(i), n, w.tmp, pods, ports, false) {
			return false
		}
		for k, r := range w.req[i] {
			w.tmp[k] += r
		}
		pods++
		if w.anyPort {
			u := nodeUse{ports: ports}
			u.addPorts(w.ports[i])
			ports = u.ports
		}
	}
	if w.anyPort {
		w.tmpPorts = ports
	}
	return true
}

// reprieve puts unit r's pods back in the world and reports whether the
// placed members all still fit; when they do not, the pods are taken off
// again.
func (w *gangWorld) reprieve(r *unitRef) bool {
	members := w.unitPods(r)
	for _, p := range members {
		w.move(p, 1)
	}
	w.putBack(members, 1)
	w.recheck(members, w.topologyMove(members, 1))
	w.recheckAssignments()
	if w.bad == 0 {
		return true
	}
	for _, p := range members {
		w.move(p, -1)
	}
	w.putBack(members, -1)
	w.recheck(members, w.topologyMove(members, -1))
	w.recheckAssignments()
	return false
}

// recheck recomputes nodeOK on the assignment nodes of the pods' nodes,
// and, when affected, on the nodes of the members w.affected marks (a
// topology count their check reads moved: it reads other nodes' pods).
func (w *gangWorld) recheck(pods []int32, affected bool) {
	s := w.s
	w.nextNodeEpoch()
	if affected {
		for i, n := range w.assignedTo {
			if !w.affected[i] {
				continue
			}
			w.affected[i] = false
			if n < 0 || w.seenNode[n] == w.nodeEpoch {
				continue
			}
			w.seenNode[n] = w.nodeEpoch
			w.setNodeOK(n, w.nodeFits(n))
		}
	}
	for _, p := range pods {
		n := s.podNode[p]
		if w.seenNode[n] == w.nodeEpoch {
			continue
		}
		w.seenNode[n] = w.nodeEpoch
		if !w.hasAssignment(n) {
			continue
		}
		w.setNodeOK(n, w.nodeFits(n))
	}
}

func (w *gangWorld) setNodeOK(n int32, ok bool) {
	if ok != w.nodeOK[n] {
		if ok {
			w.bad--
		} else {
			w.bad++
		}
		w.nodeOK[n] = ok
	}
}

func (w *gangWorld) hasAssignment(n int32) bool {
	for _, m := range w.assignedTo {
		if m == n {
			return true
		}
	}
	return false
}

// actuateGang is the executor's prepareCandidate or prepareCandidateAsync
// for the candidate "cluster" (the reference's actuateGang): lower are the
// pods whose nominations it clears.
func actuateGang(ctx context.Context, cs kubernetes.Interface, victims, lower []*v1.Pod, synchronous bool) error {
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
			if err := actuation.PreemptPodAs(ctx, cs, v1.DefaultSchedulerName, "podgroup", v); err != nil {
				return err
			}
		}
		_ = actuation.ClearNominations(ctx, cs, lower)
		return nil
	}
	if len(live) == 0 {
		return nil
	}
	_ = actuation.ClearNominations(ctx, cs, lower)
	for i, v := range live {
		if err := actuation.PreemptPodAs(ctx, cs, v1.DefaultSchedulerName, "podgroup", v); err != nil && i < len(live)-1 {
			break
		}
	}
	return nil
}

// gangMemberGaps is what optimized refuses of a gang's member, as the
// reference's gangMemberGaps: what it refuses of a single pod
// (Impl.Unmodelled). Members with volumes or claims, extended resources
// a DeviceClass backs (the claim DynamicResources makes for them,
// allocated in flight by Reserve) and claims allocated with binding
// conditions (their timeout read at the request's Now) are modelled
// (gang_volumes.go). UnmodelledPodGroup refuses them before a decision,
// checkGang again for a caller that did not ask.
func gangMemberGaps(c *preempt.Cluster, p *v1.Pod) *preempt.Unmodelled {
	return (Impl{}).Unmodelled(c, p)
}
