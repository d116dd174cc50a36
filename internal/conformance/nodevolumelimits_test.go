package conformance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	csilibplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// NodeVolumeLimits (issue 32 item 1): a table of volume cases whose
// expected outcome is upstream's (the adapter running v1.37.2's plugins,
// kube-scheduler's CSI manager and listers), which reference and
// optimized must give too: the filter phase (every node's code and
// reasons) and the decision (node, victims, candidates, the dry run's
// node statuses, the API calls), or the same error.
//
// Most cases keep the other volume filters (VolumeRestrictions,
// VolumeBinding, VolumeZone) passing everywhere: bound claims carry the PV controller's annotation
// and their volume a claimRef, unbound ones a WaitForFirstConsumer class.
//
// Ported from upstream's csi_test.go TestCSILimits (each case as a
// cluster of one node, "node-for-max-pd-test-1", whose pods, at priority
// 0, are the victims of a preemptor of priority 10; the in-tree driver
// "kubernetes.io/aws-ebs" listed in the CSINode as upstream's fixture
// lists it): every case but
//   - "persistent doesn't when node volume limit <= pods ephemeral CSI
//     volume + persistent volume, ephemeral disabled": the
//     GenericEphemeralVolume gate is gone (GA); the plugin has no
//     ephemeralEnabled switch, so it is the case after it.
//   - "nil csi node" is kept, but its in-tree inline volume on a node
//     without CSINode is counted nowhere, as upstream.
// Not ported: TestCSILimitsQHint, TestCSILimitsAddedPVCQHint,
// TestCSILimitsDeletedVolumeAttachmentQHint,
// TestCSILimitsAfterCSINodeUpdatedQHint (queueing hints: no preemption),
// TestCSILimits_DeferredResizeSkipped (InPlacePodVerticalScalingSchedulerPreemption,
// alpha and off, refused when set), TestVolumeLimitScalingGate's gate-off
// half (the gate is on by default in v1.37.2; off is refused); its
// gate-on cases are the "CSIDriver ..." cases below.

const (
	vlNode  = "node-for-max-pd-test-1"
	vlSC    = "csi-sc"
	ebsCSI  = csilibplugins.AWSEBSDriverName
	gceCSI  = csilibplugins.GCEPDDriverName
	ebsTree = csilibplugins.AWSEBSInTreePluginName
	hostTr  = "kubernetes.io/hostpath"
)

var vlNow = testobj.Epoch.AddDate(0, 0, 1).Add(3 * time.Hour)

func vlNodeObj(name string) *v1.Node {
	return testobj.MakeNode().Name(name).Hostname().Capacity(map[v1.ResourceName]string{v1.ResourcePods: "110", v1.ResourceCPU: "4"}).Obj()
}

// vlPod is a pod of ns/name with uid uid-<name>, priority prio, 100m cpu,
// bound to node ("" for the preemptor), with claims (volume name = claim
// name) and extra volumes.
func vlPod(ns, name, node string, prio int32, claims []string, extra ...v1.Volume) *v1.Pod {
	var vols []v1.Volume
	for _, c := range claims {
		vols = append(vols, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	vols = append(vols, extra...)
	return testobj.MakePod().Namespace(ns).Name(name).UID("uid-" + name).Node(node).Priority(prio).
		SchedulerName(v1.DefaultSchedulerName).Container("c").CPU("100m").Volumes(vols).Obj()
}

func vlBoundPVC(ns, name, pv string) *v1.PersistentVolumeClaim {
	sc := vlSC
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &sc, VolumeName: pv,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
}

func vlPendingPVC(ns, name string, sc *string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: sc,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// vlPV is a bound 1Gi volume of source, claimed by ns/claim.
func vlPV(name string, src v1.PersistentVolumeSource, ns, claim string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: vlSC, PersistentVolumeSource: src,
			ClaimRef: &v1.ObjectReference{Namespace: ns, Name: claim}},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
}

func csiSource(driver, handle string) v1.PersistentVolumeSource {
	return v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}}
}

func vlCSINode(node string, limit *int32, drivers ...string) *storagev1.CSINode {
	cn := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for _, d := range drivers {
		nd := storagev1.CSINodeDriver{Name: d, NodeID: node}
		if limit != nil {
			nd.Allocatable = &storagev1.VolumeNodeResources{Count: limit}
		}
		cn.Spec.Drivers = append(cn.Spec.Drivers, nd)
	}
	// enableMigrationOnNode: the annotation upstream's fixture sets (the
	// plugin does not read it: isCSIMigrationOn needs only a CSINode).
	cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: ebsTree}
	return cn
}

func vlVA(name, node, attacher, pv string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: node, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}
}

func wffc() *storagev1.VolumeBindingMode {
	m := storagev1.VolumeBindingWaitForFirstConsumer
	return &m
}

