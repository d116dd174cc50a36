package conformance

// DynamicResources' conformance table: each case's expected outcome is the
// upstream adapter's (k8s.io/kubernetes v1.37.2's own plugin, its DRA
// manager fed the cluster's claims, slices and classes, checked against
// kube-scheduler itself in upstream's TestDRAAsKubeScheduler), and
// reference, optimized and upstream must all give it: the filter phase
// (every node's code and reasons) and the whole decision (node, victims,
// dry-run statuses and message, actions), or the same error when a filter
// fails with Error.
//
// What v1.37.2 does with a victim's devices (docs/deciding.md): nothing.
// DynamicResources has no PreFilterExtensions, so the dry run's
// AddPod/RemovePod never reach it; its allocated state is gathered once, at
// PreFilter, from every allocated claim of the cluster, so a victim's
// claims keep their devices through the dry run; and every failure of its
// Filter is UnschedulableAndUnresolvable, so a node it rejects is never a
// candidate. The cases "every GPU held by a victim's claim", "n1's GPU held
// by its victim, n2's free" and "allocated claim available on n2 only" pin
// it.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

const draDriver = "gpu.example.com"

// draCluster: nodes n1, n2 and n3 of 4 cpu, each full with a pod of
// priority 0 asking 3 cpu (the preemptor, asking 2, must preempt); n1 and
// n2 publish one GPU each (ResourceSlice of draDriver, pool = node name,
// device gpu-0 with attribute model a100 on n1, h100 on n2), n3 none; a
// DeviceClass gpu selects draDriver's devices.
func draCluster() *preempt.Cluster {
	c := &preempt.Cluster{}
	c.DeviceClasses = []*resourcev1.DeviceClass{draClass("gpu")}
	for _, n := range []string{"n1", "n2", "n3"} {
		c.Nodes = append(c.Nodes, node(n, "4").Obj())
		c.Pods = append(c.Pods, pod("default", "low-"+n, 0).CPU("3").Bound(n, ago(1)).Obj())
	}
	c.ResourceSlices = []*resourcev1.ResourceSlice{draSlice("n1", "a100"), draSlice("n2", "h100")}
	return c
}

func draClass(name string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-class-" + name)},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", draDriver)},
		}}},
	}
}

// draSlice is node's slice: one GPU, gpu-0, of model.
func draSlice(node, model string) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu", UID: types.UID("uid-slice-" + node)},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: draDriver, NodeName: ptr.To(node),
			Pool: resourcev1.ResourcePool{Name: node, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"model": {StringValue: ptr.To(model)},
			}}},
		},
	}
}

// draClaim is a claim of namespace default with one request "gpu" for
// count devices of class.
func draClaim(name, class string, count int64) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-claim-" + name)},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count},
		}}}},
	}
}

// draAllocate allocates claim gpu-0 of node's pool, available on node
// only, reserved for the pods named (uid "uid-default-<name>").
func draAllocate(claim *resourcev1.ResourceClaim, node string, reservedFor ...string) *resourcev1.ResourceClaim {
	claim.Status.Allocation = &resourcev1.AllocationResult{
		Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
			Request: "gpu", Driver: draDriver, Pool: node, Device: "gpu-0",
		}}},
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}
	for _, p := range reservedFor {
		claim.Status.ReservedFor = append(claim.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: p, UID: types.UID("uid-default-" + p)})
	}
	return claim
}

// draUses makes p use the claims named, by name, each through a pod
// claim of the same name.
func draUses(p *v1.Pod, claims ...string) *v1.Pod {
	for _, name := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: name, ResourceClaimName: ptr.To(name)})
		p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: name})
	}
	return p
}

// draHold makes the low pod on node hold that node's GPU through claim
// held-<node>, allocated and reserved for it.
func draHold(c *preempt.Cluster, node string) {
	c.ResourceClaims = append(c.ResourceClaims, draAllocate(draClaim("held-"+node, "gpu", 1), node, "low-"+node))
	for _, p := range c.Pods {
		if p.Name == "low-"+node {
			draUses(p, "held-"+node)
		}
	}
}

// draPreemptor is priority 10, 2 cpu, using the claims named.
func draPreemptor(claims ...string) func() *v1.Pod {
	return func() *v1.Pod { return draUses(pod("default", "preemptor", 10).CPU("2").Obj(), claims...) }
}

type draCase struct {
	name    string
	cluster func() *preempt.Cluster
	pod     func() *v1.Pod
}

func draWith(mod func(c *preempt.Cluster)) func() *preempt.Cluster {
	return func() *preempt.Cluster {
		c := draCluster()
		mod(c)
		return c
	}
}

