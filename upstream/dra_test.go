package upstream_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/google/go-cmp/cmp"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

const gpuDriver = "gpu.example.com"

// draCluster: nodes n1 and n2 of 4 cpu, each publishing one GPU of
// gpuDriver (a ResourceSlice), a DeviceClass "gpu" of them (backing the
// extended resource example.com/gpu), and on each node a pod of priority
// 0 asking 3 cpu; with gpuHeld, each of those pods holds its node's GPU
// through an allocated claim reserved for it.
func draCluster(gpuHeld bool) *preempt.Cluster {
	c := &preempt.Cluster{}
	c.DeviceClasses = []*resourcev1.DeviceClass{{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", UID: "uid-class-gpu"},
		Spec: resourcev1.DeviceClassSpec{
			Selectors:            []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", gpuDriver)}}},
			ExtendedResourceName: ptr.To("example.com/gpu"),
		},
	}}
	for _, n := range []string{"n1", "n2"} {
		c.Nodes = append(c.Nodes, node(n, "4").Label(v1.LabelHostname, n).Obj())
		c.ResourceSlices = append(c.ResourceSlices, &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: n + "-gpu", UID: types.UID("uid-slice-" + n)},
			Spec: resourcev1.ResourceSliceSpec{
				Driver: gpuDriver, NodeName: ptr.To(n),
				Pool:    resourcev1.ResourcePool{Name: n, ResourceSliceCount: 1},
				Devices: []resourcev1.Device{{Name: "gpu-0"}},
			},
		})
		low := pod("low-"+n, n, 0, "3", "1Gi")
		if gpuHeld {
			claim := gpuClaim("low-"+n+"-gpu", nil)
			claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
				Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: gpuDriver, Pool: n, Device: "gpu-0"}},
			}}
			claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "low-" + n, UID: types.UID("uid-low-" + n)}}
			c.ResourceClaims = append(c.ResourceClaims, claim)
			low = low.Resources(v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")}, Claims: []v1.ResourceClaim{{Name: "gpu"}}})
		}
		p := low.Obj()
		if gpuHeld {
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("low-" + n + "-gpu")}}
		}
		c.Pods = append(c.Pods, p)
	}
	return c
}

// gpuClaim is a claim of namespace default asking for one device of
// class gpu, owned by the pod owner when set (as the claims made from a
// template are).
func gpuClaim(name string, owner *v1.Pod) *resourcev1.ResourceClaim {
	rc := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}}},
	}
	if owner != nil {
		rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	return rc
}

// exactly is a request named name for count devices of class.
func exactly(name, class string, count int64) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count,
	}}
}

// withRequests sets rc's requests.
func withRequests(rc *resourcev1.ResourceClaim, reqs ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
	rc.Spec.Devices.Requests = reqs
	return rc
}

// allocatedOn makes rc allocated as the allocator does: node's gpu-0 for
// its request gpu, the allocation pinned to node by a node selector;
// reserved for the pod holder when set.
func allocatedOn(rc *resourcev1.ResourceClaim, node string, holder *v1.Pod) *resourcev1.ResourceClaim {
	rc.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: gpuDriver, Pool: node, Device: "gpu-0"},
		}},
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}},
		}}}},
	}
	if holder != nil {
		rc.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: holder.Name, UID: holder.UID}}
		holder.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(rc.Name)}}
	}
	return rc
}

// waitingForBinding gives the allocated rc's device the binding
// condition "Attached" and the binding failure condition "Failed", at the
// time at; the device's status has the conditions set to true.
func waitingForBinding(rc *resourcev1.ResourceClaim, at time.Time, conditions ...string) *resourcev1.ResourceClaim {
	res := &rc.Status.Allocation.Devices.Results[0]
	res.BindingConditions = []string{"Attached"}
	res.BindingFailureConditions = []string{"Failed"}
	rc.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: at}
	st := resourcev1.AllocatedDeviceStatus{Driver: res.Driver, Pool: res.Pool, Device: res.Device, Conditions: []metav1.Condition{}}
	for _, c := range conditions {
		st.Conditions = append(st.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Time{Time: at}})
	}
	rc.Status.Devices = []resourcev1.AllocatedDeviceStatus{st}
	return rc
}

