package upstream

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/preempt"
)

// Impl is the upstream implementation.
type Impl struct {
	// Parallelism is the framework's parallelism; 0 means 1. Above 1 the
	// dry run's visits, and so its answers, depend on timing as upstream's.
	Parallelism int
	// ListOrderTie breaks pickOneNodeForPreemption's final tie (candidates
	// equal on all five criteria) in candidate-list order, the contract's
	// rule, instead of upstream's map order: a sixth score function
	// (OrderedScoreFuncs) after the five, restated. For streams, whose
	// later cycles depend on every earlier pick. Off, upstream's pick is
	// random among the tied (RandomFinalTie).
	ListOrderTie bool
	// SchedulerPlacement makes PreemptPodGroup run kube-scheduler itself
	// (placer_scheduler.go): one pod-group scheduling cycle of a real
	// scheduler, whose PodGroupPostFilter gets the scheduler's own
	// pod-group scheduling function (every member filtered and scored,
	// ties broken as the scheduler breaks them) instead of the request's
	// Placement (which must then be nil). No other implementation
	// reproduces its placements.
	SchedulerPlacement bool
}

var _ preempt.Implementation = Impl{}

// Name is "upstream" at the current release, "upstream@" + Version (the
// name package releases registers) at an earlier one.
func (Impl) Name() string {
	if Version == preempt.CurrentRelease {
		return "upstream"
	}
	return "upstream@" + Version
}

// NewEvaluator keeps deep copies of c's objects but its pods, which it
// and the framework only read (worldPod). The framework is built on first
// use and rebuilt when a request's Now differs from the last one.
func (i Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	if c == nil {
		return nil, errors.New("upstream: nil cluster")
	}
	par := i.Parallelism
	if par <= 0 {
		par = 1
	}
	ev := &evaluator{
		listOrderTie:  i.ListOrderTie,
		scheduler:     i.SchedulerPlacement,
		parallelism:   par,
		nominatedUIDs: map[types.UID]bool{},
	}
	for _, n := range c.Nodes {
		ev.nodes = append(ev.nodes, n.DeepCopy())
	}
	ev.pods = slices.Clone(c.Pods)
	for _, p := range ev.pods {
		if preempt.IsNominated(p) {
			ev.nominatedUIDs[p.UID] = true
		}
	}
	for _, pdb := range c.PDBs {
		ev.pdbs = append(ev.pdbs, pdb.DeepCopy())
	}
	for _, pg := range c.PodGroups {
		ev.podGroups = append(ev.podGroups, pg.DeepCopy())
	}
	for _, cpg := range c.CompositePodGroups {
		ev.composites = append(ev.composites, cpg.DeepCopy())
	}
	ev.volumeObjects = volumeObjects(c)
	ev.cluster = &preempt.Cluster{Nodes: ev.nodes} // node order, for Request.Codes
	if i.SchedulerPlacement {
		return schedulerPlacement(ev)
	}
	return ev, nil
}

type evaluator struct {
	listOrderTie  bool
	scheduler     bool             // Impl.SchedulerPlacement
	cluster       *preempt.Cluster // the nodes only, in the cluster's order
	parallelism   int
	nodes         []*v1.Node
	pods          []*v1.Pod
	pdbs          []*policyv1.PodDisruptionBudget
	nominatedUIDs map[types.UID]bool
	// podGroups and composites are deep copies of the cluster's pod
	// groups, which the scheduler cache holds under GenericWorkload.
	podGroups  []*preempt.PodGroup
	composites []*preempt.CompositePodGroup
	// volumeObjects are deep copies of the namespaces, claims, volumes,
	// storage classes and CSI nodes, for the informers the default
	// profile's plugins list them from.
	volumeObjects volumeObjectSet

	// mu serialises requests: the world's pod store and client are shared.
	mu sync.Mutex
	w  *world
	// gates are the feature gates Filter runs with (SetFeatureGates);
	// gateErr is the failure to set the current call's gates.
	gates   map[string]bool
	gateErr error
}

