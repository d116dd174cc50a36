package testobj_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/internal/testobj"
)

// TestEpochIsSynthBase: the tests' clock is the synthetic shapes'.
func TestEpochIsSynthBase(t *testing.T) {
	if !testobj.Epoch.Equal(synth.Base()) {
		t.Errorf("Epoch %v, synth.Base %v", testobj.Epoch, synth.Base())
	}
}

// TestCurrentContainer: the container methods act on the container added
// last, init or not.
func TestCurrentContainer(t *testing.T) {
	p := testobj.MakePod().Container("a").CPU("1").Container("b").Memory("1Gi").Ports(v1.ContainerPort{HostPort: 80}).
		InitContainer("i").CPU("2").RestartPolicy(v1.ContainerRestartPolicyAlways).Image("img").Obj()
	always := v1.ContainerRestartPolicyAlways
	want := v1.PodSpec{
		Containers: []v1.Container{
			{Name: "a", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}},
			{Name: "b", Ports: []v1.ContainerPort{{HostPort: 80}}, Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}}},
		},
		InitContainers: []v1.Container{{Name: "i", Image: "img", RestartPolicy: &always,
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}},
	}
	if diff := cmp.Diff(want, p.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	defer func() {
		if recover() == nil {
			t.Error("CPU without a container did not panic")
		}
	}()
	testobj.MakePod().CPU("1")
}

// TestEmptyNames: an empty pod group or parent name sets nothing; Bound
// with no node leaves the pod pending.
func TestEmptyNames(t *testing.T) {
	p := testobj.MakePod().PodGroupName("").Bound("", testobj.Epoch).Obj()
	if p.Spec.SchedulingGroup != nil || p.Spec.NodeName != "" || p.Status.StartTime != nil {
		t.Errorf("pod %+v, want no group, no node, no start time", p)
	}
	if g := testobj.MakePodGroup().ParentCompositePodGroup("").Obj(); g.Spec.ParentCompositePodGroupName != nil {
		t.Errorf("parent %q, want none", *g.Spec.ParentCompositePodGroupName)
	}
	if g := testobj.MakeCompositePodGroup().ParentCompositePodGroup("").Obj(); g.Spec.ParentCompositePodGroupName != nil {
		t.Errorf("composite parent %q, want none", *g.Spec.ParentCompositePodGroupName)
	}
}
