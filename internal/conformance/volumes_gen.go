package conformance

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	csilibplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/utils/ptr"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/preempt"
)

// VolumeSpec gives a generated cluster storage (issue 32): claims of the
// kinds the four volume filters tell apart, the pods' volumes, the nodes'
// CSI attach limits and a VolumeAttachment. The classes and the CSI
// driver are fixed: "wffc-local" (no provisioner, WaitForFirstConsumer),
// "wffc-csi" and "immediate" (CSIDriverName, WaitForFirstConsumer and
// Immediate).
type VolumeSpec struct {
	// Claims are the PVCs "c0", "c1", ... of namespace "default", each an
	// index into claimKinds; LocalPVs[k] has bit i set when node i holds
	// an unbound local volume of class "wffc-local" (for the claims of
	// that kind, which may bind to any).
	Claims   []int
	LocalPVs int
	// CSILimits[i] indexes csiLimits: node i's CSINode.
	CSILimits []int
	// Uses[k] indexes volumeSets: the volumes of the k-th pod of the
	// cluster (in Build's order); Preemptor the preemptor's.
	Uses      []int
	Preemptor int
	// Members[i] indexes volumeSets: the volumes of the gang's member i
	// (GenGangVolumes), none past the end.
	Members []int
	// Attached is 0 for no VolumeAttachment, k for one of claim
	// ((k-1) mod claims)'s volume on node ((k-1) div claims, mod nodes).
	Attached int
	// Prevent: the CSIDriver sets preventPodSchedulingIfMissing (a node
	// whose CSINode lacks the driver fails the preemptor's new volumes of
	// it from v1.37.2, preempt.SwitchMissingCSIDriver).
	Prevent bool
	// Portworx, when set, gives the preemptor an inline Portworx volume
	// ("vol-b"), the pods whose bit is set in PortworxPods another
	// ("vol-a", shared), and every CSINode Portworx's CSI driver with an
	// attach limit of 1; the CSINodes of the nodes whose bit is set in
	// PortworxAnnotated list the in-tree plugin as migrated, which v1.35.4
	// needs to count the volumes (preempt.SwitchPortworxMigrated).
	Portworx                        bool
	PortworxPods, PortworxAnnotated int
	// Capacities, when not nil, make the CSIDriver track capacity
	// (storageCapacity: true), so that VolumeBinding provisions a claim
	// of its classes only where one of these CSIStorageCapacities holds
	// it (GenVolumes only).
	Capacities []CapacitySpec
}

// CapacitySpec is a CSIStorageCapacity: of class "wffc-csi" (or
// "immediate" when OtherClass), selecting the nodes Nodes says (-1 all,
// -2 zone z1, -3 none: no nodeTopology, k >= 0 node k mod nodes by
// hostname), its capacity and maximumVolumeSize indexes into
// capacitySizes ("" for none).
type CapacitySpec struct {
	Nodes         int
	Capacity, Max int
	OtherClass    bool
}

// capacitySizes are a CapacitySpec's sizes, around the claims' 1Gi.
var capacitySizes = []string{"", "512Mi", "1Gi", "10Gi", "0"}

func genCapacities(t *rapid.T) []CapacitySpec {
	if rapid.IntRange(0, 2).Draw(t, "tracksCapacity") != 0 {
		return nil
	}
	caps := []CapacitySpec{}
	for range rapid.IntRange(0, 3).Draw(t, "capacities") {
		caps = append(caps, CapacitySpec{
			Nodes:      rapid.IntRange(-3, 5).Draw(t, "capacityNodes"),
			Capacity:   rapid.IntRange(0, len(capacitySizes)-1).Draw(t, "capacity"),
			Max:        rapid.IntRange(0, len(capacitySizes)-1).Draw(t, "maximumVolumeSize"),
			OtherClass: rapid.IntRange(0, 5).Draw(t, "otherClass") == 0,
		})
	}
	return caps
}

// CSIDriverName is the CSI driver of generated volumes.
const CSIDriverName = "csi.example.com"

