// Package podinfo is what the scheduler reads off a pod, as upstream
// computes it with its default feature gates: the requests a pod counts
// for on its node and asks for as a preemptor, its host ports, whether the
// scheduler's preemption is terminating it. reference and optimized share
// it; upstream reads its own. It is not part of the contract.
//
// The request arithmetic reproduces one component-helpers release,
// quirks included, and lives in a file named for it: requests_v0_37.go
// (v0.37.2, the module's, which the implementations use) and
// requests_v0_36.go (v0.36.3, ported, for the next release switch). A
// release that computes otherwise gets a file of its own beside them.
package podinfo

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/preemptbench/preemptbench/internal/kube/v1helper"
)

// The requests as k8s.io/component-helpers v0.37.2 (the staging release of
// k8s.io/kubernetes v1.37.2) computes them. What changed from v0.36.3: a
// resized pod (status resources set) counts, resource by resource, the
// maximum of its spec, actuated and allocated requests each aggregated
// over the whole pod (containers, init containers and sidecars with the
// sidecar rule, then the maximum), where v0.36.3 took that maximum per
// container (and for init containers only for sidecars); a pod whose
// resize is Infeasible counts the maximum of actuated and allocated only;
// with InPlacePodLevelResourcesVerticalScaling (on by default) and the
// pod-level status.allocatedResources and status.resources.requests set,
// those pod-level values stand for the actuated and allocated sums; and
// pod-level requests take max(spec, status.resources, allocated) for every
// resource any of them names (v0.36.3: only those the spec names).

// IsScalarResource is upstream's schedutil.IsScalarResourceName: extended,
// hugepages, kubernetes.io-prefixed and attachable-volume resources.
func IsScalarResource(name v1.ResourceName) bool {
	return v1helper.IsExtendedResourceName(name) || v1helper.IsHugePageResourceName(name) ||
		v1helper.IsPrefixedNativeResource(name) || v1helper.IsAttachableVolumeResourceName(name)
}

// PlacedPodRequests is what a pod on a node counts for in its NodeInfo
// (PodInfo.CalculateResource): init containers, sidecars, overhead,
// pod-level resources and resized status resources included.
//
// It makes upstream's two PodRequests calls in upstream's order, on a copy
// of the pod's pod-level resources: component-helpers v0.37.2 (as v0.36.3)
// adds the overhead into the pod-level quantities in place and the first call's
// result shares them, so for a pod with pod-level requests, an overhead
// and a container without a cpu or memory request (which makes
// CalculateResource call PodRequests a second time, for the non-zero
// requests), upstream counts the overhead twice. kube-scheduler's cache
// runs the same code on every pod it adds; docs/divergences.md ("Pod-level
// requests with overhead") has the details and the test.
func PlacedPodRequests(p *v1.Pod) v1.ResourceList {
	return PlacedPodRequestsGated(p, defaultGates.inPlacePodLevelResourcesVerticalScaling)
}

// PlacedPodRequestsGated is PlacedPodRequests with
// InPlacePodLevelResourcesVerticalScaling podLevelResize (off: pod-level
// requests are the spec's; preempt.SwitchPodLevelResizeRequests).
func PlacedPodRequestsGated(p *v1.Pod, podLevelResize bool) v1.ResourceList {
	q := Unaliased(p)
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: defaultGates.inPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: podLevelResize,
		SkipPodLevelResources:                          !defaultGates.podLevelResources,
		// UseDRANodeAllocatableResourceClaimStatus stays false, as
		// DRANodeAllocatableResources (alpha, off) leaves it: a Config
		// setting the gate is refused (preempt.GateLimited), and
		// component-helpers v0.35, which package preempt is also built
		// against (releases/v1.35.4), has no such option.
	}
	requests := resourcehelper.PodRequests(q, opts)
	// Without pod-level requests every quantity of the first call's result
	// is a deep copy (addResourceList copies what it inserts), so the
	// second call, whose result upstream uses only for scoring, cannot
	// change it: it is made only when it can.
	if podLevel := !opts.SkipPodLevelResources && resourcehelper.IsPodLevelRequestsSet(q); podLevel {
		if nonMissing := nonMissingContainerRequests(requests, podLevel); len(nonMissing) > 0 {
			opts.NonMissingContainerRequests = nonMissing
			_ = resourcehelper.PodRequests(q, opts) // upstream's second call; see above
		}
	}
	return requests
}

// nonMissingContainerRequests is upstream's getNonMissingContainerRequests:
// the default cpu and memory requests for scoring, only for what neither
// the pod nor its containers request when pod-level requests are set.
func nonMissingContainerRequests(requests v1.ResourceList, podLevelSet bool) v1.ResourceList {
	out := v1.ResourceList{}
	if _, ok := requests[v1.ResourceCPU]; !ok || !podLevelSet {
		out[v1.ResourceCPU] = *resource.NewMilliQuantity(v1helper.DefaultMilliCPURequest, resource.DecimalSI)
	}
	if _, ok := requests[v1.ResourceMemory]; !ok || !podLevelSet {
		out[v1.ResourceMemory] = *resource.NewQuantity(v1helper.DefaultMemoryRequest, resource.DecimalSI)
	}
	return out
}

// IncomingPodRequests is NodeResourcesFit's PreFilter request of the pod
// being scheduled.
func IncomingPodRequests(p *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(Unaliased(p), resourcehelper.PodResourcesOptions{
		SkipPodLevelResources: !defaultGates.podLevelResources,
	})
}

// Unaliased returns p, or, when p has pod-level requests, a shallow copy
// whose pod-level resources are its own: component-helpers v0.37.2's
// PodRequests copies the pod-level quantities without deep-copying them
// and then adds the overhead to them in place, so every call on a shared
// pod would grow that pod's own spec.resources by its overhead, and the
// caller's objects must never change.
func Unaliased(p *v1.Pod) *v1.Pod {
	if p.Spec.Resources == nil || len(p.Spec.Resources.Requests) == 0 {
		return p
	}
	q := *p
	q.Spec.Resources = p.Spec.Resources.DeepCopy()
	return &q
}