var draCases = []draCase{
	{
		// No claim: DynamicResources Skips.
		name:    "no claim",
		cluster: draCluster,
		pod:     draPreemptor(),
	},
	{
		// Filter phase: NodeResourcesFit fails every node first
		// (Insufficient cpu, Unschedulable); the dry run on n3, its victim
		// gone, fails DynamicResources (no device): n1 is picked, its GPU
		// allocatable.
		name: "claim allocatable on n1 and n2 only, preemption frees the cpu",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// Room for the cpu on n3 (its low pod asks 1), no device there:
		// the claim is what leaves n3 out; preemption picks n1.
		name: "cpu free on n3, which has no device",
		cluster: draWith(func(c *preempt.Cluster) {
			c.Pods[2].Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1")
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// Each GPU is held by the claim of its node's low pod, a victim
		// on CPU: evicting it frees no device in the dry run, so no node
		// is a candidate.
		name: "every GPU held by a victim's claim: preemption does not free it",
		cluster: draWith(func(c *preempt.Cluster) {
			draHold(c, "n1")
			draHold(c, "n2")
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// n1's GPU is held by its victim (priority 0), n2's is free (its
		// victim has priority 5): without DynamicResources n1 would win
		// (lower victim priority); with it only n2 is a candidate.
		name: "n1's GPU held by its victim, n2's free",
		cluster: draWith(func(c *preempt.Cluster) {
			draHold(c, "n1")
			c.Pods[1].Spec.Priority = ptr.To[int32](5)
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// Two GPUs wanted, one per node: no node can allocate the claim.
		name: "node short of devices: two GPUs asked, one per node",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 2))
		}),
		pod: draPreemptor("want"),
	},
	{
		// The preemptor shares a claim allocated on n2 and reserved for
		// n2's low pod (which it may share: CanBeReserved): n1 and n3
		// fail the allocation's node selector ("resourceclaim not
		// available on the node"), n2 is the only candidate and its
		// victim, the claim's other consumer, is evicted.
		name: "allocated claim available on n2 only, shared with n2's low pod",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceClaims = append(c.ResourceClaims, draAllocate(draClaim("shared", "gpu", 1), "n2", "low-n2"))
			draUses(c.Pods[1], "shared")
		}),
		pod: draPreemptor("shared"),
	},
	{
		// The shared claim is reserved for a pod of another node, which
		// is not a victim (priority 20).
		name: "allocated claim available on n1 only, reserved by a pod the preemptor cannot evict",
		cluster: draWith(func(c *preempt.Cluster) {
			c.Nodes = append(c.Nodes, node("n4", "4").Obj())
			c.Pods = append(c.Pods, draUses(pod("default", "keeper", 20).CPU("1").Bound("n4", ago(1)).Obj(), "shared"))
			c.ResourceClaims = append(c.ResourceClaims, draAllocate(draClaim("shared", "gpu", 1), "n1", "keeper"))
		}),
		pod: draPreemptor("shared"),
	},
	{
		// The claim is reserved for as many consumers as the API allows
		// (ResourceClaimReservedForMaxSize), none the preemptor. PreFilter
		// fails with "resourceclaim in use" only when the claim cannot be
		// reserved, and v1.37.2's resourceclaim.CanBeReserved is always
		// true ("no restrictions on sharing"): the preemptor shares it,
		// on n1, its allocation's node.
		name: "shared claim reserved for the most consumers: not in use",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draAllocate(draClaim("shared", "gpu", 1), "n1")
			for i := range resourcev1.ResourceClaimReservedForMaxSize {
				rc.Status.ReservedFor = append(rc.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: fmt.Sprintf("other-%d", i), UID: types.UID(fmt.Sprintf("uid-other-%d", i))})
			}
			c.ResourceClaims = append(c.ResourceClaims, rc)
		}),
		pod: draPreemptor("shared"),
	},
	{
		name: "device class missing",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "tpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// DRAPrioritizedList is GA (locked on) in v1.37: the first
		// subrequest (two GPUs) fits no node, the second (one) fits n1
		// and n2.
		name: "prioritized list: two GPUs, else one",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draClaim("want", "", 0)
			rc.Spec.Devices.Requests[0].Exactly = nil
			rc.Spec.Devices.Requests[0].FirstAvailable = []resourcev1.DeviceSubRequest{
				{Name: "two", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
				{Name: "one", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
			}
			c.ResourceClaims = append(c.ResourceClaims, rc)
		}),
		pod: draPreemptor("want"),
	},
	{
		name: "prioritized list: a subrequest's class missing",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draClaim("want", "", 0)
			rc.Spec.Devices.Requests[0].Exactly = nil
			rc.Spec.Devices.Requests[0].FirstAvailable = []resourcev1.DeviceSubRequest{
				{Name: "big", DeviceClassName: "gpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 2},
				{Name: "tpu", DeviceClassName: "tpu", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1},
			}
			c.ResourceClaims = append(c.ResourceClaims, rc)
		}),
		pod: draPreemptor("want"),
	},
	{
		// A CEL selector in the request: only n2's GPU is an h100.
		name: "selector picks n2's device",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draClaim("want", "gpu", 1)
			rc.Spec.Devices.Requests[0].Exactly.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: fmt.Sprintf("device.attributes[%q].model == \"h100\"", draDriver),
			}}}
			c.ResourceClaims = append(c.ResourceClaims, rc)
		}),
		pod: draPreemptor("want"),
	},
	{
		// A selector that fails at run time (no such attribute) is an
		// allocator error: Filter's Error ends the scheduling cycle.
		name: "selector error",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draClaim("want", "gpu", 1)
			rc.Spec.Devices.Requests[0].Exactly.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: fmt.Sprintf("device.attributes[%q].memory > 1", draDriver),
			}}}
			c.ResourceClaims = append(c.ResourceClaims, rc)
		}),
		pod: draPreemptor("want"),
	},
	{
		// A device tainted NoSchedule (DRADeviceTaints, on by default)
		// is not allocated: n2 is left.
		name: "n1's device tainted NoSchedule",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceSlices[0].Spec.Devices[0].Taints = []resourcev1.DeviceTaint{{Key: "broken", Effect: resourcev1.DeviceTaintEffectNoSchedule}}
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// A slice of devices reachable from every node (allNodes): the
		// claim allocates anywhere, n3 included.
		name: "network-attached device reachable from every node",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceSlices = []*resourcev1.ResourceSlice{{
				ObjectMeta: metav1.ObjectMeta{Name: "fabric", UID: "uid-slice-fabric"},
				Spec: resourcev1.ResourceSliceSpec{Driver: draDriver, AllNodes: ptr.To(true),
					Pool:    resourcev1.ResourcePool{Name: "fabric", ResourceSliceCount: 1},
					Devices: []resourcev1.Device{{Name: "gpu-0"}}},
			}}
			c.Pods[0].Spec.Priority = ptr.To[int32](5)
			c.Pods[1].Spec.Priority = ptr.To[int32](5)
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: draPreemptor("want"),
	},
	{
		// Two claims: one allocated on n2 and shared with n2's low pod,
		// one to allocate. n1 allocates the second but fails the first's
		// node selector ("resourceclaim not available on the node"); n3
		// fails the allocation first.
		name: "allocated claim on n2 and one to allocate",
		cluster: draWith(func(c *preempt.Cluster) {
			c.ResourceClaims = append(c.ResourceClaims, draAllocate(draClaim("shared", "gpu", 1), "n2", "low-n2"), draClaim("want", "gpu", 1))
			draUses(c.Pods[1], "shared")
			c.ResourceSlices[1].Spec.Devices = append(c.ResourceSlices[1].Spec.Devices, resourcev1.Device{Name: "gpu-1"})
		}),
		pod: draPreemptor("shared", "want"),
	},
	{
		// The claim from a template, named in the pod's status and
		// controlled by the pod.
		name: "claim from a template",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draClaim("preemptor-gpu", "gpu", 1)
			rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "preemptor", UID: "uid-default-preemptor", Controller: ptr.To(true)}}
			c.ResourceClaims = append(c.ResourceClaims, rc)
			c.ResourceClaimTemplates = []*resourcev1.ResourceClaimTemplate{{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "one-gpu", UID: "uid-one-gpu"},
				Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: rc.Spec},
			}}
		}),
		pod: func() *v1.Pod {
			p := pod("default", "preemptor", 10).CPU("2").Obj()
			p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
			p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
			p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("preemptor-gpu")}}
			return p
		},
	},
	{
		// A victim's claim uses n1's GPU with admin access, which
		// allocates nothing: n1's GPU stays free.
		name: "n1's GPU used with admin access by its victim",
		cluster: draWith(func(c *preempt.Cluster) {
			rc := draAllocate(draClaim("admin", "gpu", 1), "n1", "low-n1")
			rc.Spec.Devices.Requests[0].Exactly.AdminAccess = ptr.To(true)
			rc.Status.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
			c.ResourceClaims = append(c.ResourceClaims, rc, draClaim("want", "gpu", 1))
			draUses(c.Pods[0], "admin")
			c.Pods[1].Spec.Priority = ptr.To[int32](5)
		}),
		pod: draPreemptor("want"),
	},
}

