package conformance

// Gangs whose members have volumes or resource claims: each case is a
// whole pod-group cycle (harness.DecidePodGroup: the attempt, then
// PodGroupPostFilter) decided by the upstream adapter (v1.37.2's own
// plugins, each placed member assumed in the snapshot and Reserved) and
// by the reference, which must agree on the whole decision, messages
// included, each several times. What the cases pin (reference/gang_reserve.go):
//
//   - a placed member's ReadWriteOncePod claim is in use for the next
//     member (the snapshot's usedPVCRefCounts, AssumePod);
//   - a placed member's CSI volume counts against its node's attach
//     limit for the next member (NodeInfo's pods);
//   - a placed member's WaitForFirstConsumer claim takes the local PV it
//     matched (VolumeBinding's Reserve assumes it bound);
//   - a claim a placed member allocated is in flight: its devices are
//     taken for the next member (DynamicResources' Reserve), and a member
//     sharing the claim finds it allocated on that node;
//   - a victim holding a member's ReadWriteOncePod claim is removed
//     before the members' PreFilters (selectVictimsOnDomain), so
//     VolumeRestrictions Skips and the reprieve puts the holder back
//     unseen: upstream preempts around it;
//   - a victim's device is never freed (DynamicResources has no
//     RemovePod): a gang short of devices gets no preemption.
//
// Optimized models them too (optimized/gang_volumes.go) and must agree
// the same way, with one worker and with several (its gang path is
// serial; the single-pod dry run's workers must not change it), and
// harness.PodGroupRefusal must not refuse them.

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/refstages"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

type gangVolCase struct {
	name string
	// build returns the cluster, the gang's PodGroup and its members.
	build func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod)
	// want is a part of upstream's decision the case is about, checked
	// beside the agreement (a guard that the case still shows it).
	want func(t *testing.T, d preempt.PodGroupDecision)
	// composite, when set, makes the gang a CompositePodGroup of these
	// children (build's PodGroup unused; CompositePodGroup and
	// TopologyAwareWorkloadScheduling on).
	composite func() (*preempt.CompositePodGroup, []*preempt.PodGroup)
}

// gvNodes are nodes n1..n<count> of 4 cpu, each holding a pod of priority
// 0 asking 3 cpu (low-<node>), so that a gang member asking 2 must
// preempt.
func gvNodes(count int) *preempt.Cluster {
	c := &preempt.Cluster{}
	for i := 1; i <= count; i++ {
		n := "n" + string(rune('0'+i))
		c.Nodes = append(c.Nodes, pgNode(n, "4").Obj())
		c.Pods = append(c.Pods, pgPod("low-"+n, n, "", 0, "3").Obj())
	}
	return c
}

// gvMember is a pending member of gang g, priority 100, 2 cpu, with vols.
func gvMember(name, g string, vols ...v1.Volume) *v1.Pod {
	return pgPod(name, "", g, 100, "2").Volumes(vols).Obj()
}

func gvGang(minCount int32) *preempt.PodGroup { return pgGang("g", 100, minCount).Obj() }

// gvAttachable is a CSI-attachable PV of vbDriver bound to claim.
func gvAttachable(name, claim string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:       "csi",
			ClaimRef:               &v1.ObjectReference{Namespace: "default", Name: claim},
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: vbDriver, VolumeHandle: name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
}

// gvCSINodes gives every node of c a CSINode allowing count volumes of
// vbDriver.
func gvCSINodes(c *preempt.Cluster, count int32) {
	for _, n := range c.Nodes {
		c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n.Name},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: vbDriver, NodeID: n.Name, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To(count)}}}}})
	}
}

// gvDRA gives c the gpu class and one GPU on each node named.
func gvDRA(c *preempt.Cluster, nodes ...string) {
	c.DeviceClasses = []*resourcev1.DeviceClass{draClass("gpu")}
	for _, n := range nodes {
		c.ResourceSlices = append(c.ResourceSlices, draSlice(n, "a100"))
	}
}

