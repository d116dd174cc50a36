package reference

import (
	"context"

	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/preempt"
)

// Bug is a mutation of the reference, for mutation testing only: the
// conformance suite (preempttest's TestMutants) shows that its properties
// catch each one. The reference itself has none.
type Bug int

// The mutations of the pod-group paths, each a bug upstream had, or has,
// in this shape.
const (
	// ModeBlindGrouping groups every pod of a PodGroup into one victim
	// whatever its disruption mode (kubernetes#137981's review).
	ModeBlindGrouping Bug = iota + 1
	// MemberPriority gives a group's member its own priority as a victim
	// instead of the group's (kubernetes#139030).
	MemberPriority
	// OngoingOnFirstNominatedNode looks for a gang's ongoing preemption on
	// the first nominated member's node only (kubernetes#140398's shape:
	// ongoing preemption looked for on too few nodes).
	OngoingOnFirstNominatedNode
	// RemoteMemberKeptInState removes a victim unit's members on other
	// nodes from nothing: the preemptor's inter-pod affinity and spread
	// state still counts them.
	RemoteMemberKeptInState
	// FailedChildProposalsDropped leaves out the proposals of a
	// CompositePodGroup's child group that failed, which the scheduler's
	// function keeps (docs/upstream-findings.md): the "fix" a reader might
	// expect, not what v1.37.2 does.
	FailedChildProposalsDropped
	// ChildrenByName schedules a composite's children in name order, not
	// GetChildGroups' (creation time, then name).
	ChildrenByName
	// PreemptGangThatFits skips the cycle's scheduling attempt: a gang
	// that fits the cluster as it is preempts all the same (what
	// PodGroupEvaluator.Preempt answers when called; kube-scheduler never
	// calls it then).
	PreemptGangThatFits
	// NominateUnplaced lists every member in a Success's nominations,
	// with "" for the unplaced (the project's output before issue 28);
	// upstream's NominatingInfos hold the placed members only.
	NominateUnplaced
	// PlaceDeletingMembers schedules the members being deleted with the
	// others (no skipPodGroupPodSchedule).
	PlaceDeletingMembers
	// DecideRefusedGroup decides a gang validatePodGroup refuses (members'
	// priority, scheduler name or preemption policy not the group's).
	DecideRefusedGroup
)

func (b Bug) String() string {
	switch b {
	case ModeBlindGrouping:
		return "mode-blind-grouping"
	case MemberPriority:
		return "member-priority"
	case OngoingOnFirstNominatedNode:
		return "ongoing-on-first-nominated-node"
	case RemoteMemberKeptInState:
		return "remote-member-kept-in-state"
	case FailedChildProposalsDropped:
		return "failed-child-proposals-dropped"
	case ChildrenByName:
		return "children-by-name"
	case PreemptGangThatFits:
		return "preempt-gang-that-fits"
	case NominateUnplaced:
		return "nominate-unplaced"
	case PlaceDeletingMembers:
		return "place-deleting-members"
	case DecideRefusedGroup:
		return "decide-refused-group"
	}
	return "none"
}

// Mutant is the reference with bug b, for mutation testing.
func Mutant(b Bug) preempt.Implementation {
	return Impl{bug: b}
}

// cycleMutant is the reference with a bug in the harness's steps of the
// pod-group cycle (preempt.RunPodGroupCycle), which it runs itself
// (preempt.PodGroupCycler).
type cycleMutant struct{ gangEvaluator }

// PodGroupCycle is preempt.RunPodGroupCycle's steps with the mutant's bug.
func (m cycleMutant) PodGroupCycle(ctx context.Context, cs kubernetes.Interface, c *preempt.Cluster, req *preempt.PodGroupRequest) (preempt.PodGroupDecision, error) {
	return preempt.RunPodGroupCycleSteps(ctx, m.gangEvaluator, cs, c, req, preempt.CycleSteps{
		NoValidation: m.bug == DecideRefusedGroup,
		NoSkip:       m.bug == PlaceDeletingMembers,
	})
}
