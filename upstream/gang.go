//go:build !preemptbench_v1_36

package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.PodGroupPreempter = (*evaluator)(nil)

// errPodGroupUnschedulable is the scheduler's error of the same name
// (schedule_one_podgroup.go), which its pod-group statuses carry.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// PreemptPodGroup runs v1.37.2's DefaultPreemption.PodGroupPostFilter
// (PodGroupEvaluator.Preempt) for the request's PodGroup or
// CompositePodGroup through cs, with req.Placement (FirstFit by default)
// inside the scheduling function upstream's scheduler passes it
// (podGroupCycle's closure), rebuilt around the choice of host as
// schedule_one_podgroup.go's algorithms do it: a PodGroup through
// podGroupSchedulingDefaultAlgorithm (PlacementFeasible before and after
// each member, each placed member assumed in the snapshot and Reserved,
// its nomination dropped), a CompositePodGroup through
// compositePodGroupSchedulingDefaultAlgorithm over its children, each
// group under TopologyAwareWorkloadScheduling inside the placement
// algorithm of its one placement; a failed group's members reverted,
// every assumption reverted when the function returns.
//
// Not modelled (an Error decision says so, preempt.PodGroupRequest.Tree):
// TopologyAwareWorkloadScheduling's placements of a group with a topology
// constraint.
func (ev *evaluator) PreemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest) (d preempt.PodGroupDecision) {
	defer ev.lock(&preempt.Request{Config: req.Config})()
	ctx = quiet(ctx)
	d = preempt.PodGroupDecision{Victims: []preempt.Victim{}, Nominations: []preempt.Nomination{}}
	var err error
	defer func() {
		if err != nil {
			d.Status, d.Message = preempt.Error, err.Error()
		}
	}()
	defer recovered(&err)
	g, err := ev.prepareGang(ctx, req)
	if err != nil {
		return d
	}
	if ev.scheduler {
		if cs == nil {
			err = errors.New("the scheduler placement acts through a client: it does not decide without acting (a nil client)")
			return d
		}
		err = ev.preemptPodGroupWithScheduler(ctx, cs, req, g.w, req.PodGroup.DeepCopy(), g.members, &d, false)
		return d
	}
	defer g.undo()
	w := g.w
	fts := w.fts
	fts.EnableAsyncPreemption = !req.Config.Synchronous
	args := &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	dp, err := defaultpreemption.New(ctx, args, w.fh, fts)
	if err != nil {
		return d
	}
	var rec gangRecord
	preemptPod := dp.Executor.PreemptPod
	dp.Executor.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
		rec.candidate(c)
		if cs == nil {
			// Deciding without acting: the victim is taken as preempted.
			// (The nominations the Executor clears go to the world's own
			// client, which holds none of them: it ignores those errors.)
			return true, nil
		}
		return preemptPod(ctx, c, preemptor, victim, pluginName)
	}
	schedule := func(ctx context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
		return w.scheduleGang(ctx, g.info, g.placement)
	}
	if cs != nil {
		defer w.withClient(cs)()
	}
	w.lister.log.on, w.lister.log.events = true, w.lister.log.events[:0]
	res, status := dp.PodGroupPostFilter(ctx, framework.NewCycleState(), g.info, schedule)
	w.lister.log.on = false
	if !req.Config.Synchronous {
		deadline := time.Now().Add(asyncWait)
		uid := g.groups[0].UID
		if g.cpg != nil {
			uid = g.cpg.UID
		}
		for dp.Executor.IsPodGroupRunningPreemption(uid) {
			if time.Now().After(deadline) {
				err = fmt.Errorf("the asynchronous preemption for pod group %s did not finish within %v", req.PreemptorName(), asyncWait)
				return d
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	d.Status = preempt.Code(status.Code().String())
	d.Message = status.Message()
	if status.IsSuccess() {
		d.Nominations = nominationsOf(req.Pods, res)
		if c := rec.get(); c != nil {
			d.Victims = victimsOf(c.Victims().Pods)
			w.annotate(d.Victims)
			d.NumPDBViolations = int(c.Victims().NumPDBViolations)
			d.NumPodGroupDisruptions = c.NumPodGroupDisruptions()
		} else if strings.HasPrefix(d.Message, "pod group preemption: found a placement") {
			// Every victim already terminating: no PreemptPod call.
			x := preempt.NewPodGroupIndex(&preempt.Cluster{PodGroups: ev.podGroups, CompositePodGroups: ev.composites}, w.fts.EnableCompositePodGroup)
			pods, n, groups, lerr := w.logVictims(g.members, x)
			if lerr != nil {
				err = fmt.Errorf("the victims of a preemption that deleted none: %w", lerr)
				return d
			}
			d.Victims = victimsOf(pods)
			w.annotate(d.Victims)
			d.NumPDBViolations, d.NumPodGroupDisruptions = n, groups
		}
	}
	return d
}

// gangWorld is a gang request's world: the evaluator's world with the
// gang's groups and members added (undo takes them back), and the
// scheduler's PodGroupInfo of its tree.
type gangWorld struct {
	w         *world
	tree      *preempt.GroupNode
	groups    []*preempt.PodGroup
	cpg       *preempt.CompositePodGroup
	members   []*v1.Pod
	info      *framework.PodGroupInfo
	placement preempt.Placement
	undo      func()
}

// prepareGang checks req and builds its world; with the scheduler
// placement (ev.scheduler) the gang is not added (the scheduler adds it)
// and undo is nil.
func (ev *evaluator) prepareGang(ctx context.Context, req *preempt.PodGroupRequest) (*gangWorld, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if ev.gateErr != nil {
		return nil, ev.gateErr
	}
	w, err := ev.world(worldKey{now: req.Now, gates: gateKey(req.Config.FeatureGates), gateMap: req.Config.FeatureGates})
	if err != nil {
		return nil, err
	}
	if !w.fts.EnableGenericWorkload {
		return nil, errors.New("gang preemption needs GenericWorkload=true")
	}
	g := &gangWorld{w: w, placement: req.Placement}
	if g.placement == nil {
		g.placement = preempt.FirstFit
	}
	if ev.scheduler {
		// The scheduler runs TopologyAwareWorkloadScheduling's placements
		// itself; it takes a PodGroup preemptor only.
		if req.CompositePodGroup != nil {
			return nil, errors.New("the scheduler placement does not take a CompositePodGroup preemptor yet")
		}
		for _, p := range req.Pods {
			if name, _ := preempt.PodGroupName(p); name != req.PodGroup.Name || p.Namespace != req.PodGroup.Namespace {
				return nil, fmt.Errorf("member %s belongs to pod group %s/%s, not %s", preempt.Key(p.Namespace, p.Name), p.Namespace, name, req.PreemptorName())
			}
		}
	} else if g.tree, err = req.Tree(&preempt.Cluster{PodGroups: ev.podGroups, CompositePodGroups: ev.composites}); err != nil {
		return nil, err
	}
	g.members = make([]*v1.Pod, len(req.Pods))
	for i, p := range req.Pods {
		if w.podByKey[preempt.Key(p.Namespace, p.Name)] != nil {
			return nil, fmt.Errorf("member %s is also in the cluster", preempt.Key(p.Namespace, p.Name))
		}
		g.members[i] = ownObject(withStartTime(p, req.Now))
		if g.members[i] == p {
			g.members[i] = p.DeepCopy()
		}
	}
	if ev.scheduler {
		return g, nil
	}
	if req.CompositePodGroup != nil {
		g.cpg = req.CompositePodGroup.DeepCopy()
		for _, pg := range req.PodGroups {
			g.groups = append(g.groups, pg.DeepCopy())
		}
	} else {
		g.groups = []*preempt.PodGroup{req.PodGroup.DeepCopy()}
	}
	if g.undo, err = w.addGang(ctx, g.groups, g.cpg, g.members); err != nil {
		return nil, err
	}
	g.info = w.groupInfo(g.tree, g.groups, g.cpg, g.members)
	return g, nil
}

// SchedulePodGroup is the pod-group cycle's scheduling attempt on the
// cluster as it is (runRootSchedulingAlgorithm with the request's
// placement, every assumption reverted): on Success, the members bound
// (the placed members of groups that succeeded under ancestors that
// succeeded, as completeCompositePodGroupAlgorithmResultMap and
// submitPodGroupAlgorithmResult have it). With the scheduler placement
// the attempt is the scheduler's own, in PreemptPodGroup: Unschedulable
// here.
func (ev *evaluator) SchedulePodGroup(ctx context.Context, req *preempt.PodGroupRequest) (at preempt.PodGroupAttempt) {
	defer ev.lock(&preempt.Request{Config: req.Config})()
	ctx = quiet(ctx)
	var err error
	defer func() {
		if err != nil {
			at = preempt.PodGroupAttempt{Status: preempt.Error, Message: err.Error()}
		}
	}()
	defer recovered(&err)
	g, err := ev.prepareGang(ctx, req)
	if err != nil {
		return at
	}
	if ev.scheduler {
		return preempt.PodGroupAttempt{Status: preempt.Unschedulable}
	}
	defer g.undo()
	results, prefiltered, st := g.w.attemptGang(ctx, g.info, g.placement)
	if !st.IsSuccess() {
		return preempt.PodGroupAttempt{Status: preempt.Code(st.Code().String()), Message: st.Message(), PreFiltered: prefiltered}
	}
	nodes := map[string]string{}
	var bind func(pgi *framework.PodGroupInfo)
	bind = func(pgi *framework.PodGroupInfo) {
		r := results[pgi]
		if r == nil || !r.status.IsSuccess() {
			return
		}
		for _, a := range r.placed {
			nodes[preempt.Key(a.GetPod().Namespace, a.GetPod().Name)] = a.GetNodeName()
		}
		for _, c := range pgi.Children {
			bind(c)
		}
	}
	bind(g.info)
	at.Status, at.PreFiltered = preempt.Success, prefiltered
	for _, p := range req.Pods {
		if n, ok := nodes[preempt.Key(p.Namespace, p.Name)]; ok {
			at.Placement = append(at.Placement, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: n})
		}
	}
	return at
}

// nominationsOf is PodGroupPostFilterResult's NominatingInfos, in the
// members' order: a member the result has no entry for is left out.
func nominationsOf(members []*v1.Pod, res *fwk.PodGroupPostFilterResult) []preempt.Nomination {
	out := make([]preempt.Nomination, 0, len(members))
	if res == nil {
		return out
	}
	for _, p := range members {
		if ni := res.NominatingInfos[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]; ni != nil {
			out = append(out, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: ni.NominatedNodeName})
		}
	}
	return out
}

