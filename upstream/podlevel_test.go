package upstream

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/preemptbench/preemptbench/preempt"
)

// bigPod has pod-level memory requests, an overhead, and a container that
// requests nothing.
func bigPod() *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{
		Resources:  &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1.5Gi")}},
		Overhead:   v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")},
		Containers: []v1.Container{{Name: "c"}},
	}}
}

// TestUpstreamPodLevelRequestsWithOverhead shows upstream's own behaviour
// (docs/divergences.md 12): component-helpers' PodRequests grows a pod's
// spec by its overhead on each call, and kube-scheduler's
// PodInfo.CalculateResource, which its cache runs for every pod it adds,
// calls it twice for such a pod and counts the overhead twice.
// preempt.PlacedPodRequests gives the same count without touching the pod.
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
	if got := mi(preempt.PlacedPodRequests(p)[v1.ResourceMemory]); got != 1536+2*64 {
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
	if got, want := pi.CalculateResource().Resource.GetMemory()>>20, mi(preempt.PlacedPodRequests(p)[v1.ResourceMemory]); got != want || got != 1536+64 {
		t.Errorf("container requests set: upstream %dMi, PlacedPodRequests %dMi, want 1600Mi", got, want)
	}
}
