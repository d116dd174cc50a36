package optimized

import (
	v1 "k8s.io/api/core/v1"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/preemptbench/preemptbench/preempt"
)

var (
	_ preempt.GateLimited    = Impl{}
	_ preempt.GateUseLimited = Impl{}
)

// ModelledGates are preempt.SinglePodGates and the gates of pod groups:
// CompositePodGroup (victims grouped by their composite ancestors),
// PodGroupPreemptionPolicy (a gang's policy, gang.go) and
// TopologyAwareWorkloadScheduling, which CompositePodGroup needs and
// which changes nothing for victims (a gang under it is an error, as in
// the reference). This implementation
// refuses every other gate set away from its default.
func (Impl) ModelledGates() []string {
	return append(preempt.SinglePodGates(), preempt.CompositePodGroupGate, podGroupPolicyGate, topologyAwareGate)
}

var _ preempt.PodGroupLimited = Impl{}

// UnmodelledPodGroup refuses a gang beside a CompositePodGroup hierarchy
// with a cycle (compositeCycle, podgroup.go) and a gang whose member
// optimized refuses as a single pod (gangMemberGaps, gang.go: the gang
// path answers Error for it too); every other gang, members with
// volumes, claims, extended resources a DeviceClass backs or claims
// allocated with binding conditions included (gang_volumes.go), is
// modelled.
func (Impl) UnmodelledPodGroup(c *preempt.Cluster, req *preempt.PodGroupRequest) *preempt.Unmodelled {
	if u := compositeCycle(c, req.Config.FeatureGates); u != nil {
		return u
	}
	for _, p := range req.Pods {
		if u := gangMemberGaps(c, p); u != nil {
			return u
		}
	}
	return nil
}

// UnmodelledGateUse refuses, under GenericWorkload=true, a preemptor in
// a pod group and pod groups spanning nodes beside a DoNotSchedule spread
// (groupGaps, podgroup.go), and a preemptor that needs node-declared
// features under a behaviour with the NodeDeclaredFeatures filter
// (preempt.SwitchNodeDeclaredFeatures: the reference models it; here no
// filter reads status.declaredFeatures). Every release's behaviour is
// modelled otherwise (preempt.Config.Behaviour; the evaluator answers
// with it).
func (Impl) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	if u := preempt.ClaimReleaseGap(c, pod, cfg); u != nil {
		return u
	}
	if u := groupGaps(c, pod, cfg); u != nil {
		return u
	}
	if pod == nil || !cfg.Behaviour().NodeDeclaredFeatures {
		return nil
	}
	if reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, declaredFeaturesVersion); err != nil || !reqs.IsEmpty() {
		return &preempt.Unmodelled{Feature: "node-declared features", Object: "pod " + preempt.Key(pod.Namespace, pod.Name),
			Detail: "needs features a node must declare (hostNetwork with hostUsers false, a RestartAllContainers rule), which NodeDeclaredFeatures checks"}
	}
	return nil
}

// declaredFeaturesVersion is the version upstream's NodeDeclaredFeatures
// infers a pod's requirements at (component-base's version.Get()).
var declaredFeaturesVersion, _ = versionutil.Parse(version.Get().String())

var _ preempt.ReleaseModeller = Impl{}

// ModelsReleases: optimized answers with every release's behaviour
// (preempt.Config.Behaviour), as the reference does.
func (Impl) ModelsReleases() {}
