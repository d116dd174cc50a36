package conformance

// Gang members with extended resources a DeviceClass backs, and with
// claims allocated with binding conditions (v1.37.2's pod-group cycle;
// docs/deciding.md "Pod groups and gangs"). They join gangVolCases, so
// TestGangVolumesConformance decides each by upstream, the reference and
// optimized (one worker and two), three times, whole decisions equal.
// What they pin:
//
//   - a placed member's claim for its extended resources is allocated in
//     Reserve and in flight: its devices are taken for the next member
//     (each member's in-memory claim has its own UID);
//   - a victim's claim for its extended resources is an allocated claim
//     like any other: evicting the victim frees none of its devices;
//   - a claim allocated with binding conditions not met is unavailable
//     once the binding timeout has passed at the request's Now, on every
//     node; before, it is available where its allocation is;
//   - Filter lists the results of the claims it allocates before those of
//     the claims pending in the cycle, and Reserve hands them out in claim
//     order: a member sharing a pending claim (first) that allocates
//     another (its extended resources' claim, last) puts the pending
//     claim's devices in flight under the other's UID, and the devices it
//     allocated stay free for the next member.

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/preempt"
)

func init() { gangVolCases = append(gangVolCases, gangDRACases...) }

// gvBacked gives c the gpu class backing draExtended and, per node named,
// a slice of count GPUs (gpu-0...).
func gvBacked(c *preempt.Cluster, count int, nodes ...string) {
	dc := draClass("gpu")
	dc.Spec.ExtendedResourceName = ptr.To(draExtended)
	c.DeviceClasses = []*resourcev1.DeviceClass{dc}
	for _, n := range nodes {
		s := draSlice(n, "a100")
		s.Spec.Devices = nil
		for i := range count {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i)})
		}
		c.ResourceSlices = append(c.ResourceSlices, s)
	}
}

// gvAsks makes p ask for q of draExtended (its first container).
func gvAsks(p *v1.Pod, q string) *v1.Pod {
	p.Spec.Containers[0].Resources.Requests[draExtended] = resource.MustParse(q)
	p.Spec.Containers[0].Resources.Limits = v1.ResourceList{draExtended: resource.MustParse(q)}
	return p
}

// gvExtendedHeld makes pod p of c (bound) ask for one draExtended and hold
// device gpu-0 of its node through the claim an earlier cycle of its made
// for it (annotated, controlled by p, status.extendedResourceClaimStatus).
func gvExtendedHeld(c *preempt.Cluster, p *v1.Pod) {
	gvAsks(p, "1")
	rc := draAllocate(draClaim(p.Name+"-extended-resources-x", "gpu", 1), p.Spec.NodeName)
	rc.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: p.UID}}
	rc.Annotations = map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}
	rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(true)}}
	rc.Spec.Devices.Requests[0].Name = "container-0-request-0"
	rc.Status.Allocation.Devices.Results[0].Request = "container-0-request-0"
	c.ResourceClaims = append(c.ResourceClaims, rc)
	p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{
		ResourceClaimName: rc.Name,
		RequestMappings:   []v1.ContainerExtendedResourceRequest{{ContainerName: "c", ResourceName: draExtended, RequestName: "container-0-request-0"}},
	}
}

// gvBindingClaim is claim "bc", allocated gpu-0 on node with binding
// condition "attached" (failure condition "failed"), none met, at the
// time given, reserved for the pod of c named holder.
func gvBindingClaim(c *preempt.Cluster, node, holder string, at time.Time) *resourcev1.ResourceClaim {
	rc := draAllocate(draClaim("bc", "gpu", 1), node)
	rc.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: holder, UID: types.UID("uid-" + holder)}}
	r := &rc.Status.Allocation.Devices.Results[0]
	r.BindingConditions, r.BindingFailureConditions = []string{"attached"}, []string{"failed"}
	rc.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: at}
	for _, p := range c.Pods {
		if p.Name == holder {
			draUses(p, "bc")
		}
	}
	return rc
}