// csiFixture is upstream's getFakeCSIPVLister, getFakeCSIPVCLister and
// getFakeCSIStorageClassLister in namespace default: for each driver,
// claims csi-<driver>-0..3 bound to volumes of that name (a CSI volume, an
// in-tree EBS one for kubernetes.io/aws-ebs, a host path for
// kubernetes.io/hostpath), csi-4 pending with class csi-sc, csi-5 pending
// without a class, csi-6 pending with class csi-sc (upstream's names its
// volume "missing-in-action", which the PV controller would not leave
// unbound: here it is pending, what the plugin reads of it alike); the
// class csi-sc provisioned by the first driver, WaitForFirstConsumer.
func csiFixture(c *preempt.Cluster, drivers ...string) {
	sc := vlSC
	for _, d := range drivers {
		for j := 0; j < 4; j++ {
			name := fmt.Sprintf("csi-%s-%d", d, j)
			src := csiSource(d, name)
			switch d {
			case ebsTree:
				src = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: name}}
			case hostTr:
				src = v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp"}}
			}
			c.PVs = append(c.PVs, vlPV(name, src, "default", name))
			c.PVCs = append(c.PVCs, vlBoundPVC("default", name, name))
		}
	}
	missing := vlPendingPVC("default", "csi-6", &sc)
	missing.Spec.VolumeName = "missing-in-action"
	missing.Annotations = nil
	c.PVCs = append(c.PVCs, vlPendingPVC("default", "csi-4", &sc), vlPendingPVC("default", "csi-5", nil), missing)
	c.StorageClasses = append(c.StorageClasses, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: vlSC}, Provisioner: drivers[0], VolumeBindingMode: wffc()})
}

// vlCase is a cluster and a preemptor.
type vlCase struct {
	name    string
	cluster func() *preempt.Cluster
	pod     func() *v1.Pod
}

// limitSource is upstream's getNodeWithPodAndVolumeLimits' argument.
type limitSource int

const (
	noCSINode limitSource = iota
	csiNodeLimit
	csiNodeNoLimit
)

// ported is one of TestCSILimits' cases: existing pods on the node (each
// given a name here: existing-<i>), the new pod, the limit, the drivers,
// the count of VolumeAttachments per driver (va-<driver>-<j> of volume
// csi-<driver>-<j>), extra claims.
func ported(name string, newPod func() *v1.Pod, existing []func(name string) *v1.Pod, maxVols int32, src limitSource, vaCount int,
	extra func() []*v1.PersistentVolumeClaim, drivers ...string) vlCase {
	return vlCase{name: "csi_test " + name, pod: newPod, cluster: func() *preempt.Cluster {
		c := &preempt.Cluster{Nodes: []*v1.Node{vlNodeObj(vlNode)}}
		csiFixture(c, drivers...)
		for i, mk := range existing {
			c.Pods = append(c.Pods, mk(fmt.Sprintf("existing-%d", i)))
		}
		switch src {
		case csiNodeLimit:
			c.CSINodes = append(c.CSINodes, vlCSINode(vlNode, &maxVols, drivers...))
		case csiNodeNoLimit:
			c.CSINodes = append(c.CSINodes, vlCSINode(vlNode, nil, drivers...))
		}
		for _, d := range drivers {
			for j := 0; j < vaCount; j++ {
				c.VolumeAttachments = append(c.VolumeAttachments, vlVA(fmt.Sprintf("va-%s-%d", d, j), vlNode, d, fmt.Sprintf("csi-%s-%d", d, j)))
			}
		}
		if extra != nil {
			c.PVCs = append(c.PVCs, extra()...)
		}
		return c
	}}
}

func claimsPod(claims ...string) func(string) *v1.Pod {
	return func(name string) *v1.Pod { return vlPod("default", name, vlNode, 0, claims) }
}

func newClaimsPod(claims ...string) func() *v1.Pod {
	return func() *v1.Pod { return vlPod("default", "preemptor", "", 10, claims) }
}

func ebsInline(id string) v1.Volume {
	return v1.Volume{Name: "inline", VolumeSource: v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}}
}

func ephemeralVol(name string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}}
}

// ephemeralClaim is the claim of pod test/<podName> (uid uid-<podName>)
// for its ephemeral volume vol, owned by the pod unless owned is false.
func ephemeralClaim(podName, vol string, owned bool) *v1.PersistentVolumeClaim {
	sc := vlSC
	pvc := vlPendingPVC("test", podName+"-"+vol, &sc)
	if owned {
		yes := true
		pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: podName, UID: types.UID("uid-" + podName), Controller: &yes}}
	}
	return pvc
}

