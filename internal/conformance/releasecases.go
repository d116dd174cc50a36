package conformance

import (
	"time"

	"k8s.io/utils/ptr"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	csilibplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// The problems on which two adjacent releases decide differently, one per
// behaviour switch (preempt.Switches), for the tests of `compare upgrade`
// and of the cross-release check. now is the decision's clock; pods
// started before it.

// releaseNode is a node of cpu, 32Gi and 110 pods, labelled with its
// hostname.
func releaseNode(name, cpu string) *v1.Node {
	return testobj.MakeNode().Name(name).Hostname().Allocatable(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"}).Obj()
}

// releasePod is a pod of uid uid-<name> with one container c of image
// pause requesting cpu and 1Gi, bound to node ("" for none); the callers
// make a bound one Running.
func releasePod(ns, name, node string, prio int32, cpu string) *testobj.PodWrapper {
	return testobj.MakePod().Namespace(ns).Name(name).UID("uid-" + name).Node(node).Priority(prio).Container("c").Image("pause").CPU(cpu).Memory("1Gi")
}

// OverlappingPDBs is docs/upstream-findings.md's cluster (switch
// PDBStopAtFirstViolation): two full nodes of 2 cpu; PDB a (app=a) allows
// no disruption, PDB b (team=x) one. v1.36.3 preempts on n2, v1.37.2 on
// n1.
func OverlappingPDBs(now time.Time) (*preempt.Cluster, *v1.Pod) {
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "2"), releaseNode("n2", "2")},
		Pods: []*v1.Pod{
			releasePod("default", "p1", "n1", 0, "1").Label("app", "a").Label("team", "x").Phase(v1.PodRunning).StartTime(now.Add(-50 * time.Minute)).Obj(),
			releasePod("default", "p2", "n1", 0, "1").Label("team", "x").Phase(v1.PodRunning).StartTime(now.Add(-50 * time.Minute)).Obj(),
			releasePod("default", "r1", "n2", 0, "1").Label("app", "a").Phase(v1.PodRunning).StartTime(now.Add(-60 * time.Minute)).Obj(),
			releasePod("default", "r2", "n2", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-60 * time.Minute)).Obj(),
		},
		PDBs: []*policyv1.PodDisruptionBudget{
			testobj.MakePDB().Namespace("default").Name("a").UID("uid-pdb-a").MatchLabel("app", "a").DisruptionsAllowed(0).Obj(),
			testobj.MakePDB().Namespace("default").Name("b").UID("uid-pdb-b").MatchLabel("team", "x").DisruptionsAllowed(1).Obj(),
		},
	}, releasePod("default", "preemptor", "", 10, "2").Obj()
}

// NamespaceLess is issue 18's namespace-less dump (switch
// NamespaceSelectorResolved): the preemptor's anti-affinity has a NotIn
// namespaceSelector and the cluster holds no Namespace object. v1.36.3
// preempts other/a, v1.37.2 schedules the pod.
func NamespaceLess(now time.Time) (*preempt.Cluster, *v1.Pod) {
	c := &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "4")},
		Pods:  []*v1.Pod{releasePod("other", "a", "n1", 0, "1").Label("app", "a").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()},
	}
	p := releasePod("default", "preemptor", "", 10, "1").RequiredPodAntiAffinityTerm(v1.PodAffinityTerm{
		LabelSelector:     testobj.MakeLabelSelector().Label("app", "a").Obj(),
		NamespaceSelector: testobj.MakeLabelSelector().NotIn("team", []string{"x"}).Obj(),
		TopologyKey:       "kubernetes.io/hostname",
	}).Obj()
	return c, p
}

// OnePodFull is a 1-cpu node full with one pod of priority 0 and a 1-cpu
// preemptor (switch SuccessMessage: only the message changes).
func OnePodFull(now time.Time) (*preempt.Cluster, *v1.Pod) {
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "1")},
		Pods:  []*v1.Pod{releasePod("default", "low", "n1", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()},
	}, releasePod("default", "preemptor", "", 10, "1").Obj()
}

// ResizedInPlace holds a pod resized in place, its two containers in
// opposite directions (spec 100m and 300m, actuated 300m and 100m), and a
// 300m pod on a 1-cpu node (switch ResizedPodRequests): v0.36's helpers
// count the resized pod 600m, v0.37's 400m, so a 300m preemptor fits in
// v1.37.2 and preempts the 300m pod in v1.36.3.
func ResizedInPlace(now time.Time) (*preempt.Cluster, *v1.Pod) {
	resized := releasePod("default", "resized", "n1", 0, "100m").Container("d").Image("pause").CPU("300m").Memory("1Gi").
		Phase(v1.PodRunning).StartTime(now.Add(-2*time.Hour)).ActuatedCPU("c", "300m").ActuatedCPU("d", "100m").Obj()
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "1")},
		Pods:  []*v1.Pod{resized, releasePod("default", "other", "n1", 0, "300m").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()},
	}, releasePod("default", "preemptor", "", 10, "300m").Obj()
}

