package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// The VolumeRestrictions and VolumeZone table (issue 32 item 1): each
// case's expected outcome (filter phase, then the decision: node, victims,
// candidates, dry-run NodeToStatus messages and codes, API calls) is
// upstream's (the adapter, its final tie broken in list order), and
// reference and optimized must give it.
//
// Ported from k8s.io/kubernetes v1.37.2's plugin tests, each case made a
// preemption (every node full, the preemptor must evict):
//
//   - volumerestrictions TestGCEDiskConflicts, TestAWSDiskConflicts,
//     TestRBDDiskConflicts, TestISCSIDiskConflicts: "same state" and
//     "different state" of each (the disk on a victim, on a pod that is not
//     one, or a different disk); "nothing", "one state" and "pod with a
//     volume that doesn't have restrictions" are the Skip of a pod without
//     a volume to check, which every plain case here covers (a pod without
//     volumes), plus "inline volume without restrictions" below.
//   - TestAccessModeConflicts: all five ("failed to get PVC", "no access
//     mode conflict", "access mode conflict", "two conflicts"; "nothing"
//     as above).
//   - volumezone TestSingleZone, TestMultiZone: the beta and GA zone and
//     region labels matched and not, a node without labels, a PV with zone
//     and region on a node with the zone only, the beta label on the PV
//     and the GA one on the node, a multi-zone value; TestWithBinding:
//     the bound claim, the unbound claim of WaitForFirstConsumer, of no
//     class, of an empty class name, of a class without binding mode.
//
// Skipped: the QueueingHint tests (Test_isSchedulableAfter*,
// TestIsSchedulableAfter*: requeueing, not a decision), and
// TestVolumeRestrictions_DeferredResizeSkipped and its VolumeZone
// counterpart (the alpha gate InPlacePodVerticalScalingSchedulerPreemption,
// off by default and refused where set).
//
// From upstream/volumes_test.go: "ReadWriteOncePod claim in use by a
// victim", "missing claim", "bound volume in zone b", "bound claim whose
// volume is missing", "claim of a missing storage class", "unbound
// Immediate claim".
type volumeRZCase struct {
	name    string
	cluster func() *preempt.Cluster
	pod     func() *v1.Pod
}

var vrzNow = testobj.Epoch.Add(24 * time.Hour)

// vrzNode is a node of 4 cpu in zone (none when empty).
func vrzNode(name, zone string) *v1.Node {
	w := testobj.MakeNode().Name(name).Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"}).Label(v1.LabelHostname, name)
	if zone != "" {
		w = w.Label(v1.LabelTopologyZone, zone)
	}
	return w.Obj()
}

// vrzPod is a pod of namespace default asking cpu, bound to node when set,
// started an hour after the epoch plus its priority in minutes.
func vrzPod(name, node string, prio int32, cpu string, vols ...v1.Volume) *v1.Pod {
	w := testobj.MakePod().Namespace("default").Name(name).UID("uid-" + name).Node(node).Priority(prio).Container("c").CPU(cpu).Memory("1Gi").Volumes(vols)
	if node != "" {
		w = w.StartTime(testobj.Epoch.Add(time.Hour + time.Duration(prio)*time.Minute))
	}
	return w.Obj()
}

// vrzCluster: n1 and n3 in zone a, n2 in zone b, each full with a pod of
// priority 0 asking 3 cpu (low-n1 ...), which the preemptor (priority 10,
// 2 cpu) must evict somewhere. Storage classes csi (Immediate) and wffc
// (WaitForFirstConsumer), binding modes set as the API server defaults
// them. No CSINode: NodeVolumeLimits sets no limit.
func vrzCluster() *preempt.Cluster {
	c := &preempt.Cluster{}
	for _, n := range []struct{ name, zone string }{{"n1", "a"}, {"n2", "b"}, {"n3", "a"}} {
		c.Nodes = append(c.Nodes, vrzNode(n.name, n.zone))
		c.Pods = append(c.Pods, vrzPod("low-"+n.name, n.name, 0, "3"))
	}
	immediate, wffc := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	c.StorageClasses = []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "csi"}, Provisioner: "csi.example.com", VolumeBindingMode: &immediate},
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
	}
	return c
}

