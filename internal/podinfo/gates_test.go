package podinfo

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	_ "k8s.io/kubernetes/pkg/features" // the gates set below, as a kube-scheduler process has them
)

// TestHelpersReadTheDefaultGates: the process's gate set away from the
// defaults (as the upstream adapter sets it during its calls) does not
// reach the helpers reference and optimized use.
func TestHelpersReadTheDefaultGates(t *testing.T) {
	off := map[string]bool{"PodLevelResources": false, "InPlacePodLevelResourcesVerticalScaling": false,
		"PodLevelResourcesFixDefaulting": false, "PodLevelResourcesFixKubeletQOSClass": false}
	on := map[string]bool{}
	for k := range off {
		on[k] = true
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(off); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(on); err != nil {
			t.Fatal(err)
		}
	}()
	p := &v1.Pod{Spec: v1.PodSpec{
		Resources:  &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}},
		Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}}}},
	}}
	for name, reqs := range map[string]v1.ResourceList{"IncomingPodRequests": IncomingPodRequests(p), "PlacedPodRequests": PlacedPodRequests(p)} {
		if got := reqs.Cpu().MilliValue(); got != 2000 {
			t.Errorf("%s = %dm cpu, want the pod-level 2000m (PodLevelResources at its default, on)", name, got)
		}
	}
}
