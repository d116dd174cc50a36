// Package refstages names the policy stages of the reference's pod-group
// paths (package reference) that a composition may replace one at a time,
// as upstream's preemption Evaluator takes its policy from an Interface:
// a victim's priority and the group it is preempted with, which of a
// victim unit's pods move the preemptor's cycle state, the nodes a gang's
// ongoing preemption is looked for on, the order of a composite's
// children, and which groups' proposals the pod-group scheduling function
// keeps. The reference's own stages are upstream's; Reference builds the
// reference with some of them replaced.
//
// Only the conformance suite's mutation tests replace any
// (internal/conformance, mutants_test.go): the package is internal so that
// nothing outside this module can, and package reference exports nothing
// for it.
package refstages

import (
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// Stages are the reference's pod-group stages.
type Stages struct {
	// VictimPriority is a pod's priority as a victim under GenericWorkload
	// (the reference's: GetPodPriority, PodGroupIndex.VictimPriority).
	VictimPriority func(ix *preempt.PodGroupIndex, p *v1.Pod) int32
	// VictimGroup is the group a pod is preempted with under
	// GenericWorkload, ok false for a pod preempted alone (the
	// reference's: the highest ancestor of disruption mode All,
	// PodGroupIndex.GroupKey).
	VictimGroup func(ix *preempt.PodGroupIndex, p *v1.Pod) (kind, namespace, name string, ok bool)
	// MovesPreemptorState is whether a victim unit's pod, taken off (or
	// put back) for the candidate node, goes through the preemptor's
	// RemovePod (AddPod), which moves its inter-pod affinity and spread
	// counts (the reference's: every pod of the unit, wherever it runs).
	MovesPreemptorState func(victim *v1.Pod, node string) bool
	// OngoingNodes are the nodes a gang's ongoing preemption is looked for
	// on (the reference's: isOngoingPreemption's, every member's
	// nominated node).
	OngoingNodes func(members []*v1.Pod) []string
	// ChildOrder is the order a CompositePodGroup's children are
	// scheduled in (the reference's: GetChildGroups', creation time then
	// name, the order the tree holds them in).
	ChildOrder func(children []*preempt.GroupNode) []*preempt.GroupNode
	// KeepsProposals is whether the pod-group scheduling function keeps
	// the proposals of a group that succeeded or not (the reference's:
	// every group's, as v1.37.2's closure gathers every result).
	KeepsProposals func(succeeded bool) bool
	// AssumedClaimsInUse is whether a gang member placed earlier in the
	// pod-group scheduling function (assumed in the snapshot) uses its
	// claims for VolumeRestrictions' PreFilter of the members after it
	// (the reference's: yes, Snapshot.AssumePod counts them in
	// usedPVCRefCounts).
	AssumedClaimsInUse func() bool
	// ReserveResults is the allocation DynamicResources' Reserve gives each
	// claim of a gang member to allocate, in claim order, from the
	// results Filter made for the claims it allocated (allocated, in
	// claim order) and the allocations pending in the cycle of the
	// others (pending: per claim to allocate, nil for one allocated
	// here). The reference's: Filter's list, allocated then pending,
	// handed out in claim order (v1.37.2's Reserve, allocIndex).
	ReserveResults func(allocated []resourcev1.AllocationResult, pending []*resourcev1.AllocationResult) []resourcev1.AllocationResult
	// ReservesExtendedClaim is whether a gang member's Reserve allocates
	// the claim made for its extended resources with the requests its
	// node needs (the reference's: yes, nodeAllocations' claim).
	ReservesExtendedClaim func() bool
}

var newReference func(replace func(*Stages)) preempt.Implementation

// Register is package reference's, called once as it initialises: f
// builds the reference (a reference.Impl) with its own stages changed by
// replace.
func Register(f func(replace func(*Stages)) preempt.Implementation) { newReference = f }

// Reference is the reference (a reference.Impl, named "reference") with
// the stages replace sets in place of its own: replace is handed the
// reference's own, every field set.
func Reference(replace func(*Stages)) preempt.Implementation {
	if newReference == nil {
		panic("refstages: package reference is not linked")
	}
	return newReference(replace)
}