// NodeDeclared is a 1-cpu node full with one pod of priority 0 and a
// 1-cpu preemptor with hostNetwork and hostUsers false, a node-declared
// feature the node does not declare (switch NodeDeclaredFeatures):
// v1.35.4 preempts default/low, v1.36.3 finds no node for it.
func NodeDeclared(now time.Time) (*preempt.Cluster, *v1.Pod) {
	p := releasePod("default", "preemptor", "", 10, "1").Obj()
	p.Spec.HostNetwork, p.Spec.HostUsers = true, ptr.To(false)
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "1")},
		Pods:  []*v1.Pod{releasePod("default", "low", "n1", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()},
	}, p
}

// PodLevelResized holds, on a 3-cpu node, a pod of priority 20 with a
// pod-level request of 1 cpu actuated at 2 (status.resources) and a
// 1-cpu pod of priority 0 (switch PodLevelResizeRequests): v1.36.3 counts
// the resized pod 2 cpu, so a 1-cpu preemptor preempts default/low;
// v1.35.4 counts 1 cpu, and it fits n1.
func PodLevelResized(now time.Time) (*preempt.Cluster, *v1.Pod) {
	resized := testobj.MakePod().Namespace("default").Name("resized").UID("uid-resized").Node("n1").Priority(20).Container("c").Image("pause").
		Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}).
		Phase(v1.PodRunning).StartTime(now.Add(-2 * time.Hour)).PodActuatedCPU("2").Obj()
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "3")},
		Pods:  []*v1.Pod{resized, releasePod("default", "low", "n1", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()},
	}, releasePod("default", "preemptor", "", 10, "1").Obj()
}

// AsyncVictimFault is a 2-cpu node full with two pods of priority 0, p1
// started first, and a 2-cpu preemptor (switch AsyncSkipsLastVictim,
// with AsyncVictimFaults): both are victims, p2 the last; p1's deletion
// fails, and the asynchronous executor of v1.35.4 still preempts p2,
// v1.36.3's leaves it.
func AsyncVictimFault(now time.Time) (*preempt.Cluster, *v1.Pod) {
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "2")},
		Pods: []*v1.Pod{
			releasePod("default", "p1", "n1", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-2 * time.Hour)).Obj(),
			releasePod("default", "p2", "n1", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj(),
		},
	}, releasePod("default", "preemptor", "", 10, "2").Obj()
}

// AsyncVictimFaults are AsyncVictimFault's API faults: p1's deletion.
var AsyncVictimFaults = []harness.Fault{{Verb: "delete", Namespace: "default", Name: "p1"}}

// MissingCSIDriver is a 2-cpu node full with one pod of priority 0 and a
// 1-cpu preemptor with a claim bound to a volume of CSIDriverName, whose
// CSIDriver sets preventPodSchedulingIfMissing, and a CSINode for n1
// without that driver (switch MissingCSIDriver): v1.36.3 (VolumeLimitScaling
// off) preempts default/low; v1.37.2's NodeVolumeLimits fails n1 whatever
// it removes, and no pod is preempted.
func MissingCSIDriver(now time.Time) (*preempt.Cluster, *v1.Pod) {
	p := releasePod("default", "preemptor", "", 10, "1").Obj()
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "2")},
		Pods:  []*v1.Pod{releasePod("default", "low", "n1", 0, "2").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()},
		PVCs:  []*v1.PersistentVolumeClaim{genPVC("data", "csi", "pv-data", v1.ReadWriteOnce)},
		PVs:   []*v1.PersistentVolume{genPV("pv-data", "csi", "data", v1.ReadWriteOnce)},
		StorageClasses: []*storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "csi", UID: "uid-sc-csi"}, Provisioner: CSIDriverName,
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)}},
		CSINodes:   []*storagev1.CSINode{{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-csinode-n1"}}},
		CSIDrivers: []*storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: CSIDriverName, UID: "uid-csidriver"}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: ptr.To(true)}}},
	}, p
}

// PortworxInline is a 2-cpu node whose CSINode gives Portworx's CSI
// driver an attach limit of 1 without listing the in-tree plugin in its
// migrated-plugins annotation, holding a 1-cpu pod of priority 0 with an
// inline Portworx volume, and a 1-cpu preemptor with another (switch
// PortworxMigrated): v1.36.3 counts both volumes under the driver, so the
// preemptor preempts default/low; v1.35.4 counts neither, and it fits n1.
func PortworxInline(now time.Time) (*preempt.Cluster, *v1.Pod) {
	px := func(id string) []v1.Volume {
		return []v1.Volume{{Name: "px", VolumeSource: v1.VolumeSource{PortworxVolume: &v1.PortworxVolumeSource{VolumeID: id}}}}
	}
	low := releasePod("default", "low", "n1", 0, "1").Phase(v1.PodRunning).StartTime(now.Add(-time.Hour)).Obj()
	low.Spec.Volumes = px("vol-a")
	p := releasePod("default", "preemptor", "", 10, "1").Obj()
	p.Spec.Volumes = px("vol-b")
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "2")},
		Pods:  []*v1.Pod{low},
		CSINodes: []*storagev1.CSINode{{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "uid-csinode-n1"},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: csilibplugins.PortworxDriverName, NodeID: "n1", Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](1)}}}}}},
	}, p
}
