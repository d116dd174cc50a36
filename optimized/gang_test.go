package optimized_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// gangNode is a node of cpu and pods, labelled with its hostname.
func gangNode(name, cpu, pods string) *testobj.NodeWrapper {
	return testobj.MakeNode().Name(name).Hostname().Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourcePods: pods})
}

// gangPod is a pod of priority prio asking cpu, labelled app=<name>, bound
// to node an hour before the epoch (or, for a member, unbound: node ""),
// in pod group group when not "".
func gangPod(name, node, group string, prio int32, cpu string) *testobj.PodWrapper {
	return testobj.MakePod().Namespace("default").Name(name).UID("uid-"+name).Label("app", name).Priority(prio).PodGroupName(group).
		Container("c").CPU(cpu).Bound(node, testobj.Epoch.Add(-time.Hour))
}

// gangGroup is a PodGroup of namespace default with the gang policy of
// minCount.
func gangGroup(name string, prio, minCount int32) *preempt.PodGroup {
	return testobj.MakePodGroup().Namespace("default").Name(name).UID("uid-" + name).Priority(prio).MinCount(minCount).Obj()
}

// batchGroup is a mode-All PodGroup "batch" of the basic policy.
func batchGroup() *preempt.PodGroup {
	return testobj.MakePodGroup().Namespace("default").Name("batch").UID("uid-batch").Priority(0).BasicPolicy().DisruptionModeAll().Obj()
}

// gangDecision runs impl's gang preemption on c, recording its API calls.
func gangDecision(t *testing.T, impl preempt.Implementation, c *preempt.Cluster, req *preempt.PodGroupRequest) preempt.PodGroupDecision {
	t.Helper()
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	pg, ok := ev.(preempt.PodGroupPreempter)
	if !ok {
		t.Fatalf("%s is no PodGroupPreempter", impl.Name())
	}
	cs := harness.NewClient(c, nil)
	for _, p := range req.Pods {
		_ = cs.Tracker().Add(p.DeepCopy())
	}
	cs.ClearActions()
	d := pg.PreemptPodGroup(context.Background(), cs, req)
	d.Actions = cs.Recorded()
	return d
}

