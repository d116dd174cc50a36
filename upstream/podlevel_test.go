package upstream

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/internal/testobj"
)

// bigPod has pod-level memory requests, an overhead, and a container that
// requests nothing.
func bigPod() *v1.Pod {
	return testobj.MakePod().Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1.5Gi")}}).
		Overhead(v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}).Container("c").Obj()
}

// TestUpstreamPodLevelRequestsWithOverhead shows upstream's own behaviour
// (docs/divergences.md 12): component-helpers' PodRequests grows a pod's
// spec by its overhead on each call, and kube-scheduler's
// PodInfo.CalculateResource, which its cache runs for every pod it adds,
// calls it twice for such a pod and counts the overhead twice.
// podinfo.PlacedPodRequests gives the same count without touching the pod.
func TestUpstreamPodLevelRequestsWithOverhead(t *testing.T) {
	mi := func(q resource.Quantity) int64 { return q.Value() >> 20 }

	p := bigPod()
	resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	if got := mi(p.Spec.Resources.Requests[v1.ResourceMemory]); got != 1536+2*64 {
		t.Errorf("after two PodRequests calls the pod's own spec requests %dMi, want 1664Mi (upstream's in-place add)", got)
	}

	p = bigPod()
	pi, err := framework.NewPodInfo(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := pi.CalculateResource().Resource.GetMemory() >> 20; got != 1536+2*64 {
		t.Errorf("PodInfo.CalculateResource counts %dMi, want 1664Mi (overhead twice)", got)
	}

	p = bigPod()
	if got := mi(podinfo.PlacedPodRequests(p)[v1.ResourceMemory]); got != 1536+2*64 {
		t.Errorf("PlacedPodRequests = %dMi, want upstream's 1664Mi", got)
	}
	if got := mi(p.Spec.Resources.Requests[v1.ResourceMemory]); got != 1536 {
		t.Errorf("PlacedPodRequests changed the pod: %dMi, want 1536Mi", got)
	}
	// With a container request for cpu and memory, CalculateResource calls
	// PodRequests once: the overhead counts once.
	p = bigPod()
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("1Gi")}
	pi, _ = framework.NewPodInfo(p.DeepCopy())
	if got, want := pi.CalculateResource().Resource.GetMemory()>>20, mi(podinfo.PlacedPodRequests(p)[v1.ResourceMemory]); got != want || got != 1536+64 {
		t.Errorf("container requests set: upstream %dMi, PlacedPodRequests %dMi, want 1600Mi", got, want)
	}
}

// PlacedPodRequests makes upstream's second PodRequests call only for pods
// with pod-level requests, where it can change the first call's result.
// Without them its count must still be upstream's CalculateResource, on
// pods whose quantities are in both of Quantity's forms (exact decimals and
// inf.Dec), with overheads, init containers, sidecars and containers
// without requests.
func TestPlacedPodRequestsWithoutPodLevel(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	q := resource.MustParse
	dec := func(s string) resource.Quantity { // an inf.Dec-backed quantity
		v := q(s)
		v.AsDec()
		return v
	}
	rl := func(cpu, mem resource.Quantity) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}
	}
	pods := []*v1.Pod{
		{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}},
		{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Requests: rl(q("100m"), q("1Gi"))}}, {Name: "b"}},
			Overhead: rl(q("10m"), q("64Mi"))}},
		{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Requests: rl(dec("1.5"), dec("1000000000001"))}},
			{Name: "b", Resources: v1.ResourceRequirements{Requests: rl(dec("0.25"), dec("12345678"))}}},
			Overhead: rl(dec("0.1"), dec("1000"))}},
		{Spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i", Resources: v1.ResourceRequirements{Requests: rl(dec("3"), q("2Gi"))}},
			{Name: "s", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: rl(dec("0.5"), dec("100"))}}},
			Containers: []v1.Container{{Name: "a", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: dec("7")}}}},
			Overhead:   v1.ResourceList{v1.ResourceCPU: dec("0.001")}}},
	}
	for i, p := range pods {
		before := p.DeepCopy()
		got := podinfo.PlacedPodRequests(p)
		pi, err := framework.NewPodInfo(p.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		want := pi.CalculateResource().Resource
		if c, m := got[v1.ResourceCPU], got[v1.ResourceMemory]; c.MilliValue() != want.GetMilliCPU() || m.Value() != want.GetMemory() {
			t.Errorf("pod #%d: PlacedPodRequests cpu %s memory %s, upstream %dm %d", i, c.String(), m.String(), want.GetMilliCPU(), want.GetMemory())
		}
		// A second count is the same, and the pod is unchanged.
		again := podinfo.PlacedPodRequests(p)
		if c1, c2 := got[v1.ResourceCPU], again[v1.ResourceCPU]; c1.Cmp(c2) != 0 {
			t.Errorf("pod #%d: second count cpu %s, first %s", i, c2.String(), c1.String())
		}
		if !equality.Semantic.DeepEqual(before, p) {
			t.Errorf("pod #%d changed by PlacedPodRequests", i)
		}
	}
}