var gangVolCases = []gangVolCase{
	{
		name: "RWOP claim shared by two members: the second finds it in use",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("shared", "csi", "pv-shared", "", v1.ReadWriteOncePod)}
			c.PVs = []*v1.PersistentVolume{vbVolume("pv-shared", "csi", "shared", "", "", v1.ReadWriteOncePod)}
			v := vbClaimVolume("data", "shared")
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", v), gvMember("m2", "g", v)}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("upstream placed both members of one ReadWriteOncePod claim: %+v", d)
			}
		},
	},
	{
		// Found by hand (decide -pod-group on a claim without
		// bind-completed): VolumeBinding's PreFilter rejects each member
		// before DynamicResources' PreFilter writes the pod-group state,
		// so DynamicResources' PodGroupPostFilter fails reading it and
		// the chain ends there, DefaultPreemption never running.
		name: "unbound Immediate claim: every member rejected at VolumeBinding's PreFilter, DynamicResources' PodGroupPostFilter finds no state",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("pending", "csi", "", "")}
			v := vbClaimVolume("data", "pending")
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", v), gvMember("m2", "g", v)}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Error || !strings.Contains(d.Message, `"DynamicResources" PodGroupPostFilter`) {
				t.Errorf("upstream: %s %q, want DynamicResources' PodGroupPostFilter error", d.Status, d.Message)
			}
		},
	},
	{
		name: "RWOP claim shared by two members of minCount 1: one placed",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("shared", "csi", "pv-shared", "", v1.ReadWriteOncePod)}
			c.PVs = []*v1.PersistentVolume{vbVolume("pv-shared", "csi", "shared", "", "", v1.ReadWriteOncePod)}
			v := vbClaimVolume("data", "shared")
			return c, gvGang(1), []*v1.Pod{gvMember("m1", "g", v), gvMember("m2", "g", v)}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Nominations) != 1 {
				t.Errorf("want one member placed, got %s %v", d.Status, d.Nominations)
			}
		},
	},
	{
		name: "CSI attach limit of 1 per node: two members go to two nodes",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("a", "csi", "pv-a", ""), vbClaim("b", "csi", "pv-b", "")}
			c.PVs = []*v1.PersistentVolume{gvAttachable("pv-a", "a"), gvAttachable("pv-b", "b")}
			gvCSINodes(c, 1)
			// Room for both members on n1 once its low pod goes.
			c.Nodes[0] = pgNode("n1", "8").Obj()
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "a")), gvMember("m2", "g", vbClaimVolume("data", "b"))}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			nodes := map[string]bool{}
			for _, n := range d.Nominations {
				nodes[n.Node] = true
			}
			if d.Status != preempt.Success || len(nodes) != 2 {
				t.Errorf("want the members on two nodes, got %s %v", d.Status, d.Nominations)
			}
		},
	},
	{
		name: "CSI attach limit of 1 on the only node: the second member fits nowhere",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			c.Nodes[0] = pgNode("n1", "8").Obj()
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("a", "csi", "pv-a", ""), vbClaim("b", "csi", "pv-b", "")}
			c.PVs = []*v1.PersistentVolume{gvAttachable("pv-a", "a"), gvAttachable("pv-b", "b")}
			gvCSINodes(c, 1)
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "a")), gvMember("m2", "g", vbClaimVolume("data", "b"))}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("upstream placed two volumes on a node of one: %+v", d)
			}
		},
	},
	{
		name: "WaitForFirstConsumer claims of two members, one local PV on n1 and one on n2",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("a", "local", "", ""), vbClaim("b", "local", "", "")}
			c.PVs = []*v1.PersistentVolume{vbVolume("pv-1", "local", "", "n1", ""), vbVolume("pv-2", "local", "", "n2", "")}
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "a")), gvMember("m2", "g", vbClaimVolume("data", "b"))}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if len(d.Nominations) != 2 || d.Nominations[0].Node == d.Nominations[1].Node {
				t.Errorf("want m1 on n1 and m2 on n2 (pv-1 assumed for m1), got %s %v", d.Status, d.Nominations)
			}
		},
	},
	{
		name: "WaitForFirstConsumer claims of two members, one local PV: the second unplaced",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("a", "local", "", ""), vbClaim("b", "local", "", "")}
			c.PVs = []*v1.PersistentVolume{vbVolume("pv-1", "local", "", "n1", "")}
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "a")), gvMember("m2", "g", vbClaimVolume("data", "b"))}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("upstream bound one local PV to two claims: %+v", d)
			}
		},
	},
	{
		name: "WaitForFirstConsumer claim shared by two members, provisioned: both on the node selected",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("shared", "wffc-csi", "", "", v1.ReadWriteMany)}
			v := vbClaimVolume("data", "shared")
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", v), gvMember("m2", "g", v)}
		},
	},
	{
		name: "DRA: two members each claiming a GPU, GPUs on n1 and n2",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			gvDRA(c, "n1", "n2")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("ca", "gpu", 1), draClaim("cb", "gpu", 1)}
			return c, gvGang(2), []*v1.Pod{draUses(gvMember("m1", "g"), "ca"), draUses(gvMember("m2", "g"), "cb")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if len(d.Nominations) != 2 || d.Nominations[0].Node == d.Nominations[1].Node {
				t.Errorf("want the members on n1 and n2 (m1's GPU in flight), got %s %v", d.Status, d.Nominations)
			}
		},
	},
	{
		name: "DRA: two members each claiming a GPU, one GPU in the cluster",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvDRA(c, "n1")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("ca", "gpu", 1), draClaim("cb", "gpu", 1)}
			return c, gvGang(2), []*v1.Pod{draUses(gvMember("m1", "g"), "ca"), draUses(gvMember("m2", "g"), "cb")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("upstream gave one GPU to two claims: %+v", d)
			}
		},
	},
	{
		name: "DRA: one claim shared by two members, GPU on n2: both on n2",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			gvDRA(c, "n2")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("shared", "gpu", 1)}
			return c, gvGang(2), []*v1.Pod{draUses(gvMember("m1", "g"), "shared"), draUses(gvMember("m2", "g"), "shared")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Nominations) != 2 || d.Nominations[1].Node != "n2" {
				t.Errorf("want both on n2, got %s %v", d.Status, d.Nominations)
			}
		},
	},
	{
		name: "victim holds a member's RWOP claim: removed before PreFilter, reprieved unseen",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("rwop", "csi", "pv-rwop", "", v1.ReadWriteOncePod)}
			c.PVs = []*v1.PersistentVolume{vbVolume("pv-rwop", "csi", "rwop", "", "", v1.ReadWriteOncePod)}
			// A small holder on n2, of priority 0: a potential victim.
			c.Pods = append(c.Pods, pgPod("holder", "n2", "", 0, "100m").Volumes([]v1.Volume{vbClaimVolume("data", "rwop")}).Obj())
			return c, gvGang(1), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "rwop"))}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			for _, v := range d.Victims {
				if v.Name == "holder" {
					t.Errorf("upstream evicted the claim's holder: %+v", d)
				}
			}
		},
	},
	{
		// The GangVolumes property's first failure, minimised (one node,
		// a member asking more cpu than it has, its volume's claim
		// missing): the reference took any member tried for one whose
		// PreFilter reached DynamicResources'.
		name: "member's claim missing: VolumeBinding's PreFilter stops before DynamicResources', whose PodGroupPostFilter fails",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			c.Pods = nil
			return c, gvGang(1), []*v1.Pod{pgPod("m1", "", "g", 100, "5").Volumes([]v1.Volume{vbClaimVolume("data", "missing")}).Obj()}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Error || !strings.Contains(d.Message, `"DynamicResources" PodGroupPostFilter`) {
				t.Errorf("want DynamicResources' PodGroupPostFilter error, got %s %q", d.Status, d.Message)
			}
		},
	},
	{
		name: "member's claim unbound and Immediate: no PreFilter reaches DynamicResources', whose PodGroupPostFilter fails",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("imm", "csi", "", "")}
			v := vbClaimVolume("data", "imm")
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", v), gvMember("m2", "g", v)}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Error || !strings.Contains(d.Message, `"DynamicResources" PodGroupPostFilter`) {
				t.Errorf("want DynamicResources' PodGroupPostFilter error, got %s %q", d.Status, d.Message)
			}
		},
	},
	{
		// Found against a real kube-scheduler (TestGangVolumesAsKubeScheduler):
		// the placement tried m2 too, whose PreFilter reaches
		// DynamicResources', but kube-scheduler stops at m1, once
		// PlacementFeasible finds 0 scheduled and 1 remaining short of
		// minCount 2: no PreFilter of a member it tries reaches
		// DynamicResources'.
		name: "first member's claim unbound and Immediate, minCount 2: the other is never tried, DynamicResources' PodGroupPostFilter fails",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("imm", "csi", "", "")}
			return c, gvGang(2), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "imm")), gvMember("m2", "g")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Error || !strings.Contains(d.Message, `"DynamicResources" PodGroupPostFilter`) {
				t.Errorf("want DynamicResources' PodGroupPostFilter error, got %s %q", d.Status, d.Message)
			}
		},
	},
	{
		name: "one member's claim unbound and Immediate, the other's PreFilter reaches DynamicResources': preemption runs",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("imm", "csi", "", "")}
			return c, gvGang(1), []*v1.Pod{gvMember("m1", "g", vbClaimVolume("data", "imm")), gvMember("m2", "g")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Victims) == 0 {
				t.Errorf("want m2 placed by preemption, got %s %q %v", d.Status, d.Message, d.Victims)
			}
		},
	},
	{
		// The GangVolumes property's second failure, minimised: a
		// claim's pending allocation is shared within one PodGroup's
		// scheduling cycle only (each child of a CompositePodGroup gets
		// its own pod-group cycle state); from another child's member
		// the claim is in flight, and its PreFilter waits.
		name: "DRA: claim shared by members of two children of a composite: the second child's member waits for its allocation",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			c.Pods = nil
			gvDRA(c, "n1")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("shared", "gpu", 1)}
			return c, nil, []*v1.Pod{draUses(gvMember("m1", "g-c0"), "shared"), draUses(gvMember("m2", "g-c1"), "shared")}
		},
		composite: func() (*preempt.CompositePodGroup, []*preempt.PodGroup) {
			return pgComposite("g", 100).Obj(), []*preempt.PodGroup{
				pgGang("g-c0", 100, 1).ParentCompositePodGroup("g").Obj(), pgGang("g-c1", 100, 1).ParentCompositePodGroup("g").Obj()}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Schedulable || len(d.Placement) != 1 || d.Placement[0].Name != "m1" {
				t.Errorf("want m1 alone placed, got %s %q %v", d.Status, d.Message, d.Placement)
			}
		},
	},
	{
		name: "DRA: claim shared by members of one child of a composite: both placed",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			c.Pods = nil
			gvDRA(c, "n1")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("shared", "gpu", 1)}
			return c, nil, []*v1.Pod{draUses(gvMember("m1", "g-c0"), "shared"), draUses(gvMember("m2", "g-c0"), "shared")}
		},
		composite: func() (*preempt.CompositePodGroup, []*preempt.PodGroup) {
			return pgComposite("g", 100).Obj(), []*preempt.PodGroup{
				pgGang("g-c0", 100, 2).ParentCompositePodGroup("g").Obj(), pgGang("g-c1", 100, 1).ParentCompositePodGroup("g").Obj()}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Schedulable || len(d.Placement) != 2 {
				t.Errorf("want both placed, got %s %q %v", d.Status, d.Message, d.Placement)
			}
		},
	},
	{
		// The GangVolumes property's third failure (local CI and stop
		// 44's CI), minimised: m1, tried first, made its NodeVolumeLimits
		// state before m0 had put the shared volume on the node, and
		// optimized's state held that volume under no key, so in the
		// reprieve (m0 before m1 on the node) it counted the one volume
		// twice against the limit of 1: no victim could be put back.
		name: "CSI attach limit of 1: two members of two children share one volume; the reprieve puts the small pod back",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			c.Pods = append(c.Pods, pgPod("small", "n1", "", 0, "100m").Obj())
			c.StorageClasses = vbCluster().StorageClasses
			c.PVCs = []*v1.PersistentVolumeClaim{vbClaim("a", "csi", "pv-a", "")}
			c.PVs = []*v1.PersistentVolume{gvAttachable("pv-a", "a")}
			gvCSINodes(c, 1)
			v := vbClaimVolume("data", "a")
			return c, nil, []*v1.Pod{
				gvMember("m0", "g-c1", v),
				pgPod("m1", "", "g-c0", 100, "1").Volumes([]v1.Volume{v}).Obj(),
				pgPod("m2", "", "g-c0", 100, "100").Obj(), // fits nowhere
			}
		},
		composite: func() (*preempt.CompositePodGroup, []*preempt.PodGroup) {
			return pgComposite("g", 100).Obj(), []*preempt.PodGroup{
				pgGang("g-c0", 100, 2).ParentCompositePodGroup("g").Obj(), pgGang("g-c1", 100, 1).ParentCompositePodGroup("g").Obj()}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Nominations) != 2 || len(d.Victims) != 1 || d.Victims[0].Name != "low-n1" {
				t.Errorf("want m0 and m1 nominated, low-n1 the only victim, got %s %q %v %v", d.Status, d.Message, d.Nominations, d.Victims)
			}
		},
	},
	{
		name: "victim gang member holds the only GPU: no preemption frees it",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvDRA(c, "n1")
			c.PodGroups = append(c.PodGroups, pgGang("old", 0, 1).Obj())
			c.Pods = append(c.Pods, draUses(pgPod("old-1", "n1", "old", 0, "100m").Obj(), "held"))
			c.ResourceClaims = []*resourcev1.ResourceClaim{draAllocate(draClaim("held", "gpu", 1), "n1", "old-1"), draClaim("ca", "gpu", 1)}
			return c, gvGang(1), []*v1.Pod{draUses(gvMember("m1", "g"), "ca")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("upstream freed a victim's device: %+v", d)
			}
		},
	},
}