// claimPodWith is the preemptor of claimPod asking for the claim rc, by
// name, which it adds to c unless c has it.
func claimPodWith(c *preempt.Cluster, rc *resourcev1.ResourceClaim) *v1.Pod {
	p := pod("high", "", 10, "2", "1Gi").Resources(v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}, Claims: []v1.ResourceClaim{{Name: "gpu"}},
	}).Obj()
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(rc.Name)}}
	if !slices.Contains(c.ResourceClaims, rc) {
		c.ResourceClaims = append(c.ResourceClaims, rc)
	}
	return p
}

// claimPod is the preemptor: priority 10, 2 cpu, and one GPU through the
// claim high-gpu (by name, or made from a template when fromTemplate).
func claimPod(c *preempt.Cluster, fromTemplate bool) *v1.Pod {
	p := pod("high", "", 10, "2", "1Gi").Resources(v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}, Claims: []v1.ResourceClaim{{Name: "gpu"}},
	}).Obj()
	if fromTemplate {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("high-gpu")}}
		c.ResourceClaims = append(c.ResourceClaims, gpuClaim("high-gpu", p))
		c.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one-gpu", UID: "uid-one-gpu"},
			Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: gpuClaim("", nil).Spec},
		}}
	} else {
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("high-gpu")}}
		c.ResourceClaims = append(c.ResourceClaims, gpuClaim("high-gpu", nil))
	}
	return p
}

// extendedPod is the preemptor asking 2 cpu and, in its container,
// example.com/gpu: 1, which no node advertises and DeviceClass gpu backs.
func extendedPod() *v1.Pod {
	p := pod("high", "", 10, "2", "1Gi").Request("example.com/gpu", "1").Obj()
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{"example.com/gpu": resource.MustParse("1")}
	return p
}

type draCase struct {
	name string
	// make returns the cluster and the preemptor.
	make func() (*preempt.Cluster, *v1.Pod)
	// want is the decision's status.
	want preempt.Code
	// node, when set, is the node the decision nominates.
	node string
}

// withTaintRule adds to c a DeviceTaintRule of a taint example.com/broken
// with effect, on the devices sel matches (nil: none).
func withTaintRule(c *preempt.Cluster, name string, sel *resourcev1.DeviceTaintSelector, effect resourcev1.DeviceTaintEffect) *preempt.Cluster {
	c.DeviceTaintRules = append(c.DeviceTaintRules, &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-rule-" + name)},
		Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: resourcev1.DeviceTaint{
			Key: "example.com/broken", Value: "true", Effect: effect, TimeAdded: &metav1.Time{Time: volumeNow.Add(-time.Hour)},
		}},
	})
	return c
}

// tolerating makes rc's requests tolerate the taint example.com/broken.
func tolerating(rc *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	for i := range rc.Spec.Devices.Requests {
		rc.Spec.Devices.Requests[i].Exactly.Tolerations = []resourcev1.DeviceToleration{{Key: "example.com/broken", Operator: resourcev1.DeviceTolerationOpExists}}
	}
	return rc
}

