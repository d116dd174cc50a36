package preempt

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// NewClientset returns a fake clientset holding every pod of c and the
// preemptor, as the API server would hold them when the scheduler acts.
func NewClientset(c *Cluster, preemptor *v1.Pod) *fake.Clientset {
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
func Run(ctx context.Context, impl Implementation, c *Cluster, req *Request) (Decision, error) {
	if err := c.Validate(); err != nil {
		return Decision{}, err
	}
	if err := req.Validate(); err != nil {
		return Decision{}, err
	}
	if err := c.ValidatePreemptor(req.Pod); err != nil {
		return Decision{}, err
	}
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return Decision{}, err
	}
	cs := NewClientset(c, req.Pod)
	cs.ClearActions()
	d := ev.Preempt(ctx, cs, req)
	d.Actions = Actions(cs.Actions())
	return d, nil
}