// gangRecord keeps the candidate the executor actuates (the victims and
// counts PodGroupEvaluator.Preempt chose, which its result does not
// carry). A candidate whose victims are all terminating is never
// actuated, and not seen.
type gangRecord struct {
	mu sync.Mutex
	c  preemption.Candidate
}

func (r *gangRecord) candidate(c preemption.Candidate) {
	r.mu.Lock()
	if r.c == nil {
		r.c = c
	}
	r.mu.Unlock()
}

func (r *gangRecord) get() preemption.Candidate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.c
}

// addGang puts the preemptor's groups in the world, as kube-scheduler
// holds them while it schedules the gang: the PodGroups (and the
// CompositePodGroup, when there is one) in the scheduler cache (replacing
// the cluster's of those names), each member in its group state
// (AddPodGroupMember) and in the pod informer, each nominated member in
// the nominator. The returned function undoes it.
func (w *world) addGang(ctx context.Context, groups []*preempt.PodGroup, cpg *preempt.CompositePodGroup, members []*v1.Pod) (func(), error) {
	logger := klogFrom(ctx)
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		_ = w.cache.UpdateSnapshot(logger, w.snapshot)
	}
	for _, pg := range groups {
		pg := pg
		old, _ := w.cache.PodGroups().Get(pg.Namespace, pg.Name)
		if old != nil {
			w.cache.UpdatePodGroup(logger, old, pg)
			undo = append(undo, func() { w.cache.UpdatePodGroup(logger, pg, old) })
		} else {
			w.cache.AddPodGroup(pg)
			undo = append(undo, func() { w.cache.RemovePodGroup(logger, pg) })
		}
	}
	if cpg != nil {
		old, _ := w.cache.CompositePodGroups().Get(cpg.Namespace, cpg.Name)
		if old != nil {
			w.cache.UpdateCompositePodGroup(logger, old, cpg)
			undo = append(undo, func() { w.cache.UpdateCompositePodGroup(logger, cpg, old) })
		} else {
			w.cache.AddCompositePodGroup(logger, cpg)
			undo = append(undo, func() { w.cache.RemoveCompositePodGroup(logger, cpg) })
		}
	}
	for _, p := range members {
		p := p
		w.cache.AddPodGroupMember(p)
		undo = append(undo, func() { w.cache.RemovePodGroupMember(p) })
		restore, err := w.addPreemptor(p)
		if err != nil {
			undoAll()
			return nil, err
		}
		undo = append(undo, restore)
		if p.Status.NominatedNodeName != "" {
			pi, err := framework.NewPodInfo(p)
			if err != nil {
				undoAll()
				return nil, err
			}
			w.queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: p.Status.NominatedNodeName})
			undo = append(undo, func() { w.queue.DeleteNominatedPodIfExists(p) })
		}
	}
	if err := w.cache.UpdateSnapshot(logger, w.snapshot); err != nil {
		undoAll()
		return nil, err
	}
	return undoAll, nil
}