// taintRuleCases: DeviceTaintRules (DRADeviceTaintRules, GA and on in
// v1.37.2) taint the devices of draCluster(false), whose n1 and n2 each
// have one free GPU, gpu-0 (pool n1, pool n2), and a low pod whose cpu
// the preemptor needs: a device with an untolerated NoSchedule or
// NoExecute taint is not allocated, so the node it is on is no candidate.
var taintRuleCases = []draCase{
	{"rule taints n1's GPU NoSchedule (driver, pool, device): only n2 is a candidate", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "n1-gpu-0", &resourcev1.DeviceTaintSelector{Driver: ptr.To(gpuDriver), Pool: ptr.To("n1"), Device: ptr.To("gpu-0")}, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPod(c, false)
	}, preempt.Success, "n2"},
	{"rule taints n1's GPU NoSchedule, tolerated by the claim's request", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "n1-gpu-0", &resourcev1.DeviceTaintSelector{Driver: ptr.To(gpuDriver), Pool: ptr.To("n1"), Device: ptr.To("gpu-0")}, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPodWith(c, tolerating(gpuClaim("high-gpu", nil)))
	}, preempt.Success, ""},
	{"rule by driver only taints every GPU NoSchedule", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "all-gpus", &resourcev1.DeviceTaintSelector{Driver: ptr.To(gpuDriver)}, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPod(c, false)
	}, preempt.Unschedulable, ""},
	{"rule by driver only taints every GPU NoSchedule, tolerated by the claim's request", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "all-gpus", &resourcev1.DeviceTaintSelector{Driver: ptr.To(gpuDriver)}, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPodWith(c, tolerating(gpuClaim("high-gpu", nil)))
	}, preempt.Success, ""},
	{"rule by pool taints n2's GPU NoExecute: only n1 is a candidate", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "pool-n2", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n2")}, resourcev1.DeviceTaintEffectNoExecute)
		return c, claimPod(c, false)
	}, preempt.Success, "n1"},
	// Device names are a pool's own: a rule naming a device alone
	// matches the device of that name in every pool.
	{"rule by device name only taints both nodes' gpu-0", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "gpu-0", &resourcev1.DeviceTaintSelector{Device: ptr.To("gpu-0")}, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPod(c, false)
	}, preempt.Unschedulable, ""},
	{"rule of effect None on every GPU", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "all-gpus", &resourcev1.DeviceTaintSelector{}, resourcev1.DeviceTaintEffectNone)
		return c, claimPod(c, false)
	}, preempt.Success, ""},
	{"rule whose selector matches no device", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "other", &resourcev1.DeviceTaintSelector{Driver: ptr.To("tpu.example.com")}, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPod(c, false)
	}, preempt.Success, ""},
	{"rule without a selector matches no device", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "none", nil, resourcev1.DeviceTaintEffectNoSchedule)
		return c, claimPod(c, false)
	}, preempt.Success, ""},
	{"two rules: n1's GPU NoSchedule, n2's None", func() (*preempt.Cluster, *v1.Pod) {
		c := withTaintRule(draCluster(false), "n1", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n1")}, resourcev1.DeviceTaintEffectNoSchedule)
		c = withTaintRule(c, "n2", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n2")}, resourcev1.DeviceTaintEffectNone)
		return c, claimPod(c, false)
	}, preempt.Success, "n2"},
	// The claim DynamicResources makes for an extended resource has no
	// tolerations.
	{"extended resource a DeviceClass backs, rule taints n1's GPU NoSchedule", func() (*preempt.Cluster, *v1.Pod) {
		return withTaintRule(draCluster(false), "n1", &resourcev1.DeviceTaintSelector{Pool: ptr.To("n1")}, resourcev1.DeviceTaintEffectNoSchedule), extendedPod()
	}, preempt.Success, "n2"},
	{"extended resource a DeviceClass backs, rule taints every GPU NoSchedule", func() (*preempt.Cluster, *v1.Pod) {
		return withTaintRule(draCluster(false), "all", &resourcev1.DeviceTaintSelector{Driver: ptr.To(gpuDriver)}, resourcev1.DeviceTaintEffectNoSchedule), extendedPod()
	}, preempt.Unschedulable, ""},
}

var draCases = []draCase{
	{"claim by name, GPUs free, cpu taken: preempting a node's low pod frees the cpu", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPod(c, false)
	}, preempt.Success, ""},
	{"claim from a template, GPUs free, cpu taken", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPod(c, true)
	}, preempt.Success, ""},
	{"every GPU held by a lower-priority pod's claim: preemption does not free it", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(true)
		return c, claimPod(c, false)
	}, preempt.Unschedulable, ""},
	// The claim status names no claim: none was needed (resourceclaim.Name).
	{"claim from a template that needs none", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		p := claimPod(c, true)
		p.Status.ResourceClaimStatuses[0].ResourceClaimName = nil
		c.ResourceClaims = c.ResourceClaims[:len(c.ResourceClaims)-1]
		return c, p
	}, preempt.Success, ""},
	{"extended resource a DeviceClass backs, GPUs free, cpu taken", func() (*preempt.Cluster, *v1.Pod) {
		return draCluster(false), extendedPod()
	}, preempt.Success, ""},
	// The claim DynamicResources makes for the extended resource is
	// allocated from the devices no claim holds: preempting the pods does
	// not free theirs.
	{"extended resource a DeviceClass backs, every GPU held by a lower-priority pod's claim", func() (*preempt.Cluster, *v1.Pod) {
		return draCluster(true), extendedPod()
	}, preempt.Unschedulable, ""},
	{"extended resource named by the DeviceClass's implicit name", func() (*preempt.Cluster, *v1.Pod) {
		p := extendedPod()
		implicit := v1.ResourceName(resourcev1.ResourceDeviceClassPrefix + "gpu")
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), implicit: resource.MustParse("1")},
			Limits:   v1.ResourceList{implicit: resource.MustParse("1")},
		}
		return draCluster(false), p
	}, preempt.Success, ""},
	// The init container's device is reused by the container: one GPU.
	{"extended resource asked by an init container and by the container", func() (*preempt.Cluster, *v1.Pod) {
		p := extendedPod()
		p.Spec.InitContainers = []v1.Container{{Name: "init", Resources: p.Spec.Containers[0].Resources}}
		return draCluster(false), p
	}, preempt.Success, ""},
	// Two init containers ask one GPU each, one after the other: the
	// claim asks for the larger of their requests, one GPU.
	{"extended resource asked by two init containers only", func() (*preempt.Cluster, *v1.Pod) {
		p := extendedPod()
		gpu := p.Spec.Containers[0].Resources
		p.Spec.InitContainers = []v1.Container{{Name: "init-1", Resources: gpu}, {Name: "init-2", Resources: gpu}}
		p.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}
		return draCluster(false), p
	}, preempt.Success, ""},
	// n2 advertises example.com/gpu itself (a device plugin): there
	// NodeResourcesFit counts it, on n1 DynamicResources allocates it.
	{"extended resource a device plugin advertises on n2 and a DeviceClass backs on n1", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		c.Nodes[1].Status.Allocatable["example.com/gpu"] = resource.MustParse("1")
		c.Nodes[1].Status.Capacity = c.Nodes[1].Status.Allocatable.DeepCopy()
		return c, extendedPod()
	}, preempt.Success, ""},
	{"claim for two GPUs, one on each node", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, withRequests(gpuClaim("high-gpu", nil), exactly("gpu", "gpu", 2)))
	}, preempt.Unschedulable, ""},
	{"claim for every GPU of a node", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, withRequests(gpuClaim("high-gpu", nil), resourcev1.DeviceRequest{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeAll}}))
	}, preempt.Success, ""},
	{"claim of a DeviceClass that does not exist", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, withRequests(gpuClaim("high-gpu", nil), exactly("gpu", "tpu", 1)))
	}, preempt.Unschedulable, ""},
	{"prioritized list: two GPUs, else one", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, withRequests(gpuClaim("high-gpu", nil), resourcev1.DeviceRequest{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "two", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
			{Name: "one", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}))
	}, preempt.Success, ""},
	{"prioritized list whose second alternative's DeviceClass does not exist", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, withRequests(gpuClaim("high-gpu", nil), resourcev1.DeviceRequest{Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{
			{Name: "one", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
			{Name: "tpu", DeviceClassName: "tpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
		}}))
	}, preempt.Unschedulable, ""},
	// The claim is n2's GPU, shared with n2's low pod: n1 cannot have it,
	// and on n2 preempting the low pod frees the cpu (the claim stays
	// allocated, reserved for the victim until the claim controller
	// notices).
	{"claim allocated on n2 and shared with n2's lower-priority pod", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, allocatedOn(gpuClaim("shared-gpu", nil), "n2", c.Pods[1]))
	}, preempt.Success, ""},
	// Binding conditions: a claim allocated to a device whose binding
	// conditions are not met is unavailable once the binding timeout
	// (10 minutes) has passed since the allocation, and at once when a
	// binding failure condition is true; met, it is available.
	{"shared claim on n1 waiting for its binding conditions past the timeout", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, waitingForBinding(allocatedOn(gpuClaim("shared-gpu", nil), "n1", c.Pods[0]), time.Now().Add(-time.Hour)))
	}, preempt.Unschedulable, ""},
	{"shared claim on n1 waiting for its binding conditions within the timeout", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, waitingForBinding(allocatedOn(gpuClaim("shared-gpu", nil), "n1", c.Pods[0]), time.Now()))
	}, preempt.Success, ""},
	{"shared claim on n1 whose binding failed", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, waitingForBinding(allocatedOn(gpuClaim("shared-gpu", nil), "n1", c.Pods[0]), time.Now(), "Failed"))
	}, preempt.Unschedulable, ""},
	{"shared claim on n1 whose binding conditions are met", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPodWith(c, waitingForBinding(allocatedOn(gpuClaim("shared-gpu", nil), "n1", c.Pods[0]), time.Now().Add(-time.Hour), "Attached"))
	}, preempt.Success, ""},
}

