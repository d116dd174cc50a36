package optimized

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/podinfo"
)

// TestPlacedIsIncoming: the gang path takes a member's placed requests
// from its PreFilter's when placedIsIncoming says they are equal; here
// they are, for pods with init containers, a sidecar, overhead and
// pod-level requests, and a status that records a resize is not taken.
func TestPlacedIsIncoming(t *testing.T) {
	rl := func(cpu, mem string) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}
	}
	ctr := func(name, cpu, mem string) v1.Container {
		return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: rl(cpu, mem)}}
	}
	sidecar := ctr("side", "300m", "64Mi")
	sidecar.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
	pods := map[string]*v1.Pod{
		"plain":     {Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", "100m", "1Gi"), ctr("b", "200m", "1Mi")}}},
		"init":      {Spec: v1.PodSpec{InitContainers: []v1.Container{ctr("i", "2", "2Gi"), sidecar}, Containers: []v1.Container{ctr("a", "100m", "1Gi")}}},
		"overhead":  {Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", "100m", "1Gi")}, Overhead: rl("50m", "10Mi")}},
		"pod-level": {Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", "100m", "1Gi")}, Resources: &v1.ResourceRequirements{Requests: rl("1", "2Gi")}}},
	}
	for name, p := range pods {
		if !placedIsIncoming(p) {
			t.Errorf("%s: placedIsIncoming false for a pod without status", name)
		}
		if placed, incoming := podinfo.PlacedPodRequests(p), podinfo.IncomingPodRequests(p); !equality.Semantic.DeepEqual(placed, incoming) {
			t.Errorf("%s: placed %v, incoming %v", name, placed, incoming)
		}
	}
	resized := pods["plain"].DeepCopy()
	resized.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "a", AllocatedResources: rl("500m", "1Gi")}}
	if placedIsIncoming(resized) {
		t.Error("placedIsIncoming true for a pod whose status records allocated resources")
	}
}
