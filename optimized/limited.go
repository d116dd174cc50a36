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
// DynamicResources are modelled for a single pod; a gang's members with
// volumes or claims are still refused (gang.go gangMemberGaps), as the
// gang path's world does not follow the volume plugins' state, the
// volumes a placed member's Reserve assumes or the claims it allocates
// (the reference models them: reference/gang_reserve.go).
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := preempt.DRACycleGaps(c, pod); u != nil {
		return u
	}
	return preempt.ExtendedResourceClaimGaps(c, pod)
}