// groupInfo is the scheduling queue's PodGroupInfo for the gang's tree
// (workloadForest.buildQueuedPodGroupInfo), with the request's group
// objects (as added to the cache) and members; a group of the cluster
// under the composite keeps the cluster's object and has no unscheduled
// member.
func (w *world) groupInfo(n *preempt.GroupNode, groups []*preempt.PodGroup, cpg *preempt.CompositePodGroup, members []*v1.Pod) *framework.PodGroupInfo {
	if n.CompositePodGroup != nil {
		obj := n.CompositePodGroup
		if cpg != nil && obj.Namespace == cpg.Namespace && obj.Name == cpg.Name {
			obj = cpg
		}
		info := &framework.PodGroupInfo{Namespace: obj.Namespace, Name: obj.Name, Type: fwk.CompositePodGroupKeyType, CompositePodGroup: obj, Children: []*framework.PodGroupInfo{}}
		for _, c := range n.Children {
			info.Children = append(info.Children, w.groupInfo(c, groups, cpg, members))
		}
		return info
	}
	obj := n.PodGroup
	for _, pg := range groups {
		if pg.Namespace == obj.Namespace && pg.Name == obj.Name {
			obj = pg
		}
	}
	info := &framework.PodGroupInfo{Namespace: obj.Namespace, Name: obj.Name, Type: fwk.PodGroupKeyType, PodGroup: obj, UnscheduledPods: []*v1.Pod{}, Children: []*framework.PodGroupInfo{}}
	for _, i := range n.Members {
		info.UnscheduledPods = append(info.UnscheduledPods, members[i])
	}
	return info
}