// vrzClaim is a claim of class in namespace default bound to volume (with
// the PV controller's annotation) when volume is set.
func vrzClaim(name, class, volume string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: modes, StorageClassName: &class, VolumeName: volume,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if volume != "" {
		pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
		pvc.Status.Phase = v1.ClaimBound
	}
	return pvc
}

// vrzVolume is a 1Gi host-path PV of class csi bound to claim, with labels
// (key, value pairs).
func vrzVolume(name, claim string, modes []v1.PersistentVolumeAccessMode, labels ...string) *v1.PersistentVolume {
	if len(modes) == 0 {
		modes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            modes,
			StorageClassName:       "csi",
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data/" + name}},
			ClaimRef:               &v1.ObjectReference{Namespace: "default", Name: claim},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	if len(labels) > 0 {
		pv.Labels = map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			pv.Labels[labels[i]] = labels[i+1]
		}
	}
	return pv
}

func vrzClaimVolume(name, claim string) v1.Volume {
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func gcePD(name string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "gce-" + name, VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: readOnly}}}
}

func awsEBS(id string) v1.Volume {
	return v1.Volume{Name: "ebs-" + id, VolumeSource: v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}}
}

func rbd(monitors []string, pool, image string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "rbd-" + image, VolumeSource: v1.VolumeSource{RBD: &v1.RBDVolumeSource{CephMonitors: monitors, RBDPool: pool, RBDImage: image, FSType: "ext4", ReadOnly: readOnly}}}
}

func iscsi(iqn string, readOnly bool) v1.Volume {
	return v1.Volume{Name: "iscsi", VolumeSource: v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: iqn, FSType: "ext4", ReadOnly: readOnly}}}
}

func vrzPreemptor(vols ...v1.Volume) func() *v1.Pod {
	return func() *v1.Pod { return vrzPod("preemptor", "", 10, "2", vols...) }
}

// withVolumes gives the pod named name in c volumes.
func withVolumes(c *preempt.Cluster, name string, vols ...v1.Volume) *preempt.Cluster {
	for _, p := range c.Pods {
		if p.Name == name {
			p.Spec.Volumes = append(p.Spec.Volumes, vols...)
		}
	}
	return c
}

// withPods adds pods to c.
func withPods(c *preempt.Cluster, pods ...*v1.Pod) *preempt.Cluster {
	c.Pods = append(c.Pods, pods...)
	return c
}

// diskCases: the disk on a victim of n1 (n1 its only candidate: the
// victims of n2 and n3 are more important), on a pod of n1 that no
// preemption evicts, and a different disk.
func diskCases(kind string, same, other, sameReadOnly, otherReadOnly v1.Volume) []volumeRZCase {
	// n1's victim is the least important: n1 wins when it is a candidate.
	importantElsewhere := func() *preempt.Cluster {
		c := vrzCluster()
		c.Pods[1].Spec.Priority, c.Pods[2].Spec.Priority = ptr32(5), ptr32(5)
		return c
	}
	return []volumeRZCase{
		{name: kind + ": same disk on the victim of n1", pod: vrzPreemptor(same),
			cluster: func() *preempt.Cluster { return withVolumes(importantElsewhere(), "low-n1", same) }},
		{name: kind + ": same disk on a pod of n1 more important than the preemptor", pod: vrzPreemptor(same),
			cluster: func() *preempt.Cluster {
				return withPods(importantElsewhere(), vrzPod("high-n1", "n1", 20, "0", same))
			}},
		{name: kind + ": different disk on a pod of n1 more important than the preemptor", pod: vrzPreemptor(same),
			cluster: func() *preempt.Cluster {
				return withPods(importantElsewhere(), vrzPod("high-n1", "n1", 20, "0", other))
			}},
		{name: kind + ": same disk, the preemptor's read-only, on a pod of n1 more important", pod: vrzPreemptor(sameReadOnly),
			cluster: func() *preempt.Cluster {
				return withPods(importantElsewhere(), vrzPod("high-n1", "n1", 20, "0", otherReadOnly))
			}},
	}
}

func ptr32(v int32) *int32 { return &v }

