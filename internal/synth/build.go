// Package synth builds the synthetic clusters preemptbench runs on:
// seeded, deterministic shapes at any node count (scheduler_perf's
// preemption workloads among them), with their preemptors or gangs, and
// writes them as the YAML kubectl would. Clusters dumped from a real one
// are package loader's.
package synth

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/preemptbench/preemptbench/preempt"
)

// Scenario is a cluster, a preemptor and the clock to decide with.
type Scenario struct {
	Shape   string
	Cluster *preempt.Cluster
	Pod     *v1.Pod
	Now     time.Time
	// FeatureGates are the gates the shape's scheduler_perf workload sets
	// (its featureGates) for the preemptors to be decided as upstream
	// measures them, nil for a shape that needs none. A benchmark or a
	// stream runs with them, under any gates given explicitly.
	FeatureGates map[string]bool
	// MeasurePods is how many preemptors the shape's scheduler_perf
	// workload measures at this size (its measurePods), 0 for a shape
	// without one (a stream then sends one preemptor per node).
	MeasurePods int
	// Gangs are the preemptor gangs of a gang shape (BuildGangs), in
	// creation order; nil for the other shapes, whose preemptor is Pod.
	Gangs []Gang
}

// Base is the start time of the oldest pod of every built scenario; Now is
// one hour later.
func Base() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

type builder func(b *B, nodes int)

var shapes = map[string]builder{
	"basic":           buildBasic,
	"basic-v1.36":     buildBasicV136,
	"mixed":           buildMixed,
	"pdb":             buildPDB,
	"heterogeneous":   buildHeterogeneous,
	"nominated":       buildNominated,
	"hostports":       buildHostPorts,
	"ties":            buildTies,
	"affinity":        buildAffinity,
	"spread":          buildSpread,
	"podgroup-none":   buildPodGroupNone,
	"podgroup-single": buildPodGroupSingle,
	"podgroup-all":    buildPodGroupAll,
	"pvs":             buildPVs,
}

