package harness

import (
	"context"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"
)

// AcceptingClientset is the benchmarks' and streams' client: every call
// succeeds and nothing is stored, so that actuation is timed without a
// fixture of the cluster's pods. The calls preemption makes (a pod's
// status patch, a pod's deletion, both as upstream's util.PatchPodStatus
// and util.DeletePod make them) are answered directly and counted, not
// recorded: client-go's fake records each call as a deep-copied action and
// builds a typed client per call, which cost more than an optimized
// decision and would be timed as if it were preemption's. Every other
// call goes to a fake clientset (client-go's) whose one reactor accepts
// it and which records it (Actions).
type AcceptingClientset struct {
	*fake.Clientset
	core  *acceptingCoreV1
	calls atomic.Int64
}

// NewAcceptingClientset returns an AcceptingClientset with no calls made.
func NewAcceptingClientset() *AcceptingClientset {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	a := &AcceptingClientset{Clientset: cs}
	a.core = &acceptingCoreV1{CoreV1Interface: cs.CoreV1(), c: a, pods: map[string]*acceptingPods{}}
	return a
}

// CoreV1 answers pod patches and deletions itself.
func (c *AcceptingClientset) CoreV1() corev1client.CoreV1Interface { return c.core }

// Calls is how many pod patches and deletions were answered since the
// last ClearActions.
func (c *AcceptingClientset) Calls() int { return int(c.calls.Load()) }

// ClearActions forgets the recorded actions and the count of calls.
func (c *AcceptingClientset) ClearActions() {
	c.Clientset.ClearActions()
	c.calls.Store(0)
}

type acceptingCoreV1 struct {
	corev1client.CoreV1Interface
	c    *AcceptingClientset
	mu   sync.Mutex
	pods map[string]*acceptingPods
	last atomic.Pointer[acceptingPods] // the namespace asked for last (a decision's victims share a few)
}

func (c *acceptingCoreV1) Pods(namespace string) corev1client.PodInterface {
	if p := c.last.Load(); p != nil && p.namespace == namespace {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pods[namespace]
	if p == nil {
		p = &acceptingPods{PodInterface: c.CoreV1Interface.Pods(namespace), c: c.c, namespace: namespace}
		c.pods[namespace] = p
	}
	c.last.Store(p)
	return p
}

type acceptingPods struct {
	corev1client.PodInterface
	c         *AcceptingClientset
	namespace string
}

// Patch succeeds, returning an empty pod as client-go's fake does when a
// reactor accepts a call without an object: always the same one, which
// its callers (preemption's status patches, upstream's and actuation's)
// discard; a new one per call was a third of an optimized gang stream's
// allocated bytes. Do not modify it.
func (p *acceptingPods) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*v1.Pod, error) {
	p.c.calls.Add(1)
	return acceptedPod, nil
}

var acceptedPod = &v1.Pod{}

// Delete succeeds.
func (p *acceptingPods) Delete(context.Context, string, metav1.DeleteOptions) error {
	p.c.calls.Add(1)
	return nil
}