// memberResult is one member's outcome in the scheduling function: a
// fwk.ProposedAssignment when placed.
type memberResult struct {
	pi    *framework.PodInfo
	node  string
	state *framework.CycleState
}

func (m *memberResult) GetPod() *v1.Pod               { return m.pi.Pod }
func (m *memberResult) GetPodInfo() fwk.PodInfo       { return m.pi }
func (m *memberResult) GetNodeName() string           { return m.node }
func (m *memberResult) GetCycleState() fwk.CycleState { return m.state }

// scheduleGang is the function PodGroupPostFilter gets (podGroupCycle's
// closure around runRootSchedulingAlgorithm): the root's algorithm with
// place choosing the hosts, every assumption reverted on return, and the
// proposals of every group evaluated, a failed child group's too (as the
// closure gathers every result: docs/upstream-findings.md).
func (w *world) scheduleGang(ctx context.Context, root *framework.PodGroupInfo, place preempt.Placement) (*fwk.PodGroupAssignments, *fwk.Status) {
	order, _, st := w.runGang(ctx, root, place)
	var assignments []fwk.ProposedAssignment
	if st.IsSuccess() {
		for _, r := range order {
			assignments = append(assignments, r.placed...)
		}
	}
	return &fwk.PodGroupAssignments{ProposedAssignments: assignments}, st
}

