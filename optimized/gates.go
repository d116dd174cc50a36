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

// UnmodelledGateUse refuses pods in pod groups under GenericWorkload=true
// (preempt.PodGroupGaps). Every release's behaviour is modelled
// (preempt.Config.Behaviour; the evaluator answers with it).
func (Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	return preempt.PodGroupGaps(c, pod, cfg)
}

var _ preempt.ReleaseModeller = Impl{}

// ModelsReleases: optimized answers with every release's behaviour
// (preempt.Config.Behaviour), as the reference does.
func (Impl) ModelsReleases() {}
