package conformance

// DynamicResources' conformance cases for extended resources a DeviceClass
// backs (DRAExtendedResource, GA and locked on in v1.37) and for claims
// allocated with binding conditions, added to draCases: every test over
// draCases (TestDynamicResourcesConformance against the upstream adapter,
// TestDynamicResourcesDeterministic, TestDynamicResourcesFilterCodes,
// TestDynamicResourcesSelectVictims) runs them.
//
// Extended resources: where a node advertises the resource (allocatable
// above zero) NodeResourcesFit counts it, and a victim's request of it is
// freed by the dry run's RemovePod; where it does not, NodeResourcesFit
// leaves it to DynamicResources, which allocates a claim made for the pod
// (extendeddynamicresources.go) from the devices no claim holds: a
// victim's claim keeps its devices, as with any claim.
//
// Binding conditions: Filter finds a claim unavailable when a binding
// condition is not met yet and allocationTimestamp + 600s is before the
// clock (time.Now() upstream, Request.Now here): the cases allocate in
// 2000 (timed out at any wall time) or in 2200 (not yet), so the upstream
// adapter answers them alike whenever it runs;
// TestDynamicResourcesBindingTimeoutReadsRequestNow checks that reference
// and optimized read Request.Now.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

const draExtended = "example.com/gpu"

func init() { draCases = append(draCases, draExtendedCases...) }

// draBacked is draCluster with class gpu backing draExtended.
func draBacked(mod func(c *preempt.Cluster)) func() *preempt.Cluster {
	return draWith(func(c *preempt.Cluster) {
		c.DeviceClasses[0].Spec.ExtendedResourceName = ptr.To(draExtended)
		mod(c)
	})
}

// draAdvertise makes node i advertise q of resource name.
func draAdvertise(c *preempt.Cluster, i int, name v1.ResourceName, q string) {
	c.Nodes[i].Status.Allocatable[name] = resource.MustParse(q)
	c.Nodes[i].Status.Capacity[name] = resource.MustParse(q)
}

// draAsking is the preemptor (priority 10, 2 cpu) asking for q of name.
func draAsking(name v1.ResourceName, q string) func() *v1.Pod {
	return func() *v1.Pod { return pod("default", "preemptor", 10).CPU("2").Request(name, q).Obj() }
}

// draBinding allocates claim name on node, shared with node's low pod,
// its device with binding condition "attached" and failure condition
// "failed", allocated at the time given.
func draBinding(c *preempt.Cluster, name, node string, i int, at time.Time) *resourcev1.ResourceClaim {
	rc := draAllocate(draClaim(name, "gpu", 1), node, "low-"+node)
	r := &rc.Status.Allocation.Devices.Results[0]
	r.BindingConditions = []string{"attached"}
	r.BindingFailureConditions = []string{"failed"}
	rc.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: at}
	c.ResourceClaims = append(c.ResourceClaims, rc)
	draUses(c.Pods[i], name)
	return rc
}

// draDeviceCondition sets the device status of rc's device with
// condition cond true.
func draDeviceCondition(rc *resourcev1.ResourceClaim, cond string) {
	r := rc.Status.Allocation.Devices.Results[0]
	rc.Status.Devices = append(rc.Status.Devices, resourcev1.AllocatedDeviceStatus{
		Driver: r.Driver, Pool: r.Pool, Device: r.Device,
		Conditions: []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Time{Time: now}}},
	})
}