func volumeRZCases() []volumeRZCase {
	var cases []volumeRZCase
	cases = append(cases, diskCases("GCE PD", gcePD("foo", false), gcePD("bar", false), gcePD("foo", true), gcePD("foo", true))...)
	cases = append(cases, diskCases("AWS EBS", awsEBS("foo"), awsEBS("bar"), awsEBS("foo"), awsEBS("foo"))...)
	cases = append(cases, diskCases("RBD", rbd([]string{"a", "b"}, "foo", "bar", false), rbd([]string{"c", "d"}, "foo", "bar", false),
		rbd([]string{"b", "c"}, "foo", "bar", true), rbd([]string{"a"}, "foo", "bar", true))...)
	cases = append(cases, diskCases("ISCSI", iscsi("iqn.2016-12.server:storage.target01", false), iscsi("iqn.2017-12.server:storage.target01", false),
		iscsi("iqn.2016-12.server:storage.target01", true), iscsi("iqn.2016-12.server:storage.target01", true))...)

	rwop := []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	// onceCluster: claims once and twice (ReadWriteOncePod) and many
	// (ReadWriteMany), bound to volumes.
	onceCluster := func() *preempt.Cluster {
		c := vrzCluster()
		c.PVs = append(c.PVs, vrzVolume("pv-once", "once", rwop), vrzVolume("pv-twice", "twice", rwop),
			vrzVolume("pv-many", "many", []v1.PersistentVolumeAccessMode{v1.ReadWriteMany}))
		c.PVCs = append(c.PVCs, vrzClaim("once", "csi", "pv-once", rwop...), vrzClaim("twice", "csi", "pv-twice", rwop...),
			vrzClaim("many", "csi", "pv-many", v1.ReadWriteMany))
		return c
	}
	once, twice, many := vrzClaimVolume("once", "once"), vrzClaimVolume("twice", "twice"), vrzClaimVolume("many", "many")
	cases = append(cases,
		volumeRZCase{name: "inline volume without restrictions", cluster: vrzCluster,
			pod: vrzPreemptor(v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})},
		volumeRZCase{name: "ReadWriteOncePod: missing claim (failed to get PVC)", cluster: onceCluster, pod: vrzPreemptor(vrzClaimVolume("d", "nowhere"))},
		volumeRZCase{name: "ReadWriteOncePod: claim not in use, a ReadWriteMany claim in use (no access mode conflict)",
			cluster: func() *preempt.Cluster { return withVolumes(onceCluster(), "low-n2", many) }, pod: vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: claim in use by the victim of n2 (access mode conflict)",
			cluster: func() *preempt.Cluster { return withVolumes(onceCluster(), "low-n2", once, many) }, pod: vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: two claims in use by the victim of n2 (two conflicts)",
			cluster: func() *preempt.Cluster { return withVolumes(onceCluster(), "low-n2", once, twice) }, pod: vrzPreemptor(once, twice)},
		volumeRZCase{name: "ReadWriteOncePod: two claims, one used on n1, the other on n2: no node frees both",
			cluster: func() *preempt.Cluster {
				return withVolumes(withVolumes(onceCluster(), "low-n1", once), "low-n2", twice)
			}, pod: vrzPreemptor(once, twice)},
		volumeRZCase{name: "ReadWriteOncePod: claim in use by a pod more important than the preemptor on n2 (no preemption helps)",
			cluster: func() *preempt.Cluster { return withPods(onceCluster(), vrzPod("high-n2", "n2", 20, "0", once)) },
			pod:     vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: claim in use by victims of n1 and n2, counted once: evicting either frees it",
			cluster: func() *preempt.Cluster {
				return withVolumes(withVolumes(onceCluster(), "low-n1", once), "low-n2", once)
			},
			pod: vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: claim named twice by the victim of n2",
			cluster: func() *preempt.Cluster {
				return withVolumes(onceCluster(), "low-n2", once, vrzClaimVolume("again", "once"))
			},
			pod: vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: claim in use on n2, a victim of n1 in another namespace naming a claim once (RemovePod counts by name)",
			cluster: func() *preempt.Cluster {
				c := withVolumes(onceCluster(), "low-n2", once)
				c.Pods[0].Namespace = "other"
				c.Namespaces = append(c.Namespaces, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
				return withVolumes(c, "low-n1", once)
			},
			pod: vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: claim used only by a pod nominated to n3 (PreFilter Skips)",
			cluster: func() *preempt.Cluster {
				p := vrzPod("nominated", "", 20, "0", once)
				p.Status.NominatedNodeName = "n3"
				return withPods(onceCluster(), p)
			},
			pod: vrzPreemptor(once)},
		volumeRZCase{name: "ReadWriteOncePod: claim in use on n2 and by a pod nominated to n3",
			cluster: func() *preempt.Cluster {
				p := vrzPod("nominated", "", 20, "0", once)
				p.Status.NominatedNodeName = "n3"
				return withPods(withVolumes(onceCluster(), "low-n2", once), p)
			},
			pod: vrzPreemptor(once)},
		volumeRZCase{name: "GCE PD on a pod nominated to n1 more important than the preemptor",
			cluster: func() *preempt.Cluster {
				p := vrzPod("nominated", "", 20, "0", gcePD("foo", false))
				p.Status.NominatedNodeName = "n1"
				return withPods(vrzCluster(), p)
			},
			pod: vrzPreemptor(gcePD("foo", false))},
		volumeRZCase{name: "GCE PD on the less important of two victims of n1: the disk holder goes, the other is reprieved",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.Pods[0] = vrzPod("low-n1", "n1", 1, "1", gcePD("foo", false))
				c.Pods = append(c.Pods, vrzPod("mid-n1", "n1", 0, "2"))
				c.Pods[1].Spec.Priority, c.Pods[2].Spec.Priority = ptr32(5), ptr32(5)
				return c
			},
			pod: vrzPreemptor(gcePD("foo", false))},
	)

	// VolumeZone.
	zoned := func(labels ...string) func() *preempt.Cluster {
		return func() *preempt.Cluster {
			c := vrzCluster()
			c.PVs = append(c.PVs, vrzVolume("pv-data", "data", nil, labels...))
			c.PVCs = append(c.PVCs, vrzClaim("data", "csi", "pv-data"))
			return c
		}
	}
	data := vrzPreemptor(vrzClaimVolume("data", "data"))
	relabel := func(f func() *preempt.Cluster, node string, labels ...string) func() *preempt.Cluster {
		return func() *preempt.Cluster {
			c := f()
			for _, n := range c.Nodes {
				if n.Name == node {
					n.Labels = map[string]string{v1.LabelHostname: node}
					for i := 0; i+1 < len(labels); i += 2 {
						n.Labels[labels[i]] = labels[i+1]
					}
				}
			}
			return c
		}
	}
	cases = append(cases,
		volumeRZCase{name: "VolumeZone: zone label matched on n2 only (bound volume in zone b)", cluster: zoned(v1.LabelTopologyZone, "b"), pod: data},
		volumeRZCase{name: "VolumeZone: beta zone label on the volume, GA label on the nodes", cluster: zoned(v1.LabelFailureDomainBetaZone, "a"), pod: data},
		volumeRZCase{name: "VolumeZone: zone label matches no node", cluster: zoned(v1.LabelTopologyZone, "c"), pod: data},
		volumeRZCase{name: "VolumeZone: multi-zone value a__b matched everywhere", cluster: zoned(v1.LabelTopologyZone, "c__b"), pod: data},
		volumeRZCase{name: "VolumeZone: invalid label value a__ ignored", cluster: zoned(v1.LabelTopologyZone, "a__"), pod: data},
		volumeRZCase{name: "VolumeZone: zone and region on the volume, the nodes with the zone only", cluster: zoned(v1.LabelTopologyZone, "b", v1.LabelTopologyRegion, "r"), pod: data},
		volumeRZCase{name: "VolumeZone: region label matched on n3 (beta region on the node)",
			cluster: relabel(zoned(v1.LabelTopologyRegion, "r"), "n3", v1.LabelFailureDomainBetaRegion, "r"), pod: data},
		volumeRZCase{name: "VolumeZone: beta region on the volume and n3, n1 with a different GA region",
			cluster: relabel(relabel(zoned(v1.LabelFailureDomainBetaRegion, "r"), "n3", v1.LabelFailureDomainBetaRegion, "r"), "n1", v1.LabelTopologyRegion, "s"), pod: data},
		volumeRZCase{name: "VolumeZone: n2 without topology labels passes", cluster: relabel(zoned(v1.LabelTopologyZone, "c"), "n2"), pod: data},
		volumeRZCase{name: "VolumeZone: an empty node n4 in zone c fails the filter phase itself",
			cluster: func() *preempt.Cluster {
				c := zoned(v1.LabelTopologyZone, "b")()
				c.Nodes = append(c.Nodes, vrzNode("n4", "c"))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: an empty node n4 without topology labels fits",
			cluster: func() *preempt.Cluster {
				c := zoned(v1.LabelTopologyZone, "b")()
				c.Nodes = append(c.Nodes, vrzNode("n4", ""))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeRestrictions: an empty node n4 with the disk on a pod nominated there fails the filter phase",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.Nodes = append(c.Nodes, vrzNode("n4", "a"))
				p := vrzPod("nominated", "", 20, "0", awsEBS("foo"))
				p.Status.NominatedNodeName = "n4"
				return withPods(c, p)
			}, pod: vrzPreemptor(awsEBS("foo"))},
		volumeRZCase{name: "VolumeRestrictions: an empty node n4, the ReadWriteOncePod claim in use on n2",
			cluster: func() *preempt.Cluster {
				c := withVolumes(onceCluster(), "low-n2", once)
				c.Nodes = append(c.Nodes, vrzNode("n4", "a"))
				return c
			}, pod: vrzPreemptor(once)},
		volumeRZCase{name: "VolumeZone: unbound claim of WaitForFirstConsumer skipped",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVCs = append(c.PVCs, vrzClaim("data", "wffc", ""))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: unbound claim of WaitForFirstConsumer provisioned by a CSI driver skipped",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.StorageClasses[1].Provisioner = "csi.example.com"
				c.PVCs = append(c.PVCs, vrzClaim("data", "wffc", ""))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: bound claim whose volume is missing",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVCs = append(c.PVCs, vrzClaim("data", "csi", "pv-gone"))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: unbound Immediate claim",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVCs = append(c.PVCs, vrzClaim("data", "csi", ""))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: claim of a missing storage class",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVCs = append(c.PVCs, vrzClaim("data", "gone", ""))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: unbound claim of an empty class name",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVCs = append(c.PVCs, vrzClaim("data", "", ""))
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone: unbound claim without a class",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				pvc := vrzClaim("data", "", "")
				pvc.Spec.StorageClassName = nil
				c.PVCs = append(c.PVCs, pvc)
				return c
			}, pod: data},
		volumeRZCase{name: "VolumeZone and VolumeRestrictions: volume in zone a, its ReadWriteOncePod claim in use on n2 (no node both)",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVs = append(c.PVs, vrzVolume("pv-data", "data", rwop, v1.LabelTopologyZone, "a"))
				c.PVCs = append(c.PVCs, vrzClaim("data", "csi", "pv-data", rwop...))
				return withVolumes(c, "low-n2", vrzClaimVolume("d", "data"))
			}, pod: data},
		volumeRZCase{name: "VolumeZone and VolumeRestrictions: volume in zone a, its ReadWriteOncePod claim in use on n1",
			cluster: func() *preempt.Cluster {
				c := vrzCluster()
				c.PVs = append(c.PVs, vrzVolume("pv-data", "data", rwop, v1.LabelTopologyZone, "a"))
				c.PVCs = append(c.PVCs, vrzClaim("data", "csi", "pv-data", rwop...))
				return withVolumes(c, "low-n1", vrzClaimVolume("d", "data"))
			}, pod: data},
	)
	return cases
}