// Claim kinds: what a generated claim is.
const (
	claimCSI       = iota // bound to a CSI volume, no node affinity
	claimCSIZone          // bound to a CSI volume in zone z1 (VolumeZone)
	claimLocal            // bound to a local volume of one node (node affinity)
	claimWFFCLocal        // unbound, WaitForFirstConsumer: the local volumes may bind it
	claimWFFCCSI          // unbound, WaitForFirstConsumer, provisioned by the CSI driver
	claimRWOP             // bound to a CSI volume, ReadWriteOncePod (VolumeRestrictions)
	claimImmediate        // unbound, Immediate: VolumeBinding's PreFilter refuses the pod
	claimLostPV           // bound to a volume the cluster lacks
)

var (
	claimKinds = []int{claimCSI, claimCSI, claimCSIZone, claimLocal, claimWFFCLocal, claimWFFCCSI, claimRWOP, claimRWOP, claimImmediate, claimLostPV}
	// csiLimits are the nodes' attach limits for the CSI driver: -1 no
	// CSINode, -2 a CSINode without the driver, -3 the driver without a
	// count (no limit).
	csiLimits = []int32{-1, 1, 1, 2, 3, -2, -3, 0}
	// volumeSets are the pods' volumes, none most often: claims by index
	// (modulo the cluster's claims) and inline volumes.
	volumeSets = []func(claims int) []v1.Volume{
		nil, nil, nil, nil, nil,
		func(n int) []v1.Volume { return []v1.Volume{claimVol("v0", 0, n)} },
		func(n int) []v1.Volume { return []v1.Volume{claimVol("v0", 1, n)} },
		func(n int) []v1.Volume { return []v1.Volume{claimVol("v0", 2, n)} },
		func(n int) []v1.Volume { return []v1.Volume{claimVol("v0", 0, n), claimVol("v1", 3, n)} },
		func(int) []v1.Volume {
			return []v1.Volume{{Name: "pd", VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "disk-a"}}}}
		},
		func(int) []v1.Volume {
			return []v1.Volume{{Name: "pd", VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: "disk-a", ReadOnly: true}}}}
		},
		func(int) []v1.Volume {
			return []v1.Volume{{Name: "ebs", VolumeSource: v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}}}
		},
		func(int) []v1.Volume {
			return []v1.Volume{{Name: "inline", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: CSIDriverName}}}}
		},
		func(int) []v1.Volume {
			return []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		},
	}
)

func claimVol(name string, k, claims int) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("c%d", at(k, claims))}}}
}

// genVolumes draws the storage of s (its nodes and pods drawn).
func genVolumes(t *rapid.T, s *Spec) *VolumeSpec {
	idx := func(table int, label string) int { return rapid.IntRange(0, table-1).Draw(t, label) }
	v := &VolumeSpec{}
	for range rapid.IntRange(1, 4).Draw(t, "claims") {
		v.Claims = append(v.Claims, idx(len(claimKinds), "claimKind"))
	}
	v.LocalPVs = rapid.IntRange(0, 1<<min(len(s.Nodes), 8)-1).Draw(t, "localPVs")
	for range s.Nodes {
		v.CSILimits = append(v.CSILimits, idx(len(csiLimits), "csiLimit"))
	}
	pods := len(s.Nominated)
	for _, ns := range s.Nodes {
		pods += len(ns.Bound)
	}
	for range pods {
		v.Uses = append(v.Uses, idx(len(volumeSets), "podVolumes"))
	}
	v.Preemptor = rapid.IntRange(5, len(volumeSets)-1).Draw(t, "preemptorVolumes")
	if rapid.IntRange(0, 3).Draw(t, "withAttachment") == 0 {
		v.Attached = rapid.IntRange(1, len(v.Claims)*len(s.Nodes)).Draw(t, "attached")
	}
	v.Prevent = rapid.IntRange(0, 3).Draw(t, "prevent") == 0
	if v.Portworx = rapid.IntRange(0, 2).Draw(t, "portworx") == 0; v.Portworx {
		v.PortworxPods = rapid.IntRange(0, 1<<min(pods, 8)-1).Draw(t, "portworxPods")
		v.PortworxAnnotated = rapid.IntRange(0, 1<<min(len(s.Nodes), 8)-1).Draw(t, "portworxAnnotated")
	}
	return v
}