func portedCases() []vlCase {
	ebs := func(j int) string { return fmt.Sprintf("csi-%s-%d", ebsCSI, j) }
	gce := func(j int) string { return fmt.Sprintf("csi-%s-%d", gceCSI, j) }
	tree := func(j int) string { return fmt.Sprintf("csi-%s-%d", ebsTree, j) }
	running := claimsPod(ebs(3))
	pending := claimsPod("csi-4")
	csiEBSTwo := claimsPod(ebs(1), ebs(2))
	ephemeralPod := func(name string) *v1.Pod {
		return vlPod("test", "abc", vlNode, 0, nil, ephemeralVol("xyz"))
	}
	ephemeralNew := func() *v1.Pod { return vlPod("test", "abc", "", 10, nil, ephemeralVol("xyz")) }
	owned := func() []*v1.PersistentVolumeClaim {
		return []*v1.PersistentVolumeClaim{ephemeralClaim("abc", "xyz", true)}
	}
	cm := v1.Volume{Name: "cm", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}}
	secret := v1.Volume{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "s"}}}
	none := []func(string) *v1.Pod{}
	return []vlCase{
		ported("should count VolumeAttachments towards volume limit when no pods exist", newClaimsPod(ebs(0)), none, 2, csiNodeLimit, 2, nil, ebsCSI),
		ported("should schedule pod when VolumeAttachments count does not exceed limit", newClaimsPod(ebs(0)), none, 2, csiNodeLimit, 1, nil, ebsCSI),
		ported("fits when node volume limit >= new pods CSI volume", newClaimsPod(ebs(0)), []func(string) *v1.Pod{running, csiEBSTwo}, 4, csiNodeLimit, 0, nil, ebsCSI),
		ported("doesn't when node volume limit <= pods CSI volume", newClaimsPod(ebs(0)), []func(string) *v1.Pod{running, csiEBSTwo}, 2, csiNodeLimit, 0, nil, ebsCSI),
		ported("should when driver does not support volume limits", newClaimsPod(ebs(0)), []func(string) *v1.Pod{running, csiEBSTwo}, 2, csiNodeNoLimit, 0, nil, ebsCSI),
		ported("count pending PVCs towards volume limit <= pods CSI volume", newClaimsPod(ebs(0)), []func(string) *v1.Pod{pending, csiEBSTwo}, 2, csiNodeLimit, 0, nil, ebsCSI),
		ported("count multiple pending pvcs towards volume limit >= pods CSI volume", newClaimsPod(ebs(0)), []func(string) *v1.Pod{pending, pending, csiEBSTwo}, 4, csiNodeLimit, 0, nil, ebsCSI),
		ported("should count PVCs with invalid PV name but valid SC", newClaimsPod(ebs(0)), []func(string) *v1.Pod{claimsPod("csi-6"), csiEBSTwo}, 2, csiNodeLimit, 0, nil, ebsCSI),
		ported("don't count pvcs with missing SC towards volume limit", newClaimsPod(ebs(0)), []func(string) *v1.Pod{running, claimsPod("csi-5")}, 2, csiNodeLimit, 0, nil, ebsCSI),
		ported("count pvcs with the same type towards volume limit", newClaimsPod(ebs(0)), []func(string) *v1.Pod{claimsPod(gce(1), gce(2)), csiEBSTwo}, 2, csiNodeLimit, 0, nil, ebsCSI, gceCSI),
		ported("don't count pvcs with different type towards volume limit", newClaimsPod(gce(1), gce(2)), []func(string) *v1.Pod{csiEBSTwo, running}, 2, csiNodeLimit, 0, nil, ebsCSI, gceCSI),
		ported("should count in-tree volumes if migration is enabled", newClaimsPod(tree(0)), []func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 2, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("nil csi node", func() *v1.Pod { return vlPod("default", "preemptor", "", 10, nil, ebsInline("aws-inline1")) },
			[]func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 0, noCSINode, 0, nil, ebsTree, ebsCSI),
		ported("should count unbound in-tree volumes if migration is enabled", newClaimsPod("csi-4"), []func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 2, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("should not limit pod if volume used does not report limits", newClaimsPod(tree(0)), []func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 2, csiNodeNoLimit, 0, nil, ebsTree, ebsCSI),
		ported("should not count non-migratable in-tree volumes", newClaimsPod(fmt.Sprintf("csi-%s-0", hostTr)), []func(string) *v1.Pod{csiEBSTwo}, 2, csiNodeLimit, 0, nil, hostTr, ebsCSI),
		ported("should count in-tree inline volumes if migration is enabled", func() *v1.Pod { return vlPod("default", "preemptor", "", 10, nil, ebsInline("aws-inline1")) },
			[]func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 2, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)", newClaimsPod(tree(0)), []func(string) *v1.Pod{csiEBSTwo}, 2, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("should count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", func() *v1.Pod { return vlPod("default", "preemptor", "", 10, nil, ebsInline("aws-inline1")) },
			[]func(string) *v1.Pod{csiEBSTwo, claimsPod(tree(0))}, 3, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling in-tree volumes)", func() *v1.Pod { return vlPod("default", "preemptor", "", 10, nil, ebsInline(ebs(1))) },
			[]func(string) *v1.Pod{csiEBSTwo, claimsPod(tree(0))}, 3, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)", newClaimsPod(ebs(0)), []func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 2, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
		ported("ephemeral volume missing", ephemeralNew, none, 0, csiNodeNoLimit, 0, nil, ebsCSI),
		ported("ephemeral volume not owned", ephemeralNew, none, 0, csiNodeNoLimit, 0,
			func() []*v1.PersistentVolumeClaim {
				return []*v1.PersistentVolumeClaim{ephemeralClaim("abc", "xyz", false)}
			}, ebsCSI),
		ported("ephemeral volume unbound", ephemeralNew, none, 0, csiNodeNoLimit, 0, owned, ebsCSI),
		ported("ephemeral doesn't when node volume limit <= pods CSI volume", ephemeralNew, []func(string) *v1.Pod{running, csiEBSTwo}, 2, csiNodeLimit, 0, owned, ebsCSI),
		ported("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume", newClaimsPod(ebs(0)),
			[]func(string) *v1.Pod{running, func(string) *v1.Pod {
				return vlPod("test", "abc", vlNode, 0, nil, ephemeralVol("x"), ephemeralVol("y"))
			}}, 2, csiNodeLimit, 0,
			func() []*v1.PersistentVolumeClaim {
				return []*v1.PersistentVolumeClaim{ephemeralClaim("abc", "x", true), ephemeralClaim("abc", "y", true)}
			}, ebsCSI),
		ported("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume", newClaimsPod(ebs(0)),
			[]func(string) *v1.Pod{running, ephemeralPod, csiEBSTwo}, 3, csiNodeLimit, 0, owned, ebsCSI),
		ported("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume", newClaimsPod(ebs(0)),
			[]func(string) *v1.Pod{running, ephemeralPod, csiEBSTwo}, 5, csiNodeLimit, 0, owned, ebsCSI),
		ported("skip Filter when the pod only uses secrets and configmaps", func() *v1.Pod { return vlPod("default", "preemptor", "", 10, nil, cm, secret) },
			none, 2, csiNodeLimit, 0, nil, ebsCSI),
		ported("don't skip Filter when the pod has pvcs", func() *v1.Pod { return vlPod("default", "preemptor", "", 10, []string{ebs(0)}, cm, secret) },
			none, 2, csiNodeLimit, 0, nil, ebsCSI),
		ported("don't skip Filter when the pod has ephemeral volumes", func() *v1.Pod { return vlPod("test", "abc", "", 10, nil, cm, secret, ephemeralVol("xyz")) },
			none, 0, csiNodeNoLimit, 0, nil, ebsCSI),
		ported("don't skip Filter when the pod has inline migratable volumes", func() *v1.Pod {
			return vlPod("default", "preemptor", "", 10, nil, cm, secret, ebsInline("aws-inline1"))
		},
			[]func(string) *v1.Pod{claimsPod(tree(1), tree(2))}, 2, csiNodeLimit, 0, nil, ebsTree, ebsCSI),
	}
}

