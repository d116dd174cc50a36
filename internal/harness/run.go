// Package harness runs an implementation of the preempt contract the way
// the project's tests, benchmarks and command do: it validates the input,
// builds the evaluator, actuates through a fake clientset and records the
// API calls as preempt.Actions. It is not part of the contract: an
// implementation never needs it.
package harness

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/preemptbench/preemptbench/preempt"
)

// NewClientset returns a fake clientset that answers as if it held every
// pod of c, the preemptor and c's PDBs, as the API server would hold them
// when the scheduler acts. The pods are copied in lazily: a pod of c enters
// the clientset's store the first time a call names it (a list or a watch
// of pods brings in every pod not yet there), so a decision on a cluster
// of 20000 pods copies the few it touches, not all of them. What a call
// sees and returns is the same as with every pod stored up front.
func NewClientset(c *preempt.Cluster, preemptor *v1.Pod) *fake.Clientset {
	objs := make([]runtime.Object, 0, len(c.PDBs)+1)
	if preemptor != nil {
		objs = append(objs, preemptor.DeepCopy())
	}
	for _, pdb := range c.PDBs {
		objs = append(objs, pdb.DeepCopy())
	}
	cs := fake.NewSimpleClientset(objs...)
	l := &lazyPods{tracker: cs.Tracker(), pods: c.Pods, seen: map[types.NamespacedName]bool{}}
	if preemptor != nil {
		l.seen[types.NamespacedName{Namespace: preemptor.Namespace, Name: preemptor.Name}] = true
	}
	cs.PrependReactor("*", "pods", l.react)
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.all()
		return false, nil, nil
	})
	return cs
}

// lazyPods brings a cluster's pods into a fake clientset's store when a
// call first names them.
type lazyPods struct {
	mu      sync.Mutex
	tracker k8stesting.ObjectTracker
	pods    []*v1.Pod
	byName  map[types.NamespacedName]*v1.Pod // built on first use
	seen    map[types.NamespacedName]bool    // brought in (or the preemptor)
	allIn   bool
}

// react is a reactor that never handles the call: it stores the pod the
// call names, if it is one of the cluster's and not yet stored, and lets
// the clientset's own reactor answer.
func (l *lazyPods) react(a k8stesting.Action) (bool, runtime.Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.allIn {
		return false, nil, nil
	}
	name := ""
	switch a := a.(type) {
	case interface{ GetName() string }:
		name = a.GetName()
	case interface{ GetObject() runtime.Object }:
		if m, ok := a.GetObject().(metav1.Object); ok {
			name = m.GetName()
		}
	}
	if name == "" {
		l.all()
		return false, nil, nil
	}
	l.one(types.NamespacedName{Namespace: a.GetNamespace(), Name: name})
	return false, nil, nil
}

func (l *lazyPods) one(k types.NamespacedName) {
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	if l.byName == nil {
		l.byName = make(map[types.NamespacedName]*v1.Pod, len(l.pods))
		for _, p := range l.pods {
			l.byName[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	if p := l.byName[k]; p != nil {
		l.add(p)
	}
}

// all stores every pod not yet stored (a list, a watch, a collection).
func (l *lazyPods) all() {
	if l.allIn {
		return
	}
	l.allIn = true
	for _, p := range l.pods {
		k := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		if !l.seen[k] {
			l.seen[k] = true
			l.add(p)
		}
	}
}

func (l *lazyPods) add(p *v1.Pod) {
	// Validate rejects a cluster with two pods of one name; a failed add
	// can only be that, and the first copy stays, as with every pod
	// stored up front.
	_ = l.tracker.Add(p.DeepCopy())
}

// Run validates the input, builds impl's evaluator for c and runs Preempt
// through a fresh fake clientset, filling Decision.Actions from the calls it
// recorded.
func Run(ctx context.Context, impl preempt.Implementation, c *preempt.Cluster, req *preempt.Request, fs ...Fault) (preempt.Decision, error) {
	if err := c.Validate(); err != nil {
		return preempt.Decision{}, err
	}
	if err := req.ValidateFor(c); err != nil {
		return preempt.Decision{}, err
	}
	if err := c.ValidatePreemptor(req.Pod); err != nil {
		return preempt.Decision{}, err
	}
	if err := Refusal(impl, c, req.Pod); err != nil {
		return preempt.Decision{}, err
	}
	if err := GateRefusal(impl, c, req.Pod, req.Config); err != nil {
		return preempt.Decision{}, err
	}
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return preempt.Decision{}, err
	}
	preempt.SetFilterConfig(ev, req.Config)
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

// PodGroupRefusal is the error of an implementation that does not model
// a feature the gang request req uses in c (preempt.PodGroupLimited), nil
// otherwise.
func PodGroupRefusal(impl preempt.Implementation, c *preempt.Cluster, req *preempt.PodGroupRequest) error {
	if l, ok := impl.(preempt.PodGroupLimited); ok {
		if u := l.UnmodelledPodGroup(c, req); u != nil {
			return u
		}
	}
	return nil
}

// GateRefusal is the error of an implementation that does not model a
// feature gate cfg sets away from its default (preempt.GateLimited), nil
// otherwise. An implementation that models a gate may still refuse a use
// of it in c (GateUseLimited).
func GateRefusal(impl preempt.Implementation, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) error {
	if r, ok := impl.(preempt.ReleaseFixed); ok {
		if u := preempt.ReleaseGap(r.UpstreamRelease(), cfg); u != nil {
			return u
		}
	}
	if u := preempt.BehaviourGap(impl, cfg); u != nil {
		return u
	}
	if what := usesPodGroups(c, pod); what != "" {
		if u := preempt.PodGroupGap(cfg, what); u != nil {
			return u
		}
	}
	if l, ok := impl.(preempt.GateLimited); ok {
		if u := preempt.GateGaps(cfg, l.ModelledGates()); u != nil {
			return u
		}
	}
	if l, ok := impl.(preempt.GateUseLimited); ok {
		if u := l.UnmodelledGateUse(c, pod, cfg); u != nil {
			return u
		}
	}
	return nil
}

// usesPodGroups names the first pod group, or pod of one, of c and pod,
// or is "".
func usesPodGroups(c *preempt.Cluster, pod *v1.Pod) string {
	if len(c.PodGroups) > 0 {
		return "podgroup " + preempt.Key(c.PodGroups[0].Namespace, c.PodGroups[0].Name)
	}
	if len(c.CompositePodGroups) > 0 {
		return "compositepodgroup " + preempt.Key(c.CompositePodGroups[0].Namespace, c.CompositePodGroups[0].Name)
	}
	for _, p := range append([]*v1.Pod{pod}, c.Pods...) {
		if p == nil {
			continue
		}
		if _, ok := preempt.PodGroupName(p); ok {
			return "pod " + preempt.Key(p.Namespace, p.Name) + " (spec.schedulingGroup)"
		}
	}
	return ""
}
