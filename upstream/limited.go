package upstream

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Limited = Impl{}

// Unmodelled: the adapter runs every filter of the default profile, and
// DefaultPreemption, the one PostFilter plugin it runs. A pod
// DynamicResources looks at (preempt.ClaimGaps) is answered where this
// release's adapter feeds its DRA manager the cluster's resource.k8s.io
// objects (feedsDRA), except when DynamicResources' own PostFilter, which
// kube-scheduler runs before DefaultPreemption, could act on the pod,
// or where no scheduling cycle runs for it (preempt.DRACycleGaps, the rule
// reference and optimized share): that is refused rather than answered.
func (Impl) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	if u := missingDriversGap(c, pod); u != nil {
		return u
	}
	u := preempt.ClaimGaps(c, pod)
	if u == nil {
		return nil
	}
	if !feedsDRA {
		u.Detail += ", and the adapter's DynamicResources at this release is not fed the cluster's ResourceClaims, ResourceSlices and DeviceClasses"
		return u
	}
	return preempt.DRACycleGaps(c, pod)
}

var _ preempt.ReleaseFixed = Impl{}

// UpstreamRelease is Version: the adapter runs that release's code and
// refuses a configuration asking for another's behaviour.
func (Impl) UpstreamRelease() string { return Version }

// asyncAPICallsGap: with SchedulerAsyncAPICalls kube-scheduler sends its
// API calls through an API dispatcher (the framework's APICacher), which
// the adapter's framework is built without: it would answer as if the
// gate were off.
func asyncAPICallsGap(cfg preempt.Config) *preempt.Unmodelled {
	if !cfg.FeatureGates["SchedulerAsyncAPICalls"] {
		return nil
	}
	return &preempt.Unmodelled{Feature: "feature gate SchedulerAsyncAPICalls", Object: "the configuration",
		Detail: "sets SchedulerAsyncAPICalls=true, and the adapter's framework has no API dispatcher (kube-scheduler's calls would go through one)"}
}

var (
	_ preempt.GateUseLimited  = Impl{}
	_ preempt.PodGroupLimited = Impl{}
)

// UnmodelledGateUse refuses SchedulerAsyncAPICalls (asyncAPICallsGap).
func (Impl) UnmodelledGateUse(_ *preempt.Cluster, _ *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	return asyncAPICallsGap(cfg)
}

// UnmodelledPodGroup refuses SchedulerAsyncAPICalls (asyncAPICallsGap).
func (Impl) UnmodelledPodGroup(_ *preempt.Cluster, req *preempt.PodGroupRequest) *preempt.Unmodelled {
	return asyncAPICallsGap(req.Config)
}
