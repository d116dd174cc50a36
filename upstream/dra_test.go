package upstream_test

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

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

// extendedPod is the preemptor asking 2 cpu and example.com/gpu: 1, which
// no node advertises and DeviceClass gpu backs.
func extendedPod() *v1.Pod {
	rl := v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), "example.com/gpu": resource.MustParse("1")}
	return pod("high", "", 10, "2", "1Gi").Resources(v1.ResourceRequirements{Requests: rl, Limits: v1.ResourceList{"example.com/gpu": resource.MustParse("1")}}).Obj()
}

type draCase struct {
	name string
	// make returns the cluster and the preemptor.
	make func() (*preempt.Cluster, *v1.Pod)
	// want is the decision's status.
	want preempt.Code
}

var draCases = []draCase{
	{"claim by name, GPUs free, cpu taken: preempting a node's low pod frees the cpu", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPod(c, false)
	}, preempt.Success},
	{"claim from a template, GPUs free, cpu taken", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(false)
		return c, claimPod(c, true)
	}, preempt.Success},
	{"every GPU held by a lower-priority pod's claim: preemption does not free it", func() (*preempt.Cluster, *v1.Pod) {
		c := draCluster(true)
		return c, claimPod(c, false)
	}, preempt.Unschedulable},
	{"extended resource a DeviceClass backs, GPUs free, cpu taken", func() (*preempt.Cluster, *v1.Pod) {
		return draCluster(false), extendedPod()
	}, preempt.Success},
	// kube-scheduler v1.37.2 (scheduler.New, informers synced) finds n1 and
	// n2 feasible once their low pod is gone, the GPU its claim holds
	// notwithstanding: the devices of the claim it makes for an extended
	// resource are not checked against the other claims' here.
	{"extended resource a DeviceClass backs, every GPU held by a lower-priority pod's claim", func() (*preempt.Cluster, *v1.Pod) {
		return draCluster(true), extendedPod()
	}, preempt.Success},
}

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

// A pod whose claim is allocated and reserved for no other pod is one
// DynamicResources' own PostFilter could deallocate (kube-scheduler runs
// it before DefaultPreemption; the adapter does not run it): refused.
func TestDRAPostFilterRefused(t *testing.T) {
	c := draCluster(false)
	p := claimPod(c, false)
	c.ResourceClaims[len(c.ResourceClaims)-1].Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{
		Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: gpuDriver, Pool: "n1", Device: "gpu-0"}},
	}}
	u := (upstream.Impl{}).Unmodelled(c, p)
	if u == nil || u.Detail != "has ResourceClaim high-gpu allocated and reserved for no other pod, which DynamicResources' own PostFilter deallocates before DefaultPreemption runs" {
		t.Errorf("Unmodelled = %v, want the claim refused", u)
	}
}

// A pod whose claim does not exist yet (its template's claim not made, or
// a claim by name missing) waits in DynamicResources' PreEnqueue: no
// scheduling cycle runs for it, so nothing is decided.
func TestDRAPreEnqueueRefused(t *testing.T) {
	c := draCluster(false)
	p := claimPod(c, true)
	p.Status.ResourceClaimStatuses = nil
	if u := (upstream.Impl{}).Unmodelled(c, p); u == nil || !strings.Contains(u.Detail, "DynamicResources' PreEnqueue keeps the pod out of the scheduling queue") {
		t.Errorf("template claim not made: Unmodelled = %v, want a refusal", u)
	}
	c = draCluster(false)
	p = claimPod(c, false)
	c.ResourceClaims = c.ResourceClaims[:len(c.ResourceClaims)-1]
	if u := (upstream.Impl{}).Unmodelled(c, p); u == nil || !strings.Contains(u.Detail, "the cluster holds no ResourceClaim high-gpu") {
		t.Errorf("claim missing: Unmodelled = %v, want a refusal", u)
	}
	// PreEnqueue also holds a pod whose claim is being deleted, or whose
	// claim from a template is not controlled by it.
	c = draCluster(false)
	p = claimPod(c, false)
	c.ResourceClaims[len(c.ResourceClaims)-1].DeletionTimestamp = &metav1.Time{}
	if u := (upstream.Impl{}).Unmodelled(c, p); u == nil || !strings.Contains(u.Detail, "ResourceClaim high-gpu is being deleted") {
		t.Errorf("claim being deleted: Unmodelled = %v, want a refusal", u)
	}
	c = draCluster(false)
	p = claimPod(c, true)
	c.ResourceClaims[len(c.ResourceClaims)-1].OwnerReferences = nil
	if u := (upstream.Impl{}).Unmodelled(c, p); u == nil || !strings.Contains(u.Detail, "was not made for it") {
		t.Errorf("template claim of another owner: Unmodelled = %v, want a refusal", u)
	}
}
