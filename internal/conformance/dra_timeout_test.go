package conformance

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// draSearchCase: n2 publishes 128 GPUs of five models, and the preemptor's
// claim asks for four requests of 8 GPUs each, all of one model
// (matchAttribute): no model has 32, and the structured allocator's
// search for a placement that cannot exist is exponential. n1 and n3 are
// as in draCluster (one GPU, none).
var draSearchCase = draCase{
	name: "an allocation search that never ends on n2",
	cluster: draWith(func(c *preempt.Cluster) {
		s := c.ResourceSlices[1]
		s.Spec.Devices = nil
		for i := range 128 {
			s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
				Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To(string(rune('a' + i%5)))}}})
		}
		rc := draClaim("many", "gpu", 8)
		req := rc.Spec.Devices.Requests[0]
		rc.Spec.Devices.Requests = nil
		for i := range 4 {
			r := *req.DeepCopy()
			r.Name = fmt.Sprintf("r%d", i)
			rc.Spec.Devices.Requests = append(rc.Spec.Devices.Requests, r)
		}
		rc.Spec.Devices.Constraints = []resourcev1.DeviceConstraint{{MatchAttribute: ptr.To(resourcev1.FullyQualifiedName(draDriver + "/model"))}}
		c.ResourceClaims = append(c.ResourceClaims, rc)
	}),
	pod: func() *v1.Pod {
		p := draPreemptor()()
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("many")}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		return p
	},
}

// DynamicResources' Filter timeout (DRASchedulerFilterTimeout, on by
// default in v1.37.2: 10 s per node): an allocation that outlasts it is
// an Error on that node, and kube-scheduler retries the pod rather than
// preempting. The upstream adapter runs v1.37.2's plugin with its default
// arguments (10 s); reference and optimized bound the allocation by
// preempt.DRAFilterTimeout, lowered here to 1 s, and answer as upstream,
// message included, instead of searching for as long as the allocator
// likes (before, decide hung on such a claim).
func TestDynamicResourcesFilterTimeout(t *testing.T) {
	start := time.Now()
	want := draDecide(upstream.Impl{ListOrderTie: true}, draSearchCase)
	t.Logf("upstream: %v: %s %q", time.Since(start).Round(time.Millisecond), want.Decision.Status, want.Decision.Message)
	if want.Decision.Status != preempt.Error || want.Decision.Message != preempt.DRAFilterTimeoutReason("n2") {
		t.Fatalf("upstream: %+v, want the timeout on n2", want)
	}
	defer func(d time.Duration) { preempt.DRAFilterTimeout = d }(preempt.DRAFilterTimeout)
	preempt.DRAFilterTimeout = time.Second
	for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{}} {
		start := time.Now()
		got := draDecide(impl, draSearchCase)
		took := time.Since(start)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s differs from upstream (-upstream +%s):\n%s", impl.Name(), impl.Name(), diff)
		}
		// One node's search, not one per node or per dry run.
		if took > 4*preempt.DRAFilterTimeout {
			t.Errorf("%s took %v, more than 4 times the timeout", impl.Name(), took)
		}
	}
}
