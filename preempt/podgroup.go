package preempt

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// PodGroupRequest is one gang preemption attempt: upstream's
// PodGroupPostFilter (PodGroupEvaluator.Preempt) for a pod group whose
// scheduling failed, under GenericWorkload.
type PodGroupRequest struct {
	// PodGroup is the preemptor, or nil when CompositePodGroup is.
	PodGroup *PodGroup
	// CompositePodGroup is the preemptor when set; PodGroups are then its
	// leaf groups (the preemptor's members belong to them).
	CompositePodGroup *CompositePodGroup
	PodGroups         []*PodGroup
	// Pods are the group's unscheduled members in queue order: none is
	// in the cluster. A member may be nominated (status.nominatedNodeName)
	// from an earlier attempt.
	Pods []*v1.Pod
	// Config carries the feature gates (GenericWorkload must be on) and
	// the synchronous switch; the DefaultPreemptionArgs are not read.
	Config Config
	// Now is the start time of every pod without status.startTime.
	Now time.Time
	// Placement places the members once the potential victims are gone
	// (upstream's podGroupSchedulingFunc); nil is FirstFit.
	Placement Placement
}

// Objects the request holds that the cluster may hold too: the group
// objects of the request replace the cluster's of the same name for the
// attempt.

// Validate checks the request on its own.
func (r *PodGroupRequest) Validate() error {
	if r.PodGroup == nil && r.CompositePodGroup == nil {
		return fmt.Errorf("pod group request: no PodGroup or CompositePodGroup")
	}
	if r.PodGroup != nil && r.CompositePodGroup != nil {
		return fmt.Errorf("pod group request: both a PodGroup and a CompositePodGroup")
	}
	if r.PodGroup != nil {
		if err := ValidatePodGroupObject(r.PodGroup); err != nil {
			return fmt.Errorf("pod group request: %w", err)
		}
	}
	if r.CompositePodGroup != nil {
		if err := ValidateCompositePodGroupObject(r.CompositePodGroup); err != nil {
			return fmt.Errorf("pod group request: %w", err)
		}
	}
	for i, pg := range r.PodGroups {
		if pg == nil {
			return fmt.Errorf("pod group request: podgroup #%d is nil", i)
		}
		if err := ValidatePodGroupObject(pg); err != nil {
			return fmt.Errorf("pod group request: %w", err)
		}
	}
	if len(r.Pods) == 0 {
		return fmt.Errorf("pod group request: no unscheduled member pods")
	}
	seen := map[string]bool{}
	for i, p := range r.Pods {
		if p == nil {
			return fmt.Errorf("pod group request: member #%d is nil", i)
		}
		key := Key(p.Namespace, p.Name)
		if seen[key] {
			return fmt.Errorf("pod group request: member %s appears twice", key)
		}
		seen[key] = true
		if IsBound(p) {
			return fmt.Errorf("pod group request: member %s is bound to %q: members are unscheduled", key, p.Spec.NodeName)
		}
		if _, ok := PodGroupName(p); !ok {
			return fmt.Errorf("pod group request: member %s has no spec.schedulingGroup", key)
		}
		if p.UID == "" {
			return fmt.Errorf("pod group request: member %s has no uid", key)
		}
		if err := ValidatePod(p); err != nil {
			return err
		}
	}
	if !r.Config.FeatureGates[GenericWorkloadGate] {
		return fmt.Errorf("pod group request: gang preemption needs %s=true", GenericWorkloadGate)
	}
	return r.Config.Validate()
}

// Nomination is one member's node: the node PodGroupPostFilter
// nominates it to ("" an explicit clear of its nomination), or in a
// placement the node the member is bound to.
type Nomination struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
}

// PodGroupDecision is the outcome of a PodGroupRequest.
type PodGroupDecision struct {
	Status Code
	// Message is PodGroupPostFilter's, with its "pod group preemption: "
	// prefix; in a decision of the whole cycle (harness.DecidePodGroup),
	// the refusal of validatePodGroup or the scheduling attempt's own
	// status when PodGroupPostFilter did not run.
	Message string
	// Nominations are PodGroupPostFilterResult's NominatingInfos as
	// kube-scheduler applies them (applyPodGroupPostFilterResult): on
	// Success, one entry per member PodGroupPostFilter nominates (the
	// placed members; every member, with its current node or "", on an
	// ongoing preemption), in the request's order; on any other status
	// none.
	Nominations []Nomination
	// Placement is set when the cycle's attempt placed the gang on the
	// cluster as it is (Status Schedulable): each member it placed, with
	// its node, in the request's order; PodGroupPostFilter did not run.
	Placement []Nomination
	// Skipped are the members the cycle skipped because they are being
	// deleted (skipPodGroupPodSchedule), in the request's order.
	Skipped                []PodRef
	NumPDBViolations       int
	NumPodGroupDisruptions int
	// Victims in upstream's order (units by MoreImportantVictim, members
	// of a unit in (namespace, name) order), each naming its PodGroup.
	Victims []Victim
	// Actions are the API calls made through the client, in order
	// (filled by the caller when it records them).
	Actions []Action
}