// TestGangAgreesWithReference: on hand-built gangs, each aimed at one
// part of the gang path (a nominated member's stub taking a pod slot,
// host ports in the world, a mode-All unit across nodes and a PDB, a
// request's group replacing the cluster's, the group's scheduled
// members toward minCount, a placement other than FirstFit), optimized
// gives the reference's whole decision, API calls included, and not a
// trivial one.
func TestGangAgreesWithReference(t *testing.T) {
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
	lastFit := func(ctx context.Context, view preempt.PlacementView, members []*v1.Pod) ([]string, error) {
		out := make([]string, len(members))
		nodes := slices.Clone(view.Nodes())
		slices.Reverse(nodes)
		for i, p := range members {
			for _, n := range nodes {
				if ok, err := view.Fits(ctx, p, n); err != nil || !ok {
					continue
				}
				if placed, err := view.Place(ctx, p, n); err == nil && placed {
					out[i] = n
				}
				break
			}
		}
		return out, nil
	}
	pdb := testobj.MakePDB().Namespace("default").Name("pdb").MinAvailableCount(1).MatchLabel("app", "w1").DisruptionsAllowed(0).Obj()
	for _, tc := range []struct {
		name      string
		c         *preempt.Cluster
		pg        *preempt.PodGroup
		members   []*v1.Pod
		placement preempt.Placement
		victims   int // the reference's, to keep the case meaningful
	}{
		{
			// m0 fits nowhere and waits on n1 as a stub of priority 0:
			// with v1 back, n1 would hold v1, the stub and m1, one pod
			// more than it allows, so v1 goes.
			name:    "a nominated member's stub takes a pod slot",
			c:       &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "2", "2").Obj()}, Pods: []*v1.Pod{gangPod("v1", "n1", "", -10, "100m").Obj()}},
			pg:      gangGroup("g", 0, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 100, "3").NominatedNodeName("n1").Obj(), gangPod("m1", "", "g", -20, "100m").Obj()},
			victims: 1,
		},
		{
			name: "host ports: the victim holding the port goes, the other is reprieved",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "4", "10").Obj(), gangNode("n2", "4", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "100m").Ports(v1.ContainerPort{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}).Obj(), gangPod("v2", "n1", "", 0, "100m").Obj(), gangPod("h2", "n2", "", 100, "4").Obj()}},
			pg:      gangGroup("g", 10, 2),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "1").Ports(v1.ContainerPort{ContainerPort: 8080, HostPort: 8080, Protocol: v1.ProtocolTCP}).Obj(), gangPod("m1", "", "g", 10, "1").Obj()},
			victims: 1,
		},
		{
			name: "a mode All unit across nodes goes whole; a PDB counts",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Obj(), gangNode("n2", "1", "10").Obj(), gangNode("n3", "1", "10").Obj()},
				Pods:      []*v1.Pod{gangPod("w1", "n1", "batch", 0, "600m").Obj(), gangPod("w2", "n3", "batch", 0, "100m").Obj(), gangPod("v2", "n2", "", 1, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{batchGroup()}, PDBs: []*policyv1.PodDisruptionBudget{pdb}},
			pg:      gangGroup("g", 10, 2),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Obj(), gangPod("m1", "", "g", 10, "600m").Obj()},
			victims: 3,
		},
		{
			// The cluster's g has priority 0: its bound member s0 would
			// be a victim; the request's g (priority 10) protects it, and
			// it counts toward minCount 2.
			name: "the request's group replaces the cluster's; a scheduled member counts",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Obj(), gangNode("n2", "1", "10").Obj()},
				Pods:      []*v1.Pod{gangPod("s0", "n1", "g", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "600m").Obj()},
				PodGroups: []*preempt.PodGroup{gangGroup("g", 0, 2)}},
			pg:      gangGroup("g", 10, 2),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Obj()},
			victims: 1,
		},
		{
			// Without the anchor both members would share n1 and evict
			// v1; required affinity to the anchor puts them on n2.
			name: "InterPodAffinity: members with required affinity to an anchor",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "2", "10").Obj(), gangNode("n2", "2", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "1").Obj(), gangPod("v2", "n2", "", 0, "1").Obj(), gangPod("anchor", "n2", "", 100, "500m").Label("role", "anchor").Obj()}},
			pg: gangGroup("g", 10, 2),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").PodAffinity("kubernetes.io/hostname", &metav1.LabelSelector{MatchLabels: map[string]string{"role": "anchor"}}, testobj.PodAffinityWithRequiredReq).Obj(),
				gangPod("m1", "", "g", 10, "600m").PodAffinity("kubernetes.io/hostname", &metav1.LabelSelector{MatchLabels: map[string]string{"role": "anchor"}}, testobj.PodAffinityWithRequiredReq).Obj()},
			victims: 1,
		},
		{
			// m1's PreFilter counts m0, placed on n1 before m1 is first
			// tried: anti-affinity sends m1 to n2, so v2 goes too.
			name: "InterPodAffinity: anti-affinity between members counts the members placed before",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Obj(), gangNode("n2", "1", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "600m").Obj()}},
			pg: gangGroup("g", 10, 2),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "500m").Label("gang", "g").PodAntiAffinity("kubernetes.io/hostname", &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, testobj.PodAntiAffinityWithRequiredReq).Obj(),
				gangPod("m1", "", "g", 10, "500m").Label("gang", "g").PodAntiAffinity("kubernetes.io/hostname", &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, testobj.PodAntiAffinityWithRequiredReq).Obj()},
			victims: 2,
		},
		{
			// v2 fits back on n2 beside nothing of the gang, but its
			// anti-affinity on the zone would reject m0 on n1 (m0's
			// plugin runs: m0 has affinity to the anchor), so it stays a
			// victim: the reprieve rechecks nodes no victim comes back to.
			name: "InterPodAffinity: a reprieved victim's anti-affinity in the zone of a member",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Label("zone", "a").Obj(), gangNode("n2", "1", "10").Label("zone", "a").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "100m").PodAntiAffinity("zone", &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, testobj.PodAntiAffinityWithRequiredReq).Obj(),
					gangPod("anchor", "n1", "", 100, "100m").Label("role", "anchor").Obj()}},
			pg:      gangGroup("g", 10, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Label("gang", "g").PodAffinity("zone", &metav1.LabelSelector{MatchLabels: map[string]string{"role": "anchor"}}, testobj.PodAffinityWithRequiredReq).Obj()},
			victims: 2,
		},
		{
			// m0's own anti-affinity on the zone: v2, put back on n2
			// (no member there), joins m0's zone and would reject m0 on
			// n1, so it stays a victim: the reprieve rechecks the node of
			// a member whose counts moved, not only the victims' nodes.
			name: "InterPodAffinity: a member's anti-affinity in its zone counts a victim put back on another node",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Label("zone", "a").Obj(), gangNode("n2", "1", "10").Label("zone", "a").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "100m").Label("tier", "db").Obj()}},
			pg:      gangGroup("g", 10, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").PodAntiAffinity("zone", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}, testobj.PodAntiAffinityWithRequiredReq).Obj()},
			victims: 2,
		},
		{
			// As above without m0's affinity: in the world without the
			// potential victims no pod has anti-affinity, so m0's
			// InterPodAffinity PreFilter Skips, and v2 comes back though
			// its anti-affinity matches m0.
			name: "InterPodAffinity: a member's plugin Skips in the world without the victims",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Label("zone", "a").Obj(), gangNode("n2", "1", "10").Label("zone", "a").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "100m").PodAntiAffinity("zone", &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, testobj.PodAntiAffinityWithRequiredReq).Obj()}},
			pg:      gangGroup("g", 10, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Label("gang", "g").Obj()},
			victims: 1,
		},
		{
			// m0 fits nowhere and waits on n1 as a stub (no labels, in
			// m0's namespace); m1's anti-affinity selects every pod of
			// the namespace, the stub too, so m1 goes to n2.
			name: "InterPodAffinity: a member's stub through AddPod",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Obj(), gangNode("n2", "1", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", -10, "600m").Obj(), gangPod("v2", "n2", "", -10, "600m").Obj()}},
			pg:      gangGroup("g", 0, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 0, "3").NominatedNodeName("n1").Obj(), gangPod("m1", "", "g", 0, "300m").PodAntiAffinity("kubernetes.io/hostname", &metav1.LabelSelector{MatchLabels: map[string]string{}}, testobj.PodAntiAffinityWithRequiredReq).Obj()},
			victims: 1,
		},
		{
			// m1's PreFilter counts m0, placed on n1: n1 would be skewed
			// by 2, so m1 goes to n2 and v2 goes too.
			name: "PodTopologySpread: the members placed before count",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "2", "10").Obj(), gangNode("n2", "2", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "1500m").Obj(), gangPod("v2", "n2", "", 0, "1500m").Obj()}},
			pg: gangGroup("g", 10, 2),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Label("gang", "g").SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, nil, nil, nil, nil).Obj(),
				gangPod("m1", "", "g", 10, "600m").Label("gang", "g").SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, nil, nil, nil, nil).Obj()},
			victims: 2,
		},
		{
			// m0 on n1 (v0's CPU needed) spreads the web pods: a2,
			// reprieved first on n2, raises the minimum, so b1 and b2
			// come back on n1 too, and b3 would skew n1 by 2 and goes;
			// without a2 counted b2 would go too, without the reprieve's
			// AddPod none would.
			name: "PodTopologySpread: a victim put back in another domain raises the minimum",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "2", "10").Obj(), gangNode("n2", "2", "10").Obj()},
				Pods: []*v1.Pod{gangPod("a2", "n2", "", 0, "100m").Label("tier", "web").Obj(), gangPod("b1", "n1", "", 0, "100m").Label("tier", "web").Obj(),
					gangPod("b2", "n1", "", 0, "100m").Label("tier", "web").Obj(), gangPod("b3", "n1", "", 0, "100m").Label("tier", "web").Obj(),
					gangPod("v0", "n1", "", 0, "1500m").Obj()}},
			pg:      gangGroup("g", 10, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}, nil, nil, nil, nil).Obj()},
			victims: 2,
		},
		{
			// Two web pods nominated to n1 above the gang: with them
			// (AddPod of a copy) n1 would be skewed by 2, so m0 goes to
			// n2 and v2, not v1, is the victim.
			name: "PodTopologySpread: nominated pods count",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "2", "10").Obj(), gangNode("n2", "2", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "1500m").Obj(), gangPod("v2", "n2", "", 0, "1500m").Obj(),
					gangPod("x1", "", "", 100, "100m").Label("tier", "web").NominatedNodeName("n1").Obj(), gangPod("x2", "", "", 100, "100m").Label("tier", "web").NominatedNodeName("n1").Obj()}},
			pg:      gangGroup("g", 10, 1),
			members: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}, nil, nil, nil, nil).Obj()},
			victims: 1,
		},
		{
			name: "a placement other than FirstFit",
			c: &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Obj(), gangNode("n2", "1", "10").Obj(), gangNode("n3", "1", "10").Obj()},
				Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "600m").Obj(), gangPod("v3", "n3", "", 0, "600m").Obj()}},
			pg:        gangGroup("g", 10, 2),
			members:   []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Obj(), gangPod("m1", "", "g", 10, "600m").Obj()},
			placement: lastFit,
			victims:   2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, sync := range []bool{true, false} {
				c := cfg
				c.Synchronous = sync
				req := &preempt.PodGroupRequest{PodGroup: tc.pg, Pods: tc.members, Config: c, Now: testobj.Epoch, Placement: tc.placement}
				if err := harness.PodGroupRefusal(optimized.Impl{}, tc.c, req); err != nil {
					t.Fatalf("optimized refuses: %v", err)
				}
				want := gangDecision(t, reference.Impl{}, tc.c, req)
				got := gangDecision(t, optimized.Impl{}, tc.c, req)
				if want.Status != preempt.Success || len(want.Victims) != tc.victims {
					t.Fatalf("the reference: %s %q, %d victims, want Success with %d", want.Status, want.Message, len(want.Victims), tc.victims)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("synchronous=%v (-reference +optimized):\n%s", sync, diff)
				}
			}
		})
	}
}

