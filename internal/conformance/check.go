package conformance

import (
	"context"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// TB is what the checks need of testing.T, testing.F and rapid.T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// CheckAgainstReference runs the reference and other on in and fails t
// unless they agree on the filter phase and on the whole decision:
// eligibility, candidates and their order, every candidate's victims and
// violations, dry-run statuses, the status and message, the chosen node
// and the API calls. When other breaks the final tie at random (upstream),
// the chosen node may be any of the candidates the reference ranks
// equal-best, and the victims and calls are then those of that node.
//
// It reports whether it compared anything: false when other refuses in
// (preempt.Limited), which the property runners count.
func CheckAgainstReference(t TB, in Input, other preempt.Implementation) (compared bool) {
	tieOK := agreement.TieIsRandom(other)
	t.Helper()
	in = AtRelease(in, other)
	if refused(t, in, other) {
		return false
	}
	ctx := context.Background()
	before := deepCopy(in)
	if err := in.Cluster.Validate(); err != nil {
		t.Fatalf("generator made an invalid cluster: %v", err)
	}
	refEv := newReferenceEvaluator(t, in)
	otherEv, err := other.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatalf("%s: %v", other.Name(), err)
	}
	preempt.SetFilterConfig(refEv, in.Request.Config)
	preempt.SetFilterConfig(otherEv, in.Request.Config)
	preempt.SetFilterNow(refEv, in.Request.Now)
	preempt.SetFilterNow(otherEv, in.Request.Now)
	if diff := cmp.Diff(refEv.Filter(ctx, in.Request.Pod), otherEv.Filter(ctx, in.Request.Pod)); diff != "" {
		t.Fatalf("filter phase differs (-reference +%s):\n%s", other.Name(), diff)
	}

	want, err := harness.Run(ctx, reference.Impl{}, in.Cluster, in.Request, in.Faults...)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	got, err := harness.Run(ctx, other, in.Cluster, in.Request, in.Faults...)
	if err != nil {
		t.Fatalf("%s: %v", other.Name(), err)
	}
	if tieOK {
		if want, _, err = agreement.Expected(ctx, refEv, in.Cluster, in.Request, want, got, other, in.Faults...); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decision differs on %v (-reference +%s):\n%s", in, other.Name(), diff)
	}
	checkUnchanged(t, before, in)
	return true
}

// refused reports whether other refuses in (preempt.Limited: it does not
// model a feature in uses); nothing is compared then. The reference itself
// must model every generated input.
func refused(t TB, in Input, other preempt.Implementation) bool {
	t.Helper()
	if err := harness.Refusal(reference.Impl{}, in.Cluster, in.Request.Pod); err != nil {
		t.Fatalf("the reference refuses a generated input: %v", err)
	}
	if err := harness.GateRefusal(reference.Impl{}, in.Cluster, in.Request.Pod, in.Request.Config); err != nil {
		t.Fatalf("the reference refuses a generated input's gates: %v", err)
	}
	return harness.Refusal(other, in.Cluster, in.Request.Pod) != nil ||
		harness.GateRefusal(other, in.Cluster, in.Request.Pod, in.Request.Config) != nil
}

// newReferenceEvaluator builds the oracle's evaluator for in.
func newReferenceEvaluator(t TB, in Input) preempt.Evaluator {
	t.Helper()
	ev, err := reference.Impl{}.NewEvaluator(in.Cluster)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	return ev
}

// deepCopy copies every input of in that an implementation could write
// to: the cluster's objects and the request (its pod, filter outcome,
// configuration with its extenders, and running preemption).
func deepCopy(in Input) Input {
	return Input{Cluster: in.Cluster.DeepCopy(), Request: in.Request.DeepCopy(), Faults: in.Faults}
}

// checkUnchanged fails t when an input of in differs from before, its
// copy taken before the calls: every object of the cluster, and every
// field of the request.
func checkUnchanged(t TB, before, in Input) {
	t.Helper()
	if !equality.Semantic.DeepEqual(before.Cluster, in.Cluster) {
		t.Fatalf("the cluster changed during the call (-before +after):\n%s", cmp.Diff(before.Cluster, in.Cluster))
	}
	// cmp, not equality.Semantic: the request holds a time.Time, whose
	// unexported fields the latter refuses; cmp compares it with Equal.
	if !cmp.Equal(before.Request, in.Request) {
		t.Fatalf("the request changed during the call (-before +after):\n%s", cmp.Diff(before.Request, in.Request))
	}
}

