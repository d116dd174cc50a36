package preempt

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// PreemptWithStages is upstream's Evaluator.Preempt written over the
// contract's stages: eligibility, FindCandidates (an error with no
// candidates is an Error; no candidates is upstream's FitError over the dry
// run's statuses, numAllNodes nodes in all), SelectCandidate, then
// PrepareCandidate. Implementations that provide the stages use it as
// their Preempt.
func PreemptWithStages(ctx context.Context, ev Evaluator, cs kubernetes.Interface, req *Request, numAllNodes int) Decision {
	d := Decision{Victims: []Victim{}, Candidates: []Candidate{}, NodeStatuses: []NodeStatus{}}
	ok, msg := ev.PodEligibleToPreemptOthers(req)
	d.Eligible = ok
	if !ok {
		d.Status, d.Message = Unschedulable, msg
		return d
	}
	dr, err := ev.FindCandidates(ctx, req)
	if dr.Candidates != nil {
		d.Candidates = dr.Candidates
	}
	if dr.NodeStatuses != nil {
		d.NodeStatuses = dr.NodeStatuses
	}
	if err == nil && len(dr.Errors) > 0 {
		err = fmt.Errorf("%s", AggregateMessage(dr.Errors))
	}
	if err != nil && len(dr.Candidates) == 0 {
		d.Status, d.Message = Error, err.Error()
		return d
	}
	if len(dr.Candidates) == 0 {
		d.Status, d.Message = Unschedulable, FitErrorMessage(numAllNodes, dr.NodeStatuses)
		return d
	}
	best := ev.SelectCandidate(dr.Candidates, req)
	if err := ev.PrepareCandidate(ctx, cs, best, req); err != nil {
		d.Status, d.Message = Error, err.Error()
		return d
	}
	d.Status = Success
	d.NominatedNode = best.Node
	d.Victims = best.Victims
	d.NumPDBViolations = best.NumPDBViolations
	return d
}

// ClearAndNominate ends an actuation: each pod in lowerNominated (the pods
// of lower priority than pod nominated to node, in nominator order) loses
// its nomination, errors ignored as upstream; then pod is nominated to
// node.
func ClearAndNominate(ctx context.Context, cs kubernetes.Interface, lowerNominated []*v1.Pod, pod *v1.Pod, node string) error {
	for _, np := range lowerNominated {
		if np.Status.NominatedNodeName == "" {
			continue
		}
		newStatus := np.Status.DeepCopy()
		newStatus.NominatedNodeName = ""
		_ = PatchPodStatus(ctx, cs, np, newStatus) // not critical, as upstream
	}
	newStatus := pod.Status.DeepCopy()
	newStatus.NominatedNodeName = node
	return PatchPodStatus(ctx, cs, pod, newStatus)
}
