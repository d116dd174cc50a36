package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kptr "k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// runGangAgreement runs s on the reference and on every other
// implementation that does not refuse it, and fails t unless they take
// the same steps (per gang: status, members' nodes, victims in order) and
// end on the same cluster; upstream must run. It returns the reference's
// result.
func runGangAgreement(t *testing.T, s harness.GangStream) harness.GangStreamResult {
	t.Helper()
	ctx := context.Background()
	want, err := harness.RunGangStream(ctx, registry.Reference(), s)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	ran := false
	for _, impl := range registry.Others() {
		if err := harness.GangRefusal(impl, s.Cluster, s.Gangs, s.Config); err != nil {
			if impl.Name() == "upstream" {
				t.Fatalf("upstream refuses the gang stream: %v", err)
			}
			t.Logf("%s skipped: %v", impl.Name(), err)
			continue
		}
		got, err := harness.RunGangStream(ctx, impl, s)
		if err != nil {
			t.Fatalf("%s: %v", impl.Name(), err)
		}
		ran = ran || impl.Name() == "upstream"
		if d := cmp.Diff(want.Steps, got.Steps); d != "" {
			t.Errorf("%s: steps differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
		}
		if d := cmp.Diff(podsOnNodes(want.Cluster), podsOnNodes(got.Cluster)); d != "" {
			t.Errorf("%s: final clusters differ (-reference +%s):\n%s", impl.Name(), impl.Name(), d)
		}
	}
	if !ran {
		t.Errorf("upstream did not run")
	}
	return want
}

// The gang streams at upstream's short size (2 nodes, one gang of 2) and
// at 20 nodes in 4 gangs of 5 (the evaluator following the cluster from
// gang to gang): reference and upstream give every gang the same victims
// and nominations, in the same order, and end on the same cluster (the
// agreement the streams rely on); every gang is bound, each member on a
// node of its own, where it evicted every pod below its priority and
// nothing else (GangPreemptionAffinity's anchors, above it, stay).
func TestGangStreams(t *testing.T) {
	for _, shape := range synth.GangShapes() {
		for _, tc := range []struct{ nodes, gangs int }{{2, 0}, {20, 4}} {
			t.Run(fmt.Sprintf("%s/%d", shape, tc.nodes), func(t *testing.T) {
				s, err := GangStreamFor(shape, tc.nodes, tc.gangs)
				if err != nil {
					t.Fatal(err)
				}
				if !s.Config.FeatureGates[preempt.GenericWorkloadGate] {
					t.Fatalf("gates %v, want GenericWorkload=true", s.Config.FeatureGates)
				}
				res := runGangAgreement(t, s)
				checkGangStream(t, s, res)
			})
		}
	}
}

// checkGangStream checks a stream of the gang shapes: every gang
// preempted (none fits on the full cluster) and was bound, one member a
// node, every node used once, each member's node emptied of the pods
// below its priority, and only those.
func checkGangStream(t *testing.T, s harness.GangStream, res harness.GangStreamResult) {
	t.Helper()
	members := 0
	for _, g := range s.Gangs {
		members += len(g.Members)
	}
	if len(res.Steps) != len(s.Gangs) || res.Bound != members {
		t.Fatalf("%d steps, %d members bound; want %d and %d", len(res.Steps), res.Bound, len(s.Gangs), members)
	}
	byRef := map[preempt.PodRef]*v1.Pod{}
	below := map[string][]preempt.PodRef{} // node -> pods below the gangs' priority
	for _, p := range s.Cluster.Pods {
		ref := preempt.PodRef{Namespace: p.Namespace, Name: p.Name}
		byRef[ref] = p
		if kptr.Deref(p.Spec.Priority, 0) < kptr.Deref(s.Gangs[0].Members[0].Spec.Priority, 0) {
			below[p.Spec.NodeName] = append(below[p.Spec.NodeName], ref)
		}
	}
	used := map[string]bool{}
	victims := 0
	for i, st := range res.Steps {
		if st.Status != preempt.Success || len(st.Nodes) != len(s.Gangs[i].Members) {
			t.Fatalf("gang %d: %+v", i, st)
		}
		var want []preempt.PodRef
		for _, n := range st.Nodes {
			if n == "" || used[n] {
				t.Fatalf("gang %d: member on node %q (used: %v)", i, n, used[n])
			}
			used[n] = true
			want = append(want, below[n]...)
		}
		got := slices.Clone(st.Victims)
		key := func(a, b preempt.PodRef) int { return strings.Compare(a.String(), b.String()) }
		slices.SortFunc(got, key)
		slices.SortFunc(want, key)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("gang %d on %v: victims (-the pods below it on its nodes +evicted):\n%s", i, st.Nodes, d)
		}
		victims += len(got)
	}
	if len(used) != len(s.Cluster.Nodes) || res.Victims != victims {
		t.Errorf("%d of %d nodes used, %d victims counted for %d", len(used), len(s.Cluster.Nodes), res.Victims, victims)
	}
	left := podsOnNodes(res.Cluster)
	for _, g := range s.Gangs {
		for _, m := range g.Members {
			if left[preempt.Key(m.Namespace, m.Name)] == "" {
				t.Errorf("member %s/%s is not bound in the final cluster", m.Namespace, m.Name)
			}
		}
	}
}

