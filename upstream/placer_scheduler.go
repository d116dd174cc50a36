//go:build !preemptbench_v1_36

package upstream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/preemptbench/preemptbench/internal/schedulerconfig"
	"github.com/preemptbench/preemptbench/preempt"
)

// This file is Impl.SchedulerPlacement: gang preemption answered by
// kube-scheduler itself rather than by the adapter's rebuilt scheduling
// function. A real scheduler.Scheduler (scheduler.New, the default profile
// under the request's feature gates, informers over a fake clientset
// holding the cluster and the members) runs one pod-group scheduling
// cycle for the request's group (Scheduler.ScheduleOne): its own first
// attempt, and when that fails its PodGroupPostFilter, handed the
// scheduler's own podGroupSchedulingFunc (runRootSchedulingAlgorithm →
// podGroupSchedulingAlgorithm → podGroupSchedulingDefaultAlgorithm: for
// each member the scheduling algorithm, filter, then score every feasible
// node and take the best). The one plugin of the profile not built by the
// scheduler's registry is DefaultPreemption: it is built by the same
// constructor under another registry name, and only records what
// PodGroupPostFilter answered and which candidate the executor actuated.
//
// Ties among the best-scored nodes go as the scheduler breaks them:
// v1.37.2 draws a random tie-breaker (NodePluginScores.Randomizer) only
// for nodes an extender scored (prioritizeNodes), so without extenders
// the order of the feasible list settles a tie (through the heap of
// NewSortedScoredNodes): the scheduler's node tree (zones interleaved),
// from where the previous filter pass stopped (nextStartNodeIndex), each
// feasible node in the order its filter finished when Impl.Parallelism is
// above 1. Nothing pins that order to the contract's, so no other
// implementation is compared with this one.
//
// Under TopologyAwareWorkloadScheduling the scheduler runs its placement
// algorithm (podGroupSchedulingPlacementAlgorithm: generate placements,
// schedule the group in each, score them), which the first-fit path
// refuses; findBestPlacement does break ties among placements at random.
//
// Pinned here, as in the rest of the adapter: the members are scheduled in
// the request's order, the pods without a start time get the request's
// Now, the PodDisruptionBudgets are listed in (namespace, name) order, and
// the members of a group victim in (namespace, name) order (upstream
// lists them from a set: unitMembersInOrder).

// schedulerPreemptionName is the registry name the recording
// DefaultPreemption is registered under (the scheduler's in-tree registry
// already holds DefaultPreemption, and Registry.Merge refuses a second
// plugin of that name). The plugin's own Name stays DefaultPreemption.
const schedulerPreemptionName = "PreemptbenchRecordedDefaultPreemption"

// errAsyncAPICalls: with SchedulerAsyncAPICalls the scheduler sends its API
// calls from a dispatcher whose work would outlive the decision.
var errAsyncAPICalls = fmt.Errorf("the scheduler placement does not run with %s=true: the scheduler's API dispatcher would send its calls after the decision", features.SchedulerAsyncAPICalls)

// recordedPreemption is upstream's DefaultPreemption, as the scheduler
// builds it, recording its PodGroupPostFilter's answer.
type recordedPreemption struct {
	*defaultpreemption.DefaultPreemption
	rec *schedulerRecord
}

// PodGroupPostFilter is DefaultPreemption's, recorded.
func (p *recordedPreemption) PodGroupPostFilter(ctx context.Context, state fwk.PodGroupCycleState, pgInfo fwk.PodGroupInfo, schedule fwk.PodGroupSchedulingFunc) (*fwk.PodGroupPostFilterResult, *fwk.Status) {
	res, status := p.DefaultPreemption.PodGroupPostFilter(ctx, state, pgInfo, schedule)
	p.rec.mu.Lock()
	p.rec.called, p.rec.result, p.rec.status = true, res, status
	p.rec.mu.Unlock()
	return res, status
}