// Shapes lists the shape names in order.
func Shapes() []string {
	out := make([]string, 0, len(shapes))
	for s := range shapes {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// MaxNodes bounds a built scenario: at four pods a node, 100000 nodes take
// a few GiB to build and write.
const MaxNodes = 100000

// Check says whether Build makes the named shape with that many nodes.
func Check(shape string, nodes int) error {
	if _, ok := shapes[shape]; !ok {
		return fmt.Errorf("unknown shape %q (known: %s)", shape, strings.Join(Shapes(), ", "))
	}
	if nodes < 0 {
		return fmt.Errorf("shape %s: negative node count %d", shape, nodes)
	}
	if nodes > MaxNodes {
		return fmt.Errorf("shape %s: %d nodes, more than the %d a scenario may have (kube-scheduler is tested up to 5000 nodes, the project up to 65000)", shape, nodes, MaxNodes)
	}
	return nil
}

// Build makes the named shape with the given number of nodes; the same
// arguments always give the same scenario.
func Build(shape string, nodes int, seed uint64) (*Scenario, error) {
	if err := Check(shape, nodes); err != nil {
		return nil, err
	}
	b := newB(seed)
	shapes[shape](b, nodes)
	return b.scenario(shape), nil
}

// scenario is what b built as the named shape.
func (b *B) scenario(shape string) *Scenario {
	return &Scenario{Shape: shape, Cluster: b.cluster, Pod: b.preemptor, Now: Base().Add(time.Hour), FeatureGates: b.gates, MeasurePods: b.measurePods}
}

func newB(seed uint64) *B {
	return &B{rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), cluster: &preempt.Cluster{}}
}

// objectKind is a kind of the objects a builder adds.
type objectKind int

const (
	kindNode objectKind = iota
	kindPod
	kindPDB
	kindPodGroup
	kindPVC
	kindPV
	numKinds
)

// emitter hands a builder's objects of one kind to a function as they
// are built, instead of keeping them: see WriteCluster. An object is
// handed over when the next of its kind is added, or when the build ends,
// so a builder may still change the object it was just given (the spread
// shape labels its node with a zone).
type emitter struct {
	kind    objectKind
	fn      func(obj any) error
	pending any
	err     error
	// seen says which kinds the builder added objects of, fn's or not.
	seen [numKinds]bool
}

func (e *emitter) add(kind objectKind, obj any) {
	e.seen[kind] = true
	if kind != e.kind {
		return
	}
	e.flush()
	e.pending = obj
}

func (e *emitter) flush() {
	if e.pending != nil && e.err == nil {
		e.err = e.fn(e.pending)
	}
	e.pending = nil
}

// buildEach builds the named shape, handing each object of kind to fn
// (nodes in order, then nothing else) and keeping none, and returns the
// scenario without its cluster and the kinds the shape has objects of.
// Check the arguments first.
func buildEach(shape string, nodes int, seed uint64, kind objectKind, fn func(obj any) error) (*Scenario, [numKinds]bool, error) {
	b := newB(seed)
	b.emit = &emitter{kind: kind, fn: fn}
	shapes[shape](b, nodes)
	b.emit.flush()
	s := b.scenario(shape)
	s.Cluster = nil
	return s, b.emit.seen, b.emit.err
}

// MustBuild is Build for arguments known to be valid.
func MustBuild(shape string, nodes int, seed uint64) *Scenario {
	s, err := Build(shape, nodes, seed)
	if err != nil {
		panic(err)
	}
	return s
}

// B accumulates a cluster.
type B struct {
	rng       *rand.Rand
	cluster   *preempt.Cluster
	preemptor *v1.Pod
	pods      int
	// emit, when set, receives the objects instead of cluster.
	emit *emitter
	// gates and measurePods are the Scenario's FeatureGates and
	// MeasurePods.
	gates       map[string]bool
	measurePods int
	// gangs are the Scenario's Gangs.
	gangs []Gang
}

// Node adds a node with cpu (millicores), memory (bytes) and a pod limit.
func (b *B) Node(name string, milliCPU, memory, pods int64, extra v1.ResourceList) *v1.Node {
	alloc := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(memory, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	for k, v := range extra {
		alloc[k] = v
	}
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-uid-" + name), Labels: map[string]string{v1.LabelHostname: name}},
		Status:     v1.NodeStatus{Capacity: alloc, Allocatable: alloc},
	}
	if b.emit != nil {
		b.emit.add(kindNode, n)
		return n
	}
	b.cluster.Nodes = append(b.cluster.Nodes, n)
	return n
}

// PodSpec describes a pod to add.
type PodSpec struct {
	Name      string
	Namespace string
	Node      string // bound to
	Nominated string // nominated to (unbound)
	Priority  int32
	MilliCPU  int64
	Memory    int64
	Extra     v1.ResourceList
	HostPorts []int32
	Labels    map[string]string
	// AntiAffinityApp, when set, gives the pod required anti-affinity
	// against pods labelled app=AntiAffinityApp on the same host.
	AntiAffinityApp string
	// SpreadApp, when set, gives the pod a DoNotSchedule zone spread
	// constraint (maxSkew 1) over pods labelled app=SpreadApp.
	SpreadApp string
	// Age is how long before Now the pod started; a negative age leaves
	// status.startTime unset.
	Age time.Duration
	// PodGroup, when set, makes the pod a member of that PodGroup (in its
	// namespace) through spec.schedulingGroup.podGroupName.
	PodGroup string
	// Claim, when set, gives the pod one volume, "vol", of that
	// PersistentVolumeClaim (in its namespace), as scheduler_perf's
	// CreatePodWithPersistentVolume sets spec.volumes.
	Claim string
}

// NewPod makes a pod from s.
func NewPod(s PodSpec) *v1.Pod {
	if s.Namespace == "" {
		s.Namespace = "default"
	}
	req := v1.ResourceList{}
	if s.MilliCPU > 0 {
		req[v1.ResourceCPU] = *resource.NewMilliQuantity(s.MilliCPU, resource.DecimalSI)
	}
	if s.Memory > 0 {
		req[v1.ResourceMemory] = *resource.NewQuantity(s.Memory, resource.BinarySI)
	}
	for k, v := range s.Extra {
		req[k] = v
	}
	ctr := v1.Container{Name: "c", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: req}}
	for _, port := range s.HostPorts {
		ctr.Ports = append(ctr.Ports, v1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: v1.ProtocolTCP})
	}
	prio := s.Priority
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: types.UID("uid-" + s.Namespace + "-" + s.Name), Labels: s.Labels},
		Spec: v1.PodSpec{
			NodeName:      s.Node,
			Priority:      &prio,
			SchedulerName: v1.DefaultSchedulerName,
			Containers:    []v1.Container{ctr},
		},
		Status: v1.PodStatus{NominatedNodeName: s.Nominated},
	}
	if s.AntiAffinityApp != "" {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": s.AntiAffinityApp}}}}}}
	}
	if s.SpreadApp != "" {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": s.SpreadApp}}}}
	}
	if s.PodGroup != "" {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &s.PodGroup}
	}
	if s.Claim != "" {
		p.Spec.Volumes = []v1.Volume{{Name: "vol", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: s.Claim}}}}
	}
	if s.Age >= 0 {
		t := metav1.NewTime(Base().Add(time.Hour - s.Age))
		p.Status.StartTime = &t
	}
	if s.Node != "" {
		p.Status.Phase = v1.PodRunning
	} else {
		p.Status.Phase = v1.PodPending
	}
	return p
}