func decideVolumeRZ(t *testing.T, impl preempt.Implementation, tc volumeRZCase) (harness.Result, error) {
	t.Helper()
	return harness.Decide(context.Background(), impl, tc.cluster(), tc.pod(), preempt.DefaultConfig(), 0, vrzNow)
}

var ignoreCalls = cmpopts.IgnoreFields(harness.Result{}, "Calls")

// TestVolumeRestrictionsZoneAgree: reference and optimized give upstream's
// outcome on every case.
func TestVolumeRestrictionsZoneAgree(t *testing.T) {
	for _, tc := range volumeRZCases() {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := decideVolumeRZ(t, upstream.Impl{ListOrderTie: true}, tc)
			t.Logf("upstream: filter %v; %s %q nominated %q victims %v; err %v", want.Filter.NodeStatuses, want.Decision.Status, want.Decision.Message, want.Decision.NominatedNode, want.Decision.Victims, wantErr)
			for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}, optimized.Impl{Workers: 2, ParallelFrom: 1}} {
				got, err := decideVolumeRZ(t, impl, tc)
				diff := cmp.Diff(want, got, ignoreCalls)
				if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
					diff += "error: " + errString(wantErr) + " / " + errString(err)
				}
				if diff == "" {
					continue
				}
				t.Errorf("%s differs (-upstream +%s):\n%s", impl.Name(), impl.Name(), diff)
			}
		})
	}
}

