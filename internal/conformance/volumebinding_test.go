package conformance

// VolumeBinding's conformance table: each case's expected outcome is the
// upstream adapter's (k8s.io/kubernetes v1.37.2's own plugins, the final
// tie broken in list order), and reference, optimized and upstream must
// all give it: the filter phase (every node's code and reasons) and the
// whole decision (node, victims, dry-run statuses and message, actions),
// or the same error when a filter fails with Error.
//
// Ported from upstream's volumebinding/volume_binding_test.go
// (TestVolumeBinding), each case on a cluster where the preemptor must
// preempt: "pod has not pvcs", "all bound", "PVC does not exist", "Part of
// PVCs do not exist", "immediate claims not bound", "unbound claims no
// matches", "bound and unbound unsatisfied", "pv not found", "pv not found
// claim lost", "local volumes with close capacity are preferred" (its
// filter outcome: node-c has no volume), "dynamic provisioning with
// multiple PVCs of the same StorageClass" without capacities (a driver
// with storageCapacity and no CSIStorageCapacity: not enough free
// storage). Skipped: the other "... are preferred" and "storage capacity
// score ..." / "prefer node with ... allocatable" cases (they differ from
// the ported ones only in Score, which preemption does not run, or need
// CSIStorageCapacity objects, which preempt.Cluster does not carry);
// Test_PreBindPreFlight and the TestIsSchedulableAfter* tables (PreBind and
// queueing hints, not Filter); TestVolumeBinding_DeferredResizeSkipped (the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption, off).
//
// From upstream/volumes_test.go, the cases only VolumeBinding decides
// (the others also need VolumeRestrictions, NodeVolumeLimits or
// VolumeZone, whose tables have them): "unbound WaitForFirstConsumer
// claim, a local volume on n2 only", "... provisioned by a CSI driver",
// "bound volume with node affinity to n2", "unbound Immediate claim",
// "missing claim", "generic ephemeral volume whose claim is not created
// yet", "claim of a missing storage class", "two volumes pre-bound to one
// unbound claim, on n1 and on n2", "two unbound claims, equal volumes of
// different access modes", "bound claim whose volume is missing", and
// TestVolumesFilterError's class without a binding mode.

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

const vbDriver = "csi.example.com"

// vbCluster: nodes n1 and n3 in zone a, n2 in zone b (4 cpu each), each
// full with a pod of priority 0 asking 3 cpu (the preemptor, asking 2,
// must preempt). Classes: csi (vbDriver, Immediate), wffc-csi (vbDriver,
// WaitForFirstConsumer) and local (no provisioner, WaitForFirstConsumer).
func vbCluster() *preempt.Cluster {
	c := &preempt.Cluster{}
	for _, n := range []struct{ name, zone string }{{"n1", "a"}, {"n2", "b"}, {"n3", "a"}} {
		c.Nodes = append(c.Nodes, node(n.name, "4").Label(v1.LabelTopologyZone, n.zone).Obj())
		c.Pods = append(c.Pods, pod("default", "low-"+n.name, 0).CPU("3").Bound(n.name, ago(1)).Obj())
	}
	c.StorageClasses = []*storagev1.StorageClass{
		vbClass("csi", vbDriver, storagev1.VolumeBindingImmediate),
		vbClass("wffc-csi", vbDriver, storagev1.VolumeBindingWaitForFirstConsumer),
		vbClass("local", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer),
	}
	return c
}

func vbClass(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

// vbClaim is a PVC of class asking size (1Gi when ""); bound to volume
// when volume is set (with the annotation the PV controller sets once
// binding completes).
func vbClaim(name, class, volume, size string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	if size == "" {
		size = "1Gi"
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: ptr.To(class),
			VolumeName:       volume,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if volume != "" {
		pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
		pvc.Status.Phase = v1.ClaimBound
	}
	return pvc
}

// vbVolume is a local PV of class and size (1Gi when ""), bound to
// claimName when set, with node affinity to onNode when set.
func vbVolume(name, class, claimName, onNode, size string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	if size == "" {
		size = "1Gi"
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:            modes,
			StorageClassName:       class,
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if claimName != "" {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: claimName}
		pv.Status.Phase = v1.VolumeBound
	}
	if onNode != "" {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{onNode}}},
		}}}}
	}
	return pv
}