// build adds the storage to c: the classes, the driver, the claims and
// their volumes, the CSINodes, the attachment; and the volumes to pods
// (c's pods in Build's order) and to the preemptor.
func (v *VolumeSpec) build(c *preempt.Cluster, pods []*v1.Pod, preemptor *v1.Pod) {
	immediate, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	c.StorageClasses = []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc-local", UID: "uid-sc-wffc-local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc-csi", UID: "uid-sc-wffc-csi"}, Provisioner: CSIDriverName, VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "immediate", UID: "uid-sc-immediate"}, Provisioner: CSIDriverName, VolumeBindingMode: &immediate},
	}
	c.CSIDrivers = []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: CSIDriverName, UID: "uid-csidriver"}, Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(true)}}}
	if v.Prevent {
		c.CSIDrivers[0].Spec.PreventPodSchedulingIfMissing = ptr.To(true)
	}
	n := len(c.Nodes)
	if v.Capacities != nil {
		c.CSIDrivers[0].Spec.StorageCapacity = ptr.To(true)
	}
	for i, cs := range v.Capacities {
		cp := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: fmt.Sprintf("capacity-%d", i), UID: types.UID(fmt.Sprintf("uid-capacity-%d", i))},
			StorageClassName: "wffc-csi"}
		if cs.OtherClass {
			cp.StorageClassName = "immediate"
		}
		switch {
		case cs.Nodes == -1:
			cp.NodeTopology = &metav1.LabelSelector{}
		case cs.Nodes == -2:
			cp.NodeTopology = &metav1.LabelSelector{MatchLabels: map[string]string{ZoneKey: "z1"}}
		case cs.Nodes >= 0 && n > 0:
			cp.NodeTopology = &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelHostname: c.Nodes[cs.Nodes%n].Name}}
		}
		if s := capacitySizes[at(cs.Capacity, len(capacitySizes))]; s != "" {
			cp.Capacity = ptr.To(resource.MustParse(s))
		}
		if s := capacitySizes[at(cs.Max, len(capacitySizes))]; s != "" {
			cp.MaximumVolumeSize = ptr.To(resource.MustParse(s))
		}
		c.CSIStorageCapacities = append(c.CSIStorageCapacities, cp)
	}
	for i, node := range c.Nodes {
		limit := csiLimits[at(v.CSILimits[min(i, len(v.CSILimits)-1)], len(csiLimits))]
		switch {
		case limit == -1:
		case limit == -2:
			c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: types.UID("uid-csinode-" + node.Name)}})
		default:
			d := storagev1.CSINodeDriver{Name: CSIDriverName, NodeID: node.Name}
			if limit >= 0 {
				d.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(limit)}
			}
			c.CSINodes = append(c.CSINodes, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node.Name, UID: types.UID("uid-csinode-" + node.Name)},
				Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{d}}})
		}
		if v.LocalPVs&(1<<min(i, 30)) != 0 {
			pv := genPV(fmt.Sprintf("local-%02d", i), "wffc-local", "", v1.ReadWriteOnce)
			pv.Spec.CSI = nil
			pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disk"}
			onNode(pv, node.Name)
			c.PVs = append(c.PVs, pv)
		}
	}
	for k, kind := range v.Claims {
		name := fmt.Sprintf("c%d", k)
		pvName := "pv-" + name
		switch claimKinds[at(kind, len(claimKinds))] {
		case claimCSI:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-csi", pvName, v1.ReadWriteOnce))
			c.PVs = append(c.PVs, genPV(pvName, "wffc-csi", name, v1.ReadWriteOnce))
		case claimCSIZone:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-csi", pvName, v1.ReadWriteOnce))
			pv := genPV(pvName, "wffc-csi", name, v1.ReadWriteOnce)
			pv.Labels = map[string]string{ZoneKey: "z1"}
			c.PVs = append(c.PVs, pv)
		case claimLocal:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-local", pvName, v1.ReadWriteOnce))
			pv := genPV(pvName, "wffc-local", name, v1.ReadWriteOnce)
			pv.Spec.CSI = nil
			pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/" + name}
			onNode(pv, c.Nodes[at(k, n)].Name)
			c.PVs = append(c.PVs, pv)
		case claimWFFCLocal:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-local", "", v1.ReadWriteOnce))
		case claimWFFCCSI:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-csi", "", v1.ReadWriteOnce))
		case claimRWOP:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-csi", pvName, v1.ReadWriteOncePod))
			c.PVs = append(c.PVs, genPV(pvName, "wffc-csi", name, v1.ReadWriteOncePod))
		case claimImmediate:
			c.PVCs = append(c.PVCs, genPVC(name, "immediate", "", v1.ReadWriteOnce))
		case claimLostPV:
			c.PVCs = append(c.PVCs, genPVC(name, "wffc-csi", pvName, v1.ReadWriteOnce))
		}
	}
	if v.Attached > 0 && len(v.Claims) > 0 && n > 0 {
		k := (v.Attached - 1) % len(v.Claims)
		node := c.Nodes[at((v.Attached-1)/len(v.Claims), n)].Name
		pvName := fmt.Sprintf("pv-c%d", k)
		c.VolumeAttachments = append(c.VolumeAttachments, &storagev1.VolumeAttachment{
			ObjectMeta: metav1.ObjectMeta{Name: "va-" + pvName, UID: types.UID("uid-va-" + pvName)},
			Spec: storagev1.VolumeAttachmentSpec{Attacher: CSIDriverName, NodeName: node,
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pvName}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true},
		})
	}
	for k, p := range pods {
		if k < len(v.Uses) {
			p.Spec.Volumes = append(p.Spec.Volumes, volumesOf(v.Uses[k], len(v.Claims))...)
		}
	}
	preemptor.Spec.Volumes = append(preemptor.Spec.Volumes, volumesOf(v.Preemptor, len(v.Claims))...)
	if v.Portworx {
		v.addPortworx(c, pods, preemptor)
	}
}