func draImpls() []preempt.Implementation {
	return []preempt.Implementation{reference.Impl{}, optimized.Impl{}, upstream.Impl{ListOrderTie: true}}
}

type draOutcome struct {
	Filter   preempt.FilterResult
	Decision preempt.Decision
	Err      string
}

func draDecide(impl preempt.Implementation, tc draCase) draOutcome {
	res, err := harness.Decide(context.Background(), impl, tc.cluster(), tc.pod(), preempt.DefaultConfig(), 0, now)
	if err != nil {
		return draOutcome{Err: err.Error()}
	}
	return draOutcome{Filter: res.Filter, Decision: res.Decision}
}

// Issue 32: reference, optimized and the upstream adapter answer alike on
// pods with resource claims, messages included.
func TestDynamicResourcesConformance(t *testing.T) {
	for _, tc := range draCases {
		t.Run(tc.name, func(t *testing.T) {
			want := draDecide(upstream.Impl{ListOrderTie: true}, tc)
			if want.Err != "" && !strings.Contains(want.Err, "DynamicResources") {
				t.Fatalf("upstream: %s", want.Err)
			}
			for _, impl := range draImpls() {
				if diff := cmp.Diff(want, draDecide(impl, tc), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s differs from upstream (-upstream +%s):\n%s", impl.Name(), impl.Name(), diff)
				}
			}
			t.Logf("filter %v\ndecision %s %q node %q victims %v err %q", want.Filter.NodeStatuses, want.Decision.Status, want.Decision.Message,
				want.Decision.NominatedNode, want.Decision.Victims, want.Err)
		})
	}
}

