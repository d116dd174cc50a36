package upstream_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

const csiDriver = "csi.example.com"

// volumeCluster: nodes n1 and n3 in zone a, n2 in zone b (4 cpu each),
// each full with a pod of priority 0 asking 3 cpu (the preemptor, asking 2,
// must preempt). Storage classes: csi (csiDriver, Immediate), wffc-csi
// (csiDriver, WaitForFirstConsumer) and local (no provisioner,
// WaitForFirstConsumer). CSI nodes: n1 attaches one volume of csiDriver, n2
// two, n3 has no CSINode (no limit).
func volumeCluster() *preempt.Cluster {
	c := &preempt.Cluster{}
	for _, n := range []struct{ name, zone string }{{"n1", "a"}, {"n2", "b"}, {"n3", "a"}} {
		c.Nodes = append(c.Nodes, node(n.name, "4").Label(v1.LabelHostname, n.name).Label(v1.LabelTopologyZone, n.zone).Obj())
		c.Pods = append(c.Pods, pod("low-"+n.name, n.name, 0, "3", "1Gi").Obj())
	}
	// The binding modes are set, as the API server defaults them.
	immediate, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	c.StorageClasses = []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "csi"}, Provisioner: csiDriver, VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc-csi"}, Provisioner: csiDriver, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
	}
	limit := func(node string, n int32) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
			{Name: csiDriver, NodeID: node, Allocatable: &storagev1.VolumeNodeResources{Count: &n}},
		}}}
	}
	c.CSINodes = []*storagev1.CSINode{limit("n1", 1), limit("n2", 2)}
	return c
}

// claim is a PVC of class asking 1Gi; bound to volume when volume is set
// (with the annotation the PV controller sets once binding completes).
func claim(name, class, volume string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      modes,
			StorageClassName: &class,
			VolumeName:       volume,
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if volume != "" {
		pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
		pvc.Status.Phase = v1.ClaimBound
	}
	return pvc
}

// volume is a 1Gi CSI PV of class, bound (claimRef) to claimName when set,
// with node affinity to onNode when set.
func volume(name, class, claimName, onNode string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            modes,
			StorageClassName:       class,
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: csiDriver, VolumeHandle: "handle-" + name}},
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

func claimVolume(name, claimName string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}
}

// volumeCase is a cluster and a preemptor of priority 10 asking 2 cpu
// with volumes.
type volumeCase struct {
	name    string
	cluster func() *preempt.Cluster
	pod     func() *v1.Pod
}

func volumePod(vols ...v1.Volume) func() *v1.Pod {
	return func() *v1.Pod { return pod("preemptor", "", 10, "2", "1Gi").Volumes(vols).Obj() }
}