// TestVolumeRestrictionsZoneDeterministic: every implementation gives one
// answer however often it is asked.
func TestVolumeRestrictionsZoneDeterministic(t *testing.T) {
	const runs = 4
	impls := []preempt.Implementation{upstream.Impl{ListOrderTie: true}, reference.Impl{}, optimized.Impl{}}
	for _, tc := range volumeRZCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, impl := range impls {
				first, firstErr := decideVolumeRZ(t, impl, tc)
				for i := 1; i < runs; i++ {
					got, err := decideVolumeRZ(t, impl, tc)
					if diff := cmp.Diff(first, got, ignoreCalls); diff != "" || errString(err) != errString(firstErr) {
						t.Fatalf("%s: run %d differs from run 0 (-run 0 +run %d):\n%s%v / %v", impl.Name(), i, i, diff, firstErr, err)
					}
				}
			}
		})
	}
}

// vrzSelect is SelectVictimsOnNode of impl on each node of c for pod, every
// node Unschedulable in the request: victims' names or the status.
func vrzSelect(t *testing.T, impl preempt.Implementation, c *preempt.Cluster, pod *v1.Pod) map[string]string {
	t.Helper()
	ev, err := impl.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	req := &preempt.Request{Pod: pod, Filter: map[string]preempt.Code{}, Config: preempt.DefaultConfig(), Now: vrzNow}
	for _, n := range c.Nodes {
		req.Filter[n.Name] = preempt.Unschedulable
	}
	out := map[string]string{}
	for _, n := range c.Nodes {
		victims, _, st := ev.SelectVictimsOnNode(context.Background(), req, n.Name)
		if !st.IsSuccess() {
			out[n.Name] = string(st.Code) + ": " + st.Message()
			continue
		}
		s := "victims:"
		for _, v := range victims {
			s += " " + v.Namespace + "/" + v.Name
		}
		out[n.Name] = s
	}
	return out
}

