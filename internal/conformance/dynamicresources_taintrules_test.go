package conformance

// DynamicResources' conformance cases for DeviceTaintRules (resource.k8s.io/v1,
// DRADeviceTaintRules, GA and on by default in v1.37.2), added to draCases:
// every test over draCases (TestDynamicResourcesConformance against the
// upstream adapter, whose ResourceSlice tracker applies the rules as
// kube-scheduler's does, TestDynamicResourcesDeterministic,
// TestDynamicResourcesFilterCodes, TestDynamicResourcesSelectVictims) runs
// them. The tracker adds a rule's taint to every device its selector
// matches (driver, pool, device name; none without a selector); the
// allocator does not allocate a device with a NoSchedule or NoExecute
// taint the request does not tolerate, so the node of the only free GPU a
// rule taints is no candidate, while a taint of effect None changes
// nothing.

import (
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/preempt"
)

func init() { draCases = append(draCases, draTaintRuleCases...) }

// draTaintRule is a DeviceTaintRule of taint example.com/broken with
// effect on the devices sel matches.
func draTaintRule(name string, sel *resourcev1.DeviceTaintSelector, effect resourcev1.DeviceTaintEffect) *resourcev1.DeviceTaintRule {
	return &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-rule-" + name)},
		Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: resourcev1.DeviceTaint{
			Key: "example.com/broken", Value: "true", Effect: effect, TimeAdded: &metav1.Time{Time: now.Add(-3600e9)},
		}},
	}
}

// draRules is draCluster with the rules, and the preemptor's claim
// "mine" (one GPU), tolerating example.com/broken when tolerate is set.
func draRules(tolerate bool, rules ...*resourcev1.DeviceTaintRule) func() *preempt.Cluster {
	return draWith(func(c *preempt.Cluster) {
		c.DeviceTaintRules = rules
		claim := draClaim("mine", "gpu", 1)
		if tolerate {
			claim.Spec.Devices.Requests[0].Exactly.Tolerations = []resourcev1.DeviceToleration{{Key: "example.com/broken", Operator: resourcev1.DeviceTolerationOpEqual, Value: "true"}}
		}
		c.ResourceClaims = append(c.ResourceClaims, claim)
	})
}

var draTaintRuleCases = []draCase{
	{
		// n1's GPU is the only free device on the node whose victim
		// would free the cpu: tainted, n1 is no candidate; n2 is.
		name:    "taint rule: n1's GPU NoSchedule by driver, pool and device",
		cluster: draRules(false, draTaintRule("n1-gpu-0", &resourcev1.DeviceTaintSelector{Driver: ptr.To(draDriver), Pool: ptr.To("n1"), Device: ptr.To("gpu-0")}, resourcev1.DeviceTaintEffectNoSchedule)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: n1's GPU NoSchedule, tolerated by the claim's request",
		cluster: draRules(true, draTaintRule("n1-gpu-0", &resourcev1.DeviceTaintSelector{Driver: ptr.To(draDriver), Pool: ptr.To("n1"), Device: ptr.To("gpu-0")}, resourcev1.DeviceTaintEffectNoSchedule)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: every GPU NoSchedule by driver only",
		cluster: draRules(false, draTaintRule("gpus", &resourcev1.DeviceTaintSelector{Driver: ptr.To(draDriver)}, resourcev1.DeviceTaintEffectNoSchedule)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: every GPU NoExecute by driver only, tolerated",
		cluster: draRules(true, draTaintRule("gpus", &resourcev1.DeviceTaintSelector{Driver: ptr.To(draDriver)}, resourcev1.DeviceTaintEffectNoExecute)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: pool n2 NoExecute",
		cluster: draRules(false, draTaintRule("pool-n2", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n2")}, resourcev1.DeviceTaintEffectNoExecute)),
		pod:     draPreemptor("mine"),
	},
	{
		// A device name alone matches it in every pool.
		name:    "taint rule: device gpu-0 in every pool",
		cluster: draRules(false, draTaintRule("gpu-0", &resourcev1.DeviceTaintSelector{Device: ptr.To("gpu-0")}, resourcev1.DeviceTaintEffectNoSchedule)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: effect None on every device",
		cluster: draRules(false, draTaintRule("all", &resourcev1.DeviceTaintSelector{}, resourcev1.DeviceTaintEffectNone)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: selector matches no device",
		cluster: draRules(false, draTaintRule("other", &resourcev1.DeviceTaintSelector{Driver: ptr.To(draDriver), Pool: ptr.To("n3")}, resourcev1.DeviceTaintEffectNoSchedule)),
		pod:     draPreemptor("mine"),
	},
	{
		name:    "taint rule: no selector",
		cluster: draRules(false, draTaintRule("none", nil, resourcev1.DeviceTaintEffectNoSchedule)),
		pod:     draPreemptor("mine"),
	},
	{
		name: "taint rule: n1 NoSchedule, n2 None, and a claim allocated on n1 is unaffected",
		cluster: func() *preempt.Cluster {
			c := draRules(false,
				draTaintRule("n1", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n1")}, resourcev1.DeviceTaintEffectNoSchedule),
				draTaintRule("n2", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n2")}, resourcev1.DeviceTaintEffectNone))()
			draHold(c, "n1")
			return c
		},
		pod: draPreemptor("mine"),
	},
}
