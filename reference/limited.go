package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled reports what the filters modelled here (defaultProfile)
// cannot see: a pod preempt.DRACycleGaps refuses (the rule the three
// implementations share: no scheduling cycle runs for it, or
// DynamicResources' own PostFilter could act on it), and what
// preempt.ExtendedResourceClaimGaps refuses of the claim DynamicResources
// makes for extended resources a DeviceClass backs (a claim left by an
// earlier cycle, a class that depends on informer order). Extended
// resources a DeviceClass backs and claims allocated with binding
// conditions are modelled (dynamicResources; the binding timeout reads
// the request's clock). The four volume filters and DynamicResources are
// modelled for a single pod and for a gang's members (gang_reserve.go:
// what a placed member leaves for the next), the same refused for both
// (gang.go gangMemberGaps).
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := preempt.DRACycleGaps(c, pod); u != nil {
		return u
	}
	return preempt.ExtendedResourceClaimGaps(c, pod)
}