// recovered turns a panic into an error.
func recovered(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("upstream panicked: %v\n%s", r, debug.Stack())
	}
}

// request is what every request-level stage prepares: the world, the
// preemptor as it is in the listers, the prefiltered cycle state, the plugin
// and the evaluator.
type request struct {
	w     *world
	pod   *v1.Pod
	state fwk.CycleState
	pl    *plugin
	pe    *preemption.Evaluator
}

func (ev *evaluator) prepare(ctx context.Context, req *preempt.Request) (*request, error) {
	if req == nil || req.Pod == nil {
		return nil, errors.New("request: no preemptor pod")
	}
	if ev.gateErr != nil {
		return nil, ev.gateErr
	}
	w, err := ev.worldFor(req)
	if err != nil {
		return nil, err
	}
	r := &request{w: w, pod: preemptorOf(req)}
	state, status := w.prefilter(ctx, r.pod)
	if status.Code() == fwk.Error {
		return nil, status.AsError()
	}
	r.state = state
	r.pl, r.pe, err = ev.newPlugin(ctx, w, req)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// pdbs lists the PodDisruptionBudgets as Evaluator.findCandidates does.
func (r *request) pdbs() ([]*policyv1.PodDisruptionBudget, error) {
	return r.pe.PdbLister.List(labels.Everything())
}

// Filter runs the filters of the framework for pod on every node.
func (ev *evaluator) Filter(ctx context.Context, pod *v1.Pod) (res preempt.FilterResult) {
	defer ev.lock(nil)()
	ctx = quiet(ctx)
	res = preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	var err error
	defer func() {
		if err != nil {
			res = preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
			for _, n := range ev.sortedNodeNames() {
				res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: n, Code: preempt.Error, Reasons: []string{err.Error()}})
			}
		}
	}()
	defer recovered(&err)
	if err = ev.gateErr; err != nil {
		return res
	}
	w, err := ev.anyWorld(ev.gates)
	if err != nil {
		return res
	}
	// Upstream's PreFilter computes the pod's requests with component-
	// helpers' PodRequests, which adds the overhead into pod-level requests
	// in place: run it on a copy, as the caller's pod is read-only.
	pod = pod.DeepCopy()
	state, status := w.prefilter(ctx, pod)
	if status.Code() == fwk.UnschedulableAndUnresolvable {
		// DynamicResources' PostFilter fails when its PreFilter wrote no
		// state: a plugin before it stopped the PreFilters.
		_, err := state.Read(fwk.StateKey(names.DynamicResources))
		res.PreFilterRejected = err != nil
	}
	for _, name := range w.nodes {
		st := status
		if st.IsSuccess() {
			ni, gerr := w.nodeInfo(name)
			if gerr != nil {
				st = fwk.AsStatus(gerr)
			} else {
				st = w.fh.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			}
		}
		if st.IsSuccess() {
			res.Feasible = append(res.Feasible, name)
			continue
		}
		res.NodeStatuses = append(res.NodeStatuses, nodeStatus(name, st))
	}
	return res
}

func (ev *evaluator) sortedNodeNames() []string {
	var names []string
	for _, n := range ev.nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return names
}

// PodEligibleToPreemptOthers is the plugin's, with the nominated node's
// status taken from req.Filter.
func (ev *evaluator) PodEligibleToPreemptOthers(req *preempt.Request) (ok bool, msg string) {
	defer ev.lock(req)()
	ctx := quiet(context.Background())
	var err error
	defer func() {
		if err != nil {
			ok, msg = false, err.Error()
		}
	}()
	defer recovered(&err)
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return false, ""
	}
	m := newStatusReader(req, ev.cluster)
	return r.pl.PodEligibleToPreemptOthers(ctx, r.pod, m.Get(r.pod.Status.NominatedNodeName))
}

