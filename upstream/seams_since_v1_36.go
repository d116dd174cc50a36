//go:build !preemptbench_v1_35

package upstream

// The seams alike in v1.36 and the current release (seams_v1_35.go has
// v1.35's side): preemption's actuation, whose Evaluator acted itself in
// v1.35, the framework's options and the queue.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// executor is what actuates a preemption: since v1.36 the plugin's
// Executor (seams_v1_35.go: v1.35's Evaluator did it itself).
type executor = preemption.Executor

// executorPreemptor is the preemptor the executor's PreemptPod takes.
type executorPreemptor = preemption.ExecutorPreemptor

// executorOf is dp's executor.
func executorOf(dp *defaultpreemption.DefaultPreemption) *executor { return dp.Executor }

// newEvaluator is the preemption Evaluator of i that actuates with e.
func newEvaluator(name string, fh fwk.Handle, i preemption.Interface, e *executor) *preemption.Evaluator {
	return preemption.NewEvaluator(name, fh, i, e)
}

// asPreemptor is p as the executor's preemptor.
func asPreemptor(p *podPreemptor) executorPreemptor { return p }

// releaseOptions are the framework options of kube-scheduler this
// release has beyond the world's: the pods-in-PreBind map, and with
// GenericWorkload the PodGroupManager, the scheduler cache (newSnapshot
// built it).
func (w *world) releaseOptions() []frameworkruntime.Option {
	opts := []frameworkruntime.Option{frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap())}
	if w.fts.EnableGenericWorkload {
		opts = append(opts, frameworkruntime.WithPodGroupManager(w.cache))
	}
	return opts
}

// addToQueue adds p to the scheduling queue q.
func addToQueue(ctx context.Context, q internalqueue.SchedulingQueue, p *v1.Pod) { q.Add(ctx, p) }
