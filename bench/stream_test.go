package bench

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/registry"
	"github.com/preemptbench/preemptbench/scenario"
)

// podsOnNodes is a final cluster as pod -> node (bound) or "~node"
// (nominated).
func podsOnNodes(c *preempt.Cluster) map[string]string {
	out := map[string]string{}
	for _, p := range c.Pods {
		switch {
		case preempt.IsBound(p):
			out[preempt.Key(p.Namespace, p.Name)] = p.Spec.NodeName
		case preempt.IsNominated(p):
			out[preempt.Key(p.Namespace, p.Name)] = "~" + p.Status.NominatedNodeName
		}
	}
	return out
}

// Every implementation runs every shape's stream to the same steps and the
// same final cluster: optimized and upstream following the cluster with
// Update, the reference built again every cycle, upstream breaking the
// final tie in list order (harness.Deterministic; the shape ties has one
// at every cycle).
func TestStreamAgreement(t *testing.T) {
	ctx := context.Background()
	for _, shape := range scenario.Shapes() {
		t.Run(shape, func(t *testing.T) {
			f, err := FixtureFor(shape, 12)
			if err != nil {
				t.Fatal(err)
			}
			s := StreamOf(f, 16)
			want, err := harness.RunStream(ctx, registry.Reference(), s)
			if err != nil {
				t.Fatal(err)
			}
			if want.Bound == 0 {
				t.Fatalf("reference bound no preemptor: %+v", want.Steps)
			}
			for _, impl := range registry.All() {
				if impl.Name() == "reference" {
					continue
				}
				if err := harness.Refusal(impl, s.Cluster, s.Preemptors[0]); err != nil {
					t.Logf("%s refuses %s: %v", impl.Name(), shape, err)
					continue
				}
				got, err := harness.RunStream(ctx, impl, s)
				if err != nil {
					t.Fatalf("%s: %v", impl.Name(), err)
				}
				if d := cmp.Diff(want.Steps, got.Steps); d != "" {
					t.Errorf("%s: steps differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
				}
				if d := cmp.Diff(podsOnNodes(want.Cluster), podsOnNodes(got.Cluster)); d != "" {
					t.Errorf("%s: final clusters differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
				}
			}
		})
	}
}

// PreemptionBasic's arithmetic: nodes of 4 cpu full with four 900m pods.
// With v1.37.2's preemptor (shape basic: 3970m) each preemptor evicts all
// four pods of a node no preemptor holds yet; with v1.36's (basic-v1.36:
// 3000m) it evicts three and reprieves one (a fourth 900m still fits
// beside it). Either way the next preemptor cannot use that node again
// (30m or 100m left): n preemptors end on n distinct nodes with v·n
// victims, and one more preemptor finds nothing to preempt.
func TestStreamPreemptionBasic(t *testing.T) {
	const n = 40
	for _, tc := range []struct {
		shape   string
		victims int // per preemptor
	}{{"basic", 4}, {"basic-v1.36", 3}} {
		f, err := FixtureFor(tc.shape, n)
		if err != nil {
			t.Fatal(err)
		}
		s := StreamOf(f, n+1)
		for _, impl := range registry.Others() {
			res, err := harness.RunStream(context.Background(), impl, s)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bound != n || res.Victims != tc.victims*n {
				t.Fatalf("%s %s: bound %d, victims %d; want %d and %d", tc.shape, impl.Name(), res.Bound, res.Victims, n, tc.victims*n)
			}
			nodes := map[string]bool{}
			for _, st := range res.Steps[:n] {
				if st.Status != preempt.Success || len(st.Victims) != tc.victims || nodes[st.Node] {
					t.Fatalf("%s %s: step %+v", tc.shape, impl.Name(), st)
				}
				nodes[st.Node] = true
			}
			if last := res.Steps[n]; last.Status != preempt.Unschedulable || last.Node != "" || last.Visited != n {
				t.Fatalf("%s %s: last step %+v, want Unschedulable after visiting all %d nodes", tc.shape, impl.Name(), last, n)
			}
			if got, want := len(res.Cluster.Pods), 4*n-tc.victims*n+n; got != want {
				t.Fatalf("%s %s: %d pods at the end, want %d", tc.shape, impl.Name(), got, want)
			}
		}
	}
}

// TestStreamGenericWorkload: a stream under GenericWorkload=true (no pod
// groups in the shapes) runs the same on every implementation, and the
// same as with the gate off.
func TestStreamGenericWorkload(t *testing.T) {
	ctx := context.Background()
	f, err := FixtureFor("basic", 12)
	if err != nil {
		t.Fatal(err)
	}
	s := StreamOf(f, 8)
	want, err := harness.RunStream(ctx, registry.Reference(), s)
	if err != nil {
		t.Fatal(err)
	}
	s.Config.FeatureGates = map[string]bool{"GenericWorkload": true}
	for _, impl := range registry.All() {
		got, err := harness.RunStream(ctx, impl, s)
		if err != nil {
			t.Fatalf("%s: %v", impl.Name(), err)
		}
		if d := cmp.Diff(want.Steps, got.Steps); d != "" {
			t.Errorf("%s with GenericWorkload=true: steps differ (-reference with the gate off +%s):\n%s", impl.Name(), impl.Name(), d)
		}
	}
}
