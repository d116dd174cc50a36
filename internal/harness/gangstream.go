package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// Gang is a preemptor gang: its PodGroup and its unscheduled members in
// queue order.
type Gang struct {
	PodGroup *preempt.PodGroup
	Members  []*v1.Pod
}

// GangStream is one of scheduler_perf's workload_preemption tests
// (GangPreemptionBasic, GangPreemptionPodGroups, GangPreemptionAffinity)
// as a stream of gang scheduling cycles on one evolving cluster. The
// initial pods are placed as scheduler_perf's scheduler would leave them
// (the scenario's gang shapes place them deterministically, as the
// podgroup shapes do). Then each gang, in creation order:
//
//  1. runs the contract's placement, preempt.FirstFit, over a
//     preempt.PlacementView of the cluster as it is (Fits is the
//     evaluator's filter phase for the member, with the members placed
//     before it in the cluster); when every member fits, they are bound
//     there and the gang is done (Schedulable);
//  2. otherwise the members placed are taken back and the gang preempts
//     as one: PreemptPodGroup (GenericWorkload on, synchronous actuation
//     through an accepting clientset), whose decision is applied: its
//     victims leave the cluster (a victim group of mode All with every
//     member it lists, on any node), and each member is bound to the node
//     it is nominated to, as the scheduler binds the gang once they are
//     gone. A decision that is not Success, or leaves a member
//     unplaced, ends the stream with an error: every gang of upstream's
//     workloads is scheduled.
//
// Between placements and gangs the evaluator follows the cluster as the
// single-pod streams' does (preempt.Follow: Update when the
// implementation has it, a new evaluator otherwise, with the stream's
// filter configuration). Nominated pods are left as they are: gang
// preemption clears only the nominations to a node named "cluster"
// (docs/upstream-findings.md), and the gang shapes have none.
type GangStream struct {
	// Cluster is the initial cluster, holding the gangs' PodGroups; it
	// is not modified.
	Cluster *preempt.Cluster
	// Gangs arrive in this order; none of their members is in Cluster.
	Gangs  []Gang
	Config preempt.Config
	// Now is every request's Now, and the start time of a bound member.
	Now time.Time
}

// GangStep is what happened to one gang.
type GangStep struct {
	// PodGroup is the gang's group.
	PodGroup preempt.PodRef
	// Status is Schedulable (every member fit without preemption) or
	// Success (preempted, then bound).
	Status preempt.Code
	// Nodes are the members' nodes, in the gang's order.
	Nodes []string
	// Victims are the pods the gang's preemption removed, in the
	// decision's order.
	Victims []preempt.PodRef
}

// GangStreamResult is a finished gang stream.
type GangStreamResult struct {
	// Cluster is the final cluster.
	Cluster *preempt.Cluster
	Steps   []GangStep
	// Bound counts the member pods bound, Victims the pods removed.
	Bound, Victims int
}

// GangRefusal is the error of an implementation that cannot run gang
// streams on c: one whose evaluator is no preempt.PodGroupPreempter, or
// that refuses a member (Refusal) or a gang (PodGroupRefusal), or the
// cluster or the configuration
// (GateRefusal without a single preemptor: a member is preempted for as
// its gang, which GateUseLimited's single-preemptor refusal is not about).
// Nil otherwise.
func GangRefusal(impl preempt.Implementation, c *preempt.Cluster, gangs []Gang, cfg preempt.Config) error {
	for _, g := range gangs {
		for _, m := range g.Members {
			if err := Refusal(impl, c, m); err != nil {
				return err
			}
		}
		if err := PodGroupRefusal(impl, c, &preempt.PodGroupRequest{PodGroup: g.PodGroup, Pods: g.Members, Config: cfg}); err != nil {
			return err
		}
	}
	if err := GateRefusal(impl, c, nil, cfg); err != nil {
		return err
	}
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return err
	}
	if _, ok := ev.(preempt.PodGroupPreempter); !ok {
		return errors.New("gang preemption is not modelled (no preempt.PodGroupPreempter)")
	}
	return nil
}

