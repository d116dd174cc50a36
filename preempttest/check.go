package preempttest

import (
	"context"
	"slices"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/preemptbench/preemptbench/agreement"
	"github.com/preemptbench/preemptbench/harness"
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
func CheckAgainstReference(t TB, in Input, other preempt.Implementation) {
	tieOK := agreement.TieIsRandom(other)
	t.Helper()
	if refused(t, in, other) {
		return
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
	if !unchanged(before, in) {
		t.Fatalf("the input changed during the call:\n%s", cmp.Diff(before.Cluster, in.Cluster))
	}
}

// refused reports whether other refuses in (preempt.Limited: it does not
// model a feature in uses); nothing is compared then. The reference itself
// must model every generated input.
func refused(t TB, in Input, other preempt.Implementation) bool {
	t.Helper()
	if err := harness.Refusal(reference.Impl{}, in.Cluster, in.Request.Pod); err != nil {
		t.Fatalf("the reference refuses a generated input: %v", err)
	}
	return harness.Refusal(other, in.Cluster, in.Request.Pod) != nil
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

func deepCopy(in Input) Input {
	c := &preempt.Cluster{}
	for _, n := range in.Cluster.Nodes {
		c.Nodes = append(c.Nodes, n.DeepCopy())
	}
	for _, p := range in.Cluster.Pods {
		c.Pods = append(c.Pods, p.DeepCopy())
	}
	for _, pdb := range in.Cluster.PDBs {
		c.PDBs = append(c.PDBs, pdb.DeepCopy())
	}
	req := *in.Request
	req.Pod = in.Request.Pod.DeepCopy()
	if p := in.Request.Preempting; p != nil {
		cp := *p
		if p.LastVictim != nil {
			lv := *p.LastVictim
			cp.LastVictim = &lv
		}
		req.Preempting = &cp
	}
	if in.Request.Filter != nil {
		req.Filter = map[string]preempt.Code{}
		for k, v := range in.Request.Filter {
			req.Filter[k] = v
		}
	}
	req.Codes = slices.Clone(in.Request.Codes)
	return Input{Cluster: c, Request: &req, Faults: in.Faults}
}

func unchanged(a, b Input) bool {
	ra, rb := *a.Request, *b.Request
	return equality.Semantic.DeepEqual(a.Cluster, b.Cluster) && equality.Semantic.DeepEqual(ra.Pod, rb.Pod) &&
		equality.Semantic.DeepEqual(ra.Filter, rb.Filter) && slices.Equal(ra.Codes, rb.Codes) && equality.Semantic.DeepEqual(ra.Config, rb.Config) && ra.Offset == rb.Offset && ra.Now.Equal(rb.Now) &&
		equality.Semantic.DeepEqual(ra.Preempting, rb.Preempting)
}