// TestVolumeRestrictionsVictimFreesClaim: a ReadWriteOncePod claim in use
// is freed by evicting its holder (RemovePod), on the holder's node only;
// a holder more important than the preemptor, or on another node than the
// one preempted on, frees nothing (the count is the cluster's: upstream's
// IsPVCUsedByPods, then RemovePod of the node's victims alone). The
// expectations are written out, and all three implementations must meet
// them.
func TestVolumeRestrictionsVictimFreesClaim(t *testing.T) {
	const conflict = "Unschedulable: node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
	cases := map[string]map[string]string{
		"ReadWriteOncePod: claim in use by the victim of n2 (access mode conflict)": {
			"n1": conflict, "n2": "victims: default/low-n2", "n3": conflict},
		"ReadWriteOncePod: claim in use by a pod more important than the preemptor on n2 (no preemption helps)": {
			"n1": conflict, "n2": conflict, "n3": conflict},
		"ReadWriteOncePod: claim in use by victims of n1 and n2, counted once: evicting either frees it": {
			"n1": "victims: default/low-n1", "n2": "victims: default/low-n2", "n3": conflict},
		"ReadWriteOncePod: two claims, one used on n1, the other on n2: no node frees both": {
			"n1": conflict, "n2": conflict, "n3": conflict},
		"ReadWriteOncePod: claim in use on n2, a victim of n1 in another namespace naming a claim once (RemovePod counts by name)": {
			"n1": "victims: other/low-n1", "n2": "victims: default/low-n2", "n3": conflict},
		"ReadWriteOncePod: claim in use on n2 and by a pod nominated to n3": {
			"n1": conflict, "n2": "victims: default/low-n2", "n3": conflict},
		"GCE PD: same disk on the victim of n1": {
			"n1": "victims: default/low-n1", "n2": "victims: default/low-n2", "n3": "victims: default/low-n3"},
		"GCE PD: same disk on a pod of n1 more important than the preemptor": {
			"n1": "Unschedulable: node(s) had no available disk", "n2": "victims: default/low-n2", "n3": "victims: default/low-n3"},
		"GCE PD on the less important of two victims of n1: the disk holder goes, the other is reprieved": {
			"n1": "victims: default/low-n1", "n2": "victims: default/low-n2", "n3": "victims: default/low-n3"},
		"VolumeZone: zone label matched on n2 only (bound volume in zone b)": {
			"n1": "UnschedulableAndUnresolvable: node(s) had no available volume zone", "n2": "victims: default/low-n2",
			"n3": "UnschedulableAndUnresolvable: node(s) had no available volume zone"},
	}
	found := 0
	for _, tc := range volumeRZCases() {
		want, ok := cases[tc.name]
		if !ok {
			continue
		}
		found++
		t.Run(tc.name, func(t *testing.T) {
			for _, impl := range []preempt.Implementation{upstream.Impl{ListOrderTie: true}, reference.Impl{}, optimized.Impl{}} {
				if diff := cmp.Diff(want, vrzSelect(t, impl, tc.cluster(), tc.pod())); diff != "" {
					t.Errorf("%s (-want +got):\n%s", impl.Name(), diff)
				}
			}
		})
	}
	if found != len(cases) {
		t.Fatalf("%d of %d cases found in volumeRZCases", found, len(cases))
	}
}