// gvRequest is tc's cluster and gang request.
func gvRequest(t *testing.T, tc gangVolCase) (*preempt.Cluster, *preempt.PodGroupRequest) {
	t.Helper()
	c, pg, members := tc.build()
	if err := c.Validate(); err != nil {
		t.Fatalf("invalid cluster: %v", err)
	}
	cfg := preempt.DefaultConfig()
	cfg.FeatureGates = pgGates
	req := &preempt.PodGroupRequest{PodGroup: pg, Pods: members, Config: cfg, Now: testobj.Epoch}
	if tc.composite != nil {
		req.PodGroup = nil
		req.CompositePodGroup, req.PodGroups = tc.composite()
		req.Config.FeatureGates = pgCompositeOn
	}
	return c, req
}

// gvDecide runs tc's whole pod-group cycle on impl: the decision, or the
// refusal's error.
func gvDecide(t *testing.T, impl preempt.Implementation, tc gangVolCase) (preempt.PodGroupDecision, error) {
	t.Helper()
	c, req := gvRequest(t, tc)
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	pge, ok := ev.(preempt.PodGroupPreempter)
	if !ok {
		t.Fatalf("%s has no gang preemption", impl.Name())
	}
	members := req.Pods
	cs := harness.NewClient(c, nil)
	for _, p := range members {
		_ = cs.Tracker().Add(p.DeepCopy())
	}
	cs.ClearActions()
	return harness.DecidePodGroup(context.Background(), impl, pge, c, req, cs)
}

