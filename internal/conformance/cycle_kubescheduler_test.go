package conformance

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// TestGangCycleAsKubeScheduler: GenGang's PodGroup gangs decided by the
// reference's pod-group cycle (harness.DecidePodGroup) and by a real
// v1.37.2 kube-scheduler's (upstream.Impl{SchedulerPlacement: true}: its
// queue, validatePodGroup, skipping, attempt and PodGroupPostFilter
// chain). Where both decide, status and message agree (but for the
// number of victims in a Success's message); where both decide without
// preemption (Schedulable, or any status but Success),
// every field but the placement's nodes agrees. The scheduler scores
// nodes where the reference places first fit, so a Success's victims and
// nominations, and a Schedulable's nodes, may differ, and are not
// compared. The scheduler refuses some gangs the reference decides
// (other pending pods its queue offers first), and the reference some
// the scheduler decides (a member being deleted and nominated in a gang
// of priority 0 or less): counted, and bounded.
func TestGangCycleAsKubeScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a kube-scheduler per gang")
	}
	gen := GenGang(6)
	var compared, refused int
	for i := range 150 {
		in := gen.Example(i)
		if in.Gang.CompositePodGroup != nil {
			continue // the scheduler placement takes PodGroups only
		}
		run := func(impl preempt.Implementation) (preempt.PodGroupDecision, error) {
			ev, err := impl.NewEvaluator(in.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			cs := harness.NewClient(in.Cluster, nil)
			for _, p := range in.Gang.Pods {
				_ = cs.Tracker().Add(p.DeepCopy())
			}
			cs.ClearActions()
			return harness.DecidePodGroup(context.Background(), impl, ev.(preempt.PodGroupPreempter), in.Cluster, in.Gang, cs)
		}
		ref, rerr := run(reference.Impl{})
		sched, serr := run(upstream.Impl{SchedulerPlacement: true})
		if rerr != nil || serr != nil {
			if (rerr == nil) != (serr == nil) {
				refused++
			}
			continue
		}
		compared++
		if ref.Status == preempt.Success && sched.Status == preempt.Success {
			continue // its message counts the victims, which follow the placement
		}
		if ref.Status != sched.Status || ref.Message != sched.Message {
			t.Errorf("seed %d: reference %s %q, kube-scheduler %s %q", i, ref.Status, ref.Message, sched.Status, sched.Message)
			continue
		}
		for _, d := range []*preempt.PodGroupDecision{&ref, &sched} {
			d.Actions = nil
			for k := range d.Placement {
				d.Placement[k].Node = ""
			}
		}
		if diff := cmp.Diff(ref, sched); diff != "" {
			t.Errorf("seed %d (-reference +kube-scheduler):\n%s", i, diff)
		}
	}
	t.Logf("%d gangs compared, %d decided by one side only", compared, refused)
	if compared < 60 || refused > compared/4 {
		t.Errorf("%d compared, %d decided by one side only: the draws no longer reach the scheduler's cycle", compared, refused)
	}
}