// addPortworx adds the Portworx volumes and Portworx's CSI driver to
// the CSINodes (Portworx).
func (v *VolumeSpec) addPortworx(c *preempt.Cluster, pods []*v1.Pod, preemptor *v1.Pod) {
	px := func(id string) v1.Volume {
		return v1.Volume{Name: "px", VolumeSource: v1.VolumeSource{PortworxVolume: &v1.PortworxVolumeSource{VolumeID: id}}}
	}
	index := map[string]int{}
	for i, node := range c.Nodes {
		index[node.Name] = i
	}
	for _, cn := range c.CSINodes {
		cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: csilibplugins.PortworxDriverName, NodeID: cn.Name,
			Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](1)}})
		if v.PortworxAnnotated&(1<<min(index[cn.Name], 30)) != 0 {
			cn.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: csilibplugins.PortworxVolumePluginName}
		}
	}
	for k, p := range pods {
		if v.PortworxPods&(1<<min(k, 30)) != 0 {
			p.Spec.Volumes = append(p.Spec.Volumes, px("vol-a"))
		}
	}
	preemptor.Spec.Volumes = append(preemptor.Spec.Volumes, px("vol-b"))
}

// rejectedAtPreFilter reports whether the preemptor's volumes make a
// PreFilter reject it (UnschedulableAndUnresolvable, for every node): an
// unbound Immediate claim (VolumeBinding), a claim bound to a volume the
// cluster lacks (VolumeZone).
func (v *VolumeSpec) rejectedAtPreFilter() bool {
	for _, vol := range volumesOf(v.Preemptor, len(v.Claims)) {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		var k int
		if _, err := fmt.Sscanf(vol.PersistentVolumeClaim.ClaimName, "c%d", &k); err != nil || k >= len(v.Claims) {
			continue
		}
		switch claimKinds[at(v.Claims[k], len(claimKinds))] {
		case claimImmediate, claimLostPV:
			return true
		}
	}
	return false
}

func volumesOf(set, claims int) []v1.Volume {
	f := volumeSets[at(set, len(volumeSets))]
	if f == nil {
		return nil
	}
	return f(max(claims, 1))
}

// genPVC is a 1Gi claim of class; bound to volume when volume is set (with
// the annotation the PV controller sets once binding completes).
func genPVC(name, class, volume string, mode v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-pvc-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{mode},
			StorageClassName: ptr.To(class),
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

// genPV is a 1Gi CSI volume of class, bound (claimRef) to the claim
// default/claim when claim is set.
func genPV(name, class, claim string, mode v1.PersistentVolumeAccessMode) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-pv-" + name)},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{mode},
			StorageClassName:       class,
			PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: CSIDriverName, VolumeHandle: "handle-" + name}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if claim != "" {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: claim, UID: types.UID("uid-pvc-" + claim)}
		pv.Status.Phase = v1.VolumeBound
	}
	return pv
}

// onNode gives pv node affinity to the node named.
func onNode(pv *v1.PersistentVolume, node string) {
	pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: HostnameKey, Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
	}}}}
}