// Preemption cases: three nodes n1, n2, n3 (4 cpu) and the CSI driver
// csi.example.com with class csi (WaitForFirstConsumer); a claim c<X>
// bound to CSI volume pv-<X> (handle h-<X>) for X in a..f.
const vlDriver = "csi.example.com"

func vlCluster(limits map[string]int32) *preempt.Cluster {
	c := &preempt.Cluster{}
	for _, n := range []string{"n1", "n2", "n3"} {
		c.Nodes = append(c.Nodes, vlNodeObj(n))
		if l, ok := limits[n]; ok {
			c.CSINodes = append(c.CSINodes, vlCSINode(n, &l, vlDriver))
		}
	}
	for _, x := range []string{"a", "b", "c", "d", "e", "f"} {
		c.PVs = append(c.PVs, vlPV("pv-"+x, csiSource(vlDriver, "h-"+x), "default", "c"+x))
		c.PVCs = append(c.PVCs, vlBoundPVC("default", "c"+x, "pv-"+x))
	}
	c.StorageClasses = []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: vlSC}, Provisioner: vlDriver, VolumeBindingMode: wffc()}}
	return c
}

func preemptionCases() []vlCase {
	preemptor := func(claims ...string) func() *v1.Pod {
		return func() *v1.Pod { return vlPod("default", "preemptor", "", 10, claims) }
	}
	full := func(cpu string) func(*v1.Pod) *v1.Pod {
		return func(p *v1.Pod) *v1.Pod {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(cpu)
			return p
		}
	}
	return []vlCase{
		{name: "victim's volume frees the slot; the pod without volume is reprieved", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1, "n3": 1})
				c.Pods = []*v1.Pod{vlPod("default", "low-vol", "n1", 0, []string{"cb"}), vlPod("default", "low-plain", "n1", 0, nil),
					vlPod("default", "high-n2", "n2", 20, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "victim's volume shared with a remaining higher-priority pod frees nothing", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1, "n3": 1})
				c.Pods = []*v1.Pod{vlPod("default", "low-shared", "n1", 0, []string{"cb"}), vlPod("default", "high-shared", "n1", 20, []string{"cb"}),
					vlPod("default", "low-n2", "n2", 0, []string{"cc"}), vlPod("default", "low-n2-plain", "n2", 0, nil),
					vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "victim's volume pinned by a VolumeAttachment frees nothing", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 2, "n3": 1})
				c.Pods = []*v1.Pod{vlPod("default", "low-n1", "n1", 0, []string{"cb"}),
					vlPod("default", "low-n2-b", "n2", 0, []string{"cc"}), vlPod("default", "low-n2-c", "n2", 0, []string{"cd"}),
					vlPod("default", "high-n3", "n3", 20, []string{"ce"})}
				c.VolumeAttachments = []*storagev1.VolumeAttachment{vlVA("va-b", "n1", vlDriver, "pv-b"), vlVA("va-c", "n2", vlDriver, "pv-c")}
				return c
			}},
		{name: "the preemptor's own volume attached only by a VolumeAttachment counts twice", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1, "n3": 1})
				c.Pods = []*v1.Pod{vlPod("default", "low-n1", "n1", 0, []string{"cb"}),
					vlPod("default", "high-n2", "n2", 20, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				c.VolumeAttachments = []*storagev1.VolumeAttachment{vlVA("va-a", "n1", vlDriver, "pv-a")}
				return c
			}},
		{name: "the preemptor shares its volume with a higher-priority pod: no slot needed", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1, "n3": 1})
				c.Pods = []*v1.Pod{full("3900m")(vlPod("default", "high-n1", "n1", 20, []string{"ca"})), full("200m")(vlPod("default", "low-n1", "n1", 0, nil)),
					vlPod("default", "high-n2", "n2", 20, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "two victims, each holding one of the two slots the preemptor needs", pod: preemptor("ca", "cb"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 2, "n2": 2, "n3": 2})
				c.Pods = []*v1.Pod{vlPod("default", "low-1", "n1", 0, []string{"cc"}), vlPod("default", "low-2", "n1", 1, []string{"cd"}),
					vlPod("default", "low-3", "n2", 0, []string{"ce", "cf"}), vlPod("default", "high-n3", "n3", 20, []string{"ce", "cf"})}
				return c
			}},
		{name: "nominated higher-priority pod's volume takes the slot the victim frees", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1, "n3": 1})
				nom := vlPod("default", "nominated", "", 20, []string{"ce"})
				nom.Status.NominatedNodeName = "n1"
				c.Pods = []*v1.Pod{vlPod("default", "low-n1", "n1", 0, []string{"cb"}),
					vlPod("default", "low-n2", "n2", 0, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"}), nom}
				return c
			}},
		{name: "no CSINode on n3: no limit there", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1})
				c.Pods = []*v1.Pod{vlPod("default", "high-n1", "n1", 20, []string{"cb"}), vlPod("default", "high-n2", "n2", 20, []string{"cc"}),
					full("3950m")(vlPod("default", "low-n3", "n3", 0, []string{"cd"}))}
				return c
			}},
		{name: "unbound claims through their class: each a slot, one claim shared by two pods once", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 2, "n2": 1, "n3": 1})
				sc := vlSC
				c.PVCs = append(c.PVCs, vlPendingPVC("default", "u1", &sc), vlPendingPVC("default", "u2", &sc))
				c.Pods = []*v1.Pod{vlPod("default", "low-u1", "n1", 0, []string{"u1"}), vlPod("default", "low-u1-again", "n1", 0, []string{"u1"}),
					vlPod("default", "high-u2", "n1", 20, []string{"u2"}),
					vlPod("default", "high-n2", "n2", 20, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "CSIDriver that prevents scheduling where it is missing, n1's CSINode without it", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n2": 1, "n3": 1})
				c.CSINodes = append(c.CSINodes, vlCSINode("n1", nil, "other.example.com"))
				yes := true
				c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: vlDriver}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}}}
				c.Pods = []*v1.Pod{vlPod("default", "low-n1", "n1", 0, nil),
					vlPod("default", "low-n2", "n2", 0, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "CSIDriver without preventPodSchedulingIfMissing", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n2": 1, "n3": 1})
				c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: vlDriver}}}
				c.Pods = []*v1.Pod{full("3950m")(vlPod("default", "low-n1", "n1", 0, nil)),
					vlPod("default", "low-n2", "n2", 0, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "missing claim of the preemptor", pod: preemptor("nowhere"),
			cluster: func() *preempt.Cluster { return vlCluster(map[string]int32{"n1": 1}) }},
		{name: "an existing pod's missing claim is not counted", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1, "n2": 1, "n3": 1})
				c.Pods = []*v1.Pod{full("3950m")(vlPod("default", "low-n1", "n1", 0, []string{"gone"})),
					vlPod("default", "high-n2", "n2", 20, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "an existing pod's ephemeral claim owned by another pod is an error", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 1})
				c.PVCs = append(c.PVCs, ephemeralClaim("abc", "xyz", false))
				c.Pods = []*v1.Pod{vlPod("test", "abc", "n1", 0, nil, ephemeralVol("xyz"))}
				return c
			}},
		{name: "a remaining pod's ephemeral claim owned by another pod: Error in the dry run", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 2, "n2": 1, "n3": 1})
				c.PVCs = append(c.PVCs, ephemeralClaim("abc", "xyz", false))
				c.Pods = []*v1.Pod{vlPod("test", "abc", "n1", 20, nil, ephemeralVol("xyz")), full("3850m")(vlPod("default", "low-n1", "n1", 0, nil)),
					vlPod("default", "low-n2", "n2", 0, []string{"cc"}), vlPod("default", "high-n3", "n3", 20, []string{"cd"})}
				return c
			}},
		{name: "inline CSI volume is not counted", pod: func() *v1.Pod {
			return vlPod("default", "preemptor", "", 10, nil, v1.Volume{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: vlDriver}}})
		},
			cluster: func() *preempt.Cluster {
				c := vlCluster(map[string]int32{"n1": 0, "n2": 0, "n3": 0})
				for _, n := range []string{"n1", "n2", "n3"} {
					c.Pods = append(c.Pods, full("3950m")(vlPod("default", "low-"+n, n, 0, nil)))
				}
				return c
			}},
		{name: "limit of another driver does not apply", pod: preemptor("ca"),
			cluster: func() *preempt.Cluster {
				c := vlCluster(nil)
				zero := int32(0)
				for _, n := range []string{"n1", "n2", "n3"} {
					c.CSINodes = append(c.CSINodes, vlCSINode(n, &zero, "other.example.com"))
					c.Pods = append(c.Pods, full("3950m")(vlPod("default", "low-"+n, n, 0, []string{"c" + map[string]string{"n1": "b", "n2": "c", "n3": "d"}[n]})))
				}
				return c
			}},
	}
}