// runGang is runRootSchedulingAlgorithm: every group's result in the
// order they were evaluated, and the root's status (Unschedulable when it
// succeeded without scheduling a member); every assumption reverted.
func (w *world) runGang(ctx context.Context, root *framework.PodGroupInfo, place preempt.Placement) ([]*groupResult, bool, *fwk.Status) {
	view := &gangView{w: w, states: map[*v1.Pod]*memberResult{}}
	defer view.revert(0)
	var order []*groupResult
	res := w.scheduleGroup(ctx, view, root, place, &order)
	if res.status.IsSuccess() && !res.any {
		// The framework requires at least 1 pod to be scheduled in order to return a success status.
		res.status = fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
	}
	// DynamicResources' PreFilter keeps its state in the pod-group cycle
	// state of the first member it runs for, and in the member's own:
	// whether it ran for a member kube-scheduler tries.
	prefiltered := false
	for _, p := range view.tried {
		if _, err := view.pre(ctx, p).state.Read(fwk.StateKey(names.DynamicResources)); err == nil {
			prefiltered = true
		}
	}
	return order, prefiltered, res.status
}

// attemptGang is runGang with each group's result by its PodGroupInfo,
// and whether DynamicResources' PreFilter ran for a member.
func (w *world) attemptGang(ctx context.Context, root *framework.PodGroupInfo, place preempt.Placement) (map[*framework.PodGroupInfo]*groupResult, bool, *fwk.Status) {
	order, prefiltered, st := w.runGang(ctx, root, place)
	out := make(map[*framework.PodGroupInfo]*groupResult, len(order))
	for _, r := range order {
		out[r.pgi] = r
	}
	return out, prefiltered, st
}

// groupResult is a group's podGroupAlgorithmResult.
type groupResult struct {
	pgi    *framework.PodGroupInfo
	status *fwk.Status
	any    bool
	placed []fwk.ProposedAssignment
}

// scheduleGroup is podGroupSchedulingRecursiveAlgorithm for pgi, with
// TopologyAwareWorkloadScheduling's placement algorithm around it when
// the gate is on (CompositePodGroup needs it): the one placement of every
// node (the request has no topology constraint), a failure reported as
// "0/1 placements are available".
func (w *world) scheduleGroup(ctx context.Context, view *gangView, pgi *framework.PodGroupInfo, place preempt.Placement, order *[]*groupResult) *groupResult {
	mark := len(view.reverts)
	r := &groupResult{pgi: pgi}
	*order = append(*order, r)
	if pgi.Type == fwk.CompositePodGroupKeyType {
		w.compositeAlgorithm(ctx, view, pgi, place, order, r)
	} else {
		w.defaultAlgorithm(ctx, view, pgi, place, r)
	}
	if !r.status.IsSuccess() {
		view.revert(mark)
		r.any = false
		if !r.status.IsError() && (w.fts.EnableTopologyAwareWorkloadScheduling || pgi.Type == fwk.CompositePodGroupKeyType) {
			r.status = fwk.NewStatus(fwk.Unschedulable, fmt.Sprintf("0/%d placements are available, first placement status: %v", 1, r.status.AsError())).WithError(errPodGroupUnschedulable)
		}
	}
	return r
}

