//go:build preemptbench_v1_36

package upstream

// v1.36's side of the seams (seams.go has the current release's): the
// scheduler APIs this package calls that v1.37 changed. Built with the
// tag preemptbench_v1_36, in the module releases/v1.36.3, which pins
// k8s.io/kubernetes v1.36.3.

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/preemptbench/preemptbench/preempt"
)

// snapshotLister is the framework's snapshot lister: the snapshot.
type snapshotLister = *internalcache.Snapshot

// setVictimOrder gives dp upstream's util.MoreImportantPod with the
// contract's final key (tieByKey): v1.36's DefaultPreemption sorts pods,
// not v1.37's victims.
func setVictimOrder(dp *defaultpreemption.DefaultPreemption) {
	dp.MoreImportantPod = moreImportantPod
}

func moreImportantPod(a, b *v1.Pod) bool {
	if util.MoreImportantPod(a, b) {
		return true
	}
	if util.MoreImportantPod(b, a) {
		return false
	}
	return tieByKey(a, b)
}

// SelectVictimsOnNode is upstream's, recorded.
func (p *plugin) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	victims, n, status := p.DefaultPreemption.SelectVictimsOnNode(ctx, state, pod, nodeInfo, pdbs)
	return p.record(nodeInfo, victims, n, status)
}

func (s *standInPreemption) SelectVictimsOnNode(context.Context, fwk.CycleState, *v1.Pod, fwk.NodeInfo, []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	return s.victims, 0, nil
}

// selectVictims is the plugin's SelectVictimsOnNode on a copy of ni (v1.36
// lists the victims itself).
func (r *request) selectVictims(ctx context.Context, ni fwk.NodeInfo, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status, error) {
	pods, n, st := r.pl.DefaultPreemption.SelectVictimsOnNode(ctx, r.state.Clone(), r.pod, ni.Snapshot(), pdbs)
	return pods, n, st, nil
}

// recordPreemptPodErrors makes e's PreemptPod give record every error it
// returns.
func recordPreemptPodErrors(e *executor, record func(error)) {
	preemptPod := e.PreemptPod
	e.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor executorPreemptor, victim *v1.Pod, pluginName string) error {
		err := preemptPod(ctx, c, preemptor, victim, pluginName)
		if err != nil {
			record(err)
		}
		return err
	}
}

// holdPreemptPod makes e's PreemptPod call hold instead of preempting.
func holdPreemptPod(e *executor, hold func(victim *v1.Pod)) {
	e.PreemptPod = func(_ context.Context, _ preemption.Candidate, _ executorPreemptor, victim *v1.Pod, _ string) error {
		hold(victim)
		return nil
	}
}

// preemptVictim is e's PreemptPod of victim (v1.36's has no in-memory
// preemption).
func preemptVictim(ctx context.Context, e *executor, c preemption.Candidate, preemptor executorPreemptor, victim *v1.Pod, pluginName string) error {
	return e.PreemptPod(ctx, c, preemptor, victim, pluginName)
}

// addPodGroups adds nothing: v1.36's cache holds no PodGroup objects (its
// API has none; preempt.PodGroupGap refuses clusters using them), and
// newSnapshot gives none.
func addPodGroups(klog.Logger, internalcache.Cache, feature.Features, []*preempt.PodGroup, []*preempt.CompositePodGroup, []*v1.Pod) {
}

// schedulerPlacement refuses Impl.SchedulerPlacement: v1.36 has no
// pod-group scheduling cycle.
func schedulerPlacement(*evaluator) (preempt.Evaluator, error) {
	return nil, errors.New("upstream: SchedulerPlacement needs the pod-group scheduling cycle of v1.37 or later")
}

// feedsDRA: this release's DRA manager is not fed the cluster's
// resource.k8s.io objects; a pod DynamicResources looks at is refused
// (Unmodelled).
const feedsDRA = false

// newDRAManager is the DRA manager over a ResourceClaim assume cache and
// no ResourceSlice tracker. Its caches stay empty, which is right for pods
// without resource claims (a pod with claims is refused: Unmodelled).
func newDRAManager(ctx context.Context, f informers.SharedInformerFactory, _ volumeObjectSet) (fwk.SharedDRAManager, error) {
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), f.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	return dynamicresources.NewDRAManager(ctx, claims, nil, f), nil
}

// deviceTaintRuleObjects: the DeviceTaintRules of a build for v1.36 are
// stand-ins, and its DRA manager is not fed (feedsDRA).
func deviceTaintRuleObjects([]*preempt.DeviceTaintRule) []runtime.Object { return nil }

// addDeviceTaintRules adds nothing: v1.36's DRA manager is not fed
// (feedsDRA), a pod DynamicResources looks at is refused, and
// DeviceTaintRules matter to no other.
func addDeviceTaintRules(informers.SharedInformerFactory, []*preempt.DeviceTaintRule) error {
	return nil
}

// missingDriversGap: v1.36 runs NodeVolumeLimits' check of missing CSI
// drivers only under VolumeLimitScaling, off by default there (and v1.35's
// CSIDriver has no preventPodSchedulingIfMissing): no answer is drawn at
// random.
func missingDriversGap(*preempt.Cluster, *v1.Pod) *preempt.Unmodelled { return nil }
