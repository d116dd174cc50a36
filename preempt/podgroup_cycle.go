//go:build !preemptbench_v1_36

package preempt

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// The harness's part of kube-scheduler's pod-group cycle
// (scheduleOnePodGroup, schedule_one_podgroup.go): what it does before it
// tries to schedule the gang. PodGroupPreempter says which steps are the
// implementation's.

// ValidateCycle is kube-scheduler's validatePodGroup for the gang in c:
// its error, which the scheduler reports for every member (status Error,
// handlePodGroupFailureBeforeScheduling) before any scheduling attempt,
// or nil. Every member, unscheduled (the request's, in order, those being
// deleted included) and scheduled (the bound pods of the tree's leaf
// groups in c, in (namespace, name) order: upstream reads them from a
// map), must have the first member's scheduler name, the root group's
// priority, and one preemption policy: the root group's under
// PodGroupPreemptionPolicy, else the first member's.
//
// A pod without a schedulerName is compared as the API server stores it,
// "default-scheduler". The profile check that follows (the first
// member's scheduler name must name a profile) cannot fail in
// kube-scheduler, whose queue takes only pods of its profiles: a gang of
// another scheduler has no cycle (CycleRefusal).
func (r *PodGroupRequest) ValidateCycle(c *Cluster, tree *GroupNode) error {
	priority := r.PreemptorPriority()
	groupPolicy := r.Config.FeatureGates["PodGroupPreemptionPolicy"]
	var policy v1.PreemptionPolicy
	if groupPolicy {
		policy = v1.PreemptLowerPriority
		switch {
		case r.PodGroup != nil && r.PodGroup.Spec.PreemptionPolicy != nil:
			policy = v1.PreemptionPolicy(*r.PodGroup.Spec.PreemptionPolicy)
		case r.CompositePodGroup != nil && r.CompositePodGroup.Spec.PreemptionPolicy != nil:
			policy = v1.PreemptionPolicy(*r.CompositePodGroup.Spec.PreemptionPolicy)
		}
	}
	schedulerName, first := "", true
	check := func(p *v1.Pod) error {
		name := schedulerNameOf(p)
		if first {
			schedulerName, first = name, false
		}
		if name != schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", name, schedulerName)
		}
		if prio := corev1helpers.PodPriority(p); prio != priority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", prio, priority)
		}
		own := v1.PreemptLowerPriority
		if p.Spec.PreemptionPolicy != nil {
			own = *p.Spec.PreemptionPolicy
		}
		switch {
		case groupPolicy && own != policy:
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy as the pod group's preemption policy, got %v and %v", own, policy)
		case !groupPolicy && policy == "":
			policy = own
		case !groupPolicy && own != policy:
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", own, policy)
		}
		return nil
	}
	for _, p := range r.Pods {
		if err := check(p); err != nil {
			return err
		}
	}
	leaves := map[string]bool{}
	tree.Walk(func(n *GroupNode) {
		if n.PodGroup != nil {
			leaves[Key(n.PodGroup.Namespace, n.PodGroup.Name)] = true
		}
	})
	var scheduled []*v1.Pod
	for _, p := range c.Pods {
		if name, ok := PodGroupName(p); ok && IsBound(p) && leaves[Key(p.Namespace, name)] {
			scheduled = append(scheduled, p)
		}
	}
	sort.Slice(scheduled, func(i, j int) bool {
		if scheduled[i].Namespace != scheduled[j].Namespace {
			return scheduled[i].Namespace < scheduled[j].Namespace
		}
		return scheduled[i].Name < scheduled[j].Name
	})
	for _, p := range scheduled {
		if err := check(p); err != nil {
			return err
		}
	}
	return nil
}

func schedulerNameOf(p *v1.Pod) string {
	if p.Spec.SchedulerName == "" {
		return v1.DefaultSchedulerName
	}
	return p.Spec.SchedulerName
}