// CheckGang runs kube-scheduler's pod-group cycle
// (harness.DecidePodGroup: validation, the members being deleted skipped,
// the attempt on the cluster as it is, then PodGroupPostFilter) with the
// reference's and other's gang scheduling and preemption
// (preempt.PodGroupPreempter) on in.Gang and fails t unless they agree on
// the whole decision: status, message, placement, nominations, skipped
// members, victims (with their groups), counts and API calls. NotApplicable when
// other does not preempt for gangs, Refused when it does not model a
// feature the gang uses (preempt.PodGroupLimited).
func CheckGang(t TB, in Input, other preempt.Implementation) Outcome {
	t.Helper()
	ctx := context.Background()
	before := deepCopy(in)
	if err := in.Cluster.Validate(); err != nil {
		t.Fatalf("generator made an invalid cluster: %v", err)
	}
	mine, _ := in.Gang.OfDefaultScheduler()
	if mine.CycleRefusal(in.Cluster) != nil {
		return Refused
	}
	kept, _ := mine.WithoutDeleting()
	if harness.PodGroupRefusal(other, in.Cluster, kept) != nil {
		return Refused
	}
	run := func(impl preempt.Implementation) (preempt.PodGroupDecision, bool) {
		ev, err := impl.NewEvaluator(in.Cluster)
		if err != nil {
			t.Fatalf("%s: %v", impl.Name(), err)
		}
		pg, ok := ev.(preempt.PodGroupPreempter)
		if !ok {
			return preempt.PodGroupDecision{}, false
		}
		cs := harness.NewClient(in.Cluster, nil, in.Faults...)
		for _, p := range in.Gang.Pods {
			_ = cs.Tracker().Add(p.DeepCopy())
		}
		cs.ClearActions()
		d, err := harness.DecidePodGroup(ctx, impl, pg, in.Cluster, in.Gang, cs)
		if err != nil {
			t.Fatalf("%s refused a gang the checks before let through: %v", impl.Name(), err)
		}
		return d, true
	}
	got, ok := run(other)
	if !ok {
		return NotApplicable
	}
	want, _ := run(reference.Impl{})
	if diff := cmp.Diff(want, got); diff != "" && !upstreamMayAnswer(in, other, want, run) {
		t.Fatalf("gang decision differs on %v, gang %d members (-reference +%s):\n%s", in, len(in.Gang.Pods), other.Name(), diff)
	}
	if !equality.Semantic.DeepEqual(before.Cluster, in.Cluster) {
		t.Fatalf("the cluster changed during the call (-before +after):\n%s", cmp.Diff(before.Cluster, in.Cluster))
	}
	return Compared
}

// gangRetries is how many more times upstreamMayAnswer asks upstream.
const gangRetries = 64

// upstreamMayAnswer reports whether other, an implementation that breaks
// ties at random (upstream), gives want on one of gangRetries more runs
// when a member of in's gang has a DoNotSchedule topology spread
// constraint. Its gang path is not deterministic there: PodTopologySpread
// builds its critical paths iterating a map, and a group's members come
// from a map too (ScheduledPods), so when the reprieve puts victims back
// in several domains the paths, and the skew, depend on Go's map order
// (docs/upstream-findings.md); the reference pins that order. Any other
// disagreement stays one.
func upstreamMayAnswer(in Input, other preempt.Implementation, want preempt.PodGroupDecision, run func(preempt.Implementation) (preempt.PodGroupDecision, bool)) bool {
	if !agreement.TieIsRandom(other) || !gangSpreads(in.Gang) {
		return false
	}
	for range gangRetries {
		got, _ := run(other)
		if cmp.Equal(want, got) {
			return true
		}
	}
	return false
}

// gangSpreads reports whether a member of g has a DoNotSchedule topology
// spread constraint.
func gangSpreads(g *preempt.PodGroupRequest) bool {
	for _, p := range g.Pods {
		for _, c := range p.Spec.TopologySpreadConstraints {
			if c.WhenUnsatisfiable == v1.DoNotSchedule {
				return true
			}
		}
	}
	return false
}

// AtRelease is in asking for the release other runs, when other runs one
// release's own code (preempt.ReleaseFixed, an upstream adapter) and in's
// configuration names none: the reference then answers as that release.
//
// Switches the generator drew (Input.Switched) are dropped for such an
// implementation, which can only refuse them: its comparisons then cover
// every drawn problem.
func AtRelease(in Input, other preempt.Implementation) Input {
	r, ok := other.(preempt.ReleaseFixed)
	if !ok || in.Request == nil {
		return in
	}
	req := *in.Request
	if in.Switched {
		req.Config.Switches = nil
		in.Switched = false
	}
	if req.Config.Release == "" && r.UpstreamRelease() != preempt.CurrentRelease {
		req.Config.Release = r.UpstreamRelease()
	}
	in.Request = &req
	return in
}
