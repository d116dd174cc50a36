//go:build !preemptbench_v1_36

package upstream

// The seams of the current release (preempt.CurrentRelease): every place
// where the adapter calls a scheduler API that changed since the earlier
// releases is here, and seams_v1_36.go has v1.36's side of each. The rest
// of the package is the same for every release.

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	resourceinformers "k8s.io/client-go/informers/resource/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/preemptbench/preemptbench/preempt"
)

// Version is the release this build runs: the current one.
const Version = preempt.CurrentRelease

// snapshotLister is the framework's snapshot lister: the snapshot in
// pinned order, its mutations logged (podgroup.go).
type snapshotLister = orderedSnapshot

// setVictimOrder gives dp upstream's preemption.MoreImportantVictim with
// the contract's final key (tieByKey of the first pods) for victims
// neither of which is more important than the other. Without
// GenericWorkload every victim is one pod.
func setVictimOrder(dp *defaultpreemption.DefaultPreemption) {
	dp.MoreImportantVictim = moreImportantVictim
}

func moreImportantVictim(va, vb preemption.Victim) bool {
	if preemption.MoreImportantVictim(va, vb) {
		return true
	}
	if preemption.MoreImportantVictim(vb, va) {
		return false
	}
	pa, pb := va.Pods(), vb.Pods()
	if len(pa) == 0 || len(pb) == 0 {
		return len(pa) > len(pb)
	}
	return tieByKey(pa[0].GetPod(), pb[0].GetPod())
}

// SelectVictimsOnNode is upstream's, recorded.
func (p *plugin) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo, all []*preemption.DomainVictim, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	victims, n, status := p.DefaultPreemption.SelectVictimsOnNode(ctx, state, pod, nodeInfo, all, pdbs)
	return p.record(nodeInfo, victims, n, status)
}

func (s *standInPreemption) SelectVictimsOnNode(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo, []*preemption.DomainVictim, []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	return s.victims, 0, nil
}

// selectVictims is the plugin's SelectVictimsOnNode on a copy of ni, as
// DryRunPreemption's checkNode calls it: the victims are listed from the
// snapshot's NodeInfo, the node is a copy of it.
func (r *request) selectVictims(ctx context.Context, ni fwk.NodeInfo, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status, error) {
	all, err := r.pe.GetVictimsOnNode(ctx, ni)
	if err != nil {
		return nil, 0, nil, err
	}
	pods, n, st := r.pl.DefaultPreemption.SelectVictimsOnNode(ctx, r.state.Clone(), r.pod, ni.Snapshot(), all, pdbs)
	return pods, n, st, nil
}

// recordPreemptPodErrors makes e's PreemptPod give record every error it
// returns.
func recordPreemptPodErrors(e *executor, record func(error)) {
	preemptPod := e.PreemptPod
	e.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor executorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
		inMemory, err := preemptPod(ctx, c, preemptor, victim, pluginName)
		if err != nil {
			record(err)
		}
		return inMemory, err
	}
}

// holdPreemptPod makes e's PreemptPod call hold instead of preempting.
func holdPreemptPod(e *executor, hold func(victim *v1.Pod)) {
	e.PreemptPod = func(_ context.Context, _ preemption.Candidate, _ executorPreemptor, victim *v1.Pod, _ string) (bool, error) {
		hold(victim)
		return false, nil
	}
}

// preemptVictim is e's PreemptPod of victim. The contract's victims are
// neither waiting pods nor in PreBind, so PreemptPod never preempts one in
// memory only (which would make the asynchronous executor activate the
// preemptor).
func preemptVictim(ctx context.Context, e *executor, c preemption.Candidate, preemptor executorPreemptor, victim *v1.Pod, pluginName string) error {
	_, err := e.PreemptPod(ctx, c, preemptor, victim, pluginName)
	return err
}

// newSchedulerCache is kube-scheduler's scheduler cache under fts.
func newSchedulerCache(ctx context.Context, fts feature.Features) internalcache.Cache {
	return internalcache.New(ctx, nil, fts.EnableGenericWorkload, fts.EnableCompositePodGroup)
}