// WithoutDeleting is kube-scheduler's skipPodGroupPodSchedule: the
// request without the members being deleted (deletionTimestamp set),
// which the cycle drops from the group before it schedules it, and those
// members, in order. The request is r itself when none is.
func (r *PodGroupRequest) WithoutDeleting() (*PodGroupRequest, []PodRef) {
	return r.without(func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
}

// without is r without the members out says, and those members' refs,
// in order; r itself when out says none.
func (r *PodGroupRequest) without(out func(*v1.Pod) bool) (*PodGroupRequest, []PodRef) {
	var kept []*v1.Pod
	var left []PodRef
	for _, p := range r.Pods {
		if out(p) {
			left = append(left, PodRef{Namespace: p.Namespace, Name: p.Name})
			continue
		}
		kept = append(kept, p)
	}
	if len(left) == 0 {
		return r, nil
	}
	req := *r
	req.Pods = kept
	return &req, left
}

// PodGroupCycler is a PodGroupPreempter that runs kube-scheduler's whole
// pod-group cycle itself (a real scheduler does, and so do mutants of
// the harness's steps); RunPodGroupCycle calls it instead of its own
// steps.
type PodGroupCycler interface {
	PodGroupCycle(ctx context.Context, cs kubernetes.Interface, c *Cluster, req *PodGroupRequest) (PodGroupDecision, error)
}

// RunPodGroupCycle is kube-scheduler's pod-group cycle for req
// (scheduleOnePodGroup and podGroupCycle, schedule_one_podgroup.go) on
// pg, an evaluator of c, acting through cs, or pg's own when it is a
// PodGroupCycler:
//  1. validatePodGroup (ValidateCycle): a gang it refuses is an Error
//     with its message, and nothing else runs;
//  2. skipPodGroupPodSchedule (WithoutDeleting): the members being
//     deleted leave the gang (Skipped);
//  3. the scheduling attempt on the cluster as it is (SchedulePodGroup):
//     Success is Schedulable with its placement, and no preemption;
//     Error is an Error with its message;
//  4. only when the attempt is Unschedulable, PodGroupPostFilter
//     (PreemptPodGroup on the gang without the skipped members).
//
// Before them, as kube-scheduler's queue does: the members of another
// scheduler are left out (OfDefaultScheduler), and a gang no cycle would
// take is refused (CycleRefusal): the error is that refusal, not a
// decision. After the attempt, the PodGroupPostFilter plugins run in the
// profile's order: DynamicResources' first (draPostFilterFails).
func RunPodGroupCycle(ctx context.Context, pg PodGroupPreempter, cs kubernetes.Interface, c *Cluster, req *PodGroupRequest) (PodGroupDecision, error) {
	if cy, ok := pg.(PodGroupCycler); ok {
		return cy.PodGroupCycle(ctx, cs, c, req)
	}
	return RunPodGroupCycleSteps(ctx, pg, cs, c, req, CycleSteps{})
}

// CycleSteps leaves steps out of RunPodGroupCycleSteps: for mutants of
// the harness's steps only (kube-scheduler runs them all).
type CycleSteps struct {
	NoValidation, NoSkip bool
}

// RunPodGroupCycleSteps is RunPodGroupCycle's steps on pg, whatever pg
// is, without those steps leaves out.
func RunPodGroupCycleSteps(ctx context.Context, pg PodGroupPreempter, cs kubernetes.Interface, c *Cluster, req *PodGroupRequest, steps CycleSteps) (PodGroupDecision, error) {
	d := PodGroupDecision{Victims: []Victim{}, Nominations: []Nomination{}}
	req, _ = req.OfDefaultScheduler()
	if err := req.CycleRefusal(c); err != nil {
		return d, err
	}
	tree, err := req.Tree(c)
	if err != nil {
		return d, err
	}
	if err := req.ValidateCycle(c, tree); err != nil && !steps.NoValidation {
		d.Status, d.Message = Error, err.Error()
		return d, nil
	}
	kept, skipped := req, []PodRef(nil)
	if !steps.NoSkip {
		kept, skipped = req.WithoutDeleting()
	}
	at := pg.SchedulePodGroup(ctx, kept)
	switch {
	case at.Status == Success:
		d.Status, d.Placement = Schedulable, at.Placement
	case at.Status == Unschedulable && draPostFilterFails(kept, at):
		// The profile's PodGroupPostFilter plugins run in order, and
		// DynamicResources comes before DefaultPreemption: its
		// PodGroupPostFilter reads the state its PreFilter left in the
		// pod-group cycle state, and fails when the attempt ran no
		// member's PreFilter that far; the chain stops with its error
		// (RunPodGroupPostFilterPlugins), and DefaultPreemption never runs.
		d.Status, d.Message = Error, `error in "DynamicResources" PodGroupPostFilter plugins: not found`
	case at.Status == Unschedulable:
		d = pg.PreemptPodGroup(ctx, cs, kept)
	default:
		d.Status, d.Message = at.Status, at.Message
	}
	d.Skipped = skipped
	return d, nil
}

// draPostFilterFails is whether DynamicResources' PodGroupPostFilter
// fails for the gang after the attempt at: it skips a CompositePodGroup
// root (Unschedulable, and the chain goes on), and otherwise needs its
// pod-group state, which its PreFilter writes for the first member the
// attempt filters (at.PreFiltered).
func draPostFilterFails(req *PodGroupRequest, at PodGroupAttempt) bool {
	return req.CompositePodGroup == nil && !at.PreFiltered
}

// OfDefaultScheduler is the request without the members of another
// scheduler (a schedulerName other than "default-scheduler"; "" is
// stored as that): kube-scheduler's event handlers take only the pods of
// its profiles (responsibleForPod), so such a member is in no queue, no
// group state and no cycle. They are returned, in order.
func (r *PodGroupRequest) OfDefaultScheduler() (*PodGroupRequest, []PodRef) {
	return r.without(func(p *v1.Pod) bool { return schedulerNameOf(p) != v1.DefaultSchedulerName })
}

// CycleRefusal is why no kube-scheduler cycle decides req in c, or nil.
// req holds kube-scheduler's members only (OfDefaultScheduler). No cycle
// runs for a gang
//   - with no member kube-scheduler takes;
//   - whose members are all being deleted (skipPodGroupPodSchedule
//     leaves none, and the cycle stops);
//   - that GangScheduling's PreEnqueue holds back: a PodGroup of the gang
//     policy whose known pods (its members here and its bound pods in c,
//     AllPodsCount) are fewer than its minCount, or under
//     CompositePodGroup a hierarchy whose root has fewer ready children
//     than its minGroupCount (a PodGroup ready with minCount pods, 1 for
//     the basic policy); the queue keeps such a gang's pods until more
//     arrive.
//
// And these are refused, not modelled: a member with scheduling gates (its
// own PreEnqueue), and a member being deleted and nominated in a gang of
// priority 0 or less (kube-scheduler's nominator lists it as a stub of
// priority 0, which the filters count; the implementations drop skipped
// members).
func (r *PodGroupRequest) CycleRefusal(c *Cluster) error {
	if err := r.cycleRefusal(c); err != nil {
		return &NoCycle{Err: err}
	}
	return nil
}

// NoCycle is CycleRefusal's error: kube-scheduler runs no pod-group cycle
// for the gang (or one the implementations do not model), whichever
// implementation is asked.
type NoCycle struct{ Err error }

func (e *NoCycle) Error() string { return e.Err.Error() }
func (e *NoCycle) Unwrap() error { return e.Err }

func (r *PodGroupRequest) cycleRefusal(c *Cluster) error {
	if len(r.Pods) == 0 {
		return fmt.Errorf("pod group %s: no member names kube-scheduler's profile %q: no cycle runs for it", r.PreemptorName(), v1.DefaultSchedulerName)
	}
	deleting := 0
	for _, p := range r.Pods {
		if len(p.Spec.SchedulingGates) > 0 {
			return fmt.Errorf("pod group %s: member %s has scheduling gates (%s): its queue admission is not modelled", r.PreemptorName(), Key(p.Namespace, p.Name), p.Spec.SchedulingGates[0].Name)
		}
		if p.DeletionTimestamp == nil {
			continue
		}
		deleting++
		if p.Status.NominatedNodeName != "" && r.PreemptorPriority() <= 0 {
			return fmt.Errorf("pod group %s: member %s is being deleted and nominated, and the gang's priority is %d: kube-scheduler's filters count the nominator's stub of it (priority 0), which no implementation models", r.PreemptorName(), Key(p.Namespace, p.Name), r.PreemptorPriority())
		}
	}
	if deleting == len(r.Pods) {
		return fmt.Errorf("pod group %s: every member is being deleted; kube-scheduler skips them all and runs no cycle", r.PreemptorName())
	}
	tree, err := r.Tree(c)
	if err != nil {
		return err
	}
	known := map[string]int{}
	for _, p := range r.Pods {
		if name, ok := PodGroupName(p); ok {
			known[Key(p.Namespace, name)]++
		}
	}
	for _, p := range c.Pods {
		if name, ok := PodGroupName(p); ok && IsBound(p) {
			known[Key(p.Namespace, name)]++
		}
	}
	composite := r.Config.FeatureGates[CompositePodGroupGate]
	var ready func(n *GroupNode) bool
	ready = func(n *GroupNode) bool {
		if n.PodGroup != nil {
			return known[n.Name()] >= n.MinCount()
		}
		children := 0
		for _, ch := range n.Children {
			if ready(ch) {
				children++
			}
		}
		return children >= n.MinCount()
	}
	switch {
	case tree.PodGroup != nil && !composite && tree.PodGroup.Spec.SchedulingPolicy.Gang == nil:
		// preEnqueueHierarchiesDisabled: no gang policy, no wait.
	case !ready(tree):
		if tree.PodGroup != nil {
			return fmt.Errorf("pod group %s: kube-scheduler's queue holds it back (GangScheduling PreEnqueue: \"waiting for minCount pods from a gang to appear in scheduling queue\": %d pods known, minCount %d): no cycle runs for it", r.PreemptorName(), known[tree.Name()], tree.MinCount())
		}
		return fmt.Errorf("pod group %s: kube-scheduler's queue holds it back (GangScheduling PreEnqueue: \"waiting for composite pod group %q tree to meet quorum\"): no cycle runs for it", r.PreemptorName(), tree.CompositePodGroup.Name)
	}
	return nil
}
