package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/preempt"
)

// Stream is scheduler_perf's preemption workload as a stream of
// scheduling cycles on one evolving cluster: each preemptor in turn runs
// the filters and, fitting nowhere, preemption; its victims are removed
// (with the lower-priority pods nominated to its node, whose nominations
// preemption clears) and it is bound to the chosen node, as the scheduler
// binds it once the victims are gone. A preemptor that fits somewhere is
// bound to the first feasible node in name order (scoring is not
// modelled); one that cannot preempt stays pending, out of the cluster.
type Stream struct {
	// Cluster is the initial cluster; it is not modified.
	Cluster *preempt.Cluster
	// Preemptors arrive in this order; none of them is in Cluster.
	Preemptors []*v1.Pod
	Config     preempt.Config
	// Now is every request's Now.
	Now time.Time
	// Seed draws the dry runs' offsets: offset k is uniform in
	// [0, potential nodes), as upstream's rand.Int31n, from one PCG stream
	// seeded with Seed, so that every implementation sees the same offsets.
	Seed uint64
}

// Deterministic returns impl's variant that breaks SelectCandidate's
// final tie in list order, when it has one (upstream.Impl.ListOrderTie),
// and impl otherwise. A stream runs it: every later cycle depends on each
// pick, so a random tie would make every stream its own.
func Deterministic(impl preempt.Implementation) preempt.Implementation {
	if d, ok := impl.(interface{ Deterministic() preempt.Implementation }); ok {
		return d.Deterministic()
	}
	return impl
}

// StreamStep is what happened to one preemptor.
type StreamStep struct {
	Pod preempt.PodRef
	// Status is Schedulable (bound without preemption), Success (nominated,
	// then bound) or the decision's status when it could not preempt.
	Status  preempt.Code
	Node    string
	Victims []preempt.PodRef // with the pods whose nomination was cleared
	// Visited is the number of nodes the dry run visited.
	Visited int
}

// StreamResult is a finished stream.
type StreamResult struct {
	// Cluster is the final cluster.
	Cluster *preempt.Cluster
	Steps   []StreamStep
	// Bound counts the preemptors bound (Schedulable or Success), Victims
	// the pods removed, Visited the nodes every dry run visited.
	Bound, Victims, Visited int
}

// RunStream runs s on impl: one evaluator, moved from cycle to cycle by
// preempt.Follow (Update when the implementation has it, a new evaluator
// otherwise), filtering with preempt.FilterCodesOf (FilterCodes when the
// evaluator has it), actuating through an accepting clientset.
func RunStream(ctx context.Context, impl preempt.Implementation, s Stream) (StreamResult, error) {
	if err := s.Cluster.Validate(); err != nil {
		return StreamResult{}, err
	}
	for _, p := range s.Preemptors {
		if err := s.Cluster.ValidatePreemptor(p); err != nil {
			return StreamResult{}, err
		}
		if err := Refusal(impl, s.Cluster, p); err != nil {
			return StreamResult{}, err
		}
		if err := GateRefusal(impl, s.Cluster, p, s.Config); err != nil {
			return StreamResult{}, err
		}
	}
	c := *s.Cluster
	c.Pods = slices.Clone(s.Cluster.Pods)
	r, err := NewStreamRunner(impl, &c, s)
	if err != nil {
		return StreamResult{}, err
	}
	for _, p := range s.Preemptors {
		if err := r.Next(ctx, p); err != nil {
			return r.Result, err
		}
	}
	r.Result.Cluster = r.c
	return r.Result, nil
}

// StreamRunner runs a stream one preemptor at a time (RunStream, and the
// benchmark that times it).
type StreamRunner struct {
	impl   preempt.Implementation
	ev     preempt.Evaluator
	c      *preempt.Cluster
	cfg    preempt.Config
	now    time.Time
	rng    *rand.Rand
	order  *preempt.NodeOrder
	cs     interface{ ClearActions() }
	client *Client
	codes  []preempt.Code
	bound  map[string][]*v1.Pod // node -> bound pods
	nom    map[string][]*v1.Pod // node -> nominated pods
	at     []int                // positions of the gone pods in c.Pods
	Result StreamResult
}

// NewStreamRunner starts a stream on c, which it then changes in place:
// pass a cluster of your own (RunStream passes a copy).
func NewStreamRunner(impl preempt.Implementation, c *preempt.Cluster, s Stream) (*StreamRunner, error) {
	impl = Deterministic(impl)
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return nil, err
	}
	preempt.SetFilterConfig(ev, s.Config)
	cs := NewAcceptingClientset()
	r := &StreamRunner{
		impl: impl, ev: ev, c: c, cfg: s.Config, now: s.Now,
		rng:   rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15)),
		order: preempt.NewNodeOrder(c), cs: cs, client: &Client{Clientset: cs, failed: func() map[int]string { return nil }},
	}
	r.bound, r.nom = preempt.PodsByNode(c)
	return r, nil
}