// RunGangStream runs s on impl (see GangStream).
func RunGangStream(ctx context.Context, impl preempt.Implementation, s GangStream) (GangStreamResult, error) {
	if err := s.Cluster.Validate(); err != nil {
		return GangStreamResult{}, err
	}
	for _, g := range s.Gangs {
		for _, m := range g.Members {
			if err := s.Cluster.ValidatePreemptor(m); err != nil {
				return GangStreamResult{}, err
			}
		}
	}
	if err := GangRefusal(impl, s.Cluster, s.Gangs, s.Config); err != nil {
		return GangStreamResult{}, err
	}
	c := *s.Cluster
	c.Pods = slices.Clone(s.Cluster.Pods)
	r, err := NewGangStreamRunner(impl, &c, s)
	if err != nil {
		return GangStreamResult{}, err
	}
	for _, g := range s.Gangs {
		if err := r.Next(ctx, g); err != nil {
			return r.Result, err
		}
	}
	r.Result.Cluster = r.c
	return r.Result, nil
}

// GangStreamRunner runs a gang stream one gang at a time (RunGangStream,
// and the benchmark that times it).
type GangStreamRunner struct {
	impl  preempt.Implementation
	ev    preempt.Evaluator
	c     *preempt.Cluster
	cfg   preempt.Config
	now   time.Time
	order *preempt.NodeOrder
	names []string       // node names in name order
	at    map[string]int // node name -> position in c.Nodes
	cs    *AcceptingClientset
	bound map[preempt.PodRef]*v1.Pod // bound pods by name
	pods  *podIndex                  // positions in c.Pods
	// Result is what the gangs so far did.
	Result GangStreamResult

	// nameAt is each of names' position in c.Nodes; nextName the name
	// after the one nodeAt found last.
	nameAt   []int
	nextName int
}

// NewGangStreamRunner starts a gang stream on c, which it then changes in
// place: pass a cluster of your own (RunGangStream passes a copy).
func NewGangStreamRunner(impl preempt.Implementation, c *preempt.Cluster, s GangStream) (*GangStreamRunner, error) {
	impl = Deterministic(impl)
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return nil, err
	}
	if _, ok := ev.(preempt.PodGroupPreempter); !ok {
		return nil, fmt.Errorf("%s: gang preemption is not modelled (no preempt.PodGroupPreempter)", impl.Name())
	}
	preempt.SetFilterConfig(ev, s.Config)
	cs := NewAcceptingClientset()
	r := &GangStreamRunner{
		impl: impl, ev: ev, c: c, cfg: s.Config, now: s.Now,
		order: preempt.NewNodeOrder(c), at: make(map[string]int, len(c.Nodes)),
		cs:    cs,
		bound: make(map[preempt.PodRef]*v1.Pod, len(c.Pods)),
	}
	for i, n := range c.Nodes {
		r.names = append(r.names, n.Name)
		r.at[n.Name] = i
	}
	slices.Sort(r.names)
	for _, n := range r.names {
		r.nameAt = append(r.nameAt, r.at[n])
	}
	for _, p := range c.Pods {
		if preempt.IsBound(p) {
			r.bound[preempt.PodRef{Namespace: p.Namespace, Name: p.Name}] = p
		}
	}
	r.pods = newPodIndex(c.Pods)
	return r, nil
}

// Next runs one gang's scheduling cycle.
func (r *GangStreamRunner) Next(ctx context.Context, g Gang) error {
	step := GangStep{PodGroup: preempt.PodRef{Namespace: g.PodGroup.Namespace, Name: g.PodGroup.Name}}
	view := &streamView{r: r}
	nodes, err := preempt.FirstFit(ctx, view, g.Members)
	if err != nil {
		return fmt.Errorf("gang %s: placing: %w", step.PodGroup, err)
	}
	if !slices.Contains(nodes, "") {
		step.Status, step.Nodes = preempt.Schedulable, nodes
		r.Result.Bound += len(g.Members)
		r.Result.Steps = append(r.Result.Steps, step)
		return nil
	}
	// Not every member fits: the placed ones are taken back, and the
	// gang preempts.
	if err := r.change(view.placed, nil); err != nil {
		return fmt.Errorf("gang %s: taking back the placed members: %w", step.PodGroup, err)
	}
	pg, ok := r.ev.(preempt.PodGroupPreempter)
	if !ok {
		return fmt.Errorf("gang %s: %s's evaluator does not model gang preemption", step.PodGroup, r.impl.Name())
	}
	r.cs.ClearActions()
	req := &preempt.PodGroupRequest{PodGroup: g.PodGroup, Pods: g.Members, Config: r.cfg, Now: r.now}
	d := pg.PreemptPodGroup(ctx, r.cs, req)
	if d.Status != preempt.Success {
		return fmt.Errorf("gang %s: %s: %s", step.PodGroup, d.Status, d.Message)
	}
	if len(d.Nominations) != len(g.Members) {
		return fmt.Errorf("gang %s: %d nominations for %d members", step.PodGroup, len(d.Nominations), len(g.Members))
	}
	var gone, placed []*v1.Pod
	for _, v := range d.Victims {
		ref := preempt.PodRef{Namespace: v.Namespace, Name: v.Name}
		p := r.bound[ref]
		if p == nil {
			return fmt.Errorf("gang %s: victim %s is not a bound pod of the cluster", step.PodGroup, ref)
		}
		gone = append(gone, p)
		step.Victims = append(step.Victims, ref)
	}
	for i, m := range g.Members {
		n := d.Nominations[i]
		if n.Namespace != m.Namespace || n.Name != m.Name {
			return fmt.Errorf("gang %s: nomination %d is %s/%s, not member %s/%s", step.PodGroup, i, n.Namespace, n.Name, m.Namespace, m.Name)
		}
		if n.Node == "" {
			return fmt.Errorf("gang %s: member %s/%s left unplaced (%s)", step.PodGroup, m.Namespace, m.Name, d.Message)
		}
		placed = append(placed, r.bind(m, n.Node))
		step.Nodes = append(step.Nodes, n.Node)
	}
	if err := r.change(gone, placed); err != nil {
		return fmt.Errorf("gang %s: following the cluster: %w", step.PodGroup, err)
	}
	step.Status = preempt.Success
	r.Result.Bound += len(g.Members)
	r.Result.Victims += len(gone)
	r.Result.Steps = append(r.Result.Steps, step)
	return nil
}

