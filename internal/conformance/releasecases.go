package conformance

import (
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/preemptbench/preemptbench/preempt"
)

// The problems on which v1.36.3 and v1.37.2 decide differently, one per
// behaviour switch (preempt.Switches), for the tests of `compare upgrade`
// and of the cross-release check. now is the decision's clock; pods
// started before it.

func releaseNode(name, cpu string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("32Gi"), v1.ResourcePods: resource.MustParse("110")}}}
}

func releasePod(ns, name, node string, prio int32, cpu string, labels map[string]string, start time.Time) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec: v1.PodSpec{NodeName: node, Priority: &prio, Containers: []v1.Container{{Name: "c", Image: "pause",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	if node != "" {
		st := metav1.NewTime(start)
		p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &st}
	}
	return p
}

// OverlappingPDBs is docs/upstream-findings.md's cluster (switch
// PDBStopAtFirstViolation): two full nodes of 2 cpu; PDB a (app=a) allows
// no disruption, PDB b (team=x) one. v1.36.3 preempts on n2, v1.37.2 on
// n1.
func OverlappingPDBs(now time.Time) (*preempt.Cluster, *v1.Pod) {
	pdb := func(name, key, value string, allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-pdb-" + name)},
			Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	}
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "2"), releaseNode("n2", "2")},
		Pods: []*v1.Pod{
			releasePod("default", "p1", "n1", 0, "1", map[string]string{"app": "a", "team": "x"}, now.Add(-50*time.Minute)),
			releasePod("default", "p2", "n1", 0, "1", map[string]string{"team": "x"}, now.Add(-50*time.Minute)),
			releasePod("default", "r1", "n2", 0, "1", map[string]string{"app": "a"}, now.Add(-60*time.Minute)),
			releasePod("default", "r2", "n2", 0, "1", nil, now.Add(-60*time.Minute)),
		},
		PDBs: []*policyv1.PodDisruptionBudget{pdb("a", "app", "a", 0), pdb("b", "team", "x", 1)},
	}, releasePod("default", "preemptor", "", 10, "2", nil, now)
}

// NamespaceLess is issue 18's namespace-less dump (switch
// NamespaceSelectorResolved): the preemptor's anti-affinity has a NotIn
// namespaceSelector and the cluster holds no Namespace object. v1.36.3
// preempts other/a, v1.37.2 schedules the pod.
func NamespaceLess(now time.Time) (*preempt.Cluster, *v1.Pod) {
	c := &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "4")},
		Pods:  []*v1.Pod{releasePod("other", "a", "n1", 0, "1", map[string]string{"app": "a"}, now.Add(-time.Hour))},
	}
	p := releasePod("default", "preemptor", "", 10, "1", nil, now)
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}},
		TopologyKey:       "kubernetes.io/hostname",
	}}}}
	return c, p
}

// OnePodFull is a 1-cpu node full with one pod of priority 0 and a 1-cpu
// preemptor (switch SuccessMessage: only the message changes).
func OnePodFull(now time.Time) (*preempt.Cluster, *v1.Pod) {
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "1")},
		Pods:  []*v1.Pod{releasePod("default", "low", "n1", 0, "1", nil, now.Add(-time.Hour))},
	}, releasePod("default", "preemptor", "", 10, "1", nil, now)
}

// ResizedInPlace holds a pod resized in place, its two containers in
// opposite directions (spec 100m and 300m, actuated 300m and 100m), and a
// 300m pod on a 1-cpu node (switch ResizedPodRequests): v0.36's helpers
// count the resized pod 600m, v0.37's 400m, so a 300m preemptor fits in
// v1.37.2 and preempts the 300m pod in v1.36.3.
func ResizedInPlace(now time.Time) (*preempt.Cluster, *v1.Pod) {
	resized := releasePod("default", "resized", "n1", 0, "100m", nil, now.Add(-2*time.Hour))
	resized.Spec.Containers = append(resized.Spec.Containers, *resized.Spec.Containers[0].DeepCopy())
	resized.Spec.Containers[1].Name = "d"
	resized.Spec.Containers[1].Resources.Requests[v1.ResourceCPU] = resource.MustParse("300m")
	resized.Status.ContainerStatuses = []v1.ContainerStatus{
		{Name: "c", Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("300m")}}},
		{Name: "d", Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}},
	}
	return &preempt.Cluster{
		Nodes: []*v1.Node{releaseNode("n1", "1")},
		Pods:  []*v1.Pod{resized, releasePod("default", "other", "n1", 0, "300m", nil, now.Add(-time.Hour))},
	}, releasePod("default", "preemptor", "", 10, "300m", nil, now)
}
