package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled reports what the filters modelled here (defaultProfile)
// cannot see: a pod preempt.DRACycleGaps refuses (the rule the three
// implementations share: no scheduling cycle runs for it, or
// DynamicResources' own PostFilter could act on it), an extended resource
// a DeviceClass backs, and an allocated claim with binding conditions
// (dynamicResources). The four volume filters and DynamicResources are
// modelled for a single pod and for a gang's members (gang_reserve.go:
// what a placed member leaves for the next), the same refused for both
// (gang.go gangMemberGaps).
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := preempt.DeviceClassResourceGaps(c, pod); u != nil {
		return u
	}
	if u := preempt.DRACycleGaps(c, pod); u != nil {
		return u
	}
	return preempt.ClaimBindingConditionsGap(c, pod)
}
