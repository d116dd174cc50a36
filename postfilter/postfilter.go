package postfilter

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/internal/extender"
	"github.com/preemptbench/preemptbench/preempt"
)

// PreemptWithStages is upstream's Evaluator.Preempt written over the
// contract's stages, after DefaultPreemption's PreEnqueue (a pod whose
// asynchronous preemption still runs is answered UnschedulableAndUnresolvable,
// preempt.RunningPreemption): eligibility, FindCandidates (an error with no
// candidates is an Error; no candidates is upstream's FitError over the dry
// run's statuses, all of c's nodes counted), the extenders of
// req.Config (extender.Call), SelectCandidate, then PrepareCandidate (a
// *actuation.BackgroundError from it leaves the decision standing and is reported in
// it). Implementations that provide the stages use it as their Preempt; c
// is the cluster the evaluator was built from.
func PreemptWithStages(ctx context.Context, ev preempt.Evaluator, cs kubernetes.Interface, req *preempt.Request, c *preempt.Cluster) preempt.Decision {
	d := preempt.Decision{Victims: []preempt.Victim{}, Candidates: []preempt.Candidate{}, NodeStatuses: []preempt.NodeStatus{}}
	if preempt.RunningPreemption(c, req) {
		// PreEnqueue keeps the pod out of the queue: nothing else runs.
		d.Status, d.Message = preempt.UnschedulableAndUnresolvable, preempt.MessageWaitingForPreemption
		return d
	}
	ok, msg := ev.PodEligibleToPreemptOthers(req)
	d.Eligible = ok
	if !ok {
		d.Status, d.Message = preempt.Unschedulable, msg
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
		err = fmt.Errorf("%s", preempt.AggregateMessage(dr.Errors))
	}
	if err != nil && len(dr.Candidates) == 0 {
		d.Status, d.Message = preempt.Error, err.Error()
		return d
	}
	if len(dr.Candidates) == 0 {
		d.Status, d.Message = preempt.Unschedulable, preempt.FitErrorMessage(len(c.Nodes), dr.NodeStatuses)
		return d
	}
	candidates := dr.Candidates
	if len(req.Config.Extenders) > 0 {
		candidates, err = extender.Call(ctx, req.Config.Extenders, req.Pod, candidates, extender.NodePodsOf(c), extender.BoundPodOf(c))
		if err != nil {
			d.Status, d.Message = preempt.Error, err.Error()
			return d
		}
	}
	best := ev.SelectCandidate(candidates, req)
	if best == nil || best.Node == "" {
		d.Status, d.Message = preempt.Unschedulable, "no candidate node for preemption"
		return d
	}
	if err := ev.PrepareCandidate(ctx, cs, best, req); err != nil {
		var bg *actuation.BackgroundError
		if !errors.As(err, &bg) {
			d.Status, d.Message = preempt.Error, err.Error()
			return d
		}
		d.ActuationErrors = bg.Victims
		d.PreemptorActivated = true
	}
	d.Status = preempt.Success
	if req.Config.Behaviour().SuccessMessage {
		d.Message = preempt.SuccessMessage(best.Node, len(best.Victims))
	}
	d.NominatedNode = best.Node
	d.Victims = best.Victims
	d.NumPDBViolations = best.NumPDBViolations
	return d
}