func init() { draCases = append(draCases, taintRuleCases...) }

// Issue 32: the adapter's DynamicResources is fed the cluster's claims,
// slices and classes as kube-scheduler feeds its own, so its filter phase
// and candidates are kube-scheduler's (scheduler.New's framework, informers
// started and synced), on pods with claims (by name, from a template) and
// on extended resources a DeviceClass backs.
func TestDRAAsKubeScheduler(t *testing.T) {
	for _, tc := range draCases {
		t.Run(tc.name, func(t *testing.T) {
			c, p := tc.make()
			if u := (upstream.Impl{}).Unmodelled(c, p); u != nil {
				t.Fatalf("refused: %v", u)
			}
			got := checkAsKubeScheduler(t, c, p)
			if got.Decision.Status != tc.want {
				t.Errorf("decision %s %q, want %s", got.Decision.Status, got.Decision.Message, tc.want)
			}
			if tc.node != "" && got.Decision.NominatedNode != tc.node {
				t.Errorf("decision nominates %q, want %q", got.Decision.NominatedNode, tc.node)
			}
		})
	}
}

// Every DRA case gets one answer, however often it is asked.
func TestDRADeterministic(t *testing.T) {
	for _, tc := range draCases {
		t.Run(tc.name, func(t *testing.T) {
			var first preempt.Decision
			for i := range 6 {
				c, p := tc.make()
				res, err := harness.Decide(t.Context(), upstream.Impl{ListOrderTie: true}, c, p, preempt.DefaultConfig(), 0, volumeNow)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = res.Decision
					continue
				}
				if first.Status != res.Decision.Status || first.NominatedNode != res.Decision.NominatedNode || first.Message != res.Decision.Message {
					t.Fatalf("run %d: %s %s %q, run 0: %s %s %q", i, res.Decision.Status, res.Decision.NominatedNode, res.Decision.Message, first.Status, first.NominatedNode, first.Message)
				}
			}
		})
	}
}