// nodeAt is node's position in c.Nodes. A placement asks for Nodes()
// in order: the name after the last one asked for is tried before the
// map.
func (r *GangStreamRunner) nodeAt(node string) (int, bool) {
	if k := r.nextName; k < len(r.names) && r.names[k] == node {
		r.nextName++
		return r.nameAt[k], true
	}
	i, ok := r.at[node]
	if ok {
		k, _ := slices.BinarySearch(r.names, node)
		r.nextName = k + 1
	}
	return i, ok
}

// bind is m bound to node, running since the stream's Now.
func (r *GangStreamRunner) bind(m *v1.Pod, node string) *v1.Pod {
	p := placedCopy(m)
	p.Spec.NodeName = node
	p.Status.NominatedNodeName = ""
	p.Status.Phase = v1.PodRunning
	start := metav1.NewTime(r.now)
	p.Status.StartTime = &start
	return p
}

// change removes the bound pods of gone from the cluster and adds added
// (bound pods), then moves the evaluator to the new cluster.
func (r *GangStreamRunner) change(gone, added []*v1.Pod) error {
	if len(gone)+len(added) == 0 {
		return nil
	}
	var ch preempt.Change
	for _, p := range gone {
		ref := preempt.PodRef{Namespace: p.Namespace, Name: p.Name}
		ch.Removed = append(ch.Removed, ref)
		delete(r.bound, ref)
	}
	r.c.Pods = r.pods.remove(r.c.Pods, gone)
	for _, p := range added {
		r.bound[preempt.PodRef{Namespace: p.Namespace, Name: p.Name}] = p
		r.c.Pods = r.pods.add(r.c.Pods, p)
	}
	ch.Added = added
	ev, err := preempt.Follow(r.impl, r.ev, r.c, ch)
	if err != nil {
		return err
	}
	preempt.SetFilterConfig(ev, r.cfg) // a new evaluator has none
	r.ev = ev
	return nil
}

// streamView is preempt.PlacementView over the stream's cluster as it is:
// Fits is the evaluator's filter phase for the member (run once per
// member, with the members placed before it in the cluster), Place binds
// the member in the cluster and moves the evaluator there.
type streamView struct {
	r      *GangStreamRunner
	pod    *v1.Pod // whose codes are held
	codes  []preempt.Code
	placed []*v1.Pod
}

func (v *streamView) Nodes() []string { return v.r.names }

func (v *streamView) Fits(ctx context.Context, pod *v1.Pod, node string) (bool, error) {
	i, ok := v.r.nodeAt(node)
	if !ok {
		return false, nil
	}
	if v.pod != pod {
		v.codes = preempt.FilterCodesOf(ctx, v.r.ev, v.r.order, pod, v.codes)
		v.pod = pod
	}
	return v.codes[i] == preempt.Success, nil
}

func (v *streamView) Place(_ context.Context, pod *v1.Pod, node string) (bool, error) {
	p := v.r.bind(pod, node)
	if err := v.r.change(nil, []*v1.Pod{p}); err != nil {
		return false, err
	}
	v.placed = append(v.placed, p)
	v.pod = nil // the cluster changed
	return true, nil
}
