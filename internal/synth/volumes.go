package synth

import (
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/preemptbench/preemptbench/preempt"
)

// The namespaces of PreemptionPVs' createPods ops (namespace-<op index>:
// createNodes is op 0): the low-priority pods in namespace-1, the measured
// pods, their claims and (in their names) their volumes in namespace-2.
const (
	pvsLowNamespace      = "namespace-1"
	pvsMeasuredNamespace = "namespace-2"
)

func init() {
	// PreemptionPVs' 5Nodes and 1000Nodes. Its 5000Nodes is commented out
	// upstream ("This test case always seems to fail",
	// kubernetes/kubernetes#108308: on a real machine the client ran out
	// of ports at its QPS, and with a lower QPS the scheduler took about a
	// minute a pod).
	upstreamSizes["pvs"] = []int{5, 1000}
}

// buildPVs is scheduler_perf's PreemptionPVs at upstream v1.37.2
// (test/integration/scheduler_perf/volumes/performance-config.yaml), the
// one workload of volumes/ that preempts (its others, and every workload
// of dra/, create pods without a priority, all 0: none can preempt
// another). createNodes has no node template: scheduler_perf's base node
// (makeBaseNode: 4 cpu, 32Gi and 110 pods as capacity and allocatable,
// Ready; the node preparer adds the kubernetes.io/hostname label), node-i
// here for its generated name. initPods, 4 a node, are
// templates/pod-low-priority.yaml: 900m/500Mi without a priority (0), in
// namespace-1; the scheduler puts four on every node, a fifth of 900m not
// fitting in 4 cpu (pod-(4i+j) on node i here, started at seeded times as
// in basic). measurePods, one a node, are templates/pod-high-priority.yaml
// (3000m/500Mi at priority 10) in namespace-2, each with a claim and a
// volume of its own (pvsMeasured): each evicts three of a node's four
// pods and reprieves one, as basic-v1.36's preemptor, and no node takes a
// second. The scenario's preemptor is measured pod 0, its claim and volume
// in the cluster; Scenario.Preemptors adds the others' for a stream.
func buildPVs(b *B, nodes int) {
	b.measurePods = nodes
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 32*gi, 110, nil)
		for j := range 4 {
			b.Pod(PodSpec{Name: fmt.Sprintf("pod-%d", 4*i+j), Namespace: pvsLowNamespace, Node: n.Name, Priority: 0, MilliCPU: 900, Memory: 500 * mi,
				Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	m := pvsMeasured(0)
	b.PVC(m.pvcs[0])
	b.PV(m.pvs[0])
	b.preemptor = m.pod
}

// measuredObjects are the shapes whose measured pods each bring objects
// of their own, by the function that makes measured pod i and them.
var measuredObjects = map[string]func(i int) measuredPod{"pvs": pvsMeasured}

// measuredPod is a measured pod and the objects it brings.
type measuredPod struct {
	pod  *v1.Pod
	pvcs []*v1.PersistentVolumeClaim
	pvs  []*v1.PersistentVolume
}

// pvsMeasured is PreemptionPVs' measured pod i as scheduler_perf's
// CreatePodWithPersistentVolume (runners.go) makes it with bindVolume
// set: the claim pvc-i of templates/pvc.yaml (annotated
// pv.kubernetes.io/bind-completed, ReadOnlyMany, 1Gi) in the pod's
// namespace; the volume of templates/pv-aws.yaml (ReadOnlyMany, 1Gi,
// Retain) that getCustomVolumeFactory (executor.go) names vol-i, an
// in-tree AWS EBS volume of that volume ID, renamed namespace-2-vol-i to
// be unique across namespaces; the two bound to each other (the volume's
// claimRef, the claim's volumeName) with statuses Bound; and the pod,
// pod-high-priority-i here for its generated name, with one volume "vol"
// of the claim.
func pvsMeasured(i int) measuredPod {
	ns := pvsMeasuredNamespace
	claim := fmt.Sprintf("pvc-%d", i)
	volumeID := fmt.Sprintf("vol-%d", i)
	pvName := ns + "-" + volumeID
	storage := v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: ns, UID: types.UID("pvc-uid-" + ns + "-" + claim),
			Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "true"}},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadOnlyMany},
			Resources: v1.VolumeResourceRequirements{Requests: storage}, VolumeName: pvName},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound},
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, UID: types.UID("pv-uid-" + pvName)},
		Spec: v1.PersistentVolumeSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadOnlyMany},
			Capacity:    storage.DeepCopy(),
			PersistentVolumeSource: v1.PersistentVolumeSource{
				AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: volumeID}},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: claim, APIVersion: "v1"},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	pod := NewPod(PodSpec{Name: fmt.Sprintf("pod-high-priority-%d", i), Namespace: ns, Priority: 10, MilliCPU: 3000, Memory: 500 * mi, Claim: claim})
	return measuredPod{pod: pod, pvcs: []*v1.PersistentVolumeClaim{pvc}, pvs: []*v1.PersistentVolume{pv}}
}

// Preemptors are the first k measured pods of s's stream, in order, and
// the cluster the stream starts from. They are copies of Pod (named
// <name>-0, <name>-1, ..., their UIDs likewise) on Cluster, unless the
// shape's measured pods each bring objects of their own, as
// scheduler_perf's createPods with a claim template makes them (pvs: a
// claim and its volume each): then they are the shape's measured pods 0
// to k-1, Pod being the first, and the cluster is a copy of Cluster, which
// holds pod 0's objects, with those of pods 1 to k-1 added. Cluster is not
// modified.
func (s *Scenario) Preemptors(k int) (*preempt.Cluster, []*v1.Pod) {
	measured, own := measuredObjects[s.Shape]
	var pods []*v1.Pod
	if !own {
		for i := range k {
			p := s.Pod.DeepCopy()
			p.Name = fmt.Sprintf("%s-%d", p.Name, i)
			p.UID = types.UID(fmt.Sprintf("%s-%d", p.UID, i))
			pods = append(pods, p)
		}
		return s.Cluster, pods
	}
	var c *preempt.Cluster
	if s.Cluster != nil {
		cp := *s.Cluster
		cp.PVCs, cp.PVs = slices.Clip(cp.PVCs), slices.Clip(cp.PVs)
		c = &cp
	}
	for i := range k {
		m := measured(i)
		pods = append(pods, m.pod)
		if i > 0 && c != nil {
			c.PVCs = append(c.PVCs, m.pvcs...)
			c.PVs = append(c.PVs, m.pvs...)
		}
	}
	return c, pods
}
