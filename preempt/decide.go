package preempt

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
)

// Outcome is what `compare decide` reports: the filter phase and, when the
// pod fits nowhere, the preemption decision.
type Outcome struct {
	Implementation string
	Feasible       []string
	Decision       Decision
	// Request is the request Preempt ran with (nil when Schedulable).
	Request *Request
}

// Decide runs the filter phase of impl on c for pod; if the pod fits
// somewhere the status is Schedulable and nothing else runs, otherwise the
// filter codes feed Preempt, run through a fake clientset.
func Decide(ctx context.Context, impl Implementation, c *Cluster, pod *v1.Pod, cfg Config, offset int32, now time.Time) (Outcome, error) {
	if err := c.Validate(); err != nil {
		return Outcome{}, err
	}
	if err := c.ValidatePreemptor(pod); err != nil {
		return Outcome{}, err
	}
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Implementation: impl.Name()}
	fr := ev.Filter(ctx, pod)
	out.Feasible = fr.Feasible
	if len(fr.Feasible) > 0 {
		out.Decision = Decision{Status: Schedulable, Eligible: true}
		return out, nil
	}
	req := &Request{Pod: pod, Filter: fr.Codes(), Config: cfg, Offset: offset, Now: now}
	if err := req.Validate(); err != nil {
		return Outcome{}, err
	}
	cs := NewClientset(c, pod)
	cs.ClearActions()
	out.Request = req
	out.Decision = ev.Preempt(ctx, cs, req)
	out.Decision.Actions = Actions(cs.Actions())
	return out, nil
}
