package conformance

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// draMutants are reference's and optimized's DynamicResources deciding on
// a cluster with one thing of its claims hidden from it, as a filter that
// forgets to read it would decide (the volume mutants' way,
// mutants_volumes_test.go). The DRA conformance table must catch each
// (TestDynamicResourcesMutants), and so must the Claims property
// (TestMutants).
var draMutants = []struct {
	name string
	base preempt.Implementation
	hide func(c *preempt.Cluster)
}{
	// A filter that ignores where an allocated claim is available.
	{"claim-node-selector-ignored", reference.Impl{}, func(c *preempt.Cluster) {
		for _, rc := range c.ResourceClaims {
			if rc.Status.Allocation != nil {
				rc.Status.Allocation.NodeSelector = nil
			}
		}
	}},
	// A filter whose allocator takes no device as allocated, as if
	// evicting a victim freed the devices its claims hold.
	{"allocated-devices-not-counted", optimized.Impl{}, func(c *preempt.Cluster) {
		for _, rc := range c.ResourceClaims {
			rc.Status.Allocation = nil
			rc.Status.ReservedFor = nil
		}
	}},
	// A filter that reads no device class: every claim's class missing.
	{"device-classes-not-read", optimized.Impl{}, func(c *preempt.Cluster) {
		c.DeviceClasses = nil
	}},
	// A NodeResourcesFit and DynamicResources that do not read a class's
	// spec.extendedResourceName: a pod asking for that resource fits
	// only nodes advertising it.
	{"extended-resource-name-ignored", reference.Impl{}, func(c *preempt.Cluster) {
		for _, dc := range c.DeviceClasses {
			dc.Spec.ExtendedResourceName = nil
		}
	}},
	// A DynamicResources whose slices are the cluster's as they are, not
	// the ResourceSlice tracker's with the DeviceTaintRules applied.
	{"device-taint-rules-ignored", optimized.Impl{}, func(c *preempt.Cluster) {
		c.DeviceTaintRules = nil
	}},
	// A tracker that reads a rule's driver and device name but not its
	// pool: the rule taints the device of that name in every pool.
	{"device-taint-rule-pool-ignored", reference.Impl{}, func(c *preempt.Cluster) {
		for _, r := range c.DeviceTaintRules {
			if r.Spec.DeviceSelector != nil {
				r.Spec.DeviceSelector.Pool = nil
			}
		}
	}},
	// A DynamicResources that does not check binding conditions: a claim
	// whose binding timed out, or failed, stays available.
	{"binding-conditions-ignored", optimized.Impl{}, func(c *preempt.Cluster) {
		for _, rc := range c.ResourceClaims {
			if a := rc.Status.Allocation; a != nil {
				for i := range a.Devices.Results {
					a.Devices.Results[i].BindingConditions = nil
					a.Devices.Results[i].BindingFailureConditions = nil
				}
			}
		}
	}},
}

// draMutant is base on the cluster hide leaves.
type draMutant struct {
	name string
	base preempt.Implementation
	hide func(c *preempt.Cluster)
}

func (m draMutant) Name() string { return "mutant-" + m.name }

func (m draMutant) Unmodelled(c *preempt.Cluster, pod *v1.Pod) *preempt.Unmodelled {
	return m.base.(preempt.Limited).Unmodelled(c, pod)
}

func (m draMutant) UnmodelledGateUse(c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) *preempt.Unmodelled {
	return m.base.(preempt.GateUseLimited).UnmodelledGateUse(c, pod, cfg)
}

func (m draMutant) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	hidden := c.DeepCopy()
	m.hide(hidden)
	return m.base.NewEvaluator(hidden)
}

// Each DRA mutant decides some case of the conformance table otherwise
// than the upstream adapter.
func TestDynamicResourcesMutants(t *testing.T) {
	for _, m := range draMutants {
		impl := draMutant(m)
		caught := ""
		for _, tc := range draCases {
			want := draDecide(upstream.Impl{ListOrderTie: true}, tc)
			if diff := cmp.Diff(want, draDecide(impl, tc), cmpopts.EquateEmpty()); diff != "" {
				caught = tc.name
				break
			}
		}
		if caught == "" {
			t.Errorf("%s (on %s) SURVIVED every case of the DRA table", m.name, m.base.Name())
			continue
		}
		t.Logf("%s (on %s) caught by %q", m.name, m.base.Name(), caught)
	}
}