// addPodGroups adds the pod groups, composite pod groups and unbound
// members (nominated pods) to cache, under GenericWorkload.
func addPodGroups(logger klog.Logger, cache internalcache.Cache, fts feature.Features, groups []*preempt.PodGroup, composites []*preempt.CompositePodGroup, unbound []*v1.Pod) {
	if !fts.EnableGenericWorkload {
		return
	}
	for _, pg := range groups {
		cache.AddPodGroup(pg)
	}
	if fts.EnableCompositePodGroup {
		for _, cpg := range composites {
			cache.AddCompositePodGroup(logger, cpg)
		}
	}
	for _, p := range unbound {
		// The scheduler's informer adds a pending member to its group
		// (AddPodGroupMember) when it queues it.
		cache.AddPodGroupMember(p)
	}
}

// newSnapshot builds w.snapshot of the bound pods on ev's nodes, and
// returns the framework options that list from it.
func (w *world) newSnapshot(logger klog.Logger, ev *evaluator, bound, nominated []*v1.Pod) ([]frameworkruntime.Option, error) {
	if w.fts.EnableGenericWorkload {
		// With GenericWorkload, DefaultPreemption lists pod groups and
		// their members from the snapshot: kube-scheduler's snapshot is
		// its scheduler cache's, which holds the PodGroup and
		// CompositePodGroup objects and every member pod.
		if err := w.ensureCache(ev.podGroups, ev.composites, nominated); err != nil {
			return nil, err
		}
		w.snapshot = internalcache.NewEmptySnapshot()
		if err := w.cache.UpdateSnapshot(logger, w.snapshot); err != nil {
			return nil, err
		}
	} else {
		w.snapshot = internalcache.NewSnapshot(bound, ev.nodes)
	}
	w.lister = orderedSnapshot{Snapshot: w.snapshot, log: &snapshotLog{}}
	return []frameworkruntime.Option{
		frameworkruntime.WithSnapshotSharedLister(w.lister),
		// From v1.37 the evaluator lists nodes and victims from the
		// mutable snapshot lister: the same snapshot, as kube-scheduler.
		frameworkruntime.WithMutableSnapshotLister(w.lister),
	}, nil
}

// schedulerPlacement is ev with Impl.SchedulerPlacement (placer_scheduler.go).
func schedulerPlacement(ev *evaluator) (preempt.Evaluator, error) {
	return schedulerCycle{ev}, nil
}

// feedsDRA: this release's DRA manager is fed the cluster's
// resource.k8s.io objects (newDRAManager), so the adapter answers pods
// DynamicResources looks at.
const feedsDRA = true

// newDRAManager is the DRA manager as kube-scheduler's scheduler.New builds
// it, with DynamicResourceAllocation on: over a ResourceClaim assume cache
// holding the cluster's claims, a ResourceSlice tracker over the slice
// informer (whose store holds the cluster's slices: volumeObjectSet.addTo)
// and, under DRADeviceTaintRules (GA, on by default in v1.37), the
// DeviceTaintRule informer (its store the cluster's rules), and the
// DeviceClass informer, its extended-resource cache told of every class as
// kube-scheduler's event handlers tell it. Two differences, the same
// answers: the claims reach the assume cache through replayInformer, and
// the tracker its slices and rules through replayStore (the informers are
// not started: their stores are filled directly); and the tracker gets no
// client: it would only record events. The tracker applies the rules in a
// goroutine of its own (its event handlers, then a monitor that closes its
// synced channel): newDRAManager returns once the tracker has synced, so
// every Filter lists the slices with every rule applied.
func newDRAManager(ctx context.Context, f informers.SharedInformerFactory, objs volumeObjectSet) (fwk.SharedDRAManager, error) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		return nil, nil
	}
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), replayInformer(objs.claimObjects()), "ResourceClaim", "", nil)
	opts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            f.Resource().V1().ResourceSlices(),
	}
	if opts.EnableDeviceTaintRules {
		opts.SliceInformer = replaySlices{opts.SliceInformer}
		opts.TaintInformer = replayTaintRules{f.Resource().V1().DeviceTaintRules()}
	}
	slices, err := resourceslicetracker.StartTracker(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("starting the resource slice tracker: %w", err)
	}
	if opts.EnableDeviceTaintRules {
		// Without the gate the tracker is the slice informer, which is
		// not started: its lister reads the store as it is.
		select {
		case <-slices.HasSyncedChecker().Done():
		case <-ctx.Done():
			slices.Stop()
			return nil, fmt.Errorf("the resource slice tracker did not sync: %w", context.Cause(ctx))
		}
	}
	m := dynamicresources.NewDRAManager(ctx, claims, slices, f)
	if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
		if erCache, ok := m.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok {
			for _, dc := range objs.deviceClasses {
				erCache.OnAdd(dc, true)
			}
		}
	}
	return m, nil
}

