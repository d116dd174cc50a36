// Package fuzz holds the generators and the properties that prove
// preemptbench's implementations agree: rapid generators of clusters and
// requests, and checks shared by property tests and `go test -fuzz` targets.
package fuzz

import (
	"fmt"
	"math"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/preempt"
)

// Base is the time every generated start time is relative to; requests use
// Now = Base + 1h.
var Base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ExtendedResource is the extended resource generated clusters use.
const ExtendedResource = v1.ResourceName("example.com/foo")

var priorities = []int32{math.MinInt32, math.MinInt32 + 1, -100, -1, 0, 0, 1, 5, 5, 10, 100, math.MaxInt32 - 1, math.MaxInt32}

// Input is one generated preemption problem.
type Input struct {
	Cluster *preempt.Cluster
	Request *preempt.Request
}

func (in Input) String() string {
	return fmt.Sprintf("%d nodes, %d pods, %d pdbs, offset %d, config %+v", len(in.Cluster.Nodes), len(in.Cluster.Pods), len(in.Cluster.PDBs), in.Request.Offset, in.Request.Config)
}

// Gen generates valid clusters of 1 to maxNodes nodes and a request on them.
func Gen(maxNodes int) *rapid.Generator[Input] {
	return rapid.Custom(func(t *rapid.T) Input {
		c, sameStart := genCluster(t, maxNodes)
		return Input{Cluster: c, Request: genRequest(t, c, sameStart)}
	})
}

// GenMany generates one cluster and several requests on it, for checking
// that an evaluator serves many decisions as well as one.
func GenMany(maxNodes, maxRequests int) *rapid.Generator[[]Input] {
	return rapid.Custom(func(t *rapid.T) []Input {
		c, sameStart := genCluster(t, maxNodes)
		var out []Input
		for range rapid.IntRange(1, maxRequests).Draw(t, "requests") {
			out = append(out, Input{Cluster: c, Request: genRequest(t, c, sameStart)})
		}
		return out
	})
}

func genCluster(t *rapid.T, maxNodes int) (*preempt.Cluster, bool) {
	c := &preempt.Cluster{}
	numNodes := rapid.IntRange(1, maxNodes).Draw(t, "nodes")
	// Node names are shuffled so that name order and creation order differ.
	perm := rapid.Permutation(intsUpTo(numNodes)).Draw(t, "nodeNames")
	for i := range numNodes {
		c.Nodes = append(c.Nodes, genNode(t, fmt.Sprintf("node-%02d", perm[i])))
	}
	// Half the clusters start every pod in the same minute with priorities 0
	// and 1 below a preemptor at 10, so that the criteria of
	// pickOneNodeForPreemption tie and the final tie-break is reached.
	sameStart := rapid.Bool().Draw(t, "sameStart")
	genPod := func(t *rapid.T, name string) *v1.Pod {
		p := genPod(t, name)
		if sameStart {
			if p.Status.StartTime != nil {
				st := metav1.NewTime(Base)
				p.Status.StartTime = &st
			}
			prio := rapid.SampledFrom([]int32{0, 0, 1}).Draw(t, "tiePriority")
			p.Spec.Priority = &prio
		}
		return p
	}
	podCount := 0
	newName := func() string { podCount++; return fmt.Sprintf("p%d", podCount) }
	for _, n := range c.Nodes {
		for range rapid.IntRange(0, 12).Draw(t, "podsOnNode") {
			p := genPod(t, newName())
			p.Spec.NodeName = n.Name
			p.Status.Phase = v1.PodRunning
			c.Pods = append(c.Pods, p)
		}
	}
	for range rapid.IntRange(0, 5).Draw(t, "nominatedPods") {
		p := genPod(t, newName())
		p.Status.NominatedNodeName = c.Nodes[rapid.IntRange(0, numNodes-1).Draw(t, "nominatedTo")].Name
		p.Status.Phase = v1.PodPending
		p.DeletionTimestamp = nil
		c.Pods = append(c.Pods, p)
	}
	for i := range rapid.IntRange(0, 4).Draw(t, "pdbs") {
		c.PDBs = append(c.PDBs, genPDB(t, fmt.Sprintf("pdb-%d", i), podCount))
	}
	return c, sameStart
}

func genRequest(t *rapid.T, c *preempt.Cluster, sameStart bool) *preempt.Request {
	numNodes := len(c.Nodes)
	pod := genPod(t, "preemptor")
	pod.UID = "uid-preemptor"
	pod.Namespace = "default"
	pod.DeletionTimestamp = nil
	pod.Status = v1.PodStatus{Phase: v1.PodPending}
	if sameStart {
		prio := int32(10)
		pod.Spec.Priority = &prio
	}
	if rapid.IntRange(0, 9).Draw(t, "preemptNever") == 0 {
		never := v1.PreemptNever
		pod.Spec.PreemptionPolicy = &never
	}
	if rapid.Bool().Draw(t, "preemptorNominated") {
		pod.Status.NominatedNodeName = c.Nodes[rapid.IntRange(0, numNodes-1).Draw(t, "preemptorNominatedTo")].Name
	}

	filter := map[string]preempt.Code{}
	for _, n := range c.Nodes {
		if rapid.IntRange(0, 4).Draw(t, "unresolvable") == 0 {
			filter[n.Name] = preempt.UnschedulableAndUnresolvable
		} else {
			filter[n.Name] = preempt.Unschedulable
		}
	}
	cfg := preempt.Config{
		MinCandidateNodesPercentage: rapid.SampledFrom([]int32{0, 1, 5, 10, 34, 50, 100}).Draw(t, "percentage"),
		MinCandidateNodesAbsolute:   rapid.SampledFrom([]int32{0, 1, 2, 3, 5, 100}).Draw(t, "absolute"),
	}
	if cfg.MinCandidateNodesPercentage == 0 && cfg.MinCandidateNodesAbsolute == 0 {
		cfg.MinCandidateNodesAbsolute = 1
	}
	req := &preempt.Request{
		Pod:    pod,
		Filter: filter,
		Config: cfg,
		Offset: int32(rapid.IntRange(0, 2*numNodes).Draw(t, "offset")),
		Now:    Base.Add(time.Hour),
	}
	return req
}

func intsUpTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func genNode(t *rapid.T, name string) *v1.Node {
	alloc := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(rapid.SampledFrom([]int64{1000, 2000, 4000, 8000}).Draw(t, "nodeCPU"), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(rapid.SampledFrom([]int64{1, 4, 16}).Draw(t, "nodeMemGi")<<30, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(rapid.SampledFrom([]int64{4, 8, 110}).Draw(t, "nodePods"), resource.DecimalSI),
	}
	if eph := rapid.SampledFrom([]int64{0, 10, 100}).Draw(t, "nodeEphGi"); eph > 0 {
		alloc[v1.ResourceEphemeralStorage] = *resource.NewQuantity(eph<<30, resource.BinarySI)
	}
	if foo := rapid.SampledFrom([]int64{0, 0, 1, 2, 4}).Draw(t, "nodeFoo"); foo > 0 {
		alloc[ExtendedResource] = *resource.NewQuantity(foo, resource.DecimalSI)
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Status:     v1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
}

func genPod(t *rapid.T, name string) *v1.Pod {
	ns := "default"
	if rapid.IntRange(0, 7).Draw(t, "otherNamespace") == 0 {
		ns = "other"
	}
	prio := rapid.SampledFrom(priorities).Draw(t, "priority")
	req := v1.ResourceList{}
	if cpu := rapid.SampledFrom([]int64{0, 100, 250, 500, 1000, 1500, 3000}).Draw(t, "cpu"); cpu > 0 {
		req[v1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
	}
	if mem := rapid.SampledFrom([]int64{0, 256, 1024, 4096}).Draw(t, "memMi"); mem > 0 {
		req[v1.ResourceMemory] = *resource.NewQuantity(mem<<20, resource.BinarySI)
	}
	if eph := rapid.SampledFrom([]int64{0, 0, 1, 20}).Draw(t, "ephGi"); eph > 0 {
		req[v1.ResourceEphemeralStorage] = *resource.NewQuantity(eph<<30, resource.BinarySI)
	}
	if foo := rapid.SampledFrom([]int64{0, 0, 0, 1, 2}).Draw(t, "foo"); foo > 0 {
		req[ExtendedResource] = *resource.NewQuantity(foo, resource.DecimalSI)
	}
	ctr := v1.Container{Name: "c", Image: "pause", Resources: v1.ResourceRequirements{Requests: req}}
	if rapid.IntRange(0, 3).Draw(t, "hasPort") == 0 {
		ctr.Ports = []v1.ContainerPort{{
			ContainerPort: 80,
			HostPort:      rapid.SampledFrom([]int32{80, 8080}).Draw(t, "hostPort"),
			HostIP:        rapid.SampledFrom([]string{"", "", "10.0.0.1", "10.0.0.2"}).Draw(t, "hostIP"),
			Protocol:      rapid.SampledFrom([]v1.Protocol{v1.ProtocolTCP, v1.ProtocolUDP, ""}).Draw(t, "protocol"),
		}}
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + ns + "-" + name)},
		Spec:       v1.PodSpec{Priority: &prio, SchedulerName: v1.DefaultSchedulerName, Containers: []v1.Container{ctr}},
	}
	if app := rapid.SampledFrom([]string{"", "a", "b", "c"}).Draw(t, "app"); app != "" {
		p.Labels = map[string]string{"app": app}
	}
	if minutes := rapid.IntRange(-1, 10).Draw(t, "startMinute"); minutes >= 0 {
		st := metav1.NewTime(Base.Add(time.Duration(minutes) * time.Minute))
		p.Status.StartTime = &st
	}
	if rapid.IntRange(0, 9).Draw(t, "terminating") == 0 {
		dt := metav1.NewTime(Base.Add(50 * time.Minute))
		p.DeletionTimestamp = &dt
		if rapid.Bool().Draw(t, "preemptedByScheduler") {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		}
	}
	return p
}

func genPDB(t *rapid.T, name string, podCount int) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rapid.SampledFrom([]string{"default", "default", "other"}).Draw(t, "pdbNamespace"), UID: types.UID("uid-" + name)},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: int32(rapid.IntRange(0, 2).Draw(t, "allowed"))},
	}
	switch rapid.IntRange(0, 5).Draw(t, "selectorKind") {
	case 0:
		pdb.Spec.Selector = nil
	case 1:
		pdb.Spec.Selector = &metav1.LabelSelector{}
	case 2:
		pdb.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus", Values: []string{"a"}}}}
	case 3:
		pdb.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}}
	default:
		pdb.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": rapid.SampledFrom([]string{"a", "b", "c", "zzz"}).Draw(t, "pdbApp")}}
	}
	if podCount > 0 && rapid.IntRange(0, 3).Draw(t, "hasDisrupted") == 0 {
		pdb.Status.DisruptedPods = map[string]metav1.Time{fmt.Sprintf("p%d", rapid.IntRange(1, podCount).Draw(t, "disrupted")): metav1.NewTime(Base)}
	}
	return pdb
}
