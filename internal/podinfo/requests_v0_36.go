package podinfo

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The requests as k8s.io/component-helpers v0.36.3 (the staging release of
// k8s.io/kubernetes v1.36.3) computes them. The module now pins v0.37.2,
// so this file carries v0.36.3's arithmetic itself (its PodRequests and
// AggregateContainerRequests, ported); kube-scheduler v1.36.3 calls it
// from the same places v1.37.2 calls v0.37.2's (PodInfo.CalculateResource,
// NodeResourcesFit's PreFilter), with the same options. The
// implementations use requests_v0_37.go; this one is kept for making the
// release a switch.

// PlacedPodRequestsV036 is PlacedPodRequests as v1.36.3 computes it:
// a resized pod counts, container by container, the maximum of its spec,
// actuated and allocated requests (a regular init container its spec
// only), and pod-level status only with pod-level requests in the spec.
func PlacedPodRequestsV036(p *v1.Pod) v1.ResourceList {
	return PlacedPodRequestsV036Gated(p, defaultGates.inPlacePodLevelResourcesVerticalScaling)
}

// PlacedPodRequestsV036Gated is PlacedPodRequestsV036 with
// InPlacePodLevelResourcesVerticalScaling podLevelResize: off, a pod's
// pod-level requests are its spec's whatever its status says. v1.35.4
// computes so: component-helpers v0.35.4's arithmetic is v0.36.3's
// (which added only the node-allocatable claims of an alpha gate), run
// with that gate off (alpha; on by default from v1.36:
// preempt.SwitchPodLevelResizeRequests).
func PlacedPodRequestsV036Gated(p *v1.Pod, podLevelResize bool) v1.ResourceList {
	q := Unaliased(p)
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: defaultGates.inPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: podLevelResize,
		SkipPodLevelResources:                          !defaultGates.podLevelResources,
	}
	requests := podRequestsV036(q, opts)
	// upstream's second call, for the non-zero requests (see
	// PlacedPodRequests): it can change the first call's result.
	if podLevel := !opts.SkipPodLevelResources && resourcehelper.IsPodLevelRequestsSet(q); podLevel {
		if nonMissing := nonMissingContainerRequests(requests, podLevel); len(nonMissing) > 0 {
			opts.NonMissingContainerRequests = nonMissing
			_ = podRequestsV036(q, opts)
		}
	}
	return requests
}

// IncomingPodRequestsV036 is IncomingPodRequests as v1.36.3 computes it
// (no status resources are read: the same answer as v0.37.2's).
func IncomingPodRequestsV036(p *v1.Pod) v1.ResourceList {
	return podRequestsV036(Unaliased(p), resourcehelper.PodResourcesOptions{
		SkipPodLevelResources: !defaultGates.podLevelResources,
	})
}

// podRequestsV036 is component-helpers v0.36.3's resource.PodRequests
// (without ContainerFn, which v0.37.2's options no longer have).
func podRequestsV036(pod *v1.Pod, opts resourcehelper.PodResourcesOptions) v1.ResourceList {
	reqs := v1.ResourceList{}
	if !opts.SkipContainerLevelResources {
		reqs = aggregateContainerRequestsV036(pod, opts)
	}
	if !opts.SkipPodLevelResources && resourcehelper.IsPodLevelRequestsSet(pod) {
		var effectiveReqs v1.ResourceList
		if opts.InPlacePodLevelResourcesVerticalScalingEnabled && opts.UseStatusResources {
			if pod.Status.Resources != nil {
				effectiveReqs = effectiveRequestsV036(pod, pod.Spec.Resources.Requests, pod.Status.Resources.Requests, pod.Status.AllocatedResources)
			}
		}
		for resourceName, quantity := range pod.Spec.Resources.Requests {
			if resourcehelper.IsSupportedPodLevelResource(resourceName) {
				reqs[resourceName] = quantity
				if effectiveReqs != nil {
					reqs[resourceName] = effectiveReqs[resourceName]
				}
			}
		}
	}
	if !opts.ExcludeOverhead && pod.Spec.Overhead != nil {
		addResourceListV036(reqs, pod.Spec.Overhead)
	}
	return reqs
}