// replaySlices is the slice informer whose typed informer replays its
// store to each handler (replayStore).
type replaySlices struct {
	resourceinformers.TypedResourceSliceInformer
}

func (r replaySlices) TypedInformer() resourceinformers.ResourceSliceIndexInformer {
	return replayStore[*resourcev1.ResourceSlice]{r.TypedResourceSliceInformer.TypedInformer()}
}

// replayTaintRules is the DeviceTaintRule informer whose typed informer
// replays its store to each handler (replayStore).
type replayTaintRules struct {
	resourceinformers.TypedDeviceTaintRuleInformer
}

func (r replayTaintRules) TypedInformer() resourceinformers.DeviceTaintRuleIndexInformer {
	return replayStore[*resourcev1.DeviceTaintRule]{r.TypedDeviceTaintRuleInformer.TypedInformer()}
}

// replayStore is an informer that is not started, its store filled
// directly: a typed handler gets the store's objects, in key order, as an
// informer's initial list would give them, before AddTypedEventHandler
// returns, and its registration is synced.
type replayStore[T cache.Object] struct {
	cache.TypedSharedIndexInformer[T]
}

func (r replayStore[T]) AddTypedEventHandler(h cache.TypedResourceEventHandler[T], _ ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	store := r.GetStore()
	keys := store.ListKeys()
	sort.Strings(keys)
	for _, k := range keys {
		o, ok, err := store.GetByKey(k)
		if err != nil {
			return nil, err
		}
		if ok {
			h.OnAdd(o.(T), true)
		}
	}
	return syncedRegistration{}, nil
}

// deviceTaintRuleObjects are the rules as objects of a clientset.
func deviceTaintRuleObjects(rules []*preempt.DeviceTaintRule) []runtime.Object {
	out := make([]runtime.Object, len(rules))
	for i, o := range rules {
		out[i] = o
	}
	return out
}

// addDeviceTaintRules puts the rules in the DeviceTaintRule informer's
// store, where the ResourceSlice tracker reads them.
func addDeviceTaintRules(f informers.SharedInformerFactory, rules []*preempt.DeviceTaintRule) error {
	store := f.Resource().V1().DeviceTaintRules().Informer().GetStore()
	for _, o := range rules {
		if err := store.Add(o); err != nil {
			return fmt.Errorf("informer store: %w", err)
		}
	}
	return nil
}

// replayInformer is an assumecache.Informer that gives every handler its
// objects as an informer's initial list would, at once, and is synced.
type replayInformer []any

func (r replayInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	for _, o := range r {
		h.OnAdd(o, true)
	}
	return syncedRegistration{}, nil
}

type syncedRegistration struct{}

func (syncedRegistration) HasSynced() bool                     { return true }
func (syncedRegistration) HasSyncedChecker() cache.DoneChecker { return syncedRegistration{} }
func (syncedRegistration) Name() string                        { return "the cluster's ResourceClaims" }
func (syncedRegistration) Done() <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}

// missingDriversGap refuses a pod with volumes in a cluster where two or
// more CSIDrivers set preventPodSchedulingIfMissing: NodeVolumeLimits
// (v1.37.2's csi.go, under VolumeLimitScaling) reports the first of the
// pod's drivers a node lacks in a map's order, so where a node lacks two
// its message is drawn at random. Refusing every such pod is wider than
// that case, and never answers at random.
func missingDriversGap(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if len(pod.Spec.Volumes) == 0 {
		return nil
	}
	var names []string
	for _, d := range c.CSIDrivers {
		if d.Spec.PreventPodSchedulingIfMissing != nil && *d.Spec.PreventPodSchedulingIfMissing {
			names = append(names, d.Name)
		}
	}
	if len(names) < 2 {
		return nil
	}
	return &preempt.Unmodelled{Feature: "volumes", Object: "pod " + preempt.Key(pod.Namespace, pod.Name),
		Detail: fmt.Sprintf("has volumes, and CSIDrivers %s and %s set preventPodSchedulingIfMissing: where a node lacks both, NodeVolumeLimits names the one it meets first in a map's order, at random", names[0], names[1])}
}