// volumeCases: each panicked the adapter (NodeVolumeLimits without a CSI
// manager: nodevolumelimits/csi.go:275, in a dry-run goroutine, so the
// process sometimes exited before the panic and answered "Preemption is
// not helpful") or gave filter code Error, or lists volumes in map order.
var volumeCases = []volumeCase{
	{
		name: "bound CSI claim, n1 at its attach limit through a victim's volume",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", ""), volume("pv-used", "csi", "used", ""))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"), claim("used", "csi", "pv-used"))
			c.Pods[0].Spec.Volumes = []v1.Volume{claimVolume("v", "used")}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "bound CSI claim, n1's attach limit taken by a VolumeAttachment",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", ""), volume("pv-other", "csi", "", ""))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			pv := "pv-other"
			c.VolumeAttachments = []*storagev1.VolumeAttachment{{ObjectMeta: metav1.ObjectMeta{Name: "va-other"},
				Spec: storagev1.VolumeAttachmentSpec{Attacher: csiDriver, NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "CSIDriver that prevents scheduling where it is missing",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", ""))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			yes := true
			c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: csiDriver}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &yes}}}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "ReadWriteOncePod claim in use by a victim",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-once", "csi", "once", "", v1.ReadWriteOncePod))
			c.PVCs = append(c.PVCs, claim("once", "csi", "pv-once", v1.ReadWriteOncePod))
			c.Pods[1].Spec.Volumes = []v1.Volume{claimVolume("v", "once")}
			return c
		},
		pod: volumePod(claimVolume("data", "once")),
	},
	{
		name: "unbound WaitForFirstConsumer claim, a local volume on n2 only",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			pv := volume("pv-local", "local", "", "n2")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, claim("data", "local", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "unbound WaitForFirstConsumer claim, provisioned by a CSI driver",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVCs = append(c.PVCs, claim("data", "wffc-csi", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "bound volume with node affinity to n2",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", "n2"))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "bound volume in zone b",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			pv := volume("pv-data", "csi", "data", "")
			pv.Labels = map[string]string{v1.LabelTopologyZone: "b"}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "unbound Immediate claim",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVCs = append(c.PVCs, claim("data", "csi", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name:    "missing claim",
		cluster: volumeCluster,
		pod:     volumePod(claimVolume("data", "nowhere")),
	},
	{
		name:    "generic ephemeral volume whose claim is not created yet",
		cluster: volumeCluster,
		pod: volumePod(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
			VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: claim("", "wffc-csi", "").Spec}}}}),
	},
	{
		name: "claim of a missing storage class",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVCs = append(c.PVCs, claim("data", "gone", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "two volumes pre-bound to one unbound claim, on n1 and on n2",
		// FindMatchingVolume takes the first volume pre-bound to the claim
		// and gives up on the node if its affinity does not admit it: the
		// listing order decides (upstream's is a map's; the contract's, by
		// name, keeps n1 only).
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-a", "local", "data", "n1"), volume("pv-b", "local", "data", "n2"))
			for _, pv := range c.PVs {
				pv.Status.Phase = v1.VolumeAvailable
			}
			c.PVCs = append(c.PVCs, claim("data", "local", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "two unbound claims, equal volumes of different access modes",
		// The ReadWriteOnce claim takes the first fitting volume listed:
		// pv-a (by name) leaves the ReadWriteMany claim nothing.
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-a", "local", "", "", v1.ReadWriteOnce, v1.ReadWriteMany), volume("pv-b", "local", "", ""))
			c.PVCs = append(c.PVCs, claim("one", "local", ""), claim("many", "local", "", v1.ReadWriteMany))
			return c
		},
		pod: volumePod(claimVolume("one", "one"), claimVolume("many", "many")),
	},
	{
		name:    "inline CSI volume",
		cluster: volumeCluster,
		pod:     volumePod(v1.Volume{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: csiDriver}}}),
	},
	{
		name: "in-tree volume migrated to CSI, n1 at its limit",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			pv := volume("pv-ebs", "csi", "data", "")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
			c.PVs = append(c.PVs, pv, volume("pv-used", "csi", "used", ""))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-ebs"), claim("used", "csi", "pv-used"))
			c.Pods[0].Spec.Volumes = []v1.Volume{claimVolume("v", "used")}
			c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n3"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
				{Name: "ebs.csi.aws.com", NodeID: "n3", Allocatable: &storagev1.VolumeNodeResources{Count: new(int32)}}}}})
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "bound claim whose volume is missing",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-gone"))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		// Preempting n2's low pod leaves the higher-priority pod's two
		// volumes, n2's limit: only n1 and n3 are candidates.
		name: "n2 at its attach limit through a higher-priority pod's volumes",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", ""), volume("pv-a", "csi", "a", ""), volume("pv-b", "csi", "b", ""))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"), claim("a", "csi", "pv-a"), claim("b", "csi", "pv-b"))
			c.Pods = append(c.Pods, pod("db-n2", "n2", 20, "500m", "1Gi").Volumes([]v1.Volume{claimVolume("a", "a"), claimVolume("b", "b")}).Obj())
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		// The holder is not a victim anywhere: no node is a candidate.
		name: "ReadWriteOncePod claim in use by a higher-priority pod",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-once", "csi", "once", "", v1.ReadWriteOncePod))
			c.PVCs = append(c.PVCs, claim("once", "csi", "pv-once", v1.ReadWriteOncePod))
			c.Pods = append(c.Pods, pod("db-n2", "n2", 20, "500m", "1Gi").Volumes([]v1.Volume{claimVolume("v", "once")}).Obj())
			return c
		},
		pod: volumePod(claimVolume("data", "once")),
	},
	{
		name: "unbound WaitForFirstConsumer claim, no volume and no provisioner",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVCs = append(c.PVCs, claim("data", "local", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "unbound WaitForFirstConsumer claim, the local volume on n2 too small",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			pv := volume("pv-local", "local", "", "n2")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}}
			pv.Spec.Capacity[v1.ResourceStorage] = resource.MustParse("512Mi")
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, claim("data", "local", ""))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		// A regional disk: its zone label lists both zones.
		name: "bound volume in zones a and b",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			pv := volume("pv-data", "csi", "data", "")
			pv.Labels = map[string]string{v1.LabelTopologyZone: "a__b"}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		// NodeVolumeLimits counts a VolumeAttachment only with an attacher
		// and a CSI volume: n1 keeps its one slot.
		name: "VolumeAttachments on n1 that take no slot",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			ebs := volume("pv-ebs", "", "", "")
			ebs.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", ""), volume("pv-other", "csi", "", ""), ebs)
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			va := func(name, attacher string, pv *string) *storagev1.VolumeAttachment {
				return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: storagev1.VolumeAttachmentSpec{Attacher: attacher, NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: pv}}}
			}
			c.VolumeAttachments = []*storagev1.VolumeAttachment{
				va("va-no-attacher", "", ptr.To("pv-other")), va("va-no-volume", csiDriver, nil), va("va-in-tree", "kubernetes.io/aws-ebs", ptr.To("pv-ebs")),
			}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		// The binder translates the disk's zone affinity to the CSI
		// driver's topology key (csi-translation-lib), which the nodes
		// carry as the driver's node plugin labels them.
		name: "bound GCE persistent disk, migrated to CSI, in zone b",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			for _, n := range c.Nodes {
				n.Labels["topology.gke.io/zone"] = n.Labels[v1.LabelTopologyZone]
			}
			pv := volume("pv-pd", "csi", "data", "")
			pv.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "disk-1"}}
			pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}},
			}}}}
			c.PVs = append(c.PVs, pv)
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-pd"))
			for _, n := range c.CSINodes {
				n.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/gce-pd"}
				n.Spec.Drivers = append(n.Spec.Drivers, storagev1.CSINodeDriver{Name: "pd.csi.storage.gke.io", NodeID: n.Name, Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](1)}})
			}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "CSIStorageCapacity of zone b, for a driver that tracks capacity",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: csiDriver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}}}
			c.PVCs = append(c.PVCs, claim("data", "wffc-csi", ""))
			c.CSIStorageCapacities = []*storagev1.CSIStorageCapacity{
				{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "zone-a-small"}, StorageClassName: "wffc-csi",
					NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: "a"}}, Capacity: ptr.To(resource.MustParse("10Gi")), MaximumVolumeSize: ptr.To(resource.MustParse("512Mi"))},
				{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "zone-b"}, StorageClassName: "wffc-csi",
					NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: "b"}}, Capacity: ptr.To(resource.MustParse("2Gi"))},
			}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "CSIStorageCapacity selecting every node, without nodeTopology, of another class",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: csiDriver}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}}}
			c.PVCs = append(c.PVCs, claim("data", "wffc-csi", ""))
			c.CSIStorageCapacities = []*storagev1.CSIStorageCapacity{
				{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nowhere"}, StorageClassName: "wffc-csi", Capacity: ptr.To(resource.MustParse("10Gi"))},
				{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other-class"}, StorageClassName: "csi", NodeTopology: &metav1.LabelSelector{}, Capacity: ptr.To(resource.MustParse("10Gi"))},
				{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "everywhere"}, StorageClassName: "wffc-csi", NodeTopology: &metav1.LabelSelector{
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: v1.LabelHostname, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"n3"}}}}, Capacity: ptr.To(resource.MustParse("1Gi"))},
			}
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
	{
		name: "VolumeAttachment of a missing volume, CSINode without a count",
		cluster: func() *preempt.Cluster {
			c := volumeCluster()
			c.PVs = append(c.PVs, volume("pv-data", "csi", "data", ""))
			c.PVCs = append(c.PVCs, claim("data", "csi", "pv-data"))
			gone := "pv-gone"
			c.VolumeAttachments = []*storagev1.VolumeAttachment{
				{ObjectMeta: metav1.ObjectMeta{Name: "va-gone"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: csiDriver, NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &gone}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "va-nothing"}, Spec: storagev1.VolumeAttachmentSpec{Attacher: csiDriver, NodeName: "n2"}},
			}
			c.CSINodes[1].Spec.Drivers[0].Allocatable = nil
			return c
		},
		pod: volumePod(claimVolume("data", "data")),
	},
}