// FindCandidates is Evaluator.findCandidates.
func (ev *evaluator) FindCandidates(ctx context.Context, req *preempt.Request) (dr preempt.DryRun, err error) {
	defer ev.lock(req)()
	ctx = quiet(ctx)
	defer recovered(&err)
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return preempt.DryRun{}, err
	}
	lister := r.w.fh.SnapshotSharedLister().NodeInfos()
	allNodes, err := lister.List()
	if err != nil {
		return preempt.DryRun{}, err
	}
	if len(allNodes) == 0 {
		return preempt.DryRun{}, errors.New("no nodes available")
	}
	potential, err := newStatusReader(req, ev.cluster).NodesForStatusCode(lister, fwk.Unschedulable)
	if err != nil {
		return preempt.DryRun{}, err
	}
	if len(potential) == 0 {
		return preempt.DryRun{}, nil
	}
	pdbs, err := r.pdbs()
	if err != nil {
		return preempt.DryRun{}, err
	}
	offset, num := r.pl.GetOffsetAndNumCandidates(int32(len(potential)))
	return r.dryRun(ctx, potential, pdbs, offset, num), nil
}

// DryRunPreemption is Evaluator.DryRunPreemption over the named nodes.
func (ev *evaluator) DryRunPreemption(ctx context.Context, req *preempt.Request, potential []string, offset, numCandidates int32) (dr preempt.DryRun) {
	defer ev.lock(req)()
	ctx = quiet(ctx)
	var err error
	defer func() {
		if err != nil {
			dr = preempt.DryRun{Errors: []string{err.Error()}}
		}
	}()
	defer recovered(&err)
	if offset < 0 || numCandidates < 0 {
		err = fmt.Errorf("dry run: negative offset %d or candidate count %d", offset, numCandidates)
		return dr
	}
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return dr
	}
	var nodes []fwk.NodeInfo
	for _, name := range potential {
		ni, gerr := r.w.nodeInfo(name)
		if gerr != nil {
			continue
		}
		nodes = append(nodes, ni)
	}
	if len(nodes) == 0 {
		return preempt.DryRun{}
	}
	pdbs, err := r.pdbs()
	if err != nil {
		return dr
	}
	return r.dryRun(ctx, nodes, pdbs, offset, numCandidates)
}

func (r *request) dryRun(ctx context.Context, nodes []fwk.NodeInfo, pdbs []*policyv1.PodDisruptionBudget, offset, num int32) preempt.DryRun {
	cands, statuses, err := r.pe.DryRunPreemption(ctx, r.state, r.pod, nodes, pdbs, offset, num)
	var dr preempt.DryRun
	for _, c := range cands {
		dr.Candidates = append(dr.Candidates, candidateOf(c))
		r.w.annotate(dr.Candidates[len(dr.Candidates)-1].Victims)
	}
	if statuses != nil {
		statuses.ForEachExplicitNode(func(node string, st *fwk.Status) {
			dr.NodeStatuses = append(dr.NodeStatuses, nodeStatus(node, st))
		})
		sortNodeStatuses(dr.NodeStatuses)
	}
	if err != nil {
		var agg utilerrors.Aggregate
		if errors.As(err, &agg) {
			for _, e := range agg.Errors() {
				dr.Errors = append(dr.Errors, e.Error())
			}
		} else {
			dr.Errors = append(dr.Errors, err.Error())
		}
	}
	return dr
}

// SelectVictimsOnNode is the plugin's, on a copy of the node's NodeInfo and
// of the prefiltered state.
func (ev *evaluator) SelectVictimsOnNode(ctx context.Context, req *preempt.Request, node string) (victims []preempt.Victim, numViolations int, status preempt.Status) {
	defer ev.lock(req)()
	ctx = quiet(ctx)
	var err error
	defer func() {
		if err != nil {
			victims, numViolations, status = nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{err.Error()}}
		}
	}()
	defer recovered(&err)
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return nil, 0, status
	}
	ni, err := r.w.nodeInfo(node)
	if err != nil {
		return nil, 0, status
	}
	pdbs, err := r.pdbs()
	if err != nil {
		return nil, 0, status
	}
	pods, n, st, err := r.selectVictims(ctx, ni, pdbs)
	if err != nil {
		return nil, 0, status
	}
	if !st.IsSuccess() {
		return nil, n, convStatus(st)
	}
	victims = victimsOf(pods)
	r.w.annotate(victims)
	return victims, n, convStatus(st)
}