func vbClaimVolume(name, claimName string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}
}

// vbPod is the preemptor: priority 10, 2 cpu, the volumes.
func vbPod(vols ...v1.Volume) func() *v1.Pod {
	return func() *v1.Pod {
		return pod("default", "preemptor", 10).CPU("2").Volumes(vols).Obj()
	}
}

// vbCapacityCluster is vbCluster where vbDriver opts into capacity
// tracking, with the claim "data" (wffc-csi, 1Gi, unbound) and the
// capacities.
func vbCapacityCluster(caps ...*storagev1.CSIStorageCapacity) func() *preempt.Cluster {
	return func() *preempt.Cluster {
		c := vbCluster()
		c.CSIDrivers = append(c.CSIDrivers, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: vbDriver},
			Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}})
		c.PVCs = append(c.PVCs, vbClaim("data", "wffc-csi", "", ""))
		for _, cp := range caps {
			c.CSIStorageCapacities = append(c.CSIStorageCapacities, cp.DeepCopy())
		}
		return c
	}
}

// vbCapacity is binder_test.go's makeCapacity: a CSIStorageCapacity of
// class in namespace default, selecting the nodes nodes selects (every
// node when nil), with capacity and maximumVolumeSize when not "".
func vbCapacity(name, class string, nodes *metav1.LabelSelector, capacity, maxSize string) *storagev1.CSIStorageCapacity {
	cp := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, StorageClassName: class,
		NodeTopology: &metav1.LabelSelector{}}
	if nodes != nil {
		cp.NodeTopology = nodes
	}
	if capacity != "" {
		cp.Capacity = ptr.To(resource.MustParse(capacity))
	}
	if maxSize != "" {
		cp.MaximumVolumeSize = ptr.To(resource.MustParse(maxSize))
	}
	return cp
}

// vbOnNode selects the node by its hostname label.
func vbOnNode(name string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelHostname: name}}
}

type vbCase struct {
	name    string
	cluster func() *preempt.Cluster
	pod     func() *v1.Pod
}

func vbWith(mod func(c *preempt.Cluster)) func() *preempt.Cluster {
	return func() *preempt.Cluster {
		c := vbCluster()
		mod(c)
		return c
	}
}

