package optimized

import v1 "k8s.io/api/core/v1"

// singleContainerRequests is podinfo.IncomingPodRequests (component-helpers'
// PodRequests without status resources) for a pod of one container, no
// init container, no overhead and no pod-level resources: that
// container's requests, which PodRequests copies quantity by quantity
// (addResourceList into an empty list; no init container to take the
// maximum of; nothing else added). It returns the pod's own list, for
// reading only; ok is false for any other pod
// (TestSingleContainerRequests).
func singleContainerRequests(pod *v1.Pod) (v1.ResourceList, bool) {
	sp := &pod.Spec
	if len(sp.Containers) != 1 || len(sp.InitContainers) != 0 || sp.Overhead != nil || sp.Resources != nil {
		return nil, false
	}
	return sp.Containers[0].Resources.Requests, true
}

// placedRequestsFast is placedRequests(p, m), for reading only:
// without PodRequests for a one-container pod whose status says nothing
// PlacedPodRequests reads (placedIsIncoming: its placed requests are then
// its incoming ones, as setMembers takes them).
func placedRequestsFast(p *v1.Pod, m reqMode) v1.ResourceList {
	if m == 0 && placedIsIncoming(p) {
		if l, ok := singleContainerRequests(p); ok {
			return l
		}
	}
	return placedRequests(p, m)
}
