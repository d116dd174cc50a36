package reference

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/preemptbench/preemptbench/internal/refstages"
	"github.com/preemptbench/preemptbench/preempt"
)

// The pod-group paths take six policy decisions through stages
// (refstages.Stages), the way upstream's preemption Evaluator takes its
// policy from an Interface. The reference's own are below, each upstream's;
// refstages.Reference builds the reference with some replaced.

func init() {
	refstages.Register(func(replace func(*refstages.Stages)) preempt.Implementation {
		s := ownStages()
		replace(&s)
		return Impl{stages: &s}
	})
}

// ownStages are the reference's stages, upstream's.
func ownStages() refstages.Stages {
	return refstages.Stages{
		VictimPriority:        (*preempt.PodGroupIndex).VictimPriority,
		VictimGroup:           (*preempt.PodGroupIndex).GroupKey,
		MovesPreemptorState:   everyVictimPod,
		OngoingNodes:          nominatedNodes,
		ChildOrder:            treeChildOrder,
		KeepsProposals:        everyGroupsProposals,
		AssumedClaimsInUse:    assumedClaimsInUse,
		ReserveResults:        filterResultsInClaimOrder,
		ReservesExtendedClaim: reservesExtendedClaim,
	}
}

// everyVictimPod: every pod of a victim unit goes through the preemptor's
// RemovePod and AddPod, the candidate node's and the remote members alike
// (SelectVictimsOnNode's removePod and addPod over the victim's pods).
func everyVictimPod(*v1.Pod, string) bool { return true }

// nominatedNodes is isOngoingPreemption's walk: the nominated node of
// every member that has one, in the members' order.
func nominatedNodes(members []*v1.Pod) []string {
	var out []string
	for _, m := range members {
		if node := m.Status.NominatedNodeName; node != "" {
			out = append(out, node)
		}
	}
	return out
}

// treeChildOrder is the children as the tree holds them: GetChildGroups'
// order (preempt.GroupNode.Children).
func treeChildOrder(children []*preempt.GroupNode) []*preempt.GroupNode { return children }

// everyGroupsProposals: the scheduling function's closure gathers every
// group's result, a failed child's included (docs/upstream-findings.md).
func everyGroupsProposals(bool) bool { return true }

// assumedClaimsInUse: a gang member assumed in the snapshot uses its
// claims (Snapshot.AssumePod adds them to usedPVCRefCounts).
func assumedClaimsInUse() bool { return true }

// filterResultsInClaimOrder is Reserve's allocIndex over Filter's
// allocations (append(allocationResult, pendingResult...)): the results
// of the claims Filter allocated, then the pending allocations, handed
// out in claim order; a pending claim before a claim allocated here
// swaps their results (docs/upstream-findings.md).
func filterResultsInClaimOrder(allocated []resourcev1.AllocationResult, pending []*resourcev1.AllocationResult) []resourcev1.AllocationResult {
	out := slices.Clone(allocated)
	for _, p := range pending {
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// reservesExtendedClaim: Reserve allocates the claim made for a member's
// extended resources as Filter made it for the node (nodeAllocations'
// extendedResourceClaim).
func reservesExtendedClaim() bool { return true }
