package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/preemptbench/preemptbench/preempt"
)

// Result is the filter phase and, when the pod fits nowhere, the
// preemption decision.
type Result struct {
	Feasible []string
	// Filter is the whole filter phase (every node that failed, with its
	// status).
	Filter   preempt.FilterResult
	Decision preempt.Decision
	// Request is the request Preempt ran with (nil when Schedulable).
	Request *preempt.Request
	// Calls are the calls the decision made on the fake clientset, in
	// order, reads included (Replay sends them to a real API server). They
	// carry what upstream stamps with the wall clock (a DisruptionTarget
	// condition's lastTransitionTime): compare Decision.Actions instead.
	Calls []k8stesting.Action
}

// Decide runs the filter phase of impl on c for pod; if the pod fits
// somewhere the status is Schedulable and nothing else runs, otherwise the
// filter codes feed Preempt, run through a fake clientset.
func Decide(ctx context.Context, impl preempt.Implementation, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config, offset int32, now time.Time, fs ...Fault) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	return DecideValid(ctx, impl, c, pod, cfg, offset, now, fs...)
}

// DecideValid is Decide on a cluster that has passed Validate (a loader's
// output, say): it validates the pod and the request, not the cluster
// again, which takes a tenth of a second at 20000 pods.
func DecideValid(ctx context.Context, impl preempt.Implementation, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config, offset int32, now time.Time, fs ...Fault) (Result, error) {
	if err := c.ValidatePreemptor(pod); err != nil {
		return Result{}, err
	}
	if err := preempt.ValidateFeatureGates(cfg.FeatureGates); err != nil {
		return Result{}, fmt.Errorf("feature gates: %w", err)
	}
	if err := Refusal(impl, c, pod); err != nil {
		return Result{}, err
	}
	if err := GateRefusal(impl, c, pod, cfg); err != nil {
		return Result{}, err
	}
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return Result{}, err
	}
	preempt.SetFilterConfig(ev, cfg)
	preempt.SetFilterNow(ev, now)
	var out Result
	fr := ev.Filter(ctx, pod)
	out.Feasible = fr.Feasible
	out.Filter = fr
	if len(fr.Feasible) > 0 {
		out.Decision = preempt.Decision{Status: preempt.Schedulable, Eligible: true}
		return out, nil
	}
	if fr.PreFilterRejected {
		if d, ok := preempt.PreFilterRejectionDecision(cfg); ok {
			out.Decision = d
			return out, nil
		}
	}
	for _, st := range fr.NodeStatuses {
		// kube-scheduler ends the scheduling cycle on a filter error
		// (findNodesThatFitPod) and retries the pod: no preemption.
		if st.Code == preempt.Error {
			return Result{}, fmt.Errorf("the filters failed with an error on node %s, so kube-scheduler would retry the pod rather than preempt: %s", st.Node, strings.Join(st.Reasons, "; "))
		}
	}
	req := &preempt.Request{Pod: pod, Filter: fr.Codes(), Config: cfg, Offset: offset, Now: now}
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	out.Request = req
	cs := NewClient(c, req.Pod, fs...)
	out.Decision = ev.Preempt(ctx, cs, req)
	out.Decision.Actions = cs.Recorded()
	out.Calls = cs.Actions()
	return out, nil
}