// adapterCases are upstream/volumes_test.go's volumeCases that
// NodeVolumeLimits reads (its volumeCluster restated: n1 and n3 in zone a,
// n2 in zone b, 4 cpu each, full with a pod of priority 0 asking 3 cpu;
// classes csi (Immediate) and wffc-csi of csi.example.com; CSINodes n1
// (limit 1) and n2 (limit 2), none on n3). The others are the other
// volume filters' (ReadWriteOncePod, local volumes, node affinity, zones,
// pre-bound volumes, an unbound Immediate claim, a missing claim or
// class, an ephemeral claim not created yet).
func adapterCases() []vlCase {
	base := func() *preempt.Cluster {
		c := &preempt.Cluster{}
		for _, n := range []struct{ name, zone string }{{"n1", "a"}, {"n2", "b"}, {"n3", "a"}} {
			node := vlNodeObj(n.name)
			node.Labels[v1.LabelTopologyZone] = n.zone
			c.Nodes = append(c.Nodes, node)
			p := vlPod("default", "low-"+n.name, n.name, 0, nil)
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("3")
			c.Pods = append(c.Pods, p)
		}
		immediate := storagev1.VolumeBindingImmediate
		c.StorageClasses = []*storagev1.StorageClass{
			{ObjectMeta: metav1.ObjectMeta{Name: "csi"}, Provisioner: vlDriver, VolumeBindingMode: &immediate},
			{ObjectMeta: metav1.ObjectMeta{Name: "wffc-csi"}, Provisioner: vlDriver, VolumeBindingMode: wffc()},
		}
		one, two := int32(1), int32(2)
		c.CSINodes = []*storagev1.CSINode{vlCSINode("n1", &one, vlDriver), vlCSINode("n2", &two, vlDriver)}
		return c
	}
	bound := func(c *preempt.Cluster, claim, pv string, src v1.PersistentVolumeSource) {
		vol := vlPV(pv, src, "default", claim)
		vol.Spec.StorageClassName = "csi"
		pvc := vlBoundPVC("default", claim, pv)
		class := "csi"
		pvc.Spec.StorageClassName = &class
		c.PVs, c.PVCs = append(c.PVs, vol), append(c.PVCs, pvc)
	}
	preemptor := func(claims ...string) func() *v1.Pod {
		return func() *v1.Pod {
			p := vlPod("default", "preemptor", "", 10, claims)
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2")
			return p
		}
	}
	return []vlCase{
		{name: "volumes_test bound CSI claim, n1 at its attach limit through a victim's volume", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				bound(c, "data", "pv-data", csiSource(vlDriver, "handle-pv-data"))
				bound(c, "used", "pv-used", csiSource(vlDriver, "handle-pv-used"))
				c.Pods[0].Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "used"}}}}
				return c
			}},
		{name: "volumes_test bound CSI claim, n1's attach limit taken by a VolumeAttachment", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				bound(c, "data", "pv-data", csiSource(vlDriver, "handle-pv-data"))
				other := vlPV("pv-other", csiSource(vlDriver, "handle-pv-other"), "", "")
				other.Spec.ClaimRef, other.Status.Phase = nil, v1.VolumeAvailable
				c.PVs = append(c.PVs, other)
				c.VolumeAttachments = []*storagev1.VolumeAttachment{vlVA("va-other", "n1", vlDriver, "pv-other")}
				return c
			}},
		{name: "volumes_test CSIDriver that prevents scheduling where it is missing", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				bound(c, "data", "pv-data", csiSource(vlDriver, "handle-pv-data"))
				yes := true
				c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: vlDriver}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}}}
				return c
			}},
		{name: "volumes_test unbound WaitForFirstConsumer claim, provisioned by a CSI driver", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				class := "wffc-csi"
				c.PVCs = append(c.PVCs, vlPendingPVC("default", "data", &class))
				return c
			}},
		{name: "volumes_test inline CSI volume", pod: func() *v1.Pod {
			p := preemptor()()
			p.Spec.Volumes = []v1.Volume{{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: vlDriver}}}}
			return p
		}, cluster: base},
		{name: "volumes_test in-tree volume migrated to CSI, n1 at its limit", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				bound(c, "data", "pv-ebs", v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}})
				bound(c, "used", "pv-used", csiSource(vlDriver, "handle-pv-used"))
				c.Pods[0].Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "used"}}}}
				c.CSINodes = append(c.CSINodes, vlCSINode("n3", new(int32), ebsCSI))
				return c
			}},
		{name: "volumes_test bound claim whose volume is missing", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				pvc := vlBoundPVC("default", "data", "pv-gone")
				class := "csi"
				pvc.Spec.StorageClassName = &class
				c.PVCs = append(c.PVCs, pvc)
				return c
			}},
		{name: "volumes_test VolumeAttachment of a missing volume, CSINode without a count", pod: preemptor("data"),
			cluster: func() *preempt.Cluster {
				c := base()
				bound(c, "data", "pv-data", csiSource(vlDriver, "handle-pv-data"))
				va := vlVA("va-nothing", "n2", vlDriver, "")
				va.Spec.Source.PersistentVolumeName = nil
				c.VolumeAttachments = []*storagev1.VolumeAttachment{vlVA("va-gone", "n1", vlDriver, "pv-gone"), va}
				c.CSINodes[1].Spec.Drivers[0].Allocatable = nil
				return c
			}},
	}
}