var volumeNow = now

// decideVolumes runs the filter phase and preemption of tc through the
// adapter, every node a candidate wanted, the final tie broken in list
// order (so that the decision is a function of the problem).
func decideVolumes(t *testing.T, tc volumeCase) harness.Result {
	t.Helper()
	res, err := harness.Decide(context.Background(), upstream.Impl{ListOrderTie: true}, tc.cluster(), tc.pod(), preempt.DefaultConfig(), 0, volumeNow)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The adapter's filter phase is kube-scheduler's (scheduler.New's
// framework, informers started and synced), and its candidates are the
// nodes where kube-scheduler's filters pass once the node's lower-priority
// pods are gone.
func TestVolumesAsKubeScheduler(t *testing.T) {
	for _, tc := range volumeCases {
		t.Run(tc.name, func(t *testing.T) { checkAsKubeScheduler(t, tc.cluster(), tc.pod()) })
	}
}

// tb is what checkAsKubeScheduler needs of a *testing.T or *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// filterAsKubeScheduler decides c and p with the adapter, every node a
// candidate wanted and the final tie broken in list order, and checks
// its filter phase against kube-scheduler's: kube-scheduler's filter
// result, and the adapter's answer.
func filterAsKubeScheduler(t tb, c *preempt.Cluster, p *v1.Pod) (preempt.FilterResult, harness.Result) {
	t.Helper()
	ctx := context.Background()
	want, err := upstream.KubeSchedulerFilter(ctx, c, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := harness.Decide(ctx, upstream.Impl{ListOrderTie: true}, c, p, preempt.DefaultConfig(), 0, volumeNow)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Filter); diff != "" {
		t.Fatalf("filter (-kube-scheduler +adapter):\n%s", diff)
	}
	return want, got
}

// checkAsKubeScheduler checks the adapter's filter phase on c and p
// against kube-scheduler's, and its candidates against the nodes where
// kube-scheduler's filters pass once the node's lower-priority pods are
// gone. It returns the adapter's answer.
func checkAsKubeScheduler(t tb, c *preempt.Cluster, p *v1.Pod) harness.Result {
	t.Helper()
	ctx := context.Background()
	want, got := filterAsKubeScheduler(t, c, p)
	if len(want.Feasible) > 0 {
		return got
	}
	if want.PreFilterRejected {
		// kube-scheduler's own PostFilter chain ends at DynamicResources,
		// and the decision says so.
		st, _, err := upstream.KubeSchedulerPostFilter(ctx, c, p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Code() != fwk.Error || st.Plugin() != "DynamicResources" || st.Message() != "not found" {
			t.Errorf("kube-scheduler's PostFilter: %s from %q %q, want Error from DynamicResources \"not found\"", st.Code(), st.Plugin(), st.Message())
		}
		if d := got.Decision; d.Status != preempt.Error || d.Message != st.Message() || len(d.Victims) != 0 {
			t.Errorf("decision %s %q with victims %v, want Error %q and none", d.Status, d.Message, d.Victims, st.Message())
		}
		t.Logf("filter %v; PostFilter %s %q from %s", want.NodeStatuses, st.Code(), st.Message(), st.Plugin())
		return got
	}
	wantCands := []string{}
	never := p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == v1.PreemptNever
	for _, st := range want.NodeStatuses {
		if st.Code != preempt.Unschedulable || never {
			continue
		}
		without := c.DeepCopy()
		removed := false
		without.Pods = slices.DeleteFunc(without.Pods, func(q *v1.Pod) bool {
			gone := q.Spec.NodeName == st.Node && *q.Spec.Priority < *p.Spec.Priority
			removed = removed || gone
			return gone
		})
		after, err := upstream.KubeSchedulerFilter(ctx, without, p)
		if err != nil {
			t.Fatal(err)
		}
		if removed && slices.Contains(after.Feasible, st.Node) {
			wantCands = append(wantCands, st.Node)
		}
	}
	gotCands := []string{}
	for _, cand := range got.Decision.Candidates {
		gotCands = append(gotCands, cand.Node)
	}
	slices.Sort(gotCands)
	if diff := cmp.Diff(wantCands, gotCands); diff != "" {
		t.Errorf("candidates (-kube-scheduler +adapter):\n%s", diff)
	}
	if got.Decision.NominatedNode != "" && !slices.Contains(wantCands, got.Decision.NominatedNode) {
		t.Errorf("nominated %s, not a candidate", got.Decision.NominatedNode)
	}
	t.Logf("filter %v; candidates %v; %s %q", want.NodeStatuses, gotCands, got.Decision.Status, got.Decision.Message)
	return got
}

// Every volume case gets one answer, however often it is asked: the
// volumes are listed in name order, and nothing waits on an informer.
func TestVolumesDeterministic(t *testing.T) {
	const runs = 6
	for _, tc := range volumeCases {
		t.Run(tc.name, func(t *testing.T) {
			first := decideVolumes(t, tc)
			for i := 1; i < runs; i++ {
				// The raw calls carry the wall clock (upstream's
				// DisruptionTarget condition's lastTransitionTime is
				// time.Now()); the decision's Actions summarise them.
				if diff := cmp.Diff(first, decideVolumes(t, tc), cmpopts.IgnoreFields(harness.Result{}, "Calls")); diff != "" {
					t.Fatalf("run %d differs from run 0 (-run 0 +run %d):\n%s", i, i, diff)
				}
			}
		})
	}
}

// A filter that fails with an error ends kube-scheduler's scheduling cycle
// (the pod is retried, nothing preempted): the decision is an error naming
// the object, here a StorageClass the API server would have defaulted.
func TestVolumesFilterError(t *testing.T) {
	c := volumeCluster()
	c.StorageClasses[0].VolumeBindingMode = nil
	c.PVCs = append(c.PVCs, claim("data", "csi", ""))
	p := volumePod(claimVolume("data", "data"))()
	want, err := upstream.KubeSchedulerFilter(context.Background(), c, p)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := upstream.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ev.Filter(context.Background(), p)); diff != "" {
		t.Fatalf("filter (-kube-scheduler +adapter):\n%s", diff)
	}
	if len(want.NodeStatuses) == 0 || want.NodeStatuses[0].Code != preempt.Error {
		t.Fatalf("kube-scheduler's filter: %+v, want Error", want)
	}
	_, err = harness.Decide(context.Background(), upstream.Impl{}, c, p, preempt.DefaultConfig(), 0, volumeNow)
	if err == nil || !strings.Contains(err.Error(), `StorageClass "csi"`) {
		t.Errorf("Decide: %v, want an error naming StorageClass \"csi\"", err)
	}
}

// NodeVolumeLimits names the first missing CSI driver in a map's order
// (v1.37.2's csi.go): with two CSIDrivers that set
// preventPodSchedulingIfMissing, a pod with volumes is refused, not
// answered at random.
func TestVolumesTwoRequiredDriversRefused(t *testing.T) {
	c := volumeCluster()
	for _, name := range []string{csiDriver, "other.example.com"} {
		c.CSIDrivers = append(c.CSIDrivers, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: ptr.To(true)}})
	}
	c.PVCs = append(c.PVCs, claim("data", "wffc-csi", ""))
	p := volumePod(claimVolume("data", "data"))()
	u := (upstream.Impl{}).Unmodelled(c, p)
	if u == nil || !strings.Contains(u.Detail, "set preventPodSchedulingIfMissing") {
		t.Errorf("Unmodelled = %v, want a refusal", u)
	}
	c.CSIDrivers = c.CSIDrivers[:1]
	if u := (upstream.Impl{}).Unmodelled(c, p); u != nil {
		t.Errorf("one such driver: Unmodelled = %v, want none", u)
	}
}
