package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// modelledGates are the feature gates this implementation models away from
// their v1.37.2 defaults; it refuses a Config that sets any other gate to a
// value other than its default. SchedulerAsyncPreemption is
// Config.Synchronous. GenericWorkload=true changes nothing for pods outside
// pod groups, and pods in one are refused (preempt.PodGroupGaps). The
// resource helpers (podinfo) read the gates at their defaults, once, so
// InPlacePodLevelResourcesVerticalScaling, PodLevelResources and
// DRANodeAllocatableResources are not modelled and refused, like every
// other gate.
var modelledGates = []string{preempt.GenericWorkloadGate}

var (
	_ preempt.GateLimited    = Impl{}
	_ preempt.GateUseLimited = Impl{}
)

// ModelledGates is modelledGates.
func (Impl) ModelledGates() []string { return modelledGates }

// UnmodelledGateUse refuses pods in pod groups under GenericWorkload=true.
func (Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	return preempt.PodGroupGaps(c, pod, cfg)
}
