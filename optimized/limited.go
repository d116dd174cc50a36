package optimized

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled reports what the filters modelled here cannot see: a pod
// preempt.DRACycleGaps refuses (the rule the three implementations share:
// no scheduling cycle runs for it, or DynamicResources' own PostFilter
// could act on it), an extended resource a DeviceClass backs, and an
// allocated claim with binding conditions (plugin_dynamicresources.go).
// The four volume filters and DynamicResources are modelled for a single
// pod; a gang's members with volumes or claims are still refused
// (gang.go checkGang), as the gang path's world does not follow the volume
// plugins' state, the volumes a placed member's Reserve assumes or the
// claims it allocates (the reference models them: reference/gang_reserve.go).
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := preempt.DeviceClassResourceGaps(c, pod); u != nil {
		return u
	}
	if u := preempt.DRACycleGaps(c, pod); u != nil {
		return u
	}
	return preempt.ClaimBindingConditionsGap(c, pod)
}