func vlCases() []vlCase {
	return append(append(append(portedCases(), adapterCases()...), preemptionCases()...), portworxCases()...)
}

// portworxCases: Portworx volumes, which count under their CSI driver
// (pxd.portworx.com) on a node with a CSINode, and before v1.36.3 only on
// one whose CSINode lists the in-tree plugin as migrated
// (preempt.SwitchPortworxMigrated). n1's CSINode does not, n2's does
// (each gives the driver a limit of 1 and holds a pod of priority 0 with
// an inline Portworx volume); n3 has none and is full with a pod of
// priority 20. The preemptor's Portworx volume is inline, a claim bound to
// a Portworx PV, or an unbound claim of a class Portworx provisions: from
// v1.36.3 it preempts on n1 or n2; at v1.35.4 it fits n1.
func portworxCases() []vlCase {
	px := func(id string) v1.VolumeSource {
		return v1.VolumeSource{PortworxVolume: &v1.PortworxVolumeSource{VolumeID: id}}
	}
	cluster := func() *preempt.Cluster {
		c := &preempt.Cluster{}
		one := int32(1)
		for _, n := range []string{"n1", "n2", "n3"} {
			c.Nodes = append(c.Nodes, vlNodeObj(n))
		}
		n1, n2 := vlCSINode("n1", &one, csilibplugins.PortworxDriverName), vlCSINode("n2", &one, csilibplugins.PortworxDriverName)
		n1.Annotations = nil
		n2.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: csilibplugins.PortworxVolumePluginName}
		c.CSINodes = []*storagev1.CSINode{n1, n2}
		high := vlPod("default", "high-n3", "n3", 20, nil)
		high.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("4")
		c.Pods = []*v1.Pod{
			vlPod("default", "low-n1", "n1", 0, nil, v1.Volume{Name: "px", VolumeSource: px("vol-a")}),
			vlPod("default", "low-n2", "n2", 0, nil, v1.Volume{Name: "px", VolumeSource: px("vol-c")}),
			high,
		}
		c.StorageClasses = []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: vlSC}, Provisioner: csilibplugins.PortworxVolumePluginName, VolumeBindingMode: wffc()}}
		c.PVs = []*v1.PersistentVolume{vlPV("pv-px", v1.PersistentVolumeSource{PortworxVolume: &v1.PortworxVolumeSource{VolumeID: "vol-b"}}, "default", "bound")}
		sc := vlSC
		c.PVCs = []*v1.PersistentVolumeClaim{vlBoundPVC("default", "bound", "pv-px"), vlPendingPVC("default", "pending", &sc)}
		return c
	}
	return []vlCase{
		{name: "Portworx inline volume", cluster: cluster,
			pod: func() *v1.Pod {
				return vlPod("default", "preemptor", "", 10, nil, v1.Volume{Name: "px", VolumeSource: px("vol-b")})
			}},
		{name: "Portworx volume of a bound claim", cluster: cluster,
			pod: func() *v1.Pod { return vlPod("default", "preemptor", "", 10, []string{"bound"}) }},
		{name: "Portworx class of an unbound claim", cluster: cluster,
			pod: func() *v1.Pod { return vlPod("default", "preemptor", "", 10, []string{"pending"}) }},
	}
}

