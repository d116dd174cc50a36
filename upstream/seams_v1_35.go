//go:build preemptbench_v1_35

package upstream

// v1.35's side of the seams where it differs from v1.36
// (seams_v1_36_only.go has v1.36's; seams_v1_36.go what both share).
// Built with the tags preemptbench_v1_35,preemptbench_v1_36 in the module
// releases/v1.35.4, which pins k8s.io/kubernetes v1.35.4.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Version is the release this build runs.
const Version = "v1.35.4"

// executor is what actuates a preemption: v1.35's Evaluator does it
// itself (PreemptPod, and the set of pods preempting asynchronously that
// PreEnqueue reads); v1.36 moved it to an Executor.
type executor = preemption.Evaluator

// executorPreemptor is the preemptor PreemptPod takes: the pod.
type executorPreemptor = *v1.Pod

// executorOf is dp's executor: its Evaluator.
func executorOf(dp *defaultpreemption.DefaultPreemption) *executor { return dp.Evaluator }

// newEvaluator is the preemption Evaluator of i that actuates with e: e
// itself, driving i, for PreEnqueue reads the preempting pods from the
// plugin's Evaluator (e).
func newEvaluator(name string, _ fwk.Handle, i preemption.Interface, e *executor) *preemption.Evaluator {
	e.PluginName, e.Interface = name, i
	return e
}

// asPreemptor is p as PreemptPod's preemptor.
func asPreemptor(p *podPreemptor) executorPreemptor { return p.Pod }

// newSchedulerCache is kube-scheduler's scheduler cache (v1.35's New
// takes the assumed pods' expiry, which kube-scheduler sets to 0, and no
// gate).
func newSchedulerCache(ctx context.Context, _ feature.Features) internalcache.Cache {
	return internalcache.New(ctx, 0, nil)
}

// newSnapshot builds w.snapshot of the bound pods on ev's nodes, and
// returns the framework options that list from it: v1.35's preemption
// lists no pod groups, and its evaluator has no mutable snapshot lister.
func (w *world) newSnapshot(_ klog.Logger, ev *evaluator, bound, _ []*v1.Pod) ([]frameworkruntime.Option, error) {
	w.snapshot = internalcache.NewSnapshot(bound, ev.nodes)
	w.lister = w.snapshot
	return []frameworkruntime.Option{frameworkruntime.WithSnapshotSharedLister(w.lister)}, nil
}

// releaseOptions are the framework options of kube-scheduler v1.35
// beyond the world's: none. (Its scheduler.New gives a WorkloadManager
// under GenericWorkload, which only GangScheduling reads, for pods with
// spec.workloadRef: the contract carries none, so the framework needs
// none; and its package, absent at the current release, would break `go
// mod tidy` of every module that requires this one. v1.35 has no
// pods-in-PreBind map.)
func (w *world) releaseOptions() []frameworkruntime.Option { return nil }

// addToQueue adds p to the scheduling queue q (v1.35's Add takes a
// logger).
func addToQueue(ctx context.Context, q internalqueue.SchedulingQueue, p *v1.Pod) {
	q.Add(klog.FromContext(ctx), p)
}