// defaultAlgorithm is podGroupSchedulingDefaultAlgorithm for the PodGroup
// of pgi, with place choosing the hosts.
func (w *world) defaultAlgorithm(ctx context.Context, view *gangView, pgi *framework.PodGroupInfo, place preempt.Placement, r *groupResult) {
	lister := w.fh.SnapshotSharedLister()
	pgState, err := lister.PodGroupStates().Get(pgi.Namespace, pgi.Name)
	if err != nil {
		r.status = fwk.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s/%s to compute gang feasibility: %w", pgi.Namespace, pgi.Name, err))
		return
	}
	placementState := framework.NewCycleState()
	placementState.SetPodGroupSchedulingCycle(framework.NewCycleState())
	progress := framework.PlacementProgress{Remaining: len(pgi.GetUnscheduledPods()), Scheduled: pgState.ScheduledPodsCount()}
	st := w.fh.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
	r.status = st
	if st.IsError() {
		r.status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
		return
	}
	if st.Code() == fwk.Unschedulable {
		r.status = fwk.NewStatus(fwk.Unschedulable, st.Reasons()...).WithError(errPodGroupUnschedulable)
		return
	}
	view.placementState = placementState
	members := pgi.UnscheduledPods
	nodes, err := place(ctx, view, members)
	if err != nil {
		r.status = fwk.AsStatus(err)
		return
	}
	for i, p := range members {
		view.tried = append(view.tried, p)
		progress.Remaining--
		if nodes[i] != "" {
			progress.Scheduled++
			r.placed = append(r.placed, view.states[p])
		}
		st := w.fh.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
		if st.IsError() {
			r.status = fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
			break
		}
		r.status = st
		if st.Code() == fwk.Unschedulable {
			break
		}
		r.any = r.any || nodes[i] != ""
	}
	if r.status.IsWait() {
		r.status = fwk.NewStatus(fwk.Unschedulable, r.status.Reasons()...).WithError(errPodGroupUnschedulable)
	}
}

// compositeAlgorithm is compositePodGroupSchedulingDefaultAlgorithm for
// the CompositePodGroup of pgi: its children in order, PlacementFeasible
// over them.
func (w *world) compositeAlgorithm(ctx context.Context, view *gangView, pgi *framework.PodGroupInfo, place preempt.Placement, order *[]*groupResult, r *groupResult) {
	placementState := framework.NewCycleState()
	placementState.SetPodGroupSchedulingCycle(framework.NewCycleState())
	progress := framework.PlacementProgress{Remaining: len(pgi.Children)}
	st := w.fh.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
	r.status = st
	if st.Code() == fwk.Unschedulable || st.Code() == fwk.Error {
		return
	}
	for _, child := range pgi.GetChildGroups() {
		cr := w.scheduleGroup(ctx, view, child, place, order)
		if cr.status.IsError() {
			r.status = fwk.AsStatus(fmt.Errorf("composite pod group evaluation failed due to child error: %w", cr.status.AsError()))
			return
		}
		r.any = r.any || cr.any
		progress.Remaining--
		if cr.status.IsSuccess() {
			progress.Scheduled++
		}
		st = w.fh.RunPlacementFeasiblePlugins(ctx, placementState, pgi, progress)
		if st.Code() == fwk.Unschedulable || st.Code() == fwk.Error {
			break
		}
	}
	if st.IsWait() {
		st = fwk.NewStatus(fwk.Unschedulable, st.Reasons()...).WithError(errPodGroupUnschedulable)
	}
	r.status = st
}

// gangView is preempt.PlacementView over upstream's framework: each
// member's PreFilter runs once, on a fresh cycle state of the pod-group
// cycle, when it is first tried (the members placed before it assumed).
type gangView struct {
	w              *world
	placementState *framework.CycleState
	states         map[*v1.Pod]*memberResult
	prefilter      map[*v1.Pod]*prefiltered
	reverts        []func()
	// tried are the members podGroupSchedulingDefaultAlgorithm
	// evaluates, in order, until PlacementFeasible stops it: the
	// placement may have run the PreFilters of later ones, which
	// kube-scheduler never runs.
	tried []*v1.Pod
}