var draExtendedCases = []draCase{
	{
		// No node advertises example.com/gpu: NodeResourcesFit leaves it
		// to DynamicResources, which allocates n1's or n2's GPU; the dry
		// run frees cpu on n1 first.
		name:    "extended resource backed by a class, advertised by no node",
		cluster: draBacked(func(*preempt.Cluster) {}),
		pod:     draAsking(draExtended, "1"),
	},
	{
		// The class's implicit name.
		name:    "extended resource by the class's implicit name",
		cluster: draWith(func(*preempt.Cluster) {}),
		pod:     draAsking(v1.ResourceName(resourcev1.ResourceDeviceClassPrefix+"gpu"), "1"),
	},
	{
		// n3 advertises two example.com/gpu (a device plugin's) and its
		// low pod holds both through NodeResourcesFit: the dry run frees
		// them. n1's and n2's GPUs are held by their low pods' claims,
		// which preemption does not free: n3 is the only candidate,
		// though its victim has the highest priority.
		name: "victim holding the resource through NodeResourcesFit is freed, through a claim is not",
		cluster: draBacked(func(c *preempt.Cluster) {
			draAdvertise(c, 2, draExtended, "2")
			c.Pods[2].Spec.Containers[0].Resources.Requests[draExtended] = resource.MustParse("2")
			c.Pods[2].Spec.Priority = ptr.To[int32](5)
			draHold(c, "n1")
			draHold(c, "n2")
		}),
		pod: draAsking(draExtended, "1"),
	},
	{
		// n1 advertises the resource, and holds less than asked: its
		// NodeResourcesFit fails with "Insufficient example.com/gpu"
		// (UnschedulableAndUnresolvable: 2 > 1); n2 has no device for
		// two; none fits.
		name: "node advertising less than asked; DynamicResources short elsewhere",
		cluster: draBacked(func(c *preempt.Cluster) {
			draAdvertise(c, 0, draExtended, "1")
		}),
		pod: draAsking(draExtended, "2"),
	},
	{
		// n1 advertises zero: left to DynamicResources, which allocates
		// n1's GPU.
		name: "node advertising zero leaves it to DynamicResources",
		cluster: draBacked(func(c *preempt.Cluster) {
			draAdvertise(c, 0, draExtended, "0")
			c.Pods[1].Spec.Priority = ptr.To[int32](5)
		}),
		pod: draAsking(draExtended, "1"),
	},
	{
		// Every node advertises it: NodeResourcesFit counts it, and
		// DynamicResources (which made a claim all the same) passes.
		name: "every node advertises the backed resource",
		cluster: draBacked(func(c *preempt.Cluster) {
			for i := range c.Nodes {
				draAdvertise(c, i, draExtended, "1")
			}
		}),
		pod: draAsking(draExtended, "1"),
	},
	{
		// A user claim and an extended resource: both allocate on n2,
		// which has two GPUs; n1 has one.
		name: "user claim and extended resource together",
		cluster: draBacked(func(c *preempt.Cluster) {
			c.ResourceSlices[1].Spec.Devices = append(c.ResourceSlices[1].Spec.Devices, resourcev1.Device{Name: "gpu-1"})
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: func() *v1.Pod {
			p := draAsking(draExtended, "1")()
			return draUses(p, "want")
		},
	},
	{
		// A user claim, and an extended resource every node advertises:
		// the claim for the extended resources has no request, the user
		// claim allocates.
		name: "user claim, extended resource advertised everywhere",
		cluster: draBacked(func(c *preempt.Cluster) {
			for i := range c.Nodes {
				draAdvertise(c, i, draExtended, "1")
			}
			c.ResourceClaims = append(c.ResourceClaims, draClaim("want", "gpu", 1))
		}),
		pod: func() *v1.Pod { return draUses(draAsking(draExtended, "1")(), "want") },
	},
	{
		// An init container asking two, the container one: the init
		// container reuses the container's request and adds one; n2
		// has two GPUs, n1 one.
		name: "init container and container asking for the extended resource",
		cluster: draBacked(func(c *preempt.Cluster) {
			c.ResourceSlices[1].Spec.Devices = append(c.ResourceSlices[1].Spec.Devices, resourcev1.Device{Name: "gpu-1"})
		}),
		pod: func() *v1.Pod {
			p := draAsking(draExtended, "1")()
			p.Spec.InitContainers = []v1.Container{{Name: "init", Image: "busybox", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{draExtended: resource.MustParse("2")}}}}
			return p
		},
	},
	{
		// Two classes name the same extended resource: the newer backs
		// it (class tpu selects no device: nothing allocates).
		name: "two classes naming the resource: the newer backs it",
		cluster: draBacked(func(c *preempt.Cluster) {
			tpu := draClass("tpu")
			tpu.Spec.Selectors[0].CEL.Expression = `device.driver == "tpu.example.com"`
			tpu.Spec.ExtendedResourceName = ptr.To(draExtended)
			tpu.CreationTimestamp = metav1.Time{Time: now}
			c.DeviceClasses = append(c.DeviceClasses, tpu)
		}),
		pod: draAsking(draExtended, "1"),
	},
	{
		// A shared claim on n2 whose binding condition is not met, and
		// allocated in 2000: timed out, it is unavailable on every node.
		name: "binding conditions timed out",
		cluster: draWith(func(c *preempt.Cluster) {
			draBinding(c, "shared", "n2", 1, BindingLongAgo)
		}),
		pod: draPreemptor("shared"),
	},
	{
		// Allocated in 2200: not timed out, available on n2.
		name: "binding conditions not timed out",
		cluster: draWith(func(c *preempt.Cluster) {
			draBinding(c, "shared", "n2", 1, BindingFarAhead)
		}),
		pod: draPreemptor("shared"),
	},
	{
		// Its failure condition is true: unavailable, whatever the clock.
		name: "binding failure condition met",
		cluster: draWith(func(c *preempt.Cluster) {
			draDeviceCondition(draBinding(c, "shared", "n2", 1, BindingFarAhead), "failed")
		}),
		pod: draPreemptor("shared"),
	},
	{
		// Its binding condition is met: ready, the timeout is not read.
		name: "binding condition met long ago",
		cluster: draWith(func(c *preempt.Cluster) {
			draDeviceCondition(draBinding(c, "shared", "n2", 1, BindingLongAgo), "attached")
		}),
		pod: draPreemptor("shared"),
	},
}

// Reference and optimized read the binding timeout's clock from
// Request.Now (and Filter from SetNow): allocated 11 minutes before it,
// the claim has timed out (600s); 9 minutes before, it has not. The
// upstream adapter reads the wall clock, so it is not asked.
func TestDynamicResourcesBindingTimeoutReadsRequestNow(t *testing.T) {
	for _, tt := range []struct {
		ago       time.Duration
		candidate bool
	}{
		{11 * time.Minute, false},
		{9 * time.Minute, true},
		{601 * time.Second, false},
		{599 * time.Second, true},
	} {
		tc := draCase{
			cluster: draWith(func(c *preempt.Cluster) { draBinding(c, "shared", "n2", 1, now.Add(-tt.ago)) }),
			pod:     draPreemptor("shared"),
		}
		var outcomes []draOutcome
		for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
			got := draDecide(impl, tc)
			if got.Err != "" {
				t.Fatalf("%v: %s: %s", tt.ago, impl.Name(), got.Err)
			}
			if tt.candidate != (got.Decision.NominatedNode == "n2") {
				t.Errorf("%v before Request.Now: %s nominates %q, want n2: %v", tt.ago, impl.Name(), got.Decision.NominatedNode, tt.candidate)
			}
			// The filter phase stops at NodeResourcesFit (Insufficient
			// cpu); the dry run on n2, its victim gone, reaches
			// DynamicResources.
			timedOut := false
			for _, st := range got.Decision.NodeStatuses {
				timedOut = timedOut || (st.Node == "n2" && st.Code == preempt.UnschedulableAndUnresolvable && strings.Contains(strings.Join(st.Reasons, ","), "resourceclaim not available"))
			}
			if timedOut == tt.candidate {
				t.Errorf("%v before Request.Now: %s: dry-run statuses %v", tt.ago, impl.Name(), got.Decision.NodeStatuses)
			}
			outcomes = append(outcomes, got)
		}
		if diff := cmp.Diff(outcomes[0], outcomes[1]); diff != "" {
			t.Errorf("%v: optimized differs from reference (-reference +optimized):\n%s", tt.ago, diff)
		}
		// Filter reads the clock SetNow gave: a preemptor asking no cpu
		// fits n2 unless the claim timed out.
		for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
			ev, err := impl.NewEvaluator(tc.cluster())
			if err != nil {
				t.Fatal(err)
			}
			p := draUses(pod("default", "preemptor", 10).Obj(), "shared")
			for _, at := range []time.Time{now, now.Add(time.Hour), now} {
				preempt.SetFilterNow(ev, at)
				fits := slices.Contains(ev.Filter(context.Background(), p).Feasible, "n2")
				if want := tt.candidate && at.Equal(now); fits != want {
					t.Errorf("%v before %v: %s: Filter finds n2 feasible: %v, want %v", tt.ago, at, impl.Name(), fits, want)
				}
			}
		}
		// The same request an hour later: timed out whatever the age.
		for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
			res, err := harness.Decide(context.Background(), impl, tc.cluster(), tc.pod(), preempt.DefaultConfig(), 0, now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.NominatedNode != "" {
				t.Errorf("%v, an hour later: %s nominates %q, want none (timed out)", tt.ago, impl.Name(), res.Decision.NominatedNode)
			}
		}
	}
}