// Next runs one scheduling cycle for pod.
func (r *StreamRunner) Next(ctx context.Context, pod *v1.Pod) error {
	step := StreamStep{Pod: preempt.PodRef{Namespace: pod.Namespace, Name: pod.Name}}
	codes := preempt.FilterCodesOf(ctx, r.ev, r.order, pod, r.codes)
	r.codes = codes // reused: no evaluator keeps a request past its call
	feasible := ""
	potential := int32(0)
	for i, code := range codes {
		switch code {
		case preempt.Success:
			if name := r.c.Nodes[i].Name; feasible == "" || name < feasible {
				feasible = name
			}
		case preempt.Unschedulable:
			potential++
		}
	}
	var gone []*v1.Pod
	switch {
	case feasible != "":
		step.Status, step.Node = preempt.Schedulable, feasible
	default:
		offset := int32(0)
		if potential > 0 {
			offset = r.rng.Int32N(potential)
		}
		// The cycle keeps nothing of the decision past the next one.
		req := &preempt.Request{Pod: pod, Codes: codes, Config: r.cfg, Offset: offset, Now: r.now, ReuseOutput: true}
		r.cs.ClearActions()
		d := r.ev.Preempt(ctx, r.client, req)
		step.Visited = len(d.Candidates) + len(d.NodeStatuses)
		if d.Status == preempt.Error {
			return fmt.Errorf("preemptor %s: %s", step.Pod, d.Message)
		}
		if d.NominatedNode == "" {
			step.Status = d.Status
			break
		}
		step.Status, step.Node = preempt.Success, d.NominatedNode
		for _, v := range d.Victims {
			p := find(r.bound[d.NominatedNode], v.Namespace, v.Name)
			if p == nil {
				return fmt.Errorf("preemptor %s: victim %s/%s is not on node %s", step.Pod, v.Namespace, v.Name, d.NominatedNode)
			}
			gone = append(gone, p)
		}
		prio := corev1helpers.PodPriority(pod)
		for _, p := range r.nom[d.NominatedNode] {
			if corev1helpers.PodPriority(p) < prio {
				gone = append(gone, p)
			}
		}
	}
	r.Result.Visited += step.Visited
	if step.Node == "" {
		r.Result.Steps = append(r.Result.Steps, step)
		return nil
	}
	placed := pod.DeepCopy()
	placed.Spec.NodeName = step.Node
	placed.Status.NominatedNodeName = ""
	placed.Status.Phase = v1.PodRunning
	ch := preempt.Change{Added: []*v1.Pod{placed}}
	for _, p := range gone {
		ref := preempt.PodRef{Namespace: p.Namespace, Name: p.Name}
		ch.Removed = append(ch.Removed, ref)
		step.Victims = append(step.Victims, ref)
		if preempt.IsBound(p) {
			r.bound[p.Spec.NodeName] = without(r.bound[p.Spec.NodeName], p)
		} else {
			r.nom[p.Status.NominatedNodeName] = without(r.nom[p.Status.NominatedNodeName], p)
		}
	}
	r.bound[step.Node] = append(r.bound[step.Node], placed)
	// c.Pods without the gone pods, in order, then the placed one.
	r.c.Pods, r.at = withoutAll(r.c.Pods, gone, r.at)
	r.c.Pods = append(r.c.Pods, placed)
	ev, err := preempt.Follow(r.impl, r.ev, r.c, ch)
	if err != nil {
		return fmt.Errorf("preemptor %s: following the cluster: %w", step.Pod, err)
	}
	preempt.SetFilterConfig(ev, r.cfg) // a new evaluator has none
	r.ev = ev
	r.Result.Bound++
	r.Result.Victims += len(gone)
	r.Result.Steps = append(r.Result.Steps, step)
	return nil
}

func find(ps []*v1.Pod, namespace, name string) *v1.Pod {
	for _, p := range ps {
		if p.Name == name && p.Namespace == namespace {
			return p
		}
	}
	return nil
}

func without(ps []*v1.Pod, p *v1.Pod) []*v1.Pod {
	if i := slices.Index(ps, p); i >= 0 {
		return slices.Delete(ps, i, i+1)
	}
	return ps
}

// withoutAll removes the pods of gone (found by pointer) from ps in place,
// keeping the order of the others: the runs between them move down by bulk
// copies, not pod by pod. at is scratch space, returned for reuse.
func withoutAll(ps, gone []*v1.Pod, at []int) ([]*v1.Pod, []int) {
	at = at[:0]
	for _, g := range gone {
		if i := slices.Index(ps, g); i >= 0 {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return ps, at
	}
	slices.Sort(at)
	at = slices.Compact(at) // a pod named twice is removed once
	w := at[0]
	for k, i := range at {
		end := len(ps)
		if k+1 < len(at) {
			end = at[k+1]
		}
		w += copy(ps[w:], ps[i+1:end])
	}
	clear(ps[w:])
	return ps[:w], at
}