type prefiltered struct {
	state  *framework.CycleState
	nodes  map[string]bool // PreFilter's subset, nil for all
	status *fwk.Status
}

func (v *gangView) Nodes() []string { return v.w.nodes }

func (v *gangView) pre(ctx context.Context, pod *v1.Pod) *prefiltered {
	if v.prefilter == nil {
		v.prefilter = map[*v1.Pod]*prefiltered{}
	}
	if pf := v.prefilter[pod]; pf != nil {
		return pf
	}
	state := framework.NewCycleState()
	state.SetRecordPluginMetrics(false)
	state.Write(framework.PodsToActivateKey, framework.NewPodsToActivate())
	state.SetPodGroupSchedulingCycle(v.placementState.GetPodGroupSchedulingCycle())
	state.SetPlacementCycleState(v.placementState)
	res, status, _ := v.w.fh.RunPreFilterPlugins(ctx, state, pod)
	pf := &prefiltered{state: state, status: status}
	if status.IsSuccess() && res != nil && !res.AllNodes() {
		pf.nodes = map[string]bool{}
		for n := range res.NodeNames {
			pf.nodes[n] = true
		}
	}
	v.prefilter[pod] = pf
	return pf
}

func (v *gangView) Fits(ctx context.Context, pod *v1.Pod, node string) (bool, error) {
	pf := v.pre(ctx, pod)
	if pf.status.IsError() {
		return false, pf.status.AsError()
	}
	if !pf.status.IsSuccess() || (pf.nodes != nil && !pf.nodes[node]) {
		return false, nil
	}
	ni, err := v.w.fh.SnapshotSharedLister().NodeInfos().Get(node)
	if err != nil {
		return false, err
	}
	st := v.w.fh.RunFilterPluginsWithNominatedPods(ctx, pf.state, pod, ni)
	if st.IsError() {
		return false, st.AsError()
	}
	return st.IsSuccess(), nil
}

// Place is the scheduler's assumeAndReserve in a pod-group cycle: the pod
// (a copy, bound to node) assumed in the snapshot, its nomination
// dropped, Reserve run; undone (Unreserve, ForgetPod, the nomination
// restored) by revert.
func (v *gangView) Place(ctx context.Context, pod *v1.Pod, node string) (bool, error) {
	pf := v.pre(ctx, pod)
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	pi, err := framework.NewPodInfo(assumed)
	if err != nil {
		return false, err
	}
	if err := v.w.snapshot.AssumePod(pi); err != nil {
		return false, err
	}
	v.w.queue.DeleteNominatedPodIfExists(assumed)
	logger := klogFrom(ctx)
	if st := v.w.fh.RunReservePluginsReserve(ctx, pf.state, assumed, node); !st.IsSuccess() {
		v.w.fh.RunReservePluginsUnreserve(ctx, pf.state, assumed, node)
		_ = v.w.snapshot.ForgetPod(logger, assumed)
		v.renominate(logger, pod, pi)
		return false, nil
	}
	v.states[pod] = &memberResult{pi: pi, node: node, state: pf.state}
	v.reverts = append(v.reverts, func() {
		v.w.fh.RunReservePluginsUnreserve(ctx, pf.state, assumed, node)
		_ = v.w.snapshot.ForgetPod(logger, assumed)
		v.renominate(logger, pod, pi)
	})
	return true, nil
}

func (v *gangView) renominate(logger klog.Logger, pod *v1.Pod, pi *framework.PodInfo) {
	if pod.Status.NominatedNodeName != "" {
		v.w.queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: pod.Status.NominatedNodeName})
	}
}

// revert takes back the placements made since mark (the revert functions
// of a group that failed, or of the whole function when it returns).
func (v *gangView) revert(mark int) {
	for i := len(v.reverts) - 1; i >= mark; i-- {
		v.reverts[i]()
	}
	v.reverts = v.reverts[:mark]
}