// The pods the adapter refuses because DynamicResources' own PostFilter
// could act on them (Unmodelled) are pods it does act on in
// kube-scheduler's cycle; on a pod the adapter answers, it does nothing.
// kube-scheduler runs it before DefaultPreemption, whatever that would
// do; here the preemptors may not preempt (PreemptionPolicy Never), so
// DefaultPreemption writes nothing. n2 has no pod, so DynamicResources'
// Filter runs there.
func TestDRAPostFilterAsKubeScheduler(t *testing.T) {
	never := func(p *v1.Pod) *v1.Pod {
		p.Spec.PreemptionPolicy = ptr.To(v1.PreemptNever)
		return p
	}
	for _, tc := range []struct {
		name    string
		make    func(c *preempt.Cluster) *v1.Pod
		refusal string // Unmodelled's detail, "" for none
		status  string // DynamicResources' PostFilter's message, "" for none
		writes  []string
	}{{
		name: "its claim allocated on n1 and reserved for no pod",
		make: func(c *preempt.Cluster) *v1.Pod {
			return never(claimPodWith(c, allocatedOn(gpuClaim("high-gpu", nil), "n1", nil)))
		},
		refusal: "has ResourceClaim high-gpu allocated and reserved for no other pod, which DynamicResources' own PostFilter deallocates before DefaultPreemption runs",
		status:  "deallocation of ResourceClaim completed",
		writes:  []string{"update/status default/high-gpu"},
	}, {
		name: "the claim made for its extended resource in an earlier cycle",
		make: func(c *preempt.Cluster) *v1.Pod {
			p := never(extendedPod())
			rc := withRequests(gpuClaim("high-extended-resources-1", p), exactly("container-0-request-0", "gpu", 1))
			rc.Annotations = map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}
			rc.Finalizers = []string{resourcev1.Finalizer}
			c.ResourceClaims = append(c.ResourceClaims, rc)
			p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: rc.Name, RequestMappings: []v1.ContainerExtendedResourceRequest{
				{ContainerName: "c", ResourceName: "example.com/gpu", RequestName: "container-0-request-0"},
			}}
			return p
		},
		refusal: "has a claim for its extended resources (status.extendedResourceClaimStatus), which DynamicResources' own PostFilter deletes before DefaultPreemption runs",
		status:  "deletion of ResourceClaim completed",
		writes:  []string{"update default/high-extended-resources-1", "delete default/high-extended-resources-1"},
	}, {
		name: "no claim, more cpu than a node has",
		make: func(c *preempt.Cluster) *v1.Pod {
			return never(pod("high", "", 10, "5", "1Gi").Obj())
		},
	}, {
		name: "its claim allocated on n1 and shared with n1's pod",
		make: func(c *preempt.Cluster) *v1.Pod {
			return never(claimPodWith(c, allocatedOn(gpuClaim("shared-gpu", nil), "n1", c.Pods[0])))
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := draCluster(false)
			c.Pods = c.Pods[:1]
			p := tc.make(c)
			u := (upstream.Impl{}).Unmodelled(c, p)
			if got := ""; u != nil {
				got = u.Detail
				if got != tc.refusal {
					t.Errorf("Unmodelled: %q, want %q", got, tc.refusal)
				}
			} else if tc.refusal != "" {
				t.Errorf("Unmodelled: nil, want %q", tc.refusal)
			}
			st, writes, err := upstream.KubeSchedulerPostFilter(t.Context(), c, p)
			if err != nil {
				t.Fatal(err)
			}
			// The plugins' reasons in their order: DynamicResources',
			// then DefaultPreemption's (default_preemption.go).
			want := []string{"preemption: not eligible due to preemptionPolicy=Never."}
			if tc.status != "" {
				want = append([]string{tc.status}, want...)
			}
			if st.Code() != fwk.Unschedulable || !slices.Equal(st.Reasons(), want) {
				t.Errorf("kube-scheduler's PostFilter: %v %q, want Unschedulable %q", st.Code(), st.Reasons(), want)
			}
			if diff := cmp.Diff(tc.writes, writes); diff != "" {
				t.Errorf("kube-scheduler's writes to ResourceClaims (-want +got):\n%s", diff)
			}
		})
	}
}