// SelectCandidate is Evaluator.SelectCandidate. Its victims are the
// cluster's pods (with the request's start time when they have none).
func (ev *evaluator) SelectCandidate(candidates []preempt.Candidate, req *preempt.Request) (best *preempt.Candidate) {
	defer ev.lock(req)()
	if len(candidates) == 0 {
		return nil
	}
	ctx := quiet(context.Background())
	var err error
	defer func() {
		if err != nil {
			best = nil
		}
	}()
	defer recovered(&err)
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return nil
	}
	in := make([]preemption.Candidate, len(candidates))
	for i, c := range candidates {
		victims := &extenderv1.Victims{NumPDBViolations: int64(c.NumPDBViolations)}
		for _, v := range c.Victims {
			victims.Pods = append(victims.Pods, r.w.victimPod(v, req))
		}
		in[i] = &candidate{index: i, name: c.Node, victims: victims}
	}
	got := r.pe.SelectCandidate(ctx, in)
	if got == nil {
		return nil
	}
	if c, ok := got.(*candidate); ok {
		out := candidates[c.index]
		return &out
	}
	// A new candidate made from CandidatesToVictimsMap, whose entry for a
	// node is the last candidate of that node.
	for i := len(candidates) - 1; i >= 0; i-- {
		if candidates[i].Node == got.Name() {
			out := candidates[i]
			return &out
		}
	}
	return nil
}

// victimPod is the cluster's pod v names, or a stand-in with v's priority.
func (w *world) victimPod(v preempt.Victim, req *preempt.Request) *v1.Pod {
	p := w.podByKey[preempt.Key(v.Namespace, v.Name)]
	if p != nil && corev1helpers.PodPriority(p) == v.Priority {
		return p
	}
	if p == nil {
		p = &v1.Pod{}
		p.Namespace, p.Name = v.Namespace, v.Name
		p = withStartTime(p, req.Now)
	} else {
		p = p.DeepCopy()
	}
	prio := v.Priority
	p.Spec.Priority = &prio
	return p
}

// PrepareCandidate re-composes the executor's actuation for the candidate
// with upstream's own pieces, in the order actuation.ActuateWith gives
// (synchronous prepareCandidate or asynchronous prepareCandidateAsync, as
// req.Config says, then the scheduler's nomination): upstream's
// Executor.PreemptPod for each victim, the lower-priority pods nominated
// to the node from the framework's nominator. Preempt runs the executor
// itself.
func (ev *evaluator) PrepareCandidate(ctx context.Context, cs kubernetes.Interface, c *preempt.Candidate, req *preempt.Request) (err error) {
	defer ev.lock(req)()
	ctx = quiet(ctx)
	defer recovered(&err)
	if c == nil {
		return errors.New("no candidate")
	}
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return err
	}
	defer r.w.withClient(cs)()

	var victims []*v1.Pod
	for _, v := range c.Victims {
		p := r.w.podByKey[preempt.Key(v.Namespace, v.Name)]
		if p == nil {
			return fmt.Errorf("victim %s is not in the cluster", preempt.Key(v.Namespace, v.Name))
		}
		victims = append(victims, p)
	}
	cand := &candidate{name: c.Node, victims: &extenderv1.Victims{Pods: victims, NumPDBViolations: int64(c.NumPDBViolations)}}
	preemptor := &podPreemptor{Pod: r.pod}
	// The contract's victims are neither waiting pods nor in PreBind, so
	// PreemptPod never preempts one in memory only (which would make the
	// asynchronous executor activate the preemptor).
	preemptPod := func(ctx context.Context, victim *v1.Pod) error {
		return preemptVictim(ctx, executorOf(r.pl.DefaultPreemption), cand, asPreemptor(preemptor), victim, names.DefaultPreemption)
	}
	var lower []*v1.Pod
	for _, pi := range r.w.fh.NominatedPodsForNode(c.Node) {
		if p := pi.GetPod(); corev1helpers.PodPriority(p) < preemptor.Priority() {
			lower = append(lower, p)
		}
	}
	own, _ := preempt.ReleaseBehaviour(Version)
	return actuation.ActuateWith(ctx, cs, preemptPod, req.Pod, c.Node, victims, lower, req.Config.Synchronous, own.AsyncSkipsLastVictim)
}

