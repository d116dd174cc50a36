package conformance

// The pod-group mutants: the reference with one of its pod-group stages
// (refstages.Stages) replaced by a buggy one, or with one step of the
// pod-group cycle around its evaluator replaced (the scheduling attempt,
// the Success's nominations, validatePodGroup, skipPodGroupPodSchedule).
// Everything else is the reference's own code, so they need no
// re-composition; TestPodGroupMutantBaseline shows that the wrapping of
// the cycle's steps without a bug passes every property.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/refstages"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// cycleStep is a bug in a step of the pod-group cycle around the
// reference's evaluator.
type cycleStep int

const (
	// noStep: the reference's evaluator as it is.
	noStep cycleStep = iota
	// faithfulSteps: wrapped as the step mutants are, every step the
	// faithful one (TestPodGroupMutantBaseline).
	faithfulSteps
	// attemptSkipped: the cycle's scheduling attempt is skipped, so a gang
	// that fits the cluster as it is preempts all the same (what
	// PodGroupEvaluator.Preempt answers when called; kube-scheduler never
	// calls it then).
	attemptSkipped
	// unplacedNominated: a Success lists every member in its nominations,
	// "" for the unplaced (the project's output before issue 28);
	// upstream's NominatingInfos hold the placed members only.
	unplacedNominated
	// deletingPlaced: the members being deleted are scheduled with the
	// others (no skipPodGroupPodSchedule).
	deletingPlaced
	// refusedDecided: a gang validatePodGroup refuses (members' priority,
	// scheduler name or preemption policy not the group's) is decided.
	refusedDecided
)

// podGroupMutant is a bug of the pod-group paths: a stage of the
// reference's replaced (stage) or a step of the cycle around it (step).
type podGroupMutant struct {
	name, upstream string
	// gang: the bug is on the gang path; GangDecision is tried first.
	gang  bool
	stage func(*refstages.Stages)
	step  cycleStep
}

// podGroupMutants are the bugs of the pod-group paths the suite must
// catch, each one upstream had, or has, in this shape.
var podGroupMutants = []podGroupMutant{
	// Every pod of a PodGroup grouped into one victim whatever its
	// disruption mode (kubernetes#137981's review).
	{name: "mode-blind-grouping", upstream: "kubernetes#137981", stage: func(s *refstages.Stages) { s.VictimGroup = podGroupOfAnyMode }},
	// A group's member takes its own priority as a victim, not the
	// group's (kubernetes#139030).
	{name: "member-priority", upstream: "kubernetes#139030", stage: func(s *refstages.Stages) { s.VictimPriority = ownPriority }},
	// A victim unit's members on other nodes are removed from nothing:
	// the preemptor's inter-pod affinity and spread state still counts
	// them.
	{name: "remote-member-kept-in-state", stage: func(s *refstages.Stages) { s.MovesPreemptorState = onCandidateNodeOnly }},
	// A gang's ongoing preemption looked for on the first nominated
	// member's node only (kubernetes#140398's shape: too few nodes).
	{name: "ongoing-on-first-nominated-node", upstream: "kubernetes#140398", gang: true, stage: func(s *refstages.Stages) { s.OngoingNodes = firstNominatedNode }},
	// The proposals of a CompositePodGroup's child group that failed left
	// out, which the scheduler's function keeps
	// (docs/upstream-findings.md): the "fix" a reader might expect, not
	// what v1.37.2 does.
	{name: "failed-child-proposals-dropped", gang: true, stage: func(s *refstages.Stages) { s.KeepsProposals = succeededOnly }},
	// A composite's children scheduled in name order, not
	// GetChildGroups' (creation time, then name).
	{name: "children-by-name", gang: true, stage: func(s *refstages.Stages) { s.ChildOrder = byName }},
	// The pod-group cycle around PodGroupPostFilter (issue 28).
	{name: "preempt-gang-that-fits", gang: true, step: attemptSkipped},
	{name: "nominate-unplaced", gang: true, step: unplacedNominated},
	{name: "place-deleting-members", gang: true, step: deletingPlaced},
	{name: "decide-refused-group", gang: true, step: refusedDecided},
}

func podGroupOfAnyMode(ix *preempt.PodGroupIndex, p *v1.Pod) (kind, namespace, name string, ok bool) {
	if pg, in := preempt.PodGroupName(p); in && ix.PodGroup(p.Namespace, pg) != nil {
		return "PodGroup", p.Namespace, pg, true
	}
	return ix.GroupKey(p)
}

func ownPriority(_ *preempt.PodGroupIndex, p *v1.Pod) int32 { return corev1helpers.PodPriority(p) }

