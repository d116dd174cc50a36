package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.PodGroupPreempter = (*evaluator)(nil)

// errPodGroupUnschedulable is the scheduler's error of the same name
// (schedule_one_podgroup.go), which its pod-group statuses carry.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// PreemptPodGroup runs v1.37.2's DefaultPreemption.PodGroupPostFilter
// (PodGroupEvaluator.Preempt) for the request's PodGroup through cs, with
// req.Placement (FirstFit by default) inside the scheduling function
// upstream's scheduler passes it, rebuilt around the choice of host as
// schedule_one_podgroup.go's podGroupSchedulingDefaultAlgorithm does it:
// PlacementFeasible before and after each member, each placed member
// assumed in the snapshot and Reserved (its nomination dropped), every
// assumption reverted when the function returns.
//
// Not modelled (an Error decision says so): a CompositePodGroup preemptor,
// and TopologyAwareWorkloadScheduling's placement algorithm.
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
	if err = req.Validate(); err != nil {
		return d
	}
	if ev.gateErr != nil {
		err = ev.gateErr
		return d
	}
	w, err := ev.world(worldKey{now: req.Now, gates: gateKey(req.Config.FeatureGates), gateMap: req.Config.FeatureGates})
	if err != nil {
		return d
	}
	switch {
	case !w.fts.EnableGenericWorkload:
		err = errors.New("gang preemption needs GenericWorkload=true")
		return d
	case req.CompositePodGroup != nil:
		err = errors.New("a CompositePodGroup preemptor is not modelled by the upstream adapter yet")
		return d
	case w.fts.EnableTopologyAwareWorkloadScheduling && !ev.scheduler:
		err = errors.New("TopologyAwareWorkloadScheduling's placement algorithm is not modelled: gang preemption runs the default pod-group algorithm only")
		return d
	}
	pg := req.PodGroup.DeepCopy()
	members := make([]*v1.Pod, len(req.Pods))
	for i, p := range req.Pods {
		if name, _ := preempt.PodGroupName(p); name != pg.Name || p.Namespace != pg.Namespace {
			err = fmt.Errorf("member %s belongs to pod group %s/%s, not %s", preempt.Key(p.Namespace, p.Name), p.Namespace, name, preempt.Key(pg.Namespace, pg.Name))
			return d
		}
		if w.podByKey[preempt.Key(p.Namespace, p.Name)] != nil {
			err = fmt.Errorf("member %s is also in the cluster", preempt.Key(p.Namespace, p.Name))
			return d
		}
		members[i] = ownObject(withStartTime(p, req.Now))
		if members[i] == p {
			members[i] = p.DeepCopy()
		}
	}
	if ev.scheduler {
		err = ev.preemptPodGroupWithScheduler(ctx, cs, req, w, pg, members, &d)
		return d
	}
	undo, err := w.addGang(ctx, pg, members)
	if err != nil {
		return d
	}
	defer undo()

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
		return preemptPod(ctx, c, preemptor, victim, pluginName)
	}
	placement := req.Placement
	if placement == nil {
		placement = preempt.FirstFit
	}
	pgInfo := &framework.PodGroupInfo{Namespace: pg.Namespace, Name: pg.Name, Type: fwk.PodGroupKeyType, UnscheduledPods: members, PodGroup: pg}
	schedule := func(ctx context.Context) (*fwk.PodGroupAssignments, *fwk.Status) {
		return w.scheduleGang(ctx, pgInfo, placement)
	}
	defer w.withClient(cs)()
	res, status := dp.PodGroupPostFilter(ctx, framework.NewCycleState(), pgInfo, schedule)
	if !req.Config.Synchronous {
		deadline := time.Now().Add(asyncWait)
		for dp.Executor.IsPodGroupRunningPreemption(pg.UID) {
			if time.Now().After(deadline) {
				err = fmt.Errorf("the asynchronous preemption for pod group %s did not finish within %v", preempt.Key(pg.Namespace, pg.Name), asyncWait)
				return d
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	d.Status = preempt.Code(status.Code().String())
	d.Message = status.Message()
	for _, p := range req.Pods {
		n := preempt.Nomination{Namespace: p.Namespace, Name: p.Name}
		if res != nil {
			if ni := res.NominatingInfos[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]; ni != nil {
				n.Node = ni.NominatedNodeName
			}
		}
		d.Nominations = append(d.Nominations, n)
	}
	if c := rec.get(); c != nil && status.IsSuccess() {
		d.Victims = victimsOf(c.Victims().Pods)
		w.annotate(d.Victims)
		d.NumPDBViolations = int(c.Victims().NumPDBViolations)
		d.NumPodGroupDisruptions = c.NumPodGroupDisruptions()
	}
	return d
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

// addGang puts the preemptor's group and its members in the world, as
// kube-scheduler holds them while it schedules the group: the PodGroup in
// the scheduler cache (replacing the cluster's of that name), each member
// in its group state (AddPodGroupMember) and in the pod informer, each
// nominated member in the nominator. The returned function undoes it.
func (w *world) addGang(ctx context.Context, pg *preempt.PodGroup, members []*v1.Pod) (func(), error) {
	logger := klogFrom(ctx)
	old, _ := w.cache.PodGroups().Get(pg.Namespace, pg.Name)
	if old != nil {
		w.cache.UpdatePodGroup(logger, old, pg)
	} else {
		w.cache.AddPodGroup(pg)
	}
	var undo []func()
	for _, p := range members {
		w.cache.AddPodGroupMember(p)
		restore, err := w.addPreemptor(p)
		if err != nil {
			return nil, err
		}
		undo = append(undo, restore)
		if p.Status.NominatedNodeName != "" {
			pi, err := framework.NewPodInfo(p)
			if err != nil {
				return nil, err
			}
			w.queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: p.Status.NominatedNodeName})
			undo = append(undo, func() { w.queue.DeleteNominatedPodIfExists(p) })
		}
	}
	if err := w.cache.UpdateSnapshot(logger, w.snapshot); err != nil {
		return nil, err
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		for _, p := range members {
			w.cache.RemovePodGroupMember(p)
		}
		if old != nil {
			w.cache.UpdatePodGroup(logger, pg, old)
		} else {
			w.cache.RemovePodGroup(logger, pg)
		}
		_ = w.cache.UpdateSnapshot(logger, w.snapshot)
	}, nil
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

// scheduleGang is the podGroupSchedulingFunc PodGroupPostFilter gets:
// upstream's podGroupSchedulingDefaultAlgorithm (non-TAS) with place
// choosing the hosts, every assumption reverted on return.
func (w *world) scheduleGang(ctx context.Context, pgInfo *framework.PodGroupInfo, place preempt.Placement) (*fwk.PodGroupAssignments, *fwk.Status) {
	lister := w.fh.SnapshotSharedLister()
	pgState, err := lister.PodGroupStates().Get(pgInfo.Namespace, pgInfo.Name)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s/%s to compute gang feasibility: %w", pgInfo.Namespace, pgInfo.Name, err))
	}
	placementState := framework.NewCycleState()
	placementState.SetPodGroupSchedulingCycle(framework.NewCycleState())
	progress := framework.PlacementProgress{Remaining: len(pgInfo.UnscheduledPods), Scheduled: pgState.ScheduledPodsCount()}
	st := w.fh.RunPlacementFeasiblePlugins(ctx, placementState, pgInfo, progress)
	if st.IsError() {
		return nil, fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
	}
	if st.Code() == fwk.Unschedulable {
		return &fwk.PodGroupAssignments{}, fwk.NewStatus(fwk.Unschedulable, st.Reasons()...).WithError(errPodGroupUnschedulable)
	}
	view := &gangView{w: w, placementState: placementState, states: map[*v1.Pod]*memberResult{}}
	defer view.revert(ctx)
	nodes, err := place(ctx, view, pgInfo.UnscheduledPods)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	var assignments []fwk.ProposedAssignment
	anyScheduled := false
	status := st
	for i, p := range pgInfo.UnscheduledPods {
		progress.Remaining--
		if nodes[i] != "" {
			progress.Scheduled++
			assignments = append(assignments, view.states[p])
		}
		status = w.fh.RunPlacementFeasiblePlugins(ctx, placementState, pgInfo, progress)
		if status.IsError() {
			return nil, fwk.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", status.AsError()))
		}
		if status.Code() == fwk.Unschedulable {
			break
		}
		anyScheduled = anyScheduled || nodes[i] != ""
	}
	if status.IsWait() || status.Code() == fwk.Unschedulable {
		status = fwk.NewStatus(fwk.Unschedulable, status.Reasons()...).WithError(errPodGroupUnschedulable)
	}
	if status.IsSuccess() && !anyScheduled {
		status = fwk.NewStatus(fwk.Unschedulable).WithError(errPodGroupUnschedulable)
	}
	if !status.IsSuccess() {
		assignments = nil
	}
	return &fwk.PodGroupAssignments{ProposedAssignments: assignments}, status
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

func (v *gangView) renominate(logger klogLogger, pod *v1.Pod, pi *framework.PodInfo) {
	if pod.Status.NominatedNodeName != "" {
		v.w.queue.AddNominatedPod(logger, pi, &fwk.NominatingInfo{NominatingMode: fwk.ModeOverride, NominatedNodeName: pod.Status.NominatedNodeName})
	}
}

func (v *gangView) revert(context.Context) {
	for i := len(v.reverts) - 1; i >= 0; i-- {
		v.reverts[i]()
	}
	v.reverts = nil
}