// nominate sets the preemptor's status.nominatedNodeName, as the scheduler
// does after a successful PostFilter.
func nominate(ctx context.Context, cs kubernetes.Interface, pod *v1.Pod, node string) error {
	st := pod.Status.DeepCopy()
	st.NominatedNodeName = node
	return util.PatchPodStatus(ctx, cs, pod.Name, pod.Namespace, &pod.Status, st)
}

// asyncWait bounds the wait for the executor's goroutine.
const asyncWait = time.Minute

// Preempt is the plugin's PostFilter (its "preemption: " prefix removed
// from the message) through cs, then the scheduler's nomination. Under
// asynchronous preemption the executor's goroutine is held until the
// nomination is sent, and waited for.
func (ev *evaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) (d preempt.Decision) {
	defer ev.lock(req)()
	ctx = quiet(ctx)
	d = preempt.Decision{Victims: []preempt.Victim{}, Candidates: []preempt.Candidate{}, NodeStatuses: []preempt.NodeStatus{}}
	var err error
	defer func() {
		if err != nil {
			d.Status, d.Message = preempt.Error, err.Error()
		}
	}()
	defer recovered(&err)
	if req == nil || req.Pod == nil {
		err = errors.New("request: no preemptor pod")
		return d
	}
	if req.Pod.UID == "" {
		err = fmt.Errorf("preemptor %s has no uid", preempt.Key(req.Pod.Namespace, req.Pod.Name))
		return d
	}
	r, err := ev.prepare(ctx, req)
	if err != nil {
		return d
	}
	defer r.w.annotateDecision(&d)
	restore, err := r.w.addPreemptor(r.pod)
	if err != nil {
		return d
	}
	defer restore()
	for _, e := range r.w.extenders {
		e.preemptor, e.answered = req.Pod, r.pl.recordAnswer
	}

	if req.Preempting != nil {
		// Without asynchronous preemption PreEnqueue lets every pod
		// through (and the executor keeps no record).
		st := r.pl.PreEnqueue(ctx, r.pod)
		if !req.Config.Synchronous {
			var perr error
			if st, perr = r.preEnqueue(ctx, req); perr != nil {
				err = perr
				return d
			}
		}
		if !st.IsSuccess() {
			d.Status, d.Message = preempt.Code(st.Code().String()), st.Message()
			return d
		}
	}

	m := newStatusReader(req, ev.cluster)
	d.Eligible, _ = r.pl.PodEligibleToPreemptOthers(ctx, r.pod, m.Get(r.pod.Status.NominatedNodeName))

	g := newGate()
	if req.Config.Synchronous {
		g.open()
	}
	defer g.open()
	reset := r.w.withClient(gatedClient{Interface: cs, g: g})
	defer reset()
	activated := r.w.activated.count()
	result, status := r.pl.PostFilter(ctx, r.state, r.pod, m)

	d.Status = preempt.Code(status.Code().String())
	d.Message = trimPrefix(status.Message())
	cands, statuses := r.pl.dryRun()
	if len(cands) > 0 {
		d.Candidates = cands
	}
	if len(statuses) > 0 {
		d.NodeStatuses = statuses
	}
	var nomErr error
	if status.IsSuccess() && result != nil && result.NominatingInfo != nil {
		node := result.NominatedNodeName
		d.NominatedNode = node
		d.Victims, d.NumPDBViolations = r.pl.victimsOn(node, cands)
		nomErr = nominate(ctx, cs, req.Pod, node)
	}
	g.open()
	if err = r.waitAsync(ctx); err != nil {
		return d
	}
	if !req.Config.Synchronous && (len(r.pl.actuationErrors()) > 0 || g.failedClear()) {
		// The goroutine ends by activating the preemptor, after it
		// dropped its record: wait for that too.
		if err = r.w.activated.waitAbove(ctx, activated); err != nil {
			return d
		}
	}
	if !req.Config.Synchronous {
		d.ActuationErrors = r.pl.actuationErrors()
		d.PreemptorActivated = r.w.activated.count() > activated
	}
	if nomErr != nil {
		// As PreemptWithStages: an actuation error leaves no nomination.
		d.NominatedNode, d.Victims, d.NumPDBViolations = "", []preempt.Victim{}, 0
		err = nomErr
	}
	return d
}