// TestVolumePreFilterFailureDryRun: a request whose filter codes say
// Unschedulable although PreFilter failed, which kube-scheduler never
// makes (PreFilter's UnschedulableAndUnresolvable is every node's
// status): upstream's dry run then fails with an Error from the first
// RemovePod whose state PreFilter did not write (the Skips before the
// failure are recorded): VolumeRestrictions' when its PreFilter failed,
// PodTopologySpread's when a later one did. All three agree.
func TestVolumePreFilterFailureDryRun(t *testing.T) {
	const (
		vr  = `Error: running RemovePod on PreFilter plugin "VolumeRestrictions": cannot read "PreFilterVolumeRestrictions" from cycleState`
		pts = `Error: running RemovePod on PreFilter plugin "PodTopologySpread": reading "PreFilterPodTopologySpread" from cycleState: not found`
	)
	rwop := []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	for _, tc := range []struct {
		name    string
		cluster func() *preempt.Cluster
		pod     *v1.Pod
		want    string
	}{
		{"VolumeRestrictions fails: a missing claim", vrzCluster, vrzPreemptor(vrzClaimVolume("d", "nowhere"))(), vr},
		{"VolumeZone fails, VolumeRestrictions skipped: a missing volume",
			func() *preempt.Cluster {
				c := vrzCluster()
				c.PVCs = append(c.PVCs, vrzClaim("data", "csi", "pv-gone"))
				return c
			}, vrzPreemptor(vrzClaimVolume("d", "data"))(), pts},
		{"VolumeZone fails after VolumeRestrictions ran: a missing volume, a ReadWriteOncePod claim in use",
			func() *preempt.Cluster {
				c := vrzCluster()
				c.PVs = append(c.PVs, vrzVolume("pv-once", "once", rwop))
				c.PVCs = append(c.PVCs, vrzClaim("data", "csi", "pv-gone"), vrzClaim("once", "csi", "pv-once", rwop...))
				return withVolumes(c, "low-n2", vrzClaimVolume("once", "once"))
			}, vrzPreemptor(vrzClaimVolume("d", "data"), vrzClaimVolume("once", "once"))(), pts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cluster()
			want := map[string]string{}
			for _, n := range c.Nodes {
				want[n.Name] = tc.want
			}
			for _, impl := range []preempt.Implementation{upstream.Impl{ListOrderTie: true}, reference.Impl{}, optimized.Impl{}} {
				if diff := cmp.Diff(want, vrzSelect(t, impl, tc.cluster(), tc.pod)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", impl.Name(), diff)
				}
			}
		})
	}
}

