package optimized

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled reports what the filters modelled here cannot see: a pod
// preempt.DRACycleGaps refuses (the rule the three implementations share:
// no scheduling cycle runs for it, or DynamicResources' own PostFilter
// could act on it), and what preempt.ExtendedResourceClaimGaps refuses of
// the claim DynamicResources makes for extended resources a DeviceClass
// backs. Those extended resources and claims allocated with binding
// conditions are modelled (plugin_dynamicresources.go; the binding
// timeout reads the request's clock). The four volume filters and
// DynamicResources are modelled for a single pod and for a gang's
// members (gang_volumes.go: the volumes a placed member's Reserve
// assumes and the claims it allocates, its extended resources' claim
// included, as reference/gang_reserve.go), the same refused for both
// (gang.go gangMemberGaps).
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := preempt.DRACycleGaps(c, pod); u != nil {
		return u
	}
	return preempt.ExtendedResourceClaimGaps(c, pod)
}