// vlOutcome is what a case gives: the filter phase and the decision, or
// the error.
type vlOutcome struct {
	Filter   preempt.FilterResult
	Decision preempt.Decision
	Err      string
}

func vlDecide(t *testing.T, impl preempt.Implementation, tc vlCase) vlOutcome {
	t.Helper()
	res, err := harness.Decide(context.Background(), impl, tc.cluster(), tc.pod(), preempt.DefaultConfig(), 0, vlNow)
	if err != nil {
		return vlOutcome{Err: err.Error()}
	}
	return vlOutcome{Filter: res.Filter, Decision: res.Decision}
}

func vlImpls() []struct {
	name string
	impl preempt.Implementation
} {
	return []struct {
		name string
		impl preempt.Implementation
	}{
		{"reference", reference.Impl{}},
		{"optimized", optimized.Impl{}},
		{"optimized (parallel dry run)", optimized.Impl{Workers: 3, ParallelFrom: 1}},
		{"upstream", upstream.Impl{ListOrderTie: true}},
	}
}

func TestNodeVolumeLimitsConformance(t *testing.T) {
	for _, tc := range vlCases() {
		t.Run(tc.name, func(t *testing.T) {
			want := vlDecide(t, upstream.Impl{ListOrderTie: true}, tc)
			t.Logf("upstream: err %q; filter %+v; %s %q node %q victims %+v; statuses %+v", want.Err, want.Filter.NodeStatuses,
				want.Decision.Status, want.Decision.Message, want.Decision.NominatedNode, want.Decision.Victims, want.Decision.NodeStatuses)
			for _, im := range vlImpls() {
				if diff := cmp.Diff(want, vlDecide(t, im.impl, tc)); diff != "" {
					t.Errorf("%s (-upstream +%s):\n%s", im.name, im.name, diff)
				}
			}
		})
	}
}