var gangDRACases = []gangVolCase{
	{
		name: "DRA extended: two members each asking a GPU, one GPU in the cluster: the second finds it in flight",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvBacked(c, 1, "n1")
			return c, gvGang(2), []*v1.Pod{gvAsks(gvMember("m1", "g"), "1"), gvAsks(gvMember("m2", "g"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success || d.Status == preempt.Schedulable {
				t.Errorf("want the gang short of GPUs, got %s %q %v", d.Status, d.Message, d.Nominations)
			}
		},
	},
	{
		name: "DRA extended: two members each asking a GPU, GPUs on n1 and n2: one on each",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(3)
			gvBacked(c, 1, "n1", "n2")
			return c, gvGang(2), []*v1.Pod{gvAsks(gvMember("m1", "g"), "1"), gvAsks(gvMember("m2", "g"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if len(d.Nominations) != 2 || d.Nominations[0].Node == d.Nominations[1].Node {
				t.Errorf("want the members on n1 and n2 (m1's GPU in flight), got %s %v", d.Status, d.Nominations)
			}
		},
	},
	{
		name: "DRA extended: two members asking two GPUs each, three on n1: minCount 1 places one",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			c.Pods = nil
			gvBacked(c, 3, "n1")
			return c, gvGang(1), []*v1.Pod{gvAsks(gvMember("m1", "g"), "2"), gvAsks(gvMember("m2", "g"), "2")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Schedulable || len(d.Placement) != 1 {
				t.Errorf("want one member placed, got %s %q %v", d.Status, d.Message, d.Placement)
			}
		},
	},
	{
		name: "DRA extended: a victim holds n1's GPU through its extended-resource claim: the gang goes to n2",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvBacked(c, 1, "n1", "n2")
			gvExtendedHeld(c, c.Pods[0])
			return c, gvGang(1), []*v1.Pod{gvAsks(gvMember("m1", "g"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Nominations) != 1 || d.Nominations[0].Node != "n2" {
				t.Errorf("want m1 nominated to n2, got %s %q %v", d.Status, d.Message, d.Nominations)
			}
		},
	},
	{
		name: "DRA extended: a victim holds the only GPU through its extended-resource claim: no preemption frees it",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvBacked(c, 1, "n1")
			gvExtendedHeld(c, c.Pods[0])
			return c, gvGang(1), []*v1.Pod{gvAsks(gvMember("m1", "g"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("upstream freed a victim's device: %+v", d)
			}
		},
	},
	{
		name: "DRA extended and a claim: each member needs two GPUs, n1 has two and n2 one",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvBacked(c, 2, "n1")
			gvBacked(c, 1, "n2")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("ca", "gpu", 1), draClaim("cb", "gpu", 1)}
			return c, gvGang(1), []*v1.Pod{gvAsks(draUses(gvMember("m1", "g"), "ca"), "1"), gvAsks(draUses(gvMember("m2", "g"), "cb"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if len(d.Nominations) != 1 || d.Nominations[0].Node != "n1" {
				t.Errorf("want m1 alone, on n1, got %s %q %v", d.Status, d.Message, d.Nominations)
			}
		},
	},
	{
		// m1 allocates "shared" (gpu-0). m2 shares it, pending, and
		// allocates gpu-1 for its extended resource; Reserve hands the
		// pending result to the extended claim, so gpu-1 is not in
		// flight and m3 takes it.
		name: "DRA extended after a pending shared claim: Reserve swaps their results, the device allocated stays free",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			gvBacked(c, 2, "n1")
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("shared", "gpu", 1)}
			small := func(name string) *v1.Pod { return pgPod(name, "", "g", 100, "100m").Obj() }
			return c, gvGang(3), []*v1.Pod{draUses(small("m1"), "shared"), gvAsks(draUses(small("m2"), "shared"), "1"), gvAsks(small("m3"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Schedulable || len(d.Placement) != 3 {
				t.Errorf("want all three placed on n1 (m2's gpu-1 not in flight), got %s %q %v", d.Status, d.Message, d.Placement)
			}
		},
	},
	{
		// The same with m2's second claim an ordinary one.
		name: "DRA: a claim after a pending shared claim: Reserve swaps their results, the device allocated stays free",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(1)
			gvBacked(c, 2, "n1")
			c.DeviceClasses[0].Spec.ExtendedResourceName = nil
			c.ResourceClaims = []*resourcev1.ResourceClaim{draClaim("shared", "gpu", 1), draClaim("own", "gpu", 1), draClaim("third", "gpu", 1)}
			small := func(name string) *v1.Pod { return pgPod(name, "", "g", 100, "100m").Obj() }
			return c, gvGang(3), []*v1.Pod{draUses(small("m1"), "shared"), draUses(small("m2"), "shared", "own"), draUses(small("m3"), "third")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Schedulable || len(d.Placement) != 3 {
				t.Errorf("want all three placed on n1 (own's gpu-1 not in flight), got %s %q %v", d.Status, d.Message, d.Placement)
			}
		},
	},
	{
		name: "DRA binding conditions: a member's claim pending binding, not timed out at the request's Now: placed where it is allocated",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvDRA(c, "n1", "n2")
			c.ResourceClaims = []*resourcev1.ResourceClaim{gvBindingClaim(c, "n2", "low-n2", BindingFarAhead)}
			return c, gvGang(1), []*v1.Pod{draUses(gvMember("m1", "g"), "bc")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Nominations) != 1 || d.Nominations[0].Node != "n2" {
				t.Errorf("want m1 nominated to n2, got %s %q %v", d.Status, d.Message, d.Nominations)
			}
		},
	},
	{
		name: "DRA binding conditions: a member's claim timed out at the request's Now: unavailable everywhere",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvDRA(c, "n1", "n2")
			c.ResourceClaims = []*resourcev1.ResourceClaim{gvBindingClaim(c, "n2", "low-n2", BindingLongAgo)}
			return c, gvGang(1), []*v1.Pod{draUses(gvMember("m1", "g"), "bc")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status == preempt.Success {
				t.Errorf("want no preemption (the claim timed out), got %s %q %v", d.Status, d.Message, d.Nominations)
			}
		},
	},
	{
		name: "DRA binding conditions with an extended resource and a claim: timed-out claim of one member, minCount 1",
		build: func() (*preempt.Cluster, *preempt.PodGroup, []*v1.Pod) {
			c := gvNodes(2)
			gvBacked(c, 2, "n1", "n2")
			c.ResourceClaims = []*resourcev1.ResourceClaim{gvBindingClaim(c, "n2", "low-n2", BindingLongAgo), draClaim("ca", "gpu", 1)}
			return c, gvGang(1), []*v1.Pod{gvAsks(draUses(gvMember("m1", "g"), "bc"), "1"), gvAsks(draUses(gvMember("m2", "g"), "ca"), "1")}
		},
		want: func(t *testing.T, d preempt.PodGroupDecision) {
			if d.Status != preempt.Success || len(d.Nominations) != 1 || d.Nominations[0].Name != "m2" {
				t.Errorf("want m2 alone nominated, got %s %q %v", d.Status, d.Message, d.Nominations)
			}
		},
	},
}