// TestGangAllocations pins the gang path's allocations on a 100-node
// cluster (ten pods a node, a mode-All group of four across nodes), a
// gang of eight preempting: the decision, its victims and the
// members' decisions, not per node or per pod. The client accepts every
// call and keeps nothing.
func TestGangAllocations(t *testing.T) {
	skipUnderRace(t)
	for _, tc := range []struct {
		name     string
		affinity bool // a pod of each node is an anchor; each member has required affinity to one
		spread   bool // each member spreads the gang over the nodes (DoNotSchedule, maxSkew 1)
		budget   int
	}{{"plain", false, false, gangAllocBudget}, {"affinity", true, false, gangAffinityAllocBudget}, {"spread", false, true, gangSpreadAllocBudget}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &preempt.Cluster{PodGroups: []*preempt.PodGroup{batchGroup()}}
			for n := range 100 {
				name := fmt.Sprintf("n%03d", n)
				c.Nodes = append(c.Nodes, gangNode(name, "4", "20").Obj())
				for k := range 10 {
					prio := int32(100)
					if k == 0 {
						prio = 0 // one low pod a node: 100 potential victims
					}
					p := gangPod(fmt.Sprintf("p%03d-%d", n, k), name, "", prio, "390m")
					if k == 1 && tc.affinity {
						p.Label("role", "anchor")
					}
					c.Pods = append(c.Pods, p.Obj())
				}
			}
			for k := range 4 {
				c.Pods = append(c.Pods, gangPod(fmt.Sprintf("w%d", k), fmt.Sprintf("n%03d", 10*k), "batch", 0, "10m").Obj())
			}
			var members []*v1.Pod
			for i := range 8 {
				m := gangPod(fmt.Sprintf("m%d", i), "", "g", 10, "300m")
				if tc.affinity {
					m.PodAffinity("kubernetes.io/hostname", &metav1.LabelSelector{MatchLabels: map[string]string{"role": "anchor"}}, testobj.PodAffinityWithRequiredReq)
				}
				if tc.spread {
					m.Label("gang", "g").SpreadConstraint(1, "kubernetes.io/hostname", v1.DoNotSchedule, &metav1.LabelSelector{MatchLabels: map[string]string{"gang": "g"}}, nil, nil, nil, nil)
				}
				members = append(members, m.Obj())
			}
			cfg := preempt.DefaultConfig()
			cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
			req := &preempt.PodGroupRequest{PodGroup: gangGroup("g", 10, 8), Pods: members, Config: cfg, Now: testobj.Epoch}
			want := gangDecision(t, reference.Impl{}, c, req)
			ev, err := optimized.Impl{}.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			pg := ev.(preempt.PodGroupPreempter)
			cs := harness.NewAcceptingClientset()
			d := pg.PreemptPodGroup(context.Background(), cs, req)
			d.Actions = want.Actions
			if diff := cmp.Diff(want, d); diff != "" {
				t.Fatalf("(-reference +optimized):\n%s", diff)
			}
			if len(d.Victims) != 8 {
				t.Fatalf("%d victims, want 8 (a case that preempts)", len(d.Victims))
			}
			allocs := testing.AllocsPerRun(20, func() {
				cs.ClearActions()
				pg.PreemptPodGroup(context.Background(), cs, req)
			})
			t.Logf("%.0f allocations a gang", allocs)
			if allocs > float64(tc.budget) {
				t.Errorf("%.0f allocations a gang, budget %d", allocs, tc.budget)
			}
		})
	}
}

