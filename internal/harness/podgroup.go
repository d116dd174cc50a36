package harness

import (
	"context"

	"github.com/preemptbench/preemptbench/preempt"
)

// DecidePodGroup is kube-scheduler's pod-group cycle for req
// (preempt.RunPodGroupCycle) on impl's evaluator pg of c, acting through
// cs, whose calls the decision's Actions record. The error is a refusal:
// a gang no cycle would take (preempt.PodGroupRequest.CycleRefusal), or
// one impl does not model (PodGroupRefusal, on the gang the cycle
// schedules: without its members being deleted).
func DecidePodGroup(ctx context.Context, impl preempt.Implementation, pg preempt.PodGroupPreempter, c *preempt.Cluster, req *preempt.PodGroupRequest, cs *Client) (preempt.PodGroupDecision, error) {
	if u := preempt.PodGroupGap(req.Config, "pod group "+req.PreemptorName()); u != nil {
		return preempt.PodGroupDecision{}, u
	}
	mine, _ := req.OfDefaultScheduler()
	if _, own := pg.(preempt.PodGroupCycler); !own {
		// A PodGroupCycler runs kube-scheduler's queue admission itself.
		if err := mine.CycleRefusal(c); err != nil {
			return preempt.PodGroupDecision{}, err
		}
	}
	kept, _ := mine.WithoutDeleting()
	if err := PodGroupRefusal(impl, c, kept); err != nil {
		return preempt.PodGroupDecision{}, err
	}
	d, err := preempt.RunPodGroupCycle(ctx, pg, cs, c, req)
	if err != nil {
		return d, err
	}
	d.Actions = cs.Recorded()
	return d, nil
}
