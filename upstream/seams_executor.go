//go:build !preemptbench_v1_35

package upstream

// The seams of preemption's actuation since v1.36, the current release's
// and v1.36's alike (seams_v1_35.go has v1.35's, whose Evaluator acted
// itself).

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
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