// Every case gets one answer, however often each implementation is asked.
func TestDynamicResourcesDeterministic(t *testing.T) {
	const runs = 4
	for _, tc := range draCases {
		t.Run(tc.name, func(t *testing.T) {
			for _, impl := range draImpls() {
				first := draDecide(impl, tc)
				for i := 1; i < runs; i++ {
					if diff := cmp.Diff(first, draDecide(impl, tc)); diff != "" {
						t.Fatalf("%s: run %d differs from run 0:\n%s", impl.Name(), i, diff)
					}
				}
			}
		})
	}
}

// An evaluator with FilterCodes (optimized's, which has its own fast
// paths) gives Filter's codes.
func TestDynamicResourcesFilterCodes(t *testing.T) {
	for _, tc := range draCases {
		t.Run(tc.name, func(t *testing.T) { checkFilterCodes(t, draImpls(), tc.cluster, tc.pod) })
	}
}

// SelectVictimsOnNode on each node, the request calling it Unschedulable:
// the three agree (a victim's devices stay allocated: a node whose device
// a victim holds has no victims to offer), except after a PreFilter
// failure, which kube-scheduler's PostFilter never reaches with a
// potential node (the failure is every node's): there the upstream
// adapter's DynamicResources Filter reads the empty state its failed
// PreFilter wrote and passes, where reference and optimized return the
// PreFilter's status; such cases are compared between reference and
// optimized only.
func TestDynamicResourcesSelectVictims(t *testing.T) {
	for _, tc := range draCases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cluster()
			preFilterFailed := false
			for _, st := range draDecide(upstream.Impl{ListOrderTie: true}, tc).Filter.NodeStatuses {
				preFilterFailed = preFilterFailed || (st.Code == preempt.UnschedulableAndUnresolvable && !strings.Contains(st.Reasons[0], "allocat") && !strings.Contains(st.Reasons[0], "not available"))
			}
			for _, n := range c.Nodes {
				ref := selectVictims(t, reference.Impl{}, tc.cluster(), tc.pod(), n.Name)
				if diff := cmp.Diff(ref, selectVictims(t, optimized.Impl{}, tc.cluster(), tc.pod(), n.Name), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: optimized differs from reference:\n%s", n.Name, diff)
				}
				if preFilterFailed {
					continue
				}
				up := selectVictims(t, upstream.Impl{ListOrderTie: true}, tc.cluster(), tc.pod(), n.Name)
				if diff := cmp.Diff(up, ref, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: reference differs from upstream (-upstream +reference):\n%s", n.Name, diff)
				}
			}
		})
	}
}

// What reference and optimized refuse of DynamicResources, and the
// upstream adapter (fixed at v1.37.2) refuses too: claims under another
// release's behaviour. Extended resources and binding conditions are
// modelled (dynamicresources_extended_test.go).
func TestDynamicResourcesRefused(t *testing.T) {
	other := preempt.DefaultConfig()
	other.Release = "v1.36.3"
	for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
		c := draCluster()
		c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		if u := impl.(preempt.GateUseLimited).UnmodelledGateUse(c, draPreemptor("want")(), other); u == nil || u.Feature != "dynamic resource allocation at release v1.36.3" {
			t.Errorf("%s: another release: UnmodelledGateUse = %v, want a refusal", impl.Name(), u)
		}
	}
}
