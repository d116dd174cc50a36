package loader

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// draDump is a cluster whose node publishes two GPUs (a ResourceSlice of
// driver gpu.example.com), a class of them, a claim asking for one,
// allocated and reserved for the pod on the node, and a template.
const draDump = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {allocatable: {cpu: "4", pods: "10"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: low, namespace: default, uid: uid-low}
  spec:
    nodeName: n1
    containers: [{name: c, image: i, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimName: low-gpu}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec:
    selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n1-gpu}
  spec:
    driver: gpu.example.com
    nodeName: n1
    pool: {name: n1, resourceSliceCount: 1}
    devices: [{name: gpu-0}, {name: gpu-1}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: low-gpu, namespace: default, uid: uid-low-gpu}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
  status:
    allocation:
      devices:
        results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]
    reservedFor: [{resource: pods, name: low, uid: uid-low}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: one-gpu, namespace: default}
  spec:
    spec:
      devices:
        requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]
`

// Issue 32: a dump's resource.k8s.io/v1 objects are read (they were
// skipped as kinds the filters do not read), defaulted as the API server
// defaults them (a request's allocation mode and count), and kept in the
// cluster.
func TestLoadReadsResourceObjects(t *testing.T) {
	c, notes, err := LoadCluster("cluster.yaml", []byte(draDump))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, "skipped") {
			t.Errorf("note %q: no object should be skipped", n)
		}
	}
	if len(c.ResourceClaims) != 1 || len(c.ResourceClaimTemplates) != 1 || len(c.ResourceSlices) != 1 || len(c.DeviceClasses) != 1 {
		t.Fatalf("read %d claims, %d templates, %d slices, %d classes; want one each", len(c.ResourceClaims), len(c.ResourceClaimTemplates), len(c.ResourceSlices), len(c.DeviceClasses))
	}
	for what, ex := range map[string]*resourcev1.ExactDeviceRequest{
		"the claim's request":    c.ResourceClaims[0].Spec.Devices.Requests[0].Exactly,
		"the template's request": c.ResourceClaimTemplates[0].Spec.Spec.Devices.Requests[0].Exactly,
	} {
		if ex.AllocationMode != resourcev1.DeviceAllocationModeExactCount || ex.Count != 1 {
			t.Errorf("%s: allocation mode %q, count %d; want ExactCount and 1, as the API server defaults them", what, ex.AllocationMode, ex.Count)
		}
	}
	if got := c.ResourceClaims[0].Status.Allocation.Devices.Results[0].Device; got != "gpu-0" {
		t.Errorf("the claim's allocation holds %q, want gpu-0", got)
	}
}

// A resource.k8s.io object of another version than v1 is refused, naming
// the version to ask kubectl for.
func TestLoadRefusesOtherResourceVersions(t *testing.T) {
	dump := strings.Replace(draDump, "apiVersion: resource.k8s.io/v1\n  kind: DeviceClass", "apiVersion: resource.k8s.io/v1beta2\n  kind: DeviceClass", 1)
	_, _, err := LoadCluster("cluster.yaml", []byte(dump))
	want := `deviceclass gpu.example.com: unsupported apiVersion "resource.k8s.io/v1beta2" for kind DeviceClass: the loader reads resource.k8s.io/v1, which kube-scheduler ` +
		preempt.CurrentRelease + ` reads (kubectl get deviceclasses.v1.resource.k8s.io asks for it)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want the version refused", err)
	}
}

// The resource objects survive a List written by synth.ListYAML (as
// compare upgrade writes a reproducer).
func TestResourceObjectsRoundTripThroughAList(t *testing.T) {
	c, _, err := LoadCluster("cluster.yaml", []byte(draDump))
	if err != nil {
		t.Fatal(err)
	}
	checkListRoundTrip(t, c)
}

// taintRule is a DeviceTaintRule tainting device gpu-1 of draDump's slice.
const taintRule = `- apiVersion: resource.k8s.io/v1
  kind: DeviceTaintRule
  metadata: {name: gpu-1-broken}
  spec:
    deviceSelector: {driver: gpu.example.com, pool: n1, device: gpu-1}
    taint: {key: example.com/broken, value: "true", effect: NoSchedule}
`

// A DeviceTaintRule (resource.k8s.io/v1, read by v1.37.2's ResourceSlice
// tracker under DRADeviceTaintRules) is read, not skipped as a kind the
// filters do not read, and survives a List written by synth.ListYAML.
func TestLoadReadsDeviceTaintRules(t *testing.T) {
	c, notes, err := LoadCluster("cluster.yaml", []byte(draDump+taintRule))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, "skipped") {
			t.Errorf("note %q: no object should be skipped", n)
		}
	}
	if len(c.DeviceTaintRules) != 1 {
		t.Fatalf("read %d DeviceTaintRules, want 1", len(c.DeviceTaintRules))
	}
	r := c.DeviceTaintRules[0]
	if r.Name != "gpu-1-broken" || r.Spec.DeviceSelector == nil || r.Spec.DeviceSelector.Device == nil || *r.Spec.DeviceSelector.Device != "gpu-1" ||
		r.Spec.Taint.Effect != resourcev1.DeviceTaintEffectNoSchedule || r.Spec.Taint.Key != "example.com/broken" {
		t.Errorf("read %+v, want the rule as written", r)
	}
	checkListRoundTrip(t, c)
}

// A malformed DeviceTaintRule is refused naming it: an unknown effect
// (kube-apiserver's validation), a field of the wrong type, and another
// version than v1.
func TestLoadRefusesMalformedDeviceTaintRules(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown effect", "effect: NoSchedule", "effect: PreferNoSchedule",
			`devicetaintrule gpu-1-broken: spec.taint.effect: Unsupported value: "PreferNoSchedule"`},
		{"selector not an object", "deviceSelector: {driver: gpu.example.com, pool: n1, device: gpu-1}", "deviceSelector: [gpu-1]",
			`devicetaintrule gpu-1-broken: field spec.deviceSelector: an array where an object is wanted`},
		{"v1beta2", "apiVersion: resource.k8s.io/v1\n  kind: DeviceTaintRule", "apiVersion: resource.k8s.io/v1beta2\n  kind: DeviceTaintRule",
			`devicetaintrule gpu-1-broken: unsupported apiVersion "resource.k8s.io/v1beta2" for kind DeviceTaintRule: the loader reads resource.k8s.io/v1, which kube-scheduler ` +
				preempt.CurrentRelease + ` reads (kubectl get devicetaintrules.v1.resource.k8s.io asks for it)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rule := strings.Replace(taintRule, tc.from, tc.to, 1)
			if rule == taintRule {
				t.Fatalf("%q is not in the rule", tc.from)
			}
			_, _, err := LoadCluster("cluster.yaml", []byte(draDump+rule))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to hold %q", err, tc.want)
			}
		})
	}
}

// mustJSON and mustYAML marshal v for a test's input, failing it on error.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkListRoundTrip: c written by synth.ListYAML (as compare upgrade
// writes a reproducer) loads back as c.
func checkListRoundTrip(t *testing.T, c *preempt.Cluster) {
	t.Helper()
	b, err := synth.ListYAML(c)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := LoadCluster("again.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, again); diff != "" {
		t.Errorf("the cluster differs after the round trip (-first +again):\n%s", diff)
	}
}