// schedulerRecord is what one scheduling cycle told: PodGroupPostFilter's
// answer (called false when the scheduler did not run it), the candidate
// the executor actuated (gangRecord), the plugin itself (to wait for its
// asynchronous preemption), the host the scheduling algorithm last
// suggested for each pod, and the pods whose binding cycle ended (bound,
// or failed and handed to the failure handler).
type schedulerRecord struct {
	gangRecord
	mu        sync.Mutex
	plugin    *recordedPreemption
	called    bool
	result    *fwk.PodGroupPostFilterResult
	status    *fwk.Status
	suggested map[types.UID]string
	ended     map[types.UID]bool
	// bound are the pods the scheduler sent a binding for, to the node;
	// failures the first status each pod was failed with.
	bound    map[types.UID]string
	failures map[types.UID]*fwk.Status
}

func (r *schedulerRecord) bind(uid types.UID, node string) {
	r.mu.Lock()
	if r.bound == nil {
		r.bound = map[types.UID]string{}
	}
	r.bound[uid] = node
	r.mu.Unlock()
}

func (r *schedulerRecord) fail(uid types.UID, st *fwk.Status) {
	r.mu.Lock()
	if r.failures == nil {
		r.failures = map[types.UID]*fwk.Status{}
	}
	if r.failures[uid] == nil {
		r.failures[uid] = st
	}
	r.mu.Unlock()
}

func (r *schedulerRecord) suggest(uid types.UID, host string) {
	r.mu.Lock()
	if r.suggested == nil {
		r.suggested = map[types.UID]string{}
	}
	r.suggested[uid] = host
	r.mu.Unlock()
}

func (r *schedulerRecord) end(uid types.UID) {
	r.mu.Lock()
	if r.ended == nil {
		r.ended = map[types.UID]bool{}
	}
	r.ended[uid] = true
	r.mu.Unlock()
}

func (r *schedulerRecord) host(uid types.UID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.suggested[uid]
}

func (r *schedulerRecord) hasEnded(uid types.UID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended[uid]
}

// factory builds the recording plugin as the in-tree registry builds
// DefaultPreemption (FactoryAdapter: the process's gates), with the
// request's synchronous switch as PreemptPodGroup does.
func (r *schedulerRecord) factory(synchronous bool) frameworkruntime.PluginFactory {
	return func(ctx context.Context, args runtime.Object, fh fwk.Handle) (fwk.Plugin, error) {
		fts := feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
		fts.EnableAsyncPreemption = !synchronous
		dp, err := defaultpreemption.New(ctx, args, fh, fts)
		if err != nil {
			return nil, err
		}
		preemptPod := dp.Executor.PreemptPod
		dp.Executor.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
			r.candidate(c)
			return preemptPod(ctx, c, preemptor, victim, pluginName)
		}
		r.plugin = &recordedPreemption{DefaultPreemption: dp, rec: r}
		return r.plugin, nil
	}
}

// schedulerProfile is the default profile under the process's gates, with
// DefaultPreemption (and its args) under schedulerPreemptionName.
func schedulerProfile() (config.KubeSchedulerProfile, error) {
	cfg, err := schedulerconfig.DefaultUnderGates()
	if err != nil {
		return config.KubeSchedulerProfile{}, err
	}
	p := cfg.Profiles[0]
	found := false
	for i, pl := range p.Plugins.MultiPoint.Enabled {
		if pl.Name == names.DefaultPreemption {
			p.Plugins.MultiPoint.Enabled[i].Name = schedulerPreemptionName
			found = true
		}
	}
	if !found {
		return p, errors.New("the default profile has no DefaultPreemption")
	}
	for i := range p.PluginConfig {
		if p.PluginConfig[i].Name == names.DefaultPreemption {
			p.PluginConfig[i].Name = schedulerPreemptionName
		}
	}
	return p, nil
}