var vbCases = []vbCase{
	// volume_binding_test.go
	{
		name:    "pod has not pvcs",
		cluster: vbCluster,
		pod:     vbPod(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}),
	},
	{
		name: "all bound",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "pvc-a", "", ""))
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "local", "pv-a", ""))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a")),
	},
	{
		name:    "PVC does not exist",
		cluster: vbCluster,
		pod:     vbPod(vbClaimVolume("a", "pvc-a")),
	},
	{
		name: "Part of PVCs do not exist",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "local", "pv-a", ""))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a"), vbClaimVolume("b", "pvc-b")),
	},
	{
		name: "immediate claims not bound",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "csi", "", ""))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a")),
	},
	{
		name: "unbound claims no matches",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "local", "", ""))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a")),
	},
	{
		name: "bound and unbound unsatisfied",
		cluster: vbWith(func(c *preempt.Cluster) {
			pv := vbVolume("pv-a", "local", "pvc-a", "", "")
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "foo", Operator: v1.NodeSelectorOpIn, Values: []string{"bar"}}},
			}}}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "local", "pv-a", ""), vbClaim("pvc-b", "local", "", ""))
			c.Nodes[0].Labels["foo"] = "barbar"
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a"), vbClaimVolume("b", "pvc-b")),
	},
	{
		name: "pv not found",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "local", "pv-a", ""))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a")),
		// VolumeZone's PreFilter rejects a bound claim whose PV is
		// missing (persistentvolume "..." not found) before VolumeBinding's
		// Filter runs: VolumeBinding's ErrReasonPVNotExist cannot show in
		// the default profile.
	},
	{
		name: "pv not found claim lost",
		cluster: vbWith(func(c *preempt.Cluster) {
			pvc := vbClaim("pvc-a", "local", "pv-a", "")
			pvc.Status.Phase = v1.ClaimLost
			c.PVCs = append(c.PVCs, pvc)
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a")),
	},
	{
		name: "local volumes with close capacity are preferred",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs,
				vbVolume("pv-a-0", "local", "", "n1", "200Gi"), vbVolume("pv-a-1", "local", "", "n1", "200Gi"),
				vbVolume("pv-b-0", "local", "", "n2", "100Gi"), vbVolume("pv-b-1", "local", "", "n2", "100Gi"))
			c.PVCs = append(c.PVCs, vbClaim("pvc-a", "local", "", "50Gi"))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-a")),
	},
	{
		name: "dynamic provisioning with multiple PVCs of the same StorageClass, driver with storage capacity",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.StorageClasses = append(c.StorageClasses, vbClass("wait-sc-with-storage-capacity", "driver-with-storage-capacity", storagev1.VolumeBindingWaitForFirstConsumer))
			c.CSIDrivers = append(c.CSIDrivers, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "driver-with-storage-capacity"},
				Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}})
			c.PVCs = append(c.PVCs, vbClaim("pvc-dynamic-0", "wait-sc-with-storage-capacity", "", "50Gi"),
				vbClaim("pvc-dynamic-1", "wait-sc-with-storage-capacity", "", "50Gi"))
		}),
		pod: vbPod(vbClaimVolume("a", "pvc-dynamic-0"), vbClaimVolume("b", "pvc-dynamic-1")),
	},

	// binder_test.go's TestCapacity, on vbCluster: the preemptor's claim
	// (wffc-csi, 1Gi, unbound) is provisioned by vbDriver, which opts
	// into capacity tracking (vbCapacityCluster). A capacity of the
	// class selecting every node ("network-attached"), n1 only
	// ("local-storage"), several of which n1's holds ("multiple"), n2
	// only ("wrong-node"), another class's ("wrong-storage-class"), too
	// little ("insufficient-storage"), a maximum volume size too small
	// ("insufficient-volume-size"), zero capacity or size, and neither
	// ("nil-storage"); the no-storage case is "dynamic provisioning ...
	// driver with storage capacity" above.
	{
		name:    "capacity: network-attached",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "1Gi", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: local-storage",
		cluster: vbCapacityCluster(vbCapacity("n1", "wffc-csi", vbOnNode("n1"), "1Gi", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "capacity: multiple",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", vbOnNode("n3"), "1Mi", ""),
			vbCapacity("n2", "wffc-csi", vbOnNode("n2"), "1Gi", ""), vbCapacity("n1", "wffc-csi", vbOnNode("n1"), "1Gi", "")),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: wrong-node",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", vbOnNode("n2"), "1Gi", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: wrong-storage-class",
		cluster: vbCapacityCluster(vbCapacity("net", "csi", nil, "1Gi", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: insufficient-storage",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "1Mi", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: insufficient-volume-size",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "1Gi", "1Mi")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: zero-storage",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "0Mi", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: zero-volume-size",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "", "0Mi")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "capacity: nil-storage",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "", "")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	// Further cases of hasEnoughCapacity: a maximum volume size is
	// preferred to a smaller capacity; a capacity without nodeTopology
	// is available nowhere; one in another namespace counts; a zone
	// selector; a claim asking no storage is not checked; two claims of
	// 1Gi against one capacity of 1Gi both fit (each claim is checked
	// alone, as upstream's "dynamic provisioning with multiple PVCs of
	// the same StorageClass" with its capacity of 100Gi for two of
	// 50Gi).
	{
		name:    "capacity: maximum volume size over capacity",
		cluster: vbCapacityCluster(vbCapacity("net", "wffc-csi", nil, "1Mi", "1Gi")),
		pod:     vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "capacity: no nodeTopology",
		cluster: vbCapacityCluster(func() *storagev1.CSIStorageCapacity {
			cp := vbCapacity("net", "wffc-csi", nil, "1Gi", "")
			cp.NodeTopology = nil
			return cp
		}()),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "capacity: another namespace, zone a",
		cluster: vbCapacityCluster(func() *storagev1.CSIStorageCapacity {
			cp := vbCapacity("zone-a", "wffc-csi", &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: "a"}}, "1Gi", "")
			cp.Namespace = "kube-system"
			return cp
		}()),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "capacity: a claim asking no storage",
		cluster: func() *preempt.Cluster {
			c := vbCapacityCluster()()
			delete(c.PVCs[0].Spec.Resources.Requests, v1.ResourceStorage)
			return c
		},
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "capacity: two claims of one class, each held",
		cluster: func() *preempt.Cluster {
			c := vbCapacityCluster(vbCapacity("n1", "wffc-csi", vbOnNode("n1"), "1Gi", ""))()
			c.PVCs = append(c.PVCs, vbClaim("data-2", "wffc-csi", "", ""))
			return c
		},
		pod: vbPod(vbClaimVolume("data", "data"), vbClaimVolume("data-2", "data-2")),
	},

	// upstream/volumes_test.go
	{
		name: "unbound WaitForFirstConsumer claim, a local volume on n2 only",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-local", "local", "", "n2", ""))
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "unbound WaitForFirstConsumer claim, provisioned by a CSI driver",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("data", "wffc-csi", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "bound volume with node affinity to n2",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-data", "csi", "data", "n2", ""))
			c.PVCs = append(c.PVCs, vbClaim("data", "csi", "pv-data", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "unbound Immediate claim",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("data", "csi", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name:    "missing claim",
		cluster: vbCluster,
		pod:     vbPod(vbClaimVolume("data", "nowhere")),
	},
	{
		name:    "generic ephemeral volume whose claim is not created yet",
		cluster: vbCluster,
		pod: vbPod(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: vbClaim("", "wffc-csi", "", "").Spec}}}}),
	},
	{
		name: "claim of a missing storage class",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("data", "gone", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "two volumes pre-bound to one unbound claim, on n1 and on n2",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "data", "n1", ""), vbVolume("pv-b", "local", "data", "n2", ""))
			for _, pv := range c.PVs {
				pv.Status.Phase = v1.VolumeAvailable
			}
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "two unbound claims, equal volumes of different access modes",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "", "", "", v1.ReadWriteOnce, v1.ReadWriteMany), vbVolume("pv-b", "local", "", "", ""))
			c.PVCs = append(c.PVCs, vbClaim("one", "local", "", ""), vbClaim("many", "local", "", "", v1.ReadWriteMany))
		}),
		pod: vbPod(vbClaimVolume("one", "one"), vbClaimVolume("many", "many")),
	},
	{
		name: "bound claim whose volume is missing",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("data", "csi", "pv-gone", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
		// VolumeZone's PreFilter rejects a bound claim whose PV is
		// missing (persistentvolume "..." not found) before VolumeBinding's
		// Filter runs: VolumeBinding's ErrReasonPVNotExist cannot show in
		// the default profile.
	},
	{
		name: "class without a binding mode (TestVolumesFilterError)",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.StorageClasses[0].VolumeBindingMode = nil
			c.PVCs = append(c.PVCs, vbClaim("data", "csi", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},

	// More of FindPodVolumes and GetPodVolumeClaims.
	{
		name: "claim selected for n3 by an earlier cycle",
		cluster: vbWith(func(c *preempt.Cluster) {
			pvc := vbClaim("data", "wffc-csi", "", "")
			pvc.Annotations = map[string]string{"volume.kubernetes.io/selected-node": "n3"}
			c.PVCs = append(c.PVCs, pvc)
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "class provisions in zone b only (allowedTopologies)",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.StorageClasses[1].AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
				{Key: v1.LabelTopologyZone, Values: []string{"b"}}}}}
			c.PVCs = append(c.PVCs, vbClaim("data", "wffc-csi", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "prebound claim (volumeName set, binding not completed) is immediate",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "data", "n1", ""))
			pvc := vbClaim("data", "local", "", "")
			pvc.Spec.VolumeName = "pv-a"
			c.PVCs = append(c.PVCs, pvc)
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "claim being deleted",
		cluster: vbWith(func(c *preempt.Cluster) {
			pvc := vbClaim("data", "local", "", "")
			pvc.DeletionTimestamp = &metav1.Time{Time: ago(1)}
			pvc.Finalizers = []string{"kubernetes.io/pvc-protection"}
			c.PVCs = append(c.PVCs, pvc)
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "ephemeral volume's claim not owned by the pod",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVCs = append(c.PVCs, vbClaim("preemptor-scratch", "local", "", ""))
		}),
		pod: vbPod(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: vbClaim("", "local", "", "").Spec}}}}),
	},
	{
		name: "claim's selector picks the volume on n3",
		cluster: vbWith(func(c *preempt.Cluster) {
			a, b := vbVolume("pv-a", "local", "", "n1", ""), vbVolume("pv-b", "local", "", "n3", "")
			b.Labels = map[string]string{"tier": "gold"}
			c.PVs = append(c.PVs, a, b)
			pvc := vbClaim("data", "local", "", "")
			pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
			c.PVCs = append(c.PVCs, pvc)
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "matching volume too small on n1, large enough on n2; unbound volume lost elsewhere",
		cluster: vbWith(func(c *preempt.Cluster) {
			lost := vbVolume("pv-c", "local", "", "n3", "10Gi")
			lost.Status.Phase = v1.VolumeReleased
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "", "n1", "1Mi"), vbVolume("pv-b", "local", "", "n2", "10Gi"), lost)
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "", "1Gi"))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},

	{
		// n3 is empty: its Filter reaches VolumeBinding, which rejects it.
		name: "empty n3 rejected at Filter, n2 in the dry run",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.Pods = c.Pods[:2]
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "data", "n1", ""))
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "pv-a", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "fits on empty n3, where its volume is",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.Pods = c.Pods[:2]
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "", "n3", ""))
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		name: "claim selector FindMatchingVolume cannot parse: Filter error",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.Pods = c.Pods[:2]
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "", "n3", ""))
			pvc := vbClaim("data", "local", "", "")
			pvc.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Bogus"}}}
			c.PVCs = append(c.PVCs, pvc)
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		// The EBS volume's zone affinity, translated to the CSI driver's
		// topology key on n1 (its CSINode lists aws-ebs as migrated),
		// no longer matches n1's labels; n3 (no CSINode) keeps the
		// in-tree affinity, which its zone label meets.
		name: "in-tree volume translated to CSI where the plugin is migrated",
		cluster: vbWith(func(c *preempt.Cluster) {
			pv := vbVolume("pv-ebs", "csi", "data", "", "")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}},
			}}}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, vbClaim("data", "csi", "pv-ebs", ""))
			c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1",
				Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}}})
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		// scheduler_perf's PreemptionPVs (shape pvs): a bound in-tree EBS
		// volume and no CSINode, so no translation: every node passes.
		name: "in-tree volume without affinity, no CSINode",
		cluster: vbWith(func(c *preempt.Cluster) {
			pv := vbVolume("pv-ebs", "", "data", "", "")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, vbClaim("data", "", "pv-ebs", ""))
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		// Migrated on n1, the volume is translated there, and its
		// translation has no affinity either: every node passes.
		name: "in-tree volume without affinity or zone, migrated on n1",
		cluster: vbWith(func(c *preempt.Cluster) {
			pv := vbVolume("pv-ebs", "", "data", "", "")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, vbClaim("data", "", "pv-ebs", ""))
			c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1",
				Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}}})
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		// The volume has no affinity but a zone label, which the
		// translation on n1 (migrated) turns into an affinity to the CSI
		// driver's zone key, a label n1 lacks: n1 fails VolumeBinding in
		// the dry run, n2 (zone b) VolumeZone, and the preemptor goes to
		// n3 (zone a, no CSINode: no translation).
		name: "in-tree volume with a zone label and no affinity, migrated on n1",
		cluster: vbWith(func(c *preempt.Cluster) {
			pv := vbVolume("pv-ebs", "", "data", "", "")
			pv.Labels = map[string]string{v1.LabelTopologyZone: "a"}
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, vbClaim("data", "", "pv-ebs", ""))
			c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n1",
				Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}}})
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},

	// Victims: VolumeBinding reads no pod of the node (no
	// PreFilterExtensions, FindPodVolumes reads node labels and cluster
	// objects), so its dry-run answer is its Filter answer.
	{
		// n1's volume is held (ClaimRef) by a claim its low pod uses:
		// evicting the pod frees no volume, n1 stays out and n2 (its own
		// volume) is where the preemptor goes.
		name: "volume bound to a victim's claim stays bound after eviction",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "used", "n1", ""), vbVolume("pv-b", "local", "", "n2", ""))
			c.PVCs = append(c.PVCs, vbClaim("used", "local", "pv-a", ""), vbClaim("data", "local", "", ""))
			c.Pods[0].Spec.Volumes = []v1.Volume{vbClaimVolume("v", "used")}
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		// A victim on n1 shares the preemptor's bound claim: evicting it
		// changes nothing for VolumeBinding (n1 passes either way); n2
		// and n3 fail the volume's affinity.
		name: "victim shares the preemptor's bound claim",
		cluster: vbWith(func(c *preempt.Cluster) {
			c.PVs = append(c.PVs, vbVolume("pv-a", "local", "data", "n1", ""))
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "pv-a", ""))
			c.Pods[0].Spec.Volumes = []v1.Volume{vbClaimVolume("v", "data")}
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
	{
		// Every node fails NodeResourcesFit (Unschedulable) before
		// VolumeBinding runs: n3, which the volume's affinity excludes,
		// is a potential node, and VolumeBinding rejects it in the dry run
		// once its victim is gone; n1 (victim of priority 0) beats n2
		// (priority 5).
		name: "volume admits n1 and n2, n3 rejected in the dry run",
		cluster: vbWith(func(c *preempt.Cluster) {
			pv := vbVolume("pv-a", "local", "data", "", "")
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"n1", "n2"}}},
			}}}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, vbClaim("data", "local", "pv-a", ""))
			c.Pods[1].Spec.Priority = ptr.To[int32](5)
		}),
		pod: vbPod(vbClaimVolume("data", "data")),
	},
}