// aggregateContainerRequestsV036 is v0.36.3's AggregateContainerRequests.
func aggregateContainerRequestsV036(pod *v1.Pod, opts resourcehelper.PodResourcesOptions) v1.ResourceList {
	reqs := v1.ResourceList{}
	if opts.Reuse != nil {
		reqs = opts.Reuse
		clear(reqs)
	}
	var statuses map[string]*v1.ContainerStatus
	if opts.UseStatusResources {
		statuses = make(map[string]*v1.ContainerStatus, len(pod.Status.ContainerStatuses)+len(pod.Status.InitContainerStatuses))
		for i := range pod.Status.ContainerStatuses {
			statuses[pod.Status.ContainerStatuses[i].Name] = &pod.Status.ContainerStatuses[i]
		}
		for i := range pod.Status.InitContainerStatuses {
			statuses[pod.Status.InitContainerStatuses[i].Name] = &pod.Status.InitContainerStatuses[i]
		}
	}
	for _, c := range pod.Spec.Containers {
		creqs := c.Resources.Requests
		if opts.UseStatusResources {
			if cs, found := statuses[c.Name]; found && cs.Resources != nil {
				creqs = effectiveRequestsV036(pod, c.Resources.Requests, cs.Resources.Requests, cs.AllocatedResources)
			}
		}
		if len(opts.NonMissingContainerRequests) > 0 {
			creqs = applyNonMissingV036(creqs, opts.NonMissingContainerRequests)
		}
		addResourceListV036(reqs, creqs)
	}
	restartable, initReqs := v1.ResourceList{}, v1.ResourceList{}
	for _, c := range pod.Spec.InitContainers {
		creqs := c.Resources.Requests
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		if opts.UseStatusResources && sidecar {
			if cs, found := statuses[c.Name]; found && cs.Resources != nil {
				creqs = effectiveRequestsV036(pod, c.Resources.Requests, cs.Resources.Requests, cs.AllocatedResources)
			}
		}
		if len(opts.NonMissingContainerRequests) > 0 {
			creqs = applyNonMissingV036(creqs, opts.NonMissingContainerRequests)
		}
		if sidecar {
			addResourceListV036(reqs, creqs)
			addResourceListV036(restartable, creqs)
			creqs = restartable
		} else {
			tmp := v1.ResourceList{}
			addResourceListV036(tmp, creqs)
			addResourceListV036(tmp, restartable)
			creqs = tmp
		}
		maxResourceListV036(initReqs, creqs)
	}
	maxResourceListV036(reqs, initReqs)
	// v0.36.3 then added status.nodeAllocatableResourceClaimStatuses[].
	// resources under DRANodeAllocatableResources (alpha, off): k8s.io/api
	// v0.37.2 no longer has that field, and the contract refuses pods with
	// resource claims.
	return reqs
}

// effectiveRequestsV036 is v0.36.3's determineEffectiveRequests: the
// maximum of spec, actuated and allocated, or of the last two when the
// resize is Infeasible.
func effectiveRequestsV036(pod *v1.Pod, spec, actuated, allocated v1.ResourceList) v1.ResourceList {
	if resourcehelper.IsPodResizeInfeasible(pod) {
		return maxOfV036(actuated, allocated)
	}
	return maxOfV036(spec, actuated, allocated)
}

func maxOfV036(a v1.ResourceList, b ...v1.ResourceList) v1.ResourceList {
	result := v1.ResourceList{}
	if a != nil {
		result = a.DeepCopy()
	}
	for _, o := range b {
		maxResourceListV036(result, o)
	}
	return result
}

func addResourceListV036(list, newList v1.ResourceList) {
	for name, q := range newList {
		if value, ok := list[name]; !ok {
			list[name] = q.DeepCopy()
		} else {
			value.Add(q)
			list[name] = value
		}
	}
}

func maxResourceListV036(list, newList v1.ResourceList) {
	for name, q := range newList {
		if value, ok := list[name]; !ok || q.Cmp(value) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}

func applyNonMissingV036(reqs, nonMissing v1.ResourceList) v1.ResourceList {
	cp := v1.ResourceList{}
	for k, v := range reqs {
		cp[k] = v.DeepCopy()
	}
	for k, v := range nonMissing {
		if _, found := reqs[k]; !found {
			rk := cp[k]
			rk.Add(v)
			cp[k] = rk
		}
	}
	return cp
}
