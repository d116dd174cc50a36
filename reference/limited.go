package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled reports what the filters modelled here (defaultProfile)
// cannot see: resource claims (DynamicResources). The four volume filters
// are modelled for a single pod; a gang's members with volumes are still
// refused (gang.go).
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	return preempt.ClaimGaps(c, pod)
}