// Each case gets one answer however often it is asked, from every
// implementation.
func TestNodeVolumeLimitsDeterministic(t *testing.T) {
	const runs = 4
	for _, tc := range vlCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, im := range vlImpls() {
				first := vlDecide(t, im.impl, tc)
				for i := 1; i < runs; i++ {
					if diff := cmp.Diff(first, vlDecide(t, im.impl, tc)); diff != "" {
						t.Fatalf("%s: run %d differs from run 0:\n%s", im.name, i, diff)
					}
				}
			}
		})
	}
}

// Optimized's FilterCodes (its fast path settles a node by its sums when
// nothing after NodeResourcesFit runs) gives Filter's codes.
func TestNodeVolumeLimitsFilterCodes(t *testing.T) {
	for _, tc := range vlCases() {
		t.Run(tc.name, func(t *testing.T) {
			c, pod := tc.cluster(), tc.pod()
			ev, err := optimized.Impl{}.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			fr := ev.Filter(context.Background(), pod)
			want := make([]preempt.Code, len(c.Nodes))
			for i, n := range c.Nodes {
				want[i] = preempt.Success
				for _, st := range fr.NodeStatuses {
					if st.Node == n.Name {
						want[i] = st.Code
					}
				}
			}
			got := ev.(preempt.CodeFilter).FilterCodes(context.Background(), pod, nil)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("FilterCodes (-Filter +FilterCodes):\n%s", diff)
			}
		})
	}
}

// Optimized's evaluator, updated in place (Update) as pods go and come,
// answers as one made afresh: its volume index is of the new pods.
func TestNodeVolumeLimitsOptimizedUpdate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range preemptionCases() {
		t.Run(tc.name, func(t *testing.T) {
			c, pod := tc.cluster(), tc.pod()
			ev, err := optimized.Impl{}.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			ev.Filter(ctx, pod) // builds the index of c
			for i := 0; i < len(c.Pods); i++ {
				gone := c.Pods[i]
				ch := preempt.Change{Removed: []preempt.PodRef{{Namespace: gone.Namespace, Name: gone.Name}}}
				after := *c
				if after.Pods, err = ch.Apply(c.Pods); err != nil {
					t.Fatal(err)
				}
				if ev, err = preempt.Follow(optimized.Impl{}, ev, &after, ch); err != nil {
					t.Fatal(err)
				}
				fresh, err := optimized.Impl{}.NewEvaluator(&after)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(fresh.Filter(ctx, pod), ev.Filter(ctx, pod)); diff != "" {
					t.Fatalf("without %s (-fresh +updated):\n%s", gone.Name, diff)
				}
				// and back
				back := preempt.Change{Added: []*v1.Pod{gone}}
				if ev, err = preempt.Follow(optimized.Impl{}, ev, c, back); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(vlFilter(t, c, pod), ev.Filter(ctx, pod)); diff != "" {
					t.Fatalf("with %s back (-fresh +updated):\n%s", gone.Name, diff)
				}
			}
		})
	}
}

func vlFilter(t *testing.T, c *preempt.Cluster, pod *v1.Pod) preempt.FilterResult {
	t.Helper()
	ev, err := optimized.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Filter(context.Background(), pod)
}

// The table at each earlier release, decided by its own code (its child):
// reference and optimized give the child's outcome
// (conformance.CheckVolumeTableAtEarlierReleases).
func TestNodeVolumeLimitsAtEarlierReleases(t *testing.T) {
	var cases []conformance.VolumeTableCase
	for _, tc := range vlCases() {
		cases = append(cases, conformance.VolumeTableCase{Name: tc.name, Cluster: tc.cluster, Pod: tc.pod, Now: vlNow})
	}
	conformance.CheckVolumeTableAtEarlierReleases(t, cases)
}