// PodGroupPreempter is an Evaluator that schedules and preempts for
// gangs. kube-scheduler's pod-group cycle (scheduleOnePodGroup,
// schedule_one_podgroup.go) is split between the harness and the
// implementation (harness.DecidePodGroup runs it):
//   - the harness validates the group (validatePodGroup:
//     PodGroupRequest.ValidateCycle) and drops the members being deleted
//     (skipPodGroupPodSchedule: PodGroupRequest.WithoutDeleting), once,
//     for every implementation;
//   - the implementation runs the scheduling attempt on the cluster as it
//     is (SchedulePodGroup: the root's algorithm with the request's
//     placement, every assumption reverted), and, only when that attempt
//     is Unschedulable, PodGroupPostFilter (PreemptPodGroup), whose
//     scheduling function is the same algorithm with the potential
//     victims removed.
//
// PreemptPodGroup alone is PodGroupEvaluator.Preempt as called, whatever
// the attempt would have said. It acts through cs (its Executor's API
// calls); with cs nil it decides without acting: no call is made, and
// the decision is the one it would make were every call to succeed (the
// kube-scheduler plugin, whose own Executor acts, asks so).
type PodGroupPreempter interface {
	SchedulePodGroup(ctx context.Context, req *PodGroupRequest) PodGroupAttempt
	PreemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *PodGroupRequest) PodGroupDecision
}

// PodGroupAttempt is the outcome of the cycle's scheduling attempt
// (runRootSchedulingAlgorithm on the cluster as it is): Success with the
// members placed, in the request's order; Unschedulable (PodGroupPostFilter
// runs next) or Error with the root group's status message.
type PodGroupAttempt struct {
	Status    Code
	Message   string
	Placement []Nomination
	// PreFiltered is whether the attempt ran the PreFilter plugins of some
	// member as far as DynamicResources' (which then keeps its state in
	// the pod-group cycle state): false when PlacementFeasible failed the
	// gang before any member was tried, or every member tried was
	// rejected by an earlier PreFilter (UnschedulableAndUnresolvable).
	PreFiltered bool
}

// PodGroupLimited is implemented by a PodGroupPreempter that models only
// part of gang preemption. UnmodelledPodGroup returns the first use, in c
// or by req, of a feature it does not model and that could change the
// decision, or nil; when it is not nil the implementation's answer is not
// upstream's, and callers (the conformance suite, the command) refuse
// rather than compare (preempt.Limited for gangs).
type PodGroupLimited interface {
	UnmodelledPodGroup(c *Cluster, req *PodGroupRequest) *Unmodelled
}

// PlacementView is what a placement function sees: the cluster with the
// potential victims removed, and the members placed so far assumed on
// their nodes.
type PlacementView interface {
	// Nodes are the nodes a member may go to, in name order (PreFilter's
	// node subset honoured by Fits).
	Nodes() []string
	// Fits runs the profile's PreFilter (once per member, with the
	// members placed before it assumed) and Filter for pod on node,
	// nominated pods of equal or higher priority counted.
	Fits(ctx context.Context, pod *v1.Pod, node string) (bool, error)
	// Place assumes pod on node for the rest of the placement (added to
	// the node and through every PreFilter extension's AddPod, Reserved).
	// False when a Reserve plugin rejects it: the member stays unplaced
	// (upstream's scheduling function tries no other node).
	Place(ctx context.Context, pod *v1.Pod, node string) (bool, error)
}

// Placement chooses a node for each member, in order ("" for one that
// fits nowhere), placing each chosen one on view before the next.
type Placement func(ctx context.Context, view PlacementView, members []*v1.Pod) ([]string, error)

// FirstFit is the contract's placement: each member, in order, goes to
// the first node in name order it fits, and is placed there before the
// next is tried; a member that fits nowhere stays unplaced. Whether the
// gang succeeds (placed plus already scheduled members reaching minCount)
// is the implementation's to judge, as upstream's scheduling function
// does through its PlacementFeasible plugins.
func FirstFit(ctx context.Context, view PlacementView, members []*v1.Pod) ([]string, error) {
	out := make([]string, len(members))
	for i, p := range members {
		for _, n := range view.Nodes() {
			ok, err := view.Fits(ctx, p, n)
			if err != nil {
				return out, err
			}
			if ok {
				placed, err := view.Place(ctx, p, n)
				if err != nil {
					return out, err
				}
				if placed {
					out[i] = n
				}
				break
			}
		}
	}
	return out, nil
}