// vbImpls are the implementations compared.
func vbImpls() []preempt.Implementation {
	return []preempt.Implementation{reference.Impl{}, optimized.Impl{}, upstream.Impl{ListOrderTie: true}}
}

// vbOutcome is what a case's run gives: the filter phase and decision, or
// the error (a filter's Error ends the scheduling cycle).
type vbOutcome struct {
	Filter   preempt.FilterResult
	Decision preempt.Decision
	Err      string
}

func vbDecide(t *testing.T, impl preempt.Implementation, tc vbCase) vbOutcome {
	t.Helper()
	res, err := harness.Decide(context.Background(), impl, tc.cluster(), tc.pod(), preempt.DefaultConfig(), 0, now)
	if err != nil {
		return vbOutcome{Err: err.Error()}
	}
	return vbOutcome{Filter: res.Filter, Decision: res.Decision}
}

func TestVolumeBindingConformance(t *testing.T) {
	for _, tc := range vbCases {
		t.Run(tc.name, func(t *testing.T) {
			want := vbDecide(t, upstream.Impl{ListOrderTie: true}, tc)
			if want.Err != "" && !strings.Contains(want.Err, "VolumeBinding") {
				t.Fatalf("upstream: %s", want.Err)
			}
			for _, impl := range vbImpls() {
				if diff := cmp.Diff(want, vbDecide(t, impl, tc), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s differs from upstream (-upstream +%s):\n%s", impl.Name(), impl.Name(), diff)
				}
			}
			t.Logf("filter %v\ndecision %s %q node %q victims %v err %q", want.Filter.NodeStatuses, want.Decision.Status, want.Decision.Message,
				want.Decision.NominatedNode, want.Decision.Victims, want.Err)
		})
	}
}