func onCandidateNodeOnly(victim *v1.Pod, node string) bool { return victim.Spec.NodeName == node }

func firstNominatedNode(members []*v1.Pod) []string {
	for _, m := range members {
		if node := m.Status.NominatedNodeName; node != "" {
			return []string{node}
		}
	}
	return nil
}

func succeededOnly(succeeded bool) bool { return succeeded }

func byName(children []*preempt.GroupNode) []*preempt.GroupNode {
	out := slices.Clone(children)
	slices.SortStableFunc(out, func(a, b *preempt.GroupNode) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// podGroupMutantImpl is the reference with m's stage, its evaluator
// wrapped when m's bug is a step of the cycle.
type podGroupMutantImpl struct {
	reference.Impl // the gates, releases and refusals are the reference's
	m              podGroupMutant
}

func newPodGroupMutant(m podGroupMutant) podGroupMutantImpl {
	replace := m.stage
	if replace == nil {
		replace = func(*refstages.Stages) {}
	}
	return podGroupMutantImpl{Impl: refstages.Reference(replace).(reference.Impl), m: m}
}

func (i podGroupMutantImpl) Name() string { return "reference-mutant-" + i.m.name }

func (i podGroupMutantImpl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	ev, err := i.Impl.NewEvaluator(c)
	if err != nil || i.m.step == noStep {
		return ev, err
	}
	ref, ok := ev.(referenceEvaluator)
	if !ok {
		return nil, fmt.Errorf("the reference's evaluator %T is not a gang preempter with a release behaviour", ev)
	}
	steps := stepMutant{referenceEvaluator: ref, step: i.m.step}
	if i.m.step == attemptSkipped || i.m.step == unplacedNominated {
		return steps, nil
	}
	return cycleStepMutant{steps}, nil
}

// referenceEvaluator is what the reference's evaluator is.
type referenceEvaluator interface {
	preempt.Evaluator
	preempt.PodGroupPreempter
	preempt.BehaviourSetter
	// The clock its filter phase reads (claims' binding conditions):
	// without it the wrappers hid SetFilterNow, and the baseline read the
	// zero time where the reference read the request's.
	preempt.ClockSetter
}

// stepMutant is the reference's evaluator with the step of the cycle it
// answers for (the scheduling attempt, the decision) replaced.
type stepMutant struct {
	referenceEvaluator
	step cycleStep
}

func (e stepMutant) SchedulePodGroup(ctx context.Context, req *preempt.PodGroupRequest) preempt.PodGroupAttempt {
	at := e.referenceEvaluator.SchedulePodGroup(ctx, req)
	if e.step == attemptSkipped && at.Status != preempt.Error {
		// No attempt: nothing placed, no member's PreFilter run.
		return preempt.PodGroupAttempt{Status: preempt.Unschedulable}
	}
	return at
}

func (e stepMutant) PreemptPodGroup(ctx context.Context, cs kubernetes.Interface, req *preempt.PodGroupRequest) preempt.PodGroupDecision {
	d := e.referenceEvaluator.PreemptPodGroup(ctx, cs, req)
	if e.step == unplacedNominated && d.Status == preempt.Success {
		every := []preempt.Nomination{}
		for _, p := range req.Pods {
			n := preempt.Nomination{Namespace: p.Namespace, Name: p.Name}
			if i := slices.IndexFunc(d.Nominations, func(o preempt.Nomination) bool { return o.Namespace == p.Namespace && o.Name == p.Name }); i >= 0 {
				n = d.Nominations[i]
			}
			every = append(every, n)
		}
		d.Nominations = every
	}
	return d
}

// cycleStepMutant runs the pod-group cycle itself (preempt.PodGroupCycler)
// with its step of the harness's cycle left out.
type cycleStepMutant struct{ stepMutant }

func (e cycleStepMutant) PodGroupCycle(ctx context.Context, cs kubernetes.Interface, c *preempt.Cluster, req *preempt.PodGroupRequest) (preempt.PodGroupDecision, error) {
	return preempt.RunPodGroupCycleSteps(ctx, e, cs, c, req, preempt.CycleSteps{
		NoValidation: e.step == refusedDecided,
		NoSkip:       e.step == deletingPlaced,
	})
}

// TestPodGroupMutantBaseline: the pod-group mutants' wrapping of the
// reference's evaluator and the cycle's steps, without a bug, agrees with
// the reference on every property.
func TestPodGroupMutantBaseline(t *testing.T) {
	impl := newPodGroupMutant(podGroupMutant{name: "baseline", step: faithfulSteps})
	for _, p := range Properties() {
		t.Run(p.Name, func(t *testing.T) { CheckProperty(t, p, impl) })
	}
}
