package optimized

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/internal/testobj"
)

// TestSingleContainerRequests: where it answers, singleContainerRequests
// is IncomingPodRequests, quantity for quantity; it declines every pod
// with more than one container, an init container, an overhead or
// pod-level resources.
func TestSingleContainerRequests(t *testing.T) {
	q := resource.MustParse
	list := func(kv ...string) v1.ResourceList {
		l := v1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[v1.ResourceName(kv[i])] = q(kv[i+1])
		}
		return l
	}
	pod := func(reqs ...v1.ResourceList) *v1.Pod {
		p := testobj.MakePod()
		for _, r := range reqs {
			p.Container("c").ContainerRequests(r)
		}
		return p.Obj()
	}
	for _, p := range []*v1.Pod{
		pod(nil),
		pod(list()),
		pod(list("cpu", "3970m", "memory", "100Mi")),
		pod(list("cpu", "1.5", "memory", "1G", "ephemeral-storage", "1Gi", "example.com/gpu", "2", "hugepages-2Mi", "4Mi")),
		pod(list("cpu", "0.0001")),
		pod(list("cpu", "0")),
	} {
		got, ok := singleContainerRequests(p)
		if !ok {
			t.Fatalf("declined %v", p.Spec.Containers[0].Resources.Requests)
		}
		want := podinfo.IncomingPodRequests(p)
		if len(got) != len(want) {
			t.Fatalf("%v: got %v, want %v", p.Spec.Containers[0].Resources.Requests, got, want)
		}
		for name, w := range want {
			g, in := got[name]
			if !in || g.Cmp(w) != 0 || g.MilliValue() != w.MilliValue() || g.Value() != w.Value() {
				t.Errorf("%s: got %v, want %v", name, got[name], w)
			}
		}
	}
	// A placed pod whose status says nothing PlacedPodRequests reads:
	// the same; one with a container status: PodRequests.
	for _, p := range []*v1.Pod{pod(list("cpu", "40m", "memory", "100Mi")), pod(list("cpu", "1"))} {
		p.Status.Phase = v1.PodRunning
		got, want := placedRequestsFast(p, 0), podinfo.PlacedPodRequests(p)
		if len(got) != len(want) || got.Cpu().Cmp(*want.Cpu()) != 0 || got.Memory().Cmp(*want.Memory()) != 0 {
			t.Errorf("placed: got %v, want %v", got, want)
		}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", AllocatedResources: list("cpu", "2")}}
		got, want = placedRequestsFast(p, 0), podinfo.PlacedPodRequests(p)
		if got.Cpu().Cmp(*want.Cpu()) != 0 {
			t.Errorf("placed with a status: got %v, want %v", got, want)
		}
	}
	declined := []*v1.Pod{
		{},
		pod(list("cpu", "1"), list("cpu", "1")),
		func() *v1.Pod {
			p := pod(list("cpu", "1"))
			p.Spec.InitContainers = []v1.Container{{Name: "i"}}
			return p
		}(),
		func() *v1.Pod { p := pod(list("cpu", "1")); p.Spec.Overhead = list("cpu", "1"); return p }(),
		func() *v1.Pod {
			p := pod(list("cpu", "1"))
			p.Spec.Resources = &v1.ResourceRequirements{Requests: list("cpu", "2")}
			return p
		}(),
	}
	for i, p := range declined {
		if _, ok := singleContainerRequests(p); ok {
			t.Errorf("pod %d: answered", i)
		}
	}
}
