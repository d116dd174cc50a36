package reference

import (
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

var (
	_ preempt.GateLimited    = Impl{}
	_ preempt.GateUseLimited = Impl{}
)

// ModelledGates are preempt.SinglePodGates and the pod-group gates this
// implementation models: CompositePodGroup (victims grouped by their
// composite ancestors), PodGroupPreemptionPolicy (a gang's policy) and
// TopologyAwareWorkloadScheduling, which CompositePodGroup needs (it
// changes nothing for victims; a gang preemption under it is an Error:
// its placement algorithm is not modelled). Every other gate set away
// from its default is refused.
func (Impl) ModelledGates() []string {
	return append(preempt.SinglePodGates(), compositePodGroupGate, podGroupPreemptionPolicyGate, topologyAwareGate)
}

// UnmodelledGateUse refuses, under GenericWorkload=true, a preemptor pod
// that belongs to a pod group: kube-scheduler schedules such a pod with
// its group (decide -pod-group), not alone.
func (Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	if u := preempt.ClaimReleaseGap(c, pod, cfg); u != nil {
		return u
	}
	if !cfg.FeatureGates[preempt.GenericWorkloadGate] || pod == nil || pod.Spec.SchedulingGroup == nil {
		return nil
	}
	return &preempt.Unmodelled{Feature: "a pod group's member as a single preemptor (GenericWorkload=true)", Object: "pod " + preempt.Key(pod.Namespace, pod.Name),
		Detail: "belongs to a pod group (spec.schedulingGroup): preempt for its group with -pod-group"}
}

var _ preempt.PodGroupLimited = Impl{}

// UnmodelledPodGroup refuses a gang whose member the reference refuses
// as a single pod (gangMemberGaps, gang.go), before a decision.
func (Impl) UnmodelledPodGroup(c *preempt.Cluster, req *preempt.PodGroupRequest) *preempt.Unmodelled {
	for _, p := range req.Pods {
		if u := gangMemberGaps(c, p); u != nil {
			return u
		}
	}
	return nil
}

const (
	podGroupPreemptionPolicyGate = "PodGroupPreemptionPolicy"
	topologyAwareGate            = "TopologyAwareWorkloadScheduling"
)

var _ preempt.ReleaseModeller = Impl{}

// ModelsReleases: the reference answers with every release's behaviour
// (preempt.Config.Behaviour).
func (Impl) ModelsReleases() {}