func TestGangVolumesConformance(t *testing.T) {
	const runs = 3
	for _, tc := range gangVolCases {
		t.Run(tc.name, func(t *testing.T) {
			up := upstream.Impl{ListOrderTie: true}
			want, err := gvDecide(t, up, tc)
			if err != nil {
				t.Fatalf("upstream refused: %v", err)
			}
			if tc.want != nil {
				tc.want(t, want)
			}
			for _, impl := range []preempt.Implementation{up, reference.Impl{}, optimized.Impl{Workers: 1}, optimized.Impl{Workers: 2, ParallelFrom: 1}} {
				for i := range runs {
					got, err := gvDecide(t, impl, tc)
					if err != nil {
						t.Fatalf("%s refused: %v", impl.Name(), err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("%s, run %d, differs from upstream's first (-upstream +%s):\n%s", impl.Name(), i, impl.Name(), diff)
					}
				}
			}
			// Optimized does not refuse the gang before deciding (what
			// the command and the suite ask).
			c, req := gvRequest(t, tc)
			if err := harness.PodGroupRefusal(optimized.Impl{}, c, req); err != nil {
				t.Errorf("optimized refuses the gang: %v", err)
			}
			t.Logf("%s %q nominations %v victims %v", want.Status, want.Message, want.Nominations, want.Victims)
		})
	}
}

// gangVolumeMutants are the reference with one gang-volume behaviour
// wrong; the table must catch each (some case's decision differs from
// upstream's).
var gangVolumeMutants = []podGroupMutant{
	// A placed member's ReadWriteOncePod claim not in use for the next
	// member (as if AssumePod left usedPVCRefCounts alone).
	{name: "assumed-member-claims-not-in-use", gang: true, stage: func(s *refstages.Stages) { s.AssumedClaimsInUse = func() bool { return false } }},
	// Reserve allocates the claim made for a member's extended resources
	// as PreFilter made it, with no request: its devices never in flight.
	{name: "extended-claim-reserved-empty", gang: true, stage: func(s *refstages.Stages) { s.ReservesExtendedClaim = func() bool { return false } }},
}

// gangVolumeTableMutants are caught by the table (TestGangVolumeMutants)
// but not by the properties within TestMutants' checks, which draw too
// few gangs where they matter.
var gangVolumeTableMutants = []podGroupMutant{
	// Reserve gives each claim its own result, as if Filter listed the
	// pending allocations in claim order among the new ones (the
	// reference's before it modelled v1.37.2's allocIndex). A member
	// sharing a pending claim before a claim it allocates, and a later
	// member needing the device that leaves free on that node: the
	// GangVolumes property did not draw it within 2000 checks at
	// TestMutants' seed.
	{name: "reserve-results-per-claim", gang: true, stage: func(s *refstages.Stages) { s.ReserveResults = ownResultPerClaim }},
}

// ownResultPerClaim gives each claim to allocate its own result: Filter's
// for a claim allocated there, the pending one for a pending claim.
func ownResultPerClaim(allocated []resourcev1.AllocationResult, pending []*resourcev1.AllocationResult) []resourcev1.AllocationResult {
	out := make([]resourcev1.AllocationResult, 0, len(pending))
	k := 0
	for _, p := range pending {
		if p != nil {
			out = append(out, *p)
			continue
		}
		out = append(out, allocated[k])
		k++
	}
	return out
}

func TestGangVolumeMutants(t *testing.T) {
	for _, m := range append(slices.Clone(gangVolumeMutants), gangVolumeTableMutants...) {
		t.Run(m.name, func(t *testing.T) {
			mutant := newPodGroupMutant(m)
			for _, tc := range gangVolCases {
				want, err := gvDecide(t, upstream.Impl{ListOrderTie: true}, tc)
				if err != nil {
					t.Fatal(err)
				}
				got, err := gvDecide(t, mutant, tc)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Logf("caught by %q (-upstream +mutant):\n%s", tc.name, diff)
					return
				}
			}
			t.Errorf("mutant %s not caught by the gang volume table", m.name)
		})
	}
}

