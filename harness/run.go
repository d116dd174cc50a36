// Package harness runs an implementation of the preempt contract the way
// the project's tests, benchmarks and command do: it validates the input,
// builds the evaluator, actuates through a fake clientset and records the
// API calls as preempt.Actions. It is not part of the contract: an
// implementation never needs it.
package harness

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/preemptbench/preemptbench/preempt"
)

// NewClientset returns a fake clientset holding every pod of c and the
// preemptor, as the API server would hold them when the scheduler acts.
func NewClientset(c *preempt.Cluster, preemptor *v1.Pod) *fake.Clientset {
	objs := make([]runtime.Object, 0, len(c.Pods)+len(c.PDBs)+1)
	for _, p := range c.Pods {
		objs = append(objs, p.DeepCopy())
	}
	if preemptor != nil {
		objs = append(objs, preemptor.DeepCopy())
	}
	for _, pdb := range c.PDBs {
		objs = append(objs, pdb.DeepCopy())
	}
	return fake.NewSimpleClientset(objs...)
}

// Run validates the input, builds impl's evaluator for c and runs Preempt
// through a fresh fake clientset, filling Decision.Actions from the calls it
// recorded.
func Run(ctx context.Context, impl preempt.Implementation, c *preempt.Cluster, req *preempt.Request) (preempt.Decision, error) {
	if err := c.Validate(); err != nil {
		return preempt.Decision{}, err
	}
	if err := req.Validate(); err != nil {
		return preempt.Decision{}, err
	}
	if err := c.ValidatePreemptor(req.Pod); err != nil {
		return preempt.Decision{}, err
	}
	if err := Refusal(impl, c, req.Pod); err != nil {
		return preempt.Decision{}, err
	}
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return preempt.Decision{}, err
	}
	return Preempt(ctx, ev, c, req), nil
}

// Preempt runs ev.Preempt through a fresh fake clientset of c and fills
// Decision.Actions from the calls it recorded.
func Preempt(ctx context.Context, ev preempt.Evaluator, c *preempt.Cluster, req *preempt.Request) preempt.Decision {
	cs := NewClientset(c, req.Pod)
	cs.ClearActions()
	d := ev.Preempt(ctx, cs, req)
	d.Actions = Actions(cs.Actions())
	return d
}

// Refusal is the error of an implementation that does not model a feature
// c or pod uses (preempt.Limited), nil otherwise.
func Refusal(impl preempt.Implementation, c *preempt.Cluster, pod *v1.Pod) error {
	if l, ok := impl.(preempt.Limited); ok {
		if u := l.Unmodelled(c, pod); u != nil {
			return u
		}
	}
	return nil
}
