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
// (under GenericWorkload, a victim group of mode All from every node it
// is on; with them the lower-priority pods nominated to its node, whose
// nominations preemption clears) and it is bound to the chosen node, as
// the scheduler binds it once the victims are gone. A preemptor that fits
// somewhere is bound to the first feasible node in name order (scoring is
// not modelled); one that cannot preempt stays pending, out of the
// cluster.
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
	impl  preempt.Implementation
	ev    preempt.Evaluator
	c     *preempt.Cluster
	cfg   preempt.Config
	now   time.Time
	rng   *rand.Rand
	order *preempt.NodeOrder
	cs    *AcceptingClientset
	codes []preempt.Code
	bound map[preempt.PodRef]*v1.Pod // bound pods by name
	nom   map[string][]*v1.Pod       // node -> nominated pods
	pods  *podIndex                  // positions in c.Pods
	// scratch of Next
	gone    []*v1.Pod
	added   []*v1.Pod
	removed []preempt.PodRef
	Result  StreamResult
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
	preempt.SetFilterNow(ev, s.Now)
	cs := NewAcceptingClientset()
	r := &StreamRunner{
		impl: impl, ev: ev, c: c, cfg: s.Config, now: s.Now,
		rng:   rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15)),
		order: preempt.NewNodeOrder(c), cs: cs,
	}
	_, r.nom = preempt.PodsByNode(c)
	r.bound = make(map[preempt.PodRef]*v1.Pod, len(c.Pods))
	for _, p := range c.Pods {
		if preempt.IsBound(p) {
			r.bound[preempt.PodRef{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	r.pods = newPodIndex(c.Pods)
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
	gone := r.gone[:0]
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
		d := r.ev.Preempt(ctx, r.cs, req)
		step.Visited = len(d.Candidates) + len(d.NodeStatuses)
		if d.Status == preempt.Error {
			return fmt.Errorf("preemptor %s: %s", step.Pod, d.Message)
		}
		if d.NominatedNode == "" {
			step.Status = d.Status
			break
		}
		step.Status, step.Node = preempt.Success, d.NominatedNode
		// Under GenericWorkload a victim in a pod group of mode All may
		// be on another node: every scheduled member of the group goes.
		for _, v := range d.Victims {
			p := r.bound[preempt.PodRef{Namespace: v.Namespace, Name: v.Name}]
			if p == nil {
				return fmt.Errorf("preemptor %s: victim %s/%s is not a bound pod of the cluster", step.Pod, v.Namespace, v.Name)
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
	placed := placedCopy(pod)
	placed.Spec.NodeName = step.Node
	placed.Status.NominatedNodeName = ""
	placed.Status.Phase = v1.PodRunning
	// The change's lists are scratch: no evaluator keeps a change past
	// its Update.
	r.added = append(r.added[:0], placed)
	ch := preempt.Change{Added: r.added, Removed: r.removed[:0]}
	if len(gone) > 0 {
		step.Victims = make([]preempt.PodRef, 0, len(gone))
	}
	for _, p := range gone {
		ref := preempt.PodRef{Namespace: p.Namespace, Name: p.Name}
		ch.Removed = append(ch.Removed, ref)
		step.Victims = append(step.Victims, ref)
		if preempt.IsBound(p) {
			delete(r.bound, ref)
		} else {
			r.nom[p.Status.NominatedNodeName] = without(r.nom[p.Status.NominatedNodeName], p)
		}
	}
	r.bound[step.Pod] = placed
	// c.Pods without the gone pods, in order, then the placed one.
	r.c.Pods = r.pods.remove(r.c.Pods, gone)
	r.c.Pods = r.pods.add(r.c.Pods, placed)
	ev, err := preempt.Follow(r.impl, r.ev, r.c, ch)
	if err != nil {
		return fmt.Errorf("preemptor %s: following the cluster: %w", step.Pod, err)
	}
	preempt.SetFilterConfig(ev, r.cfg) // a new evaluator has none
	preempt.SetFilterNow(ev, r.now)
	r.ev = ev
	r.gone, r.removed = gone, ch.Removed
	r.Result.Bound++
	r.Result.Victims += len(gone)
	r.Result.Steps = append(r.Result.Steps, step)
	return nil
}

func without(ps []*v1.Pod, p *v1.Pod) []*v1.Pod {
	if i := slices.Index(ps, p); i >= 0 {
		return slices.Delete(ps, i, i+1)
	}
	return ps
}

// podIndex finds pods in a cluster's pod list that changes only by
// removals, which keep the order of the others, and appends: each pod
// gets a sequence number, increasing along the list, so a pod's position
// is a binary search of the numbers, and removing v pods of n costs
// O(v log n) to find them and one bulk move of the list, not the v scans
// of the list a search by pointer costs (a pod group of mode All evicts
// its members on every node at once).
type podIndex struct {
	seq  map[*v1.Pod]int // a listed pod's number
	seqs []int           // the numbers of the list, in its order
	next int
	at   []int // scratch: positions of the pods to remove
}

func newPodIndex(ps []*v1.Pod) *podIndex {
	x := &podIndex{seq: make(map[*v1.Pod]int, len(ps)), seqs: make([]int, len(ps))}
	for i, p := range ps {
		x.seq[p], x.seqs[i] = i, i
	}
	x.next = len(ps)
	return x
}

// add appends p to ps, the list x indexes.
func (x *podIndex) add(ps []*v1.Pod, p *v1.Pod) []*v1.Pod {
	x.seq[p] = x.next
	x.seqs = append(x.seqs, x.next)
	x.next++
	return append(ps, p)
}

// remove removes the pods of gone (by pointer; one not in ps, or named
// twice, is removed at most once) from ps, the list x indexes, in place,
// keeping the order of the others: the runs between them move down by
// bulk copies.
func (x *podIndex) remove(ps, gone []*v1.Pod) []*v1.Pod {
	x.at = x.at[:0]
	for _, g := range gone {
		s, ok := x.seq[g]
		if !ok {
			continue
		}
		delete(x.seq, g)
		if i, found := slices.BinarySearch(x.seqs, s); found {
			x.at = append(x.at, i)
		}
	}
	if len(x.at) == 0 {
		return ps
	}
	slices.Sort(x.at)
	w := x.at[0]
	for k, i := range x.at {
		end := len(ps)
		if k+1 < len(x.at) {
			end = x.at[k+1]
		}
		copy(x.seqs[w:], x.seqs[i+1:end])
		w += copy(ps[w:], ps[i+1:end])
	}
	clear(ps[w:])
	x.seqs = x.seqs[:w]
	return ps[:w]
}

// placedCopy is pod as a new object to bind: a shallow copy, sharing
// pod's labels, containers, volumes and conditions, which nothing writes
// (an evaluator treats a cluster's pods as read-only, and Update takes
// its own copy where it keeps one). The harness's bookkeeping is timed
// with the stream: a deep copy of every bound preemptor was 15% of
// optimized's time at PreemptionPVs' 5 nodes.
func placedCopy(pod *v1.Pod) *v1.Pod {
	placed := *pod
	return &placed
}