// A pod whose claim does not exist yet (its template's claim not made, or
// a claim by name missing) waits in DynamicResources' PreEnqueue: no
// scheduling cycle runs for it, so nothing is decided. The adapter refuses
// exactly the pods kube-scheduler's PreEnqueue keeps out of its queue.
func TestDRAPreEnqueueAsKubeScheduler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		make    func() (*preempt.Cluster, *v1.Pod)
		refusal string // in Unmodelled's detail, "" for none
		waits   string // kube-scheduler's PreEnqueue's message, "" for none
	}{{
		name: "claim from a template, not made yet",
		make: func() (*preempt.Cluster, *v1.Pod) {
			c := draCluster(false)
			p := claimPod(c, true)
			p.Status.ResourceClaimStatuses = nil
			return c, p
		},
		refusal: "DynamicResources' PreEnqueue keeps the pod out of the scheduling queue",
		waits:   `pod "default/high": ResourceClaim not created yet`, // resourceclaim.Name's

	}, {
		name: "claim by name, missing",
		make: func() (*preempt.Cluster, *v1.Pod) {
			c := draCluster(false)
			p := claimPod(c, false)
			c.ResourceClaims = c.ResourceClaims[:len(c.ResourceClaims)-1]
			return c, p
		},
		refusal: "the cluster holds no ResourceClaim high-gpu",
		waits:   `could not find ResourceClaim "default/high-gpu"`, // the assume cache's

	}, {
		name: "claim by name, being deleted",
		make: func() (*preempt.Cluster, *v1.Pod) {
			c := draCluster(false)
			p := claimPod(c, false)
			c.ResourceClaims[len(c.ResourceClaims)-1].DeletionTimestamp = &metav1.Time{Time: volumeNow}
			return c, p
		},
		refusal: "ResourceClaim high-gpu is being deleted",
		waits:   `resourceclaim "high-gpu" is being deleted`, // foreachPodResourceClaim's
	}, {
		name: "claim from a template, the claim status names another pod's",
		make: func() (*preempt.Cluster, *v1.Pod) {
			c := draCluster(false)
			p := claimPod(c, true)
			c.ResourceClaims[len(c.ResourceClaims)-1].OwnerReferences[0].UID = "uid-other"
			return c, p
		},
		refusal: "was not made for it (the pod is not its controller)",
		waits:   "ResourceClaim default/high-gpu was not created for Pod default/high (Pod is not owner)", // resourceclaim.IsForPod's
	}, {
		name: "claim from a template, made",
		make: func() (*preempt.Cluster, *v1.Pod) {
			c := draCluster(false)
			return c, claimPod(c, true)
		},
	}, {
		// resourceclaim.Name: the claim status names no claim, none was
		// needed; the pod's cycle runs without it.
		name: "claim from a template, none needed",
		make: func() (*preempt.Cluster, *v1.Pod) {
			c := draCluster(false)
			p := claimPod(c, true)
			p.Status.ResourceClaimStatuses[0].ResourceClaimName = nil
			c.ResourceClaims = c.ResourceClaims[:len(c.ResourceClaims)-1]
			return c, p
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := tc.make()
			u := (upstream.Impl{}).Unmodelled(c, p)
			switch {
			case tc.refusal == "" && u != nil:
				t.Errorf("Unmodelled = %v, want nil", u)
			case tc.refusal != "" && (u == nil || !strings.Contains(u.Detail, tc.refusal)):
				t.Errorf("Unmodelled = %v, want a refusal with %q", u, tc.refusal)
			}
			st, err := upstream.KubeSchedulerPreEnqueue(t.Context(), c, p)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.waits == "" && st != nil:
				t.Errorf("kube-scheduler's PreEnqueue: %v, want the pod admitted", st)
			case tc.waits != "" && (st == nil || st.Code() != fwk.UnschedulableAndUnresolvable || st.Plugin() != "DynamicResources" || st.Message() != tc.waits):
				t.Errorf("kube-scheduler's PreEnqueue: %v, want DynamicResources' UnschedulableAndUnresolvable %q", st, tc.waits)
			}
		})
	}
}

