package optimized

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var (
	_ preempt.GateLimited    = Impl{}
	_ preempt.GateUseLimited = Impl{}
)

// ModelledGates are preempt.SinglePodGates and the gates of pod groups as
// victims: CompositePodGroup (victims grouped by their composite
// ancestors) and TopologyAwareWorkloadScheduling, which CompositePodGroup
// needs and which changes nothing for victims. This implementation
// refuses every other gate set away from its default.
func (Impl) ModelledGates() []string {
	return append(preempt.SinglePodGates(), preempt.CompositePodGroupGate, "TopologyAwareWorkloadScheduling")
}

// UnmodelledGateUse refuses a configuration asking for another release's
// behaviour (preempt.ReleaseGap) and, under GenericWorkload=true, a
// preemptor in a pod group and pod groups spanning nodes beside the
// topology plugins (groupGaps, podgroup.go).
func (Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	// The release switches are the reference's: optimized answers as the
	// current release only.
	if u := preempt.ReleaseGap(preempt.CurrentRelease, cfg); u != nil {
		u.Detail = "asks for another behaviour than " + preempt.CurrentRelease + "'s; optimized models the current release only (the reference models every release)"
		return u
	}
	return groupGaps(c, pod, cfg)
}
