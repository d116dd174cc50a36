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
	var kept []*v1.Pod
	var skipped []PodRef
	for _, p := range r.Pods {
		if p.DeletionTimestamp != nil {
			skipped = append(skipped, PodRef{Namespace: p.Namespace, Name: p.Name})
			continue
		}
		kept = append(kept, p)
	}
	if len(skipped) == 0 {
		return r, nil
	}
	out := *r
	out.Pods = kept
	return &out, skipped
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
// The error is a refusal, not a decision: a gang no kube-scheduler cycle
// would take (another scheduler's; every member being deleted), or one
// with a member being deleted whose nomination the cycle would count.
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
	if err := req.CycleRefusal(); err != nil {
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
	switch at.Status {
	case Success:
		d.Status, d.Placement = Schedulable, at.Placement
	case Unschedulable:
		d = pg.PreemptPodGroup(ctx, cs, kept)
	default:
		d.Status, d.Message = at.Status, at.Message
	}
	d.Skipped = skipped
	return d, nil
}

// CycleRefusal is why no kube-scheduler cycle decides req, or nil: its
// members name another scheduler (kube-scheduler's queue takes only the
// pods of its profiles; "" is stored as "default-scheduler"), every
// member is being deleted (the cycle skips them all and stops), or a
// member being deleted is nominated and the gang's priority is 0 or less
// (kube-scheduler's nominator lists such a member as a stub of priority
// 0, which the filters then count; the implementations drop skipped
// members).
func (r *PodGroupRequest) CycleRefusal() error {
	if len(r.Pods) > 0 {
		if name := schedulerNameOf(r.Pods[0]); name != v1.DefaultSchedulerName {
			return fmt.Errorf("pod group %s: its members name the scheduler %q, and kube-scheduler's queue takes only the pods of its profiles (%q): no cycle runs for it", r.PreemptorName(), name, v1.DefaultSchedulerName)
		}
	}
	deleting := 0
	for _, p := range r.Pods {
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
	return nil
}
