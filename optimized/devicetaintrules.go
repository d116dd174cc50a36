package optimized

import (
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// sliceView is the ResourceSlices DynamicResources allocates from: v1.37.2's
// ResourceSlice tracker's patched slices (resourceslice/tracker,
// applyPatches), which under DRADeviceTaintRules (GA, on by default) carry
// each DeviceTaintRule's taint on every device its selector matches: none
// without a selector; a set driver, pool or device name must be the
// slice's driver, its pool's name, the device's name. The taint goes as it
// is, whatever its effect or timeAdded (the allocator heeds NoSchedule and
// NoExecute only). Built once per snapshot: without rules it is the
// cluster's own list; with them, a slice a rule touches is a shallow copy
// with its own device array, and a tainted device its own taint list, the
// rest shared with the cluster (the allocator only reads them).
func sliceView(c *preempt.Cluster) []*resourcev1.ResourceSlice {
	rules := c.DeviceTaintRules
	if len(rules) == 0 {
		return c.ResourceSlices
	}
	var out []*resourcev1.ResourceSlice // made on the first slice a rule touches
	for i, slice := range c.ResourceSlices {
		var copied *resourcev1.ResourceSlice
		for _, rule := range rules {
			sel := rule.Spec.DeviceSelector
			if sel == nil || (sel.Driver != nil && *sel.Driver != slice.Spec.Driver) || (sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name) {
				continue
			}
			for d := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != slice.Spec.Devices[d].Name {
					continue
				}
				if copied == nil {
					cp := *slice
					cp.Spec.Devices = append([]resourcev1.Device(nil), slice.Spec.Devices...)
					copied = &cp
				}
				dev := &copied.Spec.Devices[d]
				if len(dev.Taints) == len(slice.Spec.Devices[d].Taints) {
					// Still the cluster's list: the device's own.
					dev.Taints = append(make([]resourcev1.DeviceTaint, 0, len(dev.Taints)+1), dev.Taints...)
				}
				dev.Taints = append(dev.Taints, rule.Spec.Taint)
			}
		}
		if copied == nil {
			if out != nil {
				out[i] = slice
			}
			continue
		}
		if out == nil {
			out = make([]*resourcev1.ResourceSlice, len(c.ResourceSlices))
			copy(out, c.ResourceSlices[:i])
		}
		out[i] = copied
	}
	if out == nil {
		return c.ResourceSlices
	}
	return out
}
