package upstream

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled reports what the filter plugins this adapter does not yet
// register (InterPodAffinity, PodTopologySpread, the volume filters,
// DynamicResources) would see.
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	return preempt.SixFilterGaps(c, pod)
}
