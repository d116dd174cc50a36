package podinfo

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func cpuList(q string) v1.ResourceList { return v1.ResourceList{v1.ResourceCPU: resource.MustParse(q)} }

func container(name, cpu string) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: cpuList(cpu)}}
}

func actuatedStatus(name, cpu string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, Resources: &v1.ResourceRequirements{Requests: cpuList(cpu)}}
}

// TestRequestsV036AndV037 shows where component-helpers v0.36.3 and
// v0.37.2 count a placed pod differently, and that they agree on a pod
// that was never resized.
func TestRequestsV036AndV037(t *testing.T) {
	tests := []struct {
		name     string
		pod      v1.Pod
		v036     string
		v037     string
		incoming string // both releases
	}{
		{
			name: "not resized",
			pod: v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container("a", "100m"), container("b", "300m")},
				InitContainers: []v1.Container{container("i", "500m")}}},
			v036: "500m", v037: "500m", incoming: "500m",
		},
		{
			// v0.36: max per container, 300m + 300m; v0.37: the max of
			// the spec sum and the actuated sum, 400m.
			name: "containers resized in opposite directions",
			pod: v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container("a", "100m"), container("b", "300m")}},
				Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{actuatedStatus("a", "300m"), actuatedStatus("b", "100m")}}},
			v036: "600m", v037: "400m", incoming: "400m",
		},
		{
			// v0.37 reads the pod-level status (InPlacePodLevelResources-
			// VerticalScaling, on); v0.36 only with pod-level requests.
			name: "pod-level status without pod-level requests",
			pod: v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container("a", "200m")}},
				Status: v1.PodStatus{AllocatedResources: cpuList("600m"), Resources: &v1.ResourceRequirements{Requests: cpuList("400m")}}},
			v036: "200m", v037: "600m", incoming: "200m",
		},
		{
			// v0.36 reads the status of sidecars only.
			name: "a resized regular init container",
			pod: v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{container("a", "200m")}, InitContainers: []v1.Container{container("i", "100m")}},
				Status: v1.PodStatus{InitContainerStatuses: []v1.ContainerStatus{actuatedStatus("i", "800m")}}},
			v036: "200m", v037: "800m", incoming: "200m",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(what string, got v1.ResourceList, want string) {
				t.Helper()
				q := got[v1.ResourceCPU]
				if q.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("%s: cpu %s, want %s", what, q.String(), want)
				}
			}
			check("PlacedPodRequestsV036", PlacedPodRequestsV036(&tt.pod), tt.v036)
			check("PlacedPodRequests (v0.37)", PlacedPodRequests(&tt.pod), tt.v037)
			check("IncomingPodRequestsV036", IncomingPodRequestsV036(&tt.pod), tt.incoming)
			check("IncomingPodRequests (v0.37)", IncomingPodRequests(&tt.pod), tt.incoming)
		})
	}
}