// gangAllocBudget is TestGangAllocations' bound: 270 measured (go1.26;
// 651 before the gang path's hot paths were tuned: the accepting client's
// shared patch result, a one-container member's requests read from its
// container), of which the fake client's eight preemptions (a status
// patch and a delete each) and the contract's validation of the request
// (the PodGroup object, each member) are most.
const gangAllocBudget = 315

// gangAffinityAllocBudget is the bound with InterPodAffinity: 576
// measured (go1.26; 614 before); each member's PreFilter over the world
// (its counts per hostname, 100 pairs, copied from its kind's base) is
// the difference.
const gangAffinityAllocBudget = 665

// gangSpreadAllocBudget is the bound with PodTopologySpread: 534 measured
// (go1.26; 622 before); each member's PreFilter (its counts per hostname,
// 100 domains, and their order) is the difference.
const gangSpreadAllocBudget = 620

// TestGangAfterUpdate: an evaluator that preempted for one gang, then
// took the cluster's change (the victims gone, the gang's members bound,
// a new low pod), answers the next gang as the reference does on the new
// cluster: the gang path's buffers and its view of the request's group
// follow the snapshot.
func TestGangAfterUpdate(t *testing.T) {
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = map[string]bool{preempt.GenericWorkloadGate: true}
	c := &preempt.Cluster{Nodes: []*v1.Node{gangNode("n1", "1", "10").Obj(), gangNode("n2", "1", "10").Obj(), gangNode("n3", "1", "10").Obj()},
		Pods: []*v1.Pod{gangPod("v1", "n1", "", 0, "600m").Obj(), gangPod("v2", "n2", "", 0, "600m").Obj(), gangPod("v3", "n3", "", 0, "600m").Obj()}}
	first := &preempt.PodGroupRequest{PodGroup: gangGroup("g", 10, 2), Pods: []*v1.Pod{gangPod("m0", "", "g", 10, "600m").Obj(), gangPod("m1", "", "g", 10, "600m").Obj()},
		Config: cfg, Now: testobj.Epoch}
	ev, err := optimized.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	d := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), harness.NewAcceptingClientset(), first)
	if d.Status != preempt.Success || len(d.Victims) != 2 {
		t.Fatalf("first gang: %s %q, %d victims", d.Status, d.Message, len(d.Victims))
	}
	ch := preempt.Change{Added: []*v1.Pod{gangPod("m0", "n1", "g", 10, "600m").Obj(), gangPod("m1", "n2", "g", 10, "600m").Obj(), gangPod("v4", "n3", "h", 5, "300m").Obj()}}
	for _, v := range d.Victims {
		ch.Removed = append(ch.Removed, preempt.PodRef{Namespace: v.Namespace, Name: v.Name})
	}
	pods, err := ch.Apply(c.Pods)
	if err != nil {
		t.Fatal(err)
	}
	next := *c
	next.Pods = pods
	if err := ev.(preempt.Updater).Update(&next, ch); err != nil {
		t.Fatal(err)
	}
	// v4, bound and naming h, counts toward h's minCount 3 and, at h's
	// priority (the request's group over the view), is no victim: g's
	// members m0 and m1 (priority 10) go for h0 and h1, v3 is reprieved.
	second := &preempt.PodGroupRequest{PodGroup: gangGroup("h", 30, 3), Pods: []*v1.Pod{gangPod("h0", "", "h", 30, "600m").Obj(), gangPod("h1", "", "h", 30, "600m").Obj()},
		Config: cfg, Now: testobj.Epoch}
	want := gangDecision(t, reference.Impl{}, &next, second)
	cs := harness.NewClient(&next, nil)
	for _, p := range second.Pods {
		_ = cs.Tracker().Add(p.DeepCopy())
	}
	cs.ClearActions()
	got := ev.(preempt.PodGroupPreempter).PreemptPodGroup(context.Background(), cs, second)
	got.Actions = cs.Recorded()
	if want.Status != preempt.Success || len(want.Victims) != 2 {
		t.Fatalf("the reference: %s %q, %d victims", want.Status, want.Message, len(want.Victims))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after Update (-reference +optimized):\n%s", diff)
	}
	t.Logf("the reference: %s, victims %v, nominations %v", want.Message, want.Victims, want.Nominations)
}