// The gang volume table decided by a real v1.37.2 kube-scheduler
// (upstream.Impl{SchedulerPlacement: true}: its queue, its pod-group
// cycle, its PodGroupPostFilter chain) and by the adapter: status and
// message agree (but for the victim count a Success's message gives,
// which follows the scheduler's scored placement where the adapter
// places first fit). Compared: the cases whose attempt fails, where the
// PodGroupPostFilter chain runs. The scheduler placement takes PodGroups
// only, and a gang its attempt places it reports once the members'
// binding cycles end, which in its fake clientset some do not (PreBind
// writing a claim, or waiting a minute for one): the cases the adapter
// places without preemption are left to TestGangCycleAsKubeScheduler's
// gangs without volumes.
func TestGangVolumesAsKubeScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a kube-scheduler per case")
	}
	for _, tc := range gangVolCases {
		if tc.composite != nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			want, err := gvDecide(t, upstream.Impl{ListOrderTie: true}, tc)
			if err != nil {
				t.Fatalf("upstream refused: %v", err)
			}
			if want.Status == preempt.Schedulable {
				t.Logf("placed without preemption: not compared")
				return
			}
			got, err := gvDecide(t, upstream.Impl{SchedulerPlacement: true}, tc)
			if err != nil {
				t.Fatalf("kube-scheduler: %v", err)
			}
			if want.Status != got.Status || (want.Status != preempt.Success && want.Message != got.Message) {
				t.Errorf("adapter %s %q, kube-scheduler %s %q", want.Status, want.Message, got.Status, got.Message)
			}
		})
	}
}