// An evaluator with FilterCodes (optimized's, which has its own fast
// paths) gives Filter's codes.
func TestVolumeBindingFilterCodes(t *testing.T) {
	for _, tc := range vbCases {
		t.Run(tc.name, func(t *testing.T) { checkFilterCodes(t, vbImpls(), tc.cluster, tc.pod) })
	}
}

// SelectVictimsOnNode on each node, the request calling it Unschedulable:
// the three agree, except that after a PreFilter failing with
// UnschedulableAndUnresolvable (which kube-scheduler's PostFilter never
// reaches with a potential node: the failure is every node's) the
// upstream adapter runs the dry run on the partial cycle state and fails
// with Error (a later PreFilter plugin's state missing), where reference
// and optimized return the PreFilter's status (reported, not hidden:
// such cases are compared between reference and optimized only).
func TestVolumeBindingSelectVictims(t *testing.T) {
	for _, tc := range vbCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []string{"n1", "n2", "n3"} {
				ref := selectVictims(t, reference.Impl{}, tc.cluster(), tc.pod(), n)
				if diff := cmp.Diff(ref, selectVictims(t, optimized.Impl{}, tc.cluster(), tc.pod(), n), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: optimized differs from reference:\n%s", n, diff)
				}
				up := selectVictims(t, upstream.Impl{ListOrderTie: true}, tc.cluster(), tc.pod(), n)
				if up.Status.Code == preempt.Error && len(up.Status.Reasons) == 1 && strings.Contains(up.Status.Reasons[0], "from cycleState") {
					t.Logf("%s: upstream adapter: %v (reference: %v)", n, up.Status, ref.Status)
					continue
				}
				if diff := cmp.Diff(up, ref, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: reference differs from upstream (-upstream +reference):\n%s", n, diff)
				}
			}
		})
	}
}

