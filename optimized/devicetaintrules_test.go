package optimized

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/preempt"
)

// sliceView gives each selected device every matching rule's taint after
// its own, leaves the cluster's objects as they were (a device's taint
// list with room to spare is not appended to in place), shares the slices
// no rule touches, and is the cluster's own list without a rule.
func TestSliceView(t *testing.T) {
	own := make([]resourcev1.DeviceTaint, 1, 4) // room for an append in place
	own[0] = resourcev1.DeviceTaint{Key: "own", Effect: resourcev1.DeviceTaintEffectNoSchedule}
	slice := func(name, driver, pool string, devices ...resourcev1.Device) *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.ResourceSliceSpec{Driver: driver, Pool: resourcev1.ResourcePool{Name: pool}, Devices: devices}}
	}
	rule := func(key string, sel *resourcev1.DeviceTaintSelector) *resourcev1.DeviceTaintRule {
		return &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: key},
			Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: resourcev1.DeviceTaint{Key: key, Effect: resourcev1.DeviceTaintEffectNoExecute}}}
	}
	c := &preempt.Cluster{ResourceSlices: []*resourcev1.ResourceSlice{
		slice("a", "gpu", "p1", resourcev1.Device{Name: "d0", Taints: own}, resourcev1.Device{Name: "d1"}),
		slice("b", "nic", "p1", resourcev1.Device{Name: "d0"}),
		slice("c", "gpu", "p2", resourcev1.Device{Name: "d0"}),
	}}
	if got := sliceView(c); &got[0] != &c.ResourceSlices[0] {
		t.Errorf("without rules: a list of its own")
	}
	c.DeviceTaintRules = []*preempt.DeviceTaintRule{
		rule("pool-p1-gpu", &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu"), Pool: ptr.To("p1")}),
		rule("d0", &resourcev1.DeviceTaintSelector{Device: ptr.To("d0"), Pool: ptr.To("p1")}),
		rule("none", nil),
	}
	before := c.DeepCopy()
	got := sliceView(c)
	if diff := cmp.Diff(before, c); diff != "" {
		t.Errorf("the cluster changed (-before +after):\n%s", diff)
	}
	if own[:2][1].Key != "" {
		t.Errorf("a device's own taint list was appended to in place: %v", own[:2])
	}
	taints := func(s *resourcev1.ResourceSlice) [][]string {
		var out [][]string
		for _, d := range s.Spec.Devices {
			var keys []string
			for _, tn := range d.Taints {
				keys = append(keys, tn.Key)
			}
			out = append(out, keys)
		}
		return out
	}
	want := [][][]string{{{"own", "pool-p1-gpu", "d0"}, {"pool-p1-gpu"}}, {{"d0"}}, {nil}}
	for i, s := range got {
		if diff := cmp.Diff(want[i], taints(s)); diff != "" {
			t.Errorf("slice %s's taints (-want +got):\n%s", s.Name, diff)
		}
	}
	if got[2] != c.ResourceSlices[2] {
		t.Errorf("slice c, which no rule touches, is copied")
	}
}