// What reference and optimized still refuse of DRA-backed extended
// resources: a claim an earlier cycle made for them, and a class that
// depends on the informer's order.
func TestDynamicResourcesExtendedRefused(t *testing.T) {
	earlier := draCase{
		cluster: draBacked(func(c *preempt.Cluster) {
			rc := draClaim("preemptor-extended-resources-x", "gpu", 1)
			rc.Annotations = map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}
			rc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "preemptor", UID: "uid-default-preemptor", Controller: ptr.To(true)}}
			c.ResourceClaims = append(c.ResourceClaims, rc)
		}),
		pod: draAsking(draExtended, "1"),
	}
	loser := draCase{
		cluster: draBacked(func(c *preempt.Cluster) {
			tpu := draClass("tpu")
			tpu.Spec.ExtendedResourceName = ptr.To(draExtended)
			c.DeviceClasses = append(c.DeviceClasses, tpu) // same time, larger name: gpu wins
		}),
		pod: draAsking(v1.ResourceName(resourcev1.ResourceDeviceClassPrefix+"tpu"), "1"),
	}
	for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
		if u := impl.(preempt.Limited).Unmodelled(earlier.cluster(), earlier.pod()); u == nil || !strings.Contains(u.Detail, "earlier cycle") {
			t.Errorf("%s: claim of an earlier cycle: Unmodelled = %v, want a refusal", impl.Name(), u)
		}
		if u := impl.(preempt.Limited).Unmodelled(loser.cluster(), loser.pod()); u == nil || !strings.Contains(u.Detail, "informer") {
			t.Errorf("%s: a losing class's implicit name: Unmodelled = %v, want a refusal", impl.Name(), u)
		}
		other := preempt.DefaultConfig()
		other.Release = "v1.36.3"
		if u := impl.(preempt.GateUseLimited).UnmodelledGateUse(draBacked(func(*preempt.Cluster) {})(), draAsking(draExtended, "1")(), other); u == nil || !strings.Contains(u.Detail, "extended resource") {
			t.Errorf("%s: another release: UnmodelledGateUse = %v, want a refusal", impl.Name(), u)
		}
	}
	if err := preempt.ValidateFeatureGates(map[string]bool{"DRAExtendedResource": false}); err == nil {
		t.Errorf("DRAExtendedResource=false validates; %s locks it on", preempt.CurrentRelease)
	}
}
