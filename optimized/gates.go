package optimized

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var (
	_ preempt.GateLimited    = Impl{}
	_ preempt.GateUseLimited = Impl{}
)

// ModelledGates are preempt.SinglePodGates: this implementation refuses
// every other gate set away from its default.
func (Impl) ModelledGates() []string { return preempt.SinglePodGates() }

// UnmodelledGateUse refuses a configuration asking for another release's
// behaviour (preempt.ReleaseGap), and pods in pod groups under
// GenericWorkload=true (preempt.PodGroupGaps).
func (Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	// The release switches are the reference's: optimized answers as the
	// current release only.
	if u := preempt.ReleaseGap(preempt.CurrentRelease, cfg); u != nil {
		u.Detail = "asks for another behaviour than " + preempt.CurrentRelease + "'s; optimized models the current release only (the reference models every release)"
		return u
	}
	return preempt.PodGroupGaps(c, pod, cfg)
}