// Every case gets one answer, however often each implementation is asked.
func TestVolumeBindingDeterministic(t *testing.T) {
	const runs = 4
	for _, tc := range vbCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, impl := range vbImpls() {
				first := vbDecide(t, impl, tc)
				for i := 1; i < runs; i++ {
					if diff := cmp.Diff(first, vbDecide(t, impl, tc)); diff != "" {
						t.Fatalf("%s: run %d differs from run 0:\n%s", impl.Name(), i, diff)
					}
				}
			}
		})
	}
}

// checkFilterCodes: for each implementation whose evaluator has
// FilterCodes (optimized's, which has its own fast paths), its codes are
// Filter's, node by node.
func checkFilterCodes(t *testing.T, impls []preempt.Implementation, cluster func() *preempt.Cluster, pod func() *v1.Pod) {
	t.Helper()
	for _, impl := range impls {
		c, p := cluster(), pod()
		ev, err := impl.NewEvaluator(c)
		if err != nil {
			t.Fatal(err)
		}
		cf, ok := ev.(preempt.CodeFilter)
		if !ok {
			continue
		}
		want := ev.Filter(context.Background(), p).Codes()
		got := cf.FilterCodes(context.Background(), p, nil)
		for i, n := range c.Nodes {
			w, ok := want[n.Name]
			if !ok {
				w = preempt.Success
			}
			if got[i] != w {
				t.Errorf("%s: node %s: FilterCodes %s, Filter %s", impl.Name(), n.Name, got[i], w)
			}
		}
	}
}