// TestVolumeRestrictionsZoneFilterCodes: optimized's FilterCodes (its
// fast path) gives the codes of upstream's filter phase on every case.
func TestVolumeRestrictionsZoneFilterCodes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range volumeRZCases() {
		t.Run(tc.name, func(t *testing.T) {
			c, pod := tc.cluster(), tc.pod()
			up, err := upstream.Impl{}.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			want := preempt.NewNodeOrder(c).Codes(up.Filter(ctx, pod), nil)
			ev, err := optimized.Impl{}.NewEvaluator(c)
			if err != nil {
				t.Fatal(err)
			}
			cf, ok := ev.(preempt.CodeFilter)
			if !ok {
				t.Fatal("optimized has no FilterCodes")
			}
			if diff := cmp.Diff(want, cf.FilterCodes(ctx, pod, nil)); diff != "" {
				t.Errorf("FilterCodes (-upstream +optimized):\n%s", diff)
			}
		})
	}
}

// TestVolumeRestrictionsPodGroupVictim: under GenericWorkload a mode-All
// pod group is one victim; preempting its member on n1 evicts its member
// on n2 too, whose RemovePod frees the ReadWriteOncePod claim that member
// holds (the count is the cluster's), so n1 is a candidate; with the gate
// off only n2 is. Expected from upstream, all three compared.
func TestVolumeRestrictionsPodGroupVictim(t *testing.T) {
	rwop := []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
	cluster := func() *preempt.Cluster {
		c := vrzCluster()
		c.PVs = append(c.PVs, vrzVolume("pv-once", "once", rwop))
		c.PVCs = append(c.PVCs, vrzClaim("once", "csi", "pv-once", rwop...))
		for i, node := range []string{"n1", "n2"} {
			p := vrzPod("m-"+node, node, 0, "3")
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: ptrString("pg1")}
			c.Pods[i] = p
		}
		c.Pods[1].Spec.Volumes = []v1.Volume{vrzClaimVolume("once", "once")}
		c.Pods[2].Spec.Priority = ptr32(5)
		c.PodGroups = []*preempt.PodGroup{testobj.MakePodGroup().Namespace("default").Name("pg1").UID("pg-pg1").Priority(0).BasicPolicy().DisruptionModeAll().Obj()}
		return c
	}
	pod := vrzPreemptor(vrzClaimVolume("once", "once"))
	for _, gates := range []map[string]bool{nil, {"GenericWorkload": true}} {
		t.Run(fmt.Sprintf("gates=%v", gates), func(t *testing.T) {
			cfg := preempt.DefaultConfig()
			cfg.FeatureGates = gates
			decide := func(impl preempt.Implementation) (harness.Result, error) {
				return harness.Decide(context.Background(), impl, cluster(), pod(), cfg, 0, vrzNow)
			}
			want, err := decide(upstream.Impl{ListOrderTie: true})
			if err != nil {
				t.Fatal(err)
			}
			var cands []string
			for _, c := range want.Decision.Candidates {
				cands = append(cands, c.Node)
			}
			t.Logf("upstream: candidates %v, %s %q victims %v", cands, want.Decision.Status, want.Decision.Message, want.Decision.Victims)
			for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
				got, err := decide(impl)
				if err != nil {
					t.Fatalf("%s: %v", impl.Name(), err)
				}
				if diff := cmp.Diff(want, got, ignoreCalls); diff != "" {
					t.Errorf("%s differs (-upstream +%s):\n%s", impl.Name(), impl.Name(), diff)
				}
			}
		})
	}
}

func ptrString(s string) *string { return &s }