// The stream at upstream's FastTest size, as the benchmark builds it
// (default gangs, the measured members): it finishes with every gang
// bound.
func TestGangStreamFastTest(t *testing.T) {
	for _, shape := range synth.GangShapes() {
		sizes := StreamSizesOf(shape)
		if sizes[0] != 2 {
			t.Fatalf("%s: sizes %v, want upstream's [2 100]", shape, sizes)
		}
		s, err := GangStreamFor(shape, sizes[0], StreamGangs(sizes[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, impl := range registry.All() {
			if err := harness.GangRefusal(impl, s.Cluster, s.Gangs, s.Config); err != nil {
				t.Logf("%s %s skipped: %v", shape, impl.Name(), err)
				continue
			}
			res, err := harness.RunGangStream(context.Background(), impl, s)
			if err != nil {
				t.Fatalf("%s %s: %v", shape, impl.Name(), err)
			}
			if len(res.Steps) != 1 || res.Bound != 2 || res.Steps[0].Status != preempt.Success || slices.Contains(res.Steps[0].Nodes, "") {
				t.Errorf("%s %s: %+v, bound %d; want the one gang of 2 bound", shape, impl.Name(), res.Steps, res.Bound)
			}
		}
	}
}

// The first-fit placement of a gang stream: a gang that fits is bound
// without preemption (Schedulable, first feasible nodes in name order);
// one that fits in part has its placed members taken back before it
// preempts, and the cluster the preemption sees and the stream ends on
// hold no trace of them.
func TestGangStreamFirstFit(t *testing.T) {
	s, err := GangStreamFor("gang-basic", 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var empty, half harness.GangStream
	empty, half = s, s
	ec, hc := *s.Cluster, *s.Cluster
	ec.Pods, hc.Pods = nil, nil
	for _, p := range s.Cluster.Pods {
		if p.Spec.NodeName == "node-1" {
			hc.Pods = append(hc.Pods, p)
		}
	}
	empty.Cluster, half.Cluster = &ec, &hc

	res := runGangAgreement(t, empty)
	if st := res.Steps[0]; st.Status != preempt.Schedulable || !slices.Equal(st.Nodes, []string{"node-0", "node-1"}) || len(st.Victims) != 0 {
		t.Errorf("on empty nodes: %+v, want Schedulable on node-0 and node-1", st)
	}
	if res.Bound != 2 || len(res.Cluster.Pods) != 2 {
		t.Errorf("on empty nodes: %d bound, %d pods at the end; want 2 and 2", res.Bound, len(res.Cluster.Pods))
	}

	res = runGangAgreement(t, half)
	st := res.Steps[0]
	if st.Status != preempt.Success || !slices.Equal(st.Nodes, []string{"node-0", "node-1"}) || len(st.Victims) != len(hc.Pods) {
		t.Errorf("with node-0 empty: %+v, want Success on node-0 and node-1 evicting node-1's %d pods", st, len(hc.Pods))
	}
	if len(res.Cluster.Pods) != 2 {
		t.Errorf("with node-0 empty: %d pods at the end, want the 2 members", len(res.Cluster.Pods))
	}
}

// A gang that cannot be placed even by preempting (members larger than
// any node) ends the stream with an error naming it, on every
// implementation that runs gang streams: upstream's workloads bind every
// gang, so a stream that does not is wrong.
func TestGangStreamUnplacedIsAnError(t *testing.T) {
	s, err := GangStreamFor("gang-basic", 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Gangs[0]
	big := harness.Gang{PodGroup: g.PodGroup}
	for _, m := range g.Members {
		m = m.DeepCopy()
		m.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("5")
		big.Members = append(big.Members, m)
	}
	s.Gangs = []harness.Gang{big}
	for _, impl := range registry.All() {
		if err := harness.GangRefusal(impl, s.Cluster, s.Gangs, s.Config); err != nil {
			continue
		}
		res, err := harness.RunGangStream(context.Background(), impl, s)
		if err == nil || !strings.Contains(err.Error(), "gang gang-preempt-0/gang-0: ") {
			t.Errorf("%s: %v (steps %+v), want an error naming the gang", impl.Name(), err, res.Steps)
		}
	}
}