// Pod adds a pod; an empty name gets a generated one.
func (b *B) Pod(s PodSpec) *v1.Pod {
	if s.Name == "" {
		s.Name = fmt.Sprintf("pod-%d", b.pods)
	}
	b.pods++
	p := NewPod(s)
	if b.emit != nil {
		b.emit.add(kindPod, p)
		return p
	}
	b.cluster.Pods = append(b.cluster.Pods, p)
	return p
}

// PDB adds a policy/v1 PodDisruptionBudget selecting matchLabels.
func (b *B) PDB(name string, matchLabels map[string]string, allowed int32) *policyv1.PodDisruptionBudget {
	minAvailable := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("pdb-uid-" + name)},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: matchLabels}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
	if b.emit != nil {
		b.emit.add(kindPDB, pdb)
		return pdb
	}
	b.cluster.PDBs = append(b.cluster.PDBs, pdb)
	return pdb
}

// PVC adds a PersistentVolumeClaim.
func (b *B) PVC(pvc *v1.PersistentVolumeClaim) {
	if b.emit != nil {
		b.emit.add(kindPVC, pvc)
		return
	}
	b.cluster.PVCs = append(b.cluster.PVCs, pvc)
}

// PV adds a PersistentVolume.
func (b *B) PV(pv *v1.PersistentVolume) {
	if b.emit != nil {
		b.emit.add(kindPV, pv)
		return
	}
	b.cluster.PVs = append(b.cluster.PVs, pv)
}

// Preemptor sets the pod to schedule.
func (b *B) Preemptor(s PodSpec) {
	if s.Name == "" {
		s.Name = "preemptor"
	}
	s.Node = ""
	b.preemptor = NewPod(s)
}

func nodeName(i int) string { return fmt.Sprintf("node-%d", i) }

const (
	gi     = int64(1) << 30
	mi     = int64(1) << 20
	minute = time.Minute
)

// buildBasic is scheduler_perf's PreemptionBasic at upstream v1.37.2
// (test/integration/scheduler_perf/default_preemption): nodes of 4 cpu,
// 32Gi and 110 pods (templates/node-default.yaml), each full with 4 pods
// of priority 0 at 900m/500Mi (templates/pod-low-priority.yaml); the
// preemptor asks 3970m/500Mi at priority 9999999
// (default_preemption/templates/pod-high-priority.yaml), so it evicts all
// four pods of a node.
func buildBasic(b *B, nodes int) {
	basicNodes(b, nodes)
	b.Preemptor(PodSpec{Priority: 9999999, MilliCPU: 3970, Memory: 500 * mi})
}