// preemptPodGroupWithScheduler answers PreemptPodGroup with a real
// scheduler (Impl.SchedulerPlacement), into d. w is the request's world
// (its gates are set, its pods carry their start times); pg and members
// are the request's group and members, checked and with start times.
func (ev *evaluator) preemptPodGroupWithScheduler(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest, w *world, pg *preempt.PodGroup, members []*v1.Pod, d *preempt.PodGroupDecision, cycle bool) error {
	switch {
	case req.Placement != nil:
		return errors.New("the scheduler placement runs kube-scheduler's own pod-group scheduling: the request's Placement must be nil")
	case utilfeature.DefaultFeatureGate.Enabled(features.SchedulerAsyncAPICalls):
		return errAsyncAPICalls
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// The cluster as the scheduler's informers list it: the nodes, the
	// bound and the nominated pods (as the adapter's world holds them),
	// the PDBs, the pod groups (the request's replacing the cluster's of
	// its name), the volume objects, and the members.
	internal := fake.NewClientset()
	var objects []runtime.Object
	for _, n := range ev.nodes {
		objects = append(objects, n)
	}
	for _, p := range ev.pods {
		if !preempt.IsBound(p) && !preempt.IsNominated(p) {
			continue
		}
		objects = append(objects, withSchedulerName(w.podByKey[preempt.Key(p.Namespace, p.Name)]))
	}
	for _, p := range members {
		objects = append(objects, withSchedulerName(p))
	}
	for _, pdb := range ev.pdbs {
		objects = append(objects, pdb)
	}
	for _, g := range ev.podGroups {
		if g.Namespace != pg.Namespace || g.Name != pg.Name {
			objects = append(objects, g)
		}
	}
	objects = append(objects, pg)
	if w.fts.EnableCompositePodGroup {
		for _, cpg := range ev.composites {
			objects = append(objects, cpg)
		}
	}
	objects = append(objects, ev.volumeObjects.all()...)
	for _, o := range objects {
		if err := internal.Tracker().Add(o); err != nil {
			return fmt.Errorf("the scheduler's clientset: %w", err)
		}
	}
	informerFactory := scheduler.NewInformerFactory(internal, 0, nil)
	// PDBs in (namespace, name) order and PVs in name order, as the
	// adapter's world lists them.
	informerFactory.InformerFor(&policy.PodDisruptionBudget{}, newSortedPDBInformer)
	informerFactory.InformerFor(&v1.PersistentVolume{}, newSortedPVInformer)

	profile, err := schedulerProfile()
	if err != nil {
		return err
	}
	rec := &schedulerRecord{}
	recorder := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, &bindRecorder{Interface: cs, rec: rec}, informerFactory, nil, recorder,
		scheduler.WithProfiles(profile),
		scheduler.WithFrameworkOutOfTreeRegistry(frameworkruntime.Registry{schedulerPreemptionName: rec.factory(req.Config.Synchronous)}),
		scheduler.WithParallelism(int32(ev.parallelism)),
	)
	if err != nil {
		return fmt.Errorf("building the scheduler: %w", err)
	}
	// Closed once: by the timer below when the queue offers nothing in
	// time, and on return (the queue's Close panics the second time).
	var closeOnce sync.Once
	closeQueue := func() { closeOnce.Do(sched.SchedulingQueue.Close) }
	defer closeQueue()
	informerFactory.Start(ctx.Done())
	defer informerFactory.Shutdown()
	defer cancel() // before Shutdown, which waits for the informers
	informerFactory.WaitForCacheSync(ctx.Done())
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return fmt.Errorf("the scheduler's event handlers did not sync: %w", err)
	}

	// The group must be in the active queue (its PreEnqueue plugins,
	// GangScheduling's among them, let it through), or the scheduler
	// would not try it now.
	active := map[string]bool{}
	for _, p := range sched.SchedulingQueue.PodsInActiveQ() {
		active[preempt.Key(p.Namespace, p.Name)] = true
	}
	var held []string
	for _, p := range members {
		if withSchedulerName(p).Spec.SchedulerName != v1.DefaultSchedulerName {
			continue // another scheduler's: never queued here
		}
		if !active[preempt.Key(p.Namespace, p.Name)] {
			held = append(held, preempt.Key(p.Namespace, p.Name))
		}
	}
	if len(held) > 0 {
		_, summary := sched.SchedulingQueue.PendingPods()
		return fmt.Errorf("the scheduling queue does not offer pod group %s for scheduling (members not in the active queue: %s; %s)", preempt.Key(pg.Namespace, pg.Name), strings.Join(held, ", "), summary)
	}
	// The next entity is the group: the other pending pods the queue
	// holds (nominated pods of the cluster) are popped and kept in
	// flight, unscheduled, their nominations standing. The members are
	// put in the request's order (the contract's queue order).
	order := map[types.UID]int{}
	for i, p := range members {
		order[p.UID] = i
	}
	key := fwk.PodGroupKey(pg.Namespace, pg.Name)
	popped := false
	// Pop blocks while the queue is empty: closing it ends the wait.
	defer time.AfterFunc(asyncWait, closeQueue).Stop()
	requeued := map[types.UID]bool{}
	sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		for {
			e, err := sched.SchedulingQueue.Pop(logger)
			if err != nil || e == nil {
				return e, err
			}
			g, ok := e.(*framework.QueuedPodGroupInfo)
			if !ok || g.PodGroupInfo == nil || g.Namespace != pg.Namespace || g.Name != pg.Name {
				// Another entity first (a nominated pod of the cluster,
				// of higher priority): back to the queue as had its own
				// cycle failed, so that the nominator lists it whole,
				// not as the stub of a pod in flight.
				if pi, ok := e.(*framework.QueuedPodInfo); ok {
					if requeued[pi.Pod.UID] {
						return nil, fmt.Errorf("the scheduling queue offers pod %s before pod group %s again: not modelled", preempt.Key(pi.Pod.Namespace, pi.Pod.Name), preempt.Key(pg.Namespace, pg.Name))
					}
					requeued[pi.Pod.UID] = true
					if err := sched.SchedulingQueue.AddUnschedulablePodIfNotPresent(logger, pi, sched.SchedulingQueue.SchedulingCycle()); err != nil {
						return nil, fmt.Errorf("putting %s back in the queue: %w", preempt.Key(pi.Pod.Namespace, pi.Pod.Name), err)
					}
					continue
				}
				return nil, fmt.Errorf("the scheduling queue offers another pod group before %s: not modelled", preempt.Key(pg.Namespace, pg.Name))
			}
			slices.SortStableFunc(g.QueuedPodInfos[key], func(a, b *framework.QueuedPodInfo) int { return order[a.Pod.UID] - order[b.Pod.UID] })
			slices.SortStableFunc(g.UnscheduledPods, func(a, b *v1.Pod) int { return order[a.UID] - order[b.UID] })
			popped = true
			return g, nil
		}
	}
	// The scheduling algorithm's suggestions and the ends of the binding
	// cycles are read through the Scheduler's own hooks.
	schedulePod, failed := sched.SchedulePod, sched.FailureHandler
	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		res, err := schedulePod(ctx, f, state, pi)
		rec.suggest(pi.Pod.UID, res.SuggestedHost)
		return res, err
	}
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, pi *framework.QueuedPodInfo, st *fwk.Status, ni *fwk.NominatingInfo, start time.Time) {
		failed(ctx, f, pi, st, ni, start)
		rec.fail(pi.Pod.UID, st)
		rec.end(pi.Pod.UID)
	}
	sched.ScheduleOne(ctx)

	if !popped {
		return fmt.Errorf("the scheduling queue did not pop pod group %s within %v", preempt.Key(pg.Namespace, pg.Name), asyncWait)
	}
	if rec.plugin == nil {
		return errors.New("the scheduler did not build DefaultPreemption")
	}
	if !req.Config.Synchronous {
		deadline := time.Now().Add(asyncWait)
		for rec.plugin.Executor.IsPodGroupRunningPreemption(pg.UID) {
			if time.Now().After(deadline) {
				return fmt.Errorf("the asynchronous preemption for pod group %s did not finish within %v", preempt.Key(pg.Namespace, pg.Name), asyncWait)
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
	rec.mu.Lock()
	called, res, status := rec.called, rec.result, rec.status
	rec.mu.Unlock()
	if !called {
		if cycle {
			return cycleWithoutPostFilter(rec, pg, members, d)
		}
		return withoutPostFilter(rec, pg, members)
	}
	d.Status = preempt.Code(status.Code().String())
	d.Message = status.Message()
	if status.IsSuccess() {
		d.Nominations = nominationsOf(req.Pods, res)
	}
	if cycle {
		rec.mu.Lock()
		d.Skipped = skippedBy(rec, members)
		rec.mu.Unlock()
	}
	if c := rec.get(); c != nil && status.IsSuccess() {
		idx := preempt.NewPodGroupIndex(&preempt.Cluster{PodGroups: ev.podGroups, CompositePodGroups: ev.composites}, w.fts.EnableCompositePodGroup)
		d.Victims = victimsOf(unitMembersInOrder(c.Victims().Pods, idx))
		w.annotate(d.Victims)
		d.NumPDBViolations = int(c.Victims().NumPDBViolations)
		d.NumPodGroupDisruptions = c.NumPodGroupDisruptions()
	}
	return nil
}

// schedulerCycle is the evaluator of the scheduler placement
// (Impl.SchedulerPlacement): its pod-group cycle is a real
// kube-scheduler's (preempt.PodGroupCycler), validatePodGroup, the
// members being deleted, the attempt and PodGroupPostFilter included, on
// the whole request.
type schedulerCycle struct{ *evaluator }

var _ preempt.PodGroupCycler = schedulerCycle{}

// PodGroupCycle runs one pod-group cycle of a real v1.37.2 scheduler for
// req, its queue's admission included. An error is a refusal: a gang the
// scheduler's queue does not offer (GangScheduling's PreEnqueue waits
// for minCount members), or a cycle that decided nothing (every member
// skipped).
func (s schedulerCycle) PodGroupCycle(ctx context.Context, cs kubernetes.Interface, c *preempt.Cluster, req *preempt.PodGroupRequest) (d preempt.PodGroupDecision, err error) {
	defer s.lock(&preempt.Request{Config: req.Config})()
	ctx = quiet(ctx)
	d = preempt.PodGroupDecision{Victims: []preempt.Victim{}, Nominations: []preempt.Nomination{}}
	defer recovered(&err)
	g, err := s.prepareGang(ctx, req)
	if err != nil {
		return d, err
	}
	if err := s.preemptPodGroupWithScheduler(ctx, cs, req, g.w, req.PodGroup.DeepCopy(), g.members, &d, true); err != nil {
		return d, err
	}
	return d, nil
}

// cycleWithoutPostFilter is the decision of a pod-group cycle that did
// not run PodGroupPostFilter: Schedulable with the members bound (once
// their binding cycles ended) when the attempt placed the group, else the
// first failed member's status (validatePodGroup's Error, say); members
// the scheduler neither bound nor failed, being deleted, are Skipped.
func cycleWithoutPostFilter(rec *schedulerRecord, pg *preempt.PodGroup, members []*v1.Pod, d *preempt.PodGroupDecision) error {
	deadline := time.Now().Add(asyncWait)
	for _, p := range members {
		for rec.host(p.UID) != "" && !rec.hasEnded(p.UID) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var failure *fwk.Status
	for _, p := range members {
		node, bound := rec.bound[p.UID]
		switch {
		case bound:
			d.Placement = append(d.Placement, preempt.Nomination{Namespace: p.Namespace, Name: p.Name, Node: node})
		case rec.failures[p.UID] != nil:
			if failure == nil {
				failure = rec.failures[p.UID]
			}
		}
	}
	d.Skipped = skippedBy(rec, members)
	switch {
	case len(d.Placement) > 0:
		d.Status = preempt.Schedulable
	case failure != nil:
		d.Status, d.Message = preempt.Code(failure.Code().String()), failure.Message()
	default:
		return fmt.Errorf("the scheduler's cycle for pod group %s neither placed nor failed a member (every member skipped): no decision", preempt.Key(pg.Namespace, pg.Name))
	}
	return nil
}

// skippedBy are the members being deleted that the scheduler neither
// bound nor failed: skipPodGroupPodSchedule dropped them. Call it with
// rec locked.
func skippedBy(rec *schedulerRecord, members []*v1.Pod) []preempt.PodRef {
	var out []preempt.PodRef
	for _, p := range members {
		_, bound := rec.bound[p.UID]
		if p.DeletionTimestamp != nil && !bound && rec.failures[p.UID] == nil {
			out = append(out, preempt.PodRef{Namespace: p.Namespace, Name: p.Name})
		}
	}
	return out
}

// withoutPostFilter is the error when the scheduler did not run
// PodGroupPostFilter, which it runs only after an Unschedulable attempt:
// either its own attempt placed the group (the members it sent bindings
// for are named, once the binding cycles of the members it chose hosts
// for ended), or it failed the group otherwise (the first member's status
// is given: an invalid group, an error).
func withoutPostFilter(rec *schedulerRecord, pg *preempt.PodGroup, members []*v1.Pod) error {
	deadline := time.Now().Add(asyncWait)
	for _, p := range members {
		for rec.host(p.UID) != "" && !rec.hasEnded(p.UID) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var placed []string
	var failure *fwk.Status
	for _, p := range members {
		if node, ok := rec.bound[p.UID]; ok {
			placed = append(placed, fmt.Sprintf("%s on %s", preempt.Key(p.Namespace, p.Name), node))
		} else if failure == nil {
			failure = rec.failures[p.UID]
		}
	}
	key := preempt.Key(pg.Namespace, pg.Name)
	if len(placed) > 0 {
		return fmt.Errorf("the scheduler placed pod group %s without preemption (PodGroupPostFilter did not run): %s", key, strings.Join(placed, ", "))
	}
	msg := "no member was failed"
	if failure != nil {
		msg = fmt.Sprintf("%s: %s", failure.Code(), failure.Message())
	}
	return fmt.Errorf("the scheduler neither placed nor preempted for pod group %s (PodGroupPostFilter did not run): %s", key, msg)
}

// unitMembersInOrder returns victims with the members of each group
// victim (a run of pods of one unit, preempt.PodGroupIndex.GroupKey) in
// (namespace, name) order, the contract's rule (docs/divergences.md): the
// adapter's world lists a group's members so (orderedSnapshot), the
// scheduler's own snapshot from a set.
func unitMembersInOrder(victims []*v1.Pod, idx *preempt.PodGroupIndex) []*v1.Pod {
	out := slices.Clone(victims)
	unit := func(p *v1.Pod) string {
		kind, ns, name, ok := idx.GroupKey(p)
		if !ok {
			return ""
		}
		return kind + "/" + ns + "/" + name
	}
	for i := 0; i < len(out); {
		u, j := unit(out[i]), i+1
		for u != "" && j < len(out) && unit(out[j]) == u {
			j++
		}
		slices.SortFunc(out[i:j], func(a, b *v1.Pod) int {
			if a.Namespace != b.Namespace {
				return strings.Compare(a.Namespace, b.Namespace)
			}
			return strings.Compare(a.Name, b.Name)
		})
		i = j
	}
	return out
}

// withSchedulerName returns p, or a copy of it with the API server's
// default scheduler name when it has none: the scheduler queues only the
// pods of its profiles.
func withSchedulerName(p *v1.Pod) *v1.Pod {
	if p.Spec.SchedulerName != "" {
		return p
	}
	c := p.DeepCopy()
	c.Spec.SchedulerName = v1.DefaultSchedulerName
	return c
}

// bindRecorder is the scheduler's client: cs, its pod bindings recorded
// (the binding cycles run in goroutines the decision waits for).
type bindRecorder struct {
	kubernetes.Interface
	rec *schedulerRecord
}

func (c *bindRecorder) CoreV1() typedcorev1.CoreV1Interface {
	return bindCore{CoreV1Interface: c.Interface.CoreV1(), rec: c.rec}
}

type bindCore struct {
	typedcorev1.CoreV1Interface
	rec *schedulerRecord
}

func (c bindCore) Pods(namespace string) typedcorev1.PodInterface {
	return bindPods{PodInterface: c.CoreV1Interface.Pods(namespace), rec: c.rec}
}

type bindPods struct {
	typedcorev1.PodInterface
	rec *schedulerRecord
}

func (p bindPods) Bind(ctx context.Context, b *v1.Binding, opts metav1.CreateOptions) error {
	defer p.rec.end(b.UID)
	p.rec.bind(b.UID, b.Target.Name)
	return p.PodInterface.Bind(ctx, b, opts)
}

// all is every object of the set.
func (s volumeObjectSet) all() []runtime.Object {
	var out []runtime.Object
	for _, o := range s.namespaces {
		out = append(out, o)
	}
	for _, o := range s.pvcs {
		out = append(out, o)
	}
	for _, o := range s.pvs {
		out = append(out, o)
	}
	for _, o := range s.storageClasses {
		out = append(out, o)
	}
	for _, o := range s.csiNodes {
		out = append(out, o)
	}
	for _, o := range s.csiDrivers {
		out = append(out, o)
	}
	for _, o := range s.attachments {
		out = append(out, o)
	}
	for _, o := range s.capacities {
		out = append(out, o)
	}
	out = append(out, s.draObjects()...)
	return out
}
