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
	k8stesting "k8s.io/client-go/testing"

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
func Run(ctx context.Context, impl preempt.Implementation, c *preempt.Cluster, req *preempt.Request, fs ...Fault) (preempt.Decision, error) {
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
	return Preempt(ctx, ev, c, req, fs...), nil
}

// Preempt runs ev.Preempt through a fresh fake clientset of c, failing the
// calls fs name, and fills Decision.Actions from the calls it recorded.
func Preempt(ctx context.Context, ev preempt.Evaluator, c *preempt.Cluster, req *preempt.Request, fs ...Fault) preempt.Decision {
	cs := NewClient(c, req.Pod, fs...)
	d := ev.Preempt(ctx, cs, req)
	d.Actions = cs.Recorded()
	return d
}

// Client is a fake clientset holding c's pods and the preemptor
// (NewClientset) that fails the calls its faults name and records the
// calls made through it.
type Client struct {
	*fake.Clientset
	failed func() map[int]string
}

// NewClient returns a Client with nothing recorded yet.
func NewClient(c *preempt.Cluster, preemptor *v1.Pod, fs ...Fault) *Client {
	cs := NewClientset(c, preemptor)
	failed := faults(cs, fs)
	cs.ClearActions()
	return &Client{Clientset: cs, failed: failed}
}

// Recorded is the calls made so far, each with the error it got.
func (c *Client) Recorded() []preempt.Action { return actions(c.Actions(), c.failed()) }

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

// NewAcceptingClientset returns a fake clientset that answers every call
// with success and stores nothing: the benchmarks' client, so that
// actuation is timed without a fixture of the cluster's pods. It records
// the calls; clear them (ClearActions) between uses.
func NewAcceptingClientset() *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	return cs
}