// buildBasicV136 is PreemptionBasic with v1.36's preemptor template
// (3000m/500Mi at priority 10), which evicts three of a node's four pods
// and reprieves one: the shape the project measured before v1.37.2.
func buildBasicV136(b *B, nodes int) {
	basicNodes(b, nodes)
	b.Preemptor(PodSpec{Priority: 10, MilliCPU: 3000, Memory: 500 * mi})
}

// basicNodes are PreemptionBasic's nodes and low-priority pods.
func basicNodes(b *B, nodes int) {
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 32*gi, 110, nil)
		for j := range 4 {
			b.Pod(PodSpec{Name: fmt.Sprintf("low-%d-%d", i, j), Node: n.Name, Priority: 0, MilliCPU: 900, Memory: 500 * mi,
				Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
}

// buildMixed: several priority bands, some above the preemptor's, and a
// free-memory spread so nodes differ in how many victims they need.
func buildMixed(b *B, nodes int) {
	prios := []int32{-100, 0, 0, 50, 100, 1000, 2000}
	for i := range nodes {
		n := b.Node(nodeName(i), 8000, 32*gi, 110, nil)
		used := int64(0)
		for used < 7200 {
			cpu := int64(500 + b.rng.IntN(8)*250)
			if used+cpu > 8000 {
				break
			}
			used += cpu
			b.Pod(PodSpec{Node: n.Name, Priority: prios[b.rng.IntN(len(prios))], MilliCPU: cpu, Memory: int64(1+b.rng.IntN(4)) * gi,
				Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	b.Preemptor(PodSpec{Priority: 1000, MilliCPU: 3000, Memory: 2 * gi})
}

// buildPDB: every low pod belongs to an app guarded by a PDB with 0..2
// disruptions allowed, so the choice turns on PDB violations.
func buildPDB(b *B, nodes int) {
	apps := max(1, nodes/4)
	for a := range apps {
		b.PDB(fmt.Sprintf("app-%d", a), map[string]string{"app": fmt.Sprintf("app-%d", a)}, int32(b.rng.IntN(3)))
	}
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 16*gi, 110, nil)
		for range 4 {
			app := fmt.Sprintf("app-%d", b.rng.IntN(apps))
			b.Pod(PodSpec{Node: n.Name, Priority: int32(b.rng.IntN(3)), MilliCPU: 900, Memory: gi, Labels: map[string]string{"app": app},
				Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	b.Preemptor(PodSpec{Priority: 100, MilliCPU: 2000, Memory: gi})
}

// buildHeterogeneous: nodes of three sizes, some with an extended resource,
// and a preemptor that needs it; small nodes can never fit it.
func buildHeterogeneous(b *B, nodes int) {
	gpu := v1.ResourceName("example.com/gpu")
	for i := range nodes {
		var n *v1.Node
		switch i % 3 {
		case 0:
			n = b.Node(nodeName(i), 2000, 8*gi, 30, nil)
		case 1:
			n = b.Node(nodeName(i), 8000, 32*gi, 110, v1.ResourceList{gpu: *resource.NewQuantity(2, resource.DecimalSI)})
		default:
			n = b.Node(nodeName(i), 16000, 64*gi, 110, v1.ResourceList{gpu: *resource.NewQuantity(4, resource.DecimalSI)})
		}
		cpu := n.Status.Allocatable.Cpu().MilliValue()
		for used := int64(0); used+1000 <= cpu; used += 1000 {
			extra := v1.ResourceList{}
			if i%3 != 0 && b.rng.IntN(2) == 0 {
				extra[gpu] = *resource.NewQuantity(1, resource.DecimalSI)
			}
			b.Pod(PodSpec{Node: n.Name, Priority: int32(b.rng.IntN(20)), MilliCPU: 1000, Memory: gi, Extra: extra,
				Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	b.Preemptor(PodSpec{Priority: 15, MilliCPU: 4000, Memory: 4 * gi, Extra: v1.ResourceList{gpu: *resource.NewQuantity(1, resource.DecimalSI)}})
}

// buildNominated: the basic shape plus pods nominated to every other node,
// half above and half below the preemptor's priority.
func buildNominated(b *B, nodes int) {
	buildBasic(b, nodes)
	for i := 0; i < nodes; i += 2 {
		prio := int32(5)
		if (i/2)%2 == 1 {
			prio = 20
		}
		b.Pod(PodSpec{Name: fmt.Sprintf("nominated-%d", i), Nominated: nodeName(i), Priority: prio, MilliCPU: 1000, Memory: 500 * mi, Age: -1})
	}
}

// buildHostPorts: some low pods hold host port 8080, which the preemptor
// also wants; nodes without it are short of cpu instead.
func buildHostPorts(b *B, nodes int) {
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 32*gi, 110, nil)
		for j := range 3 {
			var ports []int32
			if j == 0 && b.rng.IntN(2) == 0 {
				ports = []int32{8080}
			}
			b.Pod(PodSpec{Node: n.Name, Priority: int32(b.rng.IntN(3)), MilliCPU: 1000, Memory: gi, HostPorts: ports,
				Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	b.Preemptor(PodSpec{Priority: 10, MilliCPU: 1500, Memory: gi, HostPorts: []int32{8080}})
}

// buildTies: identical nodes, identical pods, identical start times: every
// criterion of pickOneNodeForPreemption ties and the final rule decides.
func buildTies(b *B, nodes int) {
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 32*gi, 110, nil)
		for j := range 4 {
			b.Pod(PodSpec{Name: fmt.Sprintf("tie-%d-%d", i, j), Node: n.Name, Priority: 1, MilliCPU: 1000, Memory: gi, Age: 30 * minute})
		}
	}
	b.Preemptor(PodSpec{Priority: 2, MilliCPU: 1500, Memory: gi})
}

// buildAffinity: services spread one replica per host by required pod
// anti-affinity, at several priorities. Every node runs a replica of
// "web" (priority 0) and three pods of other services; the preemptor is a
// web replica too, so on every node it conflicts with the replica there
// (InterPodAffinity's costly path: every existing pod has anti-affinity).
func buildAffinity(b *B, nodes int) {
	prios := []int32{0, 5, 20}
	services := max(1, nodes/10)
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 32*gi, 110, nil)
		b.Pod(PodSpec{Name: fmt.Sprintf("web-%d", i), Node: n.Name, Priority: 0, MilliCPU: 500, Memory: 500 * mi,
			Labels: map[string]string{"app": "web"}, AntiAffinityApp: "web", Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		for j := range 3 {
			app := fmt.Sprintf("svc-%d", b.rng.IntN(services))
			b.Pod(PodSpec{Name: fmt.Sprintf("svc-%d-%d", i, j), Node: n.Name, Priority: prios[b.rng.IntN(len(prios))], MilliCPU: 1000, Memory: gi,
				Labels: map[string]string{"app": app}, AntiAffinityApp: app, Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	b.Preemptor(PodSpec{Priority: 10, MilliCPU: 1000, Memory: 500 * mi, Labels: map[string]string{"app": "web"}, AntiAffinityApp: "web"})
}

// buildSpread: nodes in three zones, full as in basic, with unevenly many
// pods of "web" per zone (4, 3 and 2 a node); the preemptor is a web pod
// with a DoNotSchedule zone spread of skew 1, so only evictions that even
// the zones out help.
func buildSpread(b *B, nodes int) {
	for i := range nodes {
		n := b.Node(nodeName(i), 4000, 32*gi, 110, nil)
		zone := i % 3
		n.Labels[v1.LabelTopologyZone] = fmt.Sprintf("zone-%d", zone)
		for j := range 4 {
			labels := map[string]string{"app": "batch"}
			if j < 4-zone {
				labels["app"] = "web"
			}
			b.Pod(PodSpec{Name: fmt.Sprintf("low-%d-%d", i, j), Node: n.Name, Priority: int32(b.rng.IntN(2)), MilliCPU: 900, Memory: 500 * mi,
				Labels: labels, Age: time.Duration(b.rng.IntN(3600)) * time.Second})
		}
	}
	b.Preemptor(PodSpec{Priority: 10, MilliCPU: 3000, Memory: 500 * mi, Labels: map[string]string{"app": "web"}, SpreadApp: "web"})
}