// With DRADeviceTaintRules off, kube-scheduler's tracker is a wrapper
// around the slice informer (scheduler.New gives it no DeviceTaintRule
// informer): every taint rule case is decided as its cluster without the
// rules, and promptly (the wrapper's informer is never started, so
// nothing may wait for it to sync).
func TestDRATaintRulesGateOff(t *testing.T) {
	off := preempt.DefaultConfig()
	off.FeatureGates = map[string]bool{"DRADeviceTaintRules": false}
	for _, tc := range taintRuleCases {
		t.Run(tc.name, func(t *testing.T) {
			c, p := tc.make()
			got, err := harness.Decide(t.Context(), upstream.Impl{ListOrderTie: true}, c, p, off, 0, volumeNow)
			if err != nil {
				t.Fatal(err)
			}
			c.DeviceTaintRules = nil
			want, err := harness.Decide(t.Context(), upstream.Impl{ListOrderTie: true}, c, p, preempt.DefaultConfig(), 0, volumeNow)
			if err != nil {
				t.Fatal(err)
			}
			if got.Decision.Status != want.Decision.Status || got.Decision.NominatedNode != want.Decision.NominatedNode || got.Decision.Message != want.Decision.Message {
				t.Errorf("gate off: %s %s %q; without the rules: %s %s %q", got.Decision.Status, got.Decision.NominatedNode, got.Decision.Message,
					want.Decision.Status, want.Decision.NominatedNode, want.Decision.Message)
			}
		})
	}
}
