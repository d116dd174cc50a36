package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kptr "k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
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
	for _, shape := range synth.Shapes() {
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
				if err := refusal(impl, s); err != nil {
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

// refusal is the benchmark's reason to skip impl on s, nil when it runs.
func refusal(impl preempt.Implementation, s harness.Stream) error {
	if err := harness.Refusal(impl, s.Cluster, s.Preemptors[0]); err != nil {
		return err
	}
	return harness.GateRefusal(impl, s.Cluster, s.Preemptors[0], s.Config)
}

// The podgroup streams (scheduler_perf's PreemptionPodGroupDisruptionMode)
// at upstream's FastTest size with its one preemptor, and at 30 nodes
// with a preemptor per node (the stream goes on past upstream's 3 into
// nodes that earlier evictions emptied or left part full): reference and
// upstream bind the same preemptors to the same nodes and evict the same
// victims, and the cluster ends the same; so does every other
// implementation that does not refuse the stream (optimized, until it
// models pod groups as victims, refuses podgroup-single and podgroup-all
// and runs podgroup-none). Each stream also does what its mode means: the
// first preemptor evicts every pod of its node, on that node only
// (podgroup-none, podgroup-single), or with every member of their groups,
// on other nodes too (podgroup-all).
func TestStreamPodGroups(t *testing.T) {
	ctx := context.Background()
	for _, shape := range []string{"podgroup-none", "podgroup-single", "podgroup-all"} {
		for _, tc := range []struct{ nodes, preemptors int }{{2, 0}, {30, 30}} {
			t.Run(fmt.Sprintf("%s/%d", shape, tc.nodes), func(t *testing.T) {
				f, err := FixtureFor(shape, tc.nodes)
				if err != nil {
					t.Fatal(err)
				}
				if !f.Req.Config.FeatureGates[preempt.GenericWorkloadGate] {
					t.Fatalf("fixture gates %v, want GenericWorkload=true", f.Req.Config.FeatureGates)
				}
				k := tc.preemptors
				if k == 0 {
					k = StreamPreemptors(f)
					if k != 1 {
						t.Fatalf("FastTest measures %d preemptors, want 1", k)
					}
				}
				s := StreamOf(f, k)
				want, err := harness.RunStream(ctx, registry.Reference(), s)
				if err != nil {
					t.Fatal(err)
				}
				checkPodGroupStream(t, shape, f, want)
				ran := map[string]bool{}
				for _, impl := range registry.Others() {
					if err := refusal(impl, s); err != nil {
						if impl.Name() == "upstream" {
							t.Fatalf("upstream refuses %s: %v", shape, err)
						}
						t.Logf("%s refuses %s: %v", impl.Name(), shape, err)
						continue
					}
					got, err := harness.RunStream(ctx, impl, s)
					if err != nil {
						t.Fatalf("%s: %v", impl.Name(), err)
					}
					ran[impl.Name()] = true
					if d := cmp.Diff(want.Steps, got.Steps); d != "" {
						t.Errorf("%s: steps differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
					}
					if d := cmp.Diff(podsOnNodes(want.Cluster), podsOnNodes(got.Cluster)); d != "" {
						t.Errorf("%s: final clusters differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
					}
				}
				if !ran["upstream"] {
					t.Errorf("upstream did not run")
				}
			})
		}
	}
}

// checkPodGroupStream checks what a podgroup stream's first preemptor
// evicted against the shape's mode, and that every later victim went with
// its whole group under podgroup-all.
func checkPodGroupStream(t *testing.T, shape string, f *Fixture, res harness.StreamResult) {
	t.Helper()
	c := f.Scenario.Cluster
	members := synth.PodGroupMembers(f.Nodes)
	if res.Bound == 0 || res.Steps[0].Status != preempt.Success {
		t.Fatalf("the first preemptor did not preempt: %+v", res.Steps)
	}
	byRef := map[preempt.PodRef]*v1.Pod{}
	groupOf := map[string][]preempt.PodRef{}
	for _, p := range c.Pods {
		ref := preempt.PodRef{Namespace: p.Namespace, Name: p.Name}
		byRef[ref] = p
		if g, ok := preempt.PodGroupName(p); ok {
			groupOf[g] = append(groupOf[g], ref)
		}
	}
	first := res.Steps[0]
	nodes := map[string]bool{}
	onNode := 0
	for _, v := range first.Victims {
		p := byRef[v]
		if p == nil {
			t.Fatalf("first victim %s is not a pod of the initial cluster", v)
		}
		nodes[p.Spec.NodeName] = true
		if p.Spec.NodeName == first.Node {
			onNode++
		}
	}
	if onNode != members {
		t.Errorf("the first preemptor evicted %d pods of its node %s, want all %d", onNode, first.Node, members)
	}
	switch shape {
	case "podgroup-none", "podgroup-single":
		if len(first.Victims) != members || len(nodes) != 1 {
			t.Errorf("the first preemptor evicted %d pods on %d nodes, want the %d of its node", len(first.Victims), len(nodes), members)
		}
	case "podgroup-all":
		// The node's pods belong to distinct groups, each spread over
		// as many nodes as it has members.
		if want := members * members; len(first.Victims) != want || len(nodes) < members {
			t.Errorf("the first preemptor evicted %d pods on %d nodes, want %d (every member of %d groups) on at least %d nodes", len(first.Victims), len(nodes), want, members, members)
		}
		for i, st := range res.Steps {
			gone := map[preempt.PodRef]bool{}
			for _, v := range st.Victims {
				gone[v] = true
			}
			for _, v := range st.Victims {
				p := byRef[v]
				if p == nil {
					continue
				}
				g, _ := preempt.PodGroupName(p)
				for _, m := range groupOf[g] {
					// A member an earlier step evicted is gone already.
					if !gone[m] && !evictedBefore(res.Steps[:i], m) {
						t.Errorf("step %d evicted %s of group %s but not its member %s", i, v, g, m)
					}
				}
			}
		}
	}
}

func evictedBefore(steps []harness.StreamStep, ref preempt.PodRef) bool {
	for _, st := range steps {
		if slices.Contains(st.Victims, ref) {
			return true
		}
	}
	return false
}

// The pvs stream (scheduler_perf's PreemptionPVs) at upstream's 5Nodes
// with its 5 measured pods, and at 100 nodes with one preemptor more than
// nodes: each preemptor, with a claim and volume of its own, evicts three
// of a node's four 900m pods (3000m beside one 900m pod fits in 4 cpu) on
// a node no other preemptor holds (3900m used leaves 100m), and the one
// too many finds nothing to preempt. scheduler_perf creates no CSINode,
// and v1.37.2's NodeVolumeLimits counts an in-tree EBS volume only on a
// node with one (isCSIMigrationOn), so the volumes limit nothing; with a
// CSINode allowing ebs.csi.aws.com no volume on every other node, the
// migrated volume counts there and only the others take preemptors. On
// every implementation, with the same steps and the same final cluster.
func TestStreamPVs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		nodes, preemptors int
		csiNodes          bool
	}{{5, 0, false}, {100, 101, false}, {5, 0, true}, {100, 101, true}} {
		t.Run(fmt.Sprintf("nodes=%d/csinodes=%t", tc.nodes, tc.csiNodes), func(t *testing.T) {
			f, err := FixtureFor("pvs", tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			k := tc.preemptors
			if k == 0 {
				if k = StreamPreemptors(f); k != tc.nodes {
					t.Fatalf("5Nodes measures %d pods, want %d", k, tc.nodes)
				}
			}
			s := StreamOf(f, k)
			usable := map[string]bool{}
			if tc.csiNodes {
				c := *s.Cluster
				c.CSINodes = nil
				for i, n := range c.Nodes {
					if i%2 == 1 {
						usable[n.Name] = true
						continue
					}
					c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n.Name},
						Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: n.Name,
							Allocatable: &storagev1.VolumeNodeResources{Count: kptr.To[int32](0)}}}}})
				}
				s.Cluster = &c
			} else {
				for _, n := range s.Cluster.Nodes {
					usable[n.Name] = true
				}
			}
			claims := map[string]bool{}
			for _, p := range s.Preemptors {
				if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].PersistentVolumeClaim == nil || claims[p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName] {
					t.Fatalf("preemptor %s: volumes %+v, not a claim of its own", p.Name, p.Spec.Volumes)
				}
				claims[p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName] = true
			}
			want, err := harness.RunStream(ctx, registry.Reference(), s)
			if err != nil {
				t.Fatal(err)
			}
			bound := min(k, len(usable))
			if want.Bound != bound || want.Victims != 3*bound {
				t.Fatalf("bound %d, victims %d; want %d and %d", want.Bound, want.Victims, bound, 3*bound)
			}
			nodes := map[string]bool{}
			for i, st := range want.Steps {
				if i >= bound {
					if st.Status != preempt.Unschedulable || st.Node != "" {
						t.Fatalf("step %d: %+v, want Unschedulable", i, st)
					}
					continue
				}
				if st.Status != preempt.Success || len(st.Victims) != 3 || nodes[st.Node] || !usable[st.Node] {
					t.Fatalf("step %d: %+v", i, st)
				}
				nodes[st.Node] = true
			}
			ran := 0
			for _, impl := range registry.Others() {
				if err := refusal(impl, s); err != nil {
					t.Fatalf("%s refuses pvs: %v", impl.Name(), err)
				}
				got, err := harness.RunStream(ctx, impl, s)
				if err != nil {
					t.Fatalf("%s: %v", impl.Name(), err)
				}
				ran++
				if d := cmp.Diff(want.Steps, got.Steps); d != "" {
					t.Errorf("%s: steps differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
				}
				if d := cmp.Diff(podsOnNodes(want.Cluster), podsOnNodes(got.Cluster)); d != "" {
					t.Errorf("%s: final clusters differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
				}
			}
			if ran < 2 {
				t.Errorf("%d implementations besides the reference ran, want upstream and optimized", ran)
			}
		})
	}
}