// waitAsync waits until the executor no longer runs a preemption for the
// request's pod.
func (r *request) waitAsync(ctx context.Context) error {
	deadline := time.Now().Add(asyncWait)
	for executorOf(r.pl.DefaultPreemption).IsPodRunningPreemption(r.pod.UID) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the asynchronous preemption of %s did not finish within %v", preempt.Key(r.pod.Namespace, r.pod.Name), asyncWait)
		}
		time.Sleep(50 * time.Microsecond)
	}
	return nil
}

// victimsOf converts upstream's victims.
func victimsOf(pods []*v1.Pod) []preempt.Victim {
	out := make([]preempt.Victim, 0, len(pods))
	for _, p := range pods {
		out = append(out, preempt.VictimOf(p))
	}
	return out
}

func candidateOf(c preemption.Candidate) preempt.Candidate {
	out := preempt.Candidate{Node: c.Name()}
	if v := c.Victims(); v != nil {
		out.NumPDBViolations = int(v.NumPDBViolations)
		out.Victims = victimsOf(v.Pods)
	}
	return out
}

// noVictimStatus is DryRunPreemption's status for a node where
// SelectVictimsOnNode succeeded without victims.
func noVictimStatus(node string) *fwk.Status {
	return fwk.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", node))
}

// fixedFitReasons are the reasons NodeResourcesFit gives, in its order,
// before those of scalar resources.
var fixedFitReasons = map[string]bool{
	"Too many pods":                  true,
	"Insufficient cpu":               true,
	"Insufficient memory":            true,
	"Insufficient ephemeral-storage": true,
}

// convStatus converts a status; NodeResourcesFit's scalar-resource reasons
// (upstream's map order) are put in name order.
func convStatus(st *fwk.Status) preempt.Status {
	if st == nil {
		return preempt.Status{Code: preempt.Success}
	}
	out := preempt.Status{Code: preempt.Code(st.Code().String())}
	if reasons := st.Reasons(); len(reasons) > 0 {
		out.Reasons = append([]string(nil), reasons...)
	}
	if st.Plugin() == noderesources.Name {
		i := 0
		for i < len(out.Reasons) && fixedFitReasons[out.Reasons[i]] {
			i++
		}
		sort.Strings(out.Reasons[i:])
	}
	return out
}

func nodeStatus(node string, st *fwk.Status) preempt.NodeStatus {
	s := convStatus(st)
	return preempt.NodeStatus{Node: node, Code: s.Code, Reasons: s.Reasons}
}

func sortNodeStatuses(s []preempt.NodeStatus) {
	sort.Slice(s, func(i, j int) bool { return s[i].Node < s[j].Node })
}
