package preempt

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// PreemptWithStages is upstream's Evaluator.Preempt written over the
// contract's stages, after DefaultPreemption's PreEnqueue (a pod whose
// asynchronous preemption still runs is answered UnschedulableAndUnresolvable,
// RunningPreemption): eligibility, FindCandidates (an error with no
// candidates is an Error; no candidates is upstream's FitError over the dry
// run's statuses, all of c's nodes counted), the extenders of
// req.Config (CallExtenders), SelectCandidate, then PrepareCandidate (a
// *BackgroundError from it leaves the decision standing and is reported in
// it). Implementations that provide the stages use it as their Preempt; c
// is the cluster the evaluator was built from.
func PreemptWithStages(ctx context.Context, ev Evaluator, cs kubernetes.Interface, req *Request, c *Cluster) Decision {
	d := Decision{Victims: []Victim{}, Candidates: []Candidate{}, NodeStatuses: []NodeStatus{}}
	if RunningPreemption(c, req) {
		// PreEnqueue keeps the pod out of the queue: nothing else runs.
		d.Status, d.Message = UnschedulableAndUnresolvable, MessageWaitingForPreemption
		return d
	}
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
		d.Status, d.Message = Unschedulable, FitErrorMessage(len(c.Nodes), dr.NodeStatuses)
		return d
	}
	candidates := dr.Candidates
	if len(req.Config.Extenders) > 0 {
		candidates, err = CallExtenders(ctx, req.Config.Extenders, req.Pod, candidates, NodePodsOf(c))
		if err != nil {
			d.Status, d.Message = Error, err.Error()
			return d
		}
	}
	best := ev.SelectCandidate(candidates, req)
	if best == nil || best.Node == "" {
		d.Status, d.Message = Unschedulable, "no candidate node for preemption"
		return d
	}
	if err := ev.PrepareCandidate(ctx, cs, best, req); err != nil {
		var bg *BackgroundError
		if !errors.As(err, &bg) {
			d.Status, d.Message = Error, err.Error()
			return d
		}
		d.ActuationErrors = bg.Victims
		d.PreemptorActivated = true
	}
	d.Status = Success
	d.NominatedNode = best.Node
	d.Victims = best.Victims
	d.NumPDBViolations = best.NumPDBViolations
	return d
}

// NodePodsOf indexes the pods bound to each node of c.
func NodePodsOf(c *Cluster) NodePods {
	nodes := make(map[string][]*v1.Pod, len(c.Nodes))
	for _, n := range c.Nodes {
		nodes[n.Name] = nil
	}
	for _, p := range c.Pods {
		if IsBound(p) {
			nodes[p.Spec.NodeName] = append(nodes[p.Spec.NodeName], p)
		}
	}
	return func(node string) ([]*v1.Pod, bool) {
		pods, ok := nodes[node]
		return pods, ok
	}
}
