package reference

import (
	"sort"

	resourcev1 "k8s.io/api/resource/v1"
)

// taintedSlices are slices as v1.37.2's ResourceSlice tracker
// (k8s.io/dynamic-resource-allocation/resourceslice/tracker, applyPatches)
// lists them to DynamicResources under DRADeviceTaintRules (GA, on by
// default): each rule's taint appended to the taints of every device its
// selector matches. A rule without a selector matches no device; an empty
// selector every device; a set driver, pool or device name must equal the
// slice's driver, its pool's name, the device's name (a device name alone
// matches that name in every pool). The taint is added as it is, whatever
// its effect (None among them) and timeAdded: the allocator skips effects
// other than NoSchedule and NoExecute. v1.37's selector has nothing else
// (DeviceClassName and CEL selectors were dropped in v1.35). A slice no
// rule touches is the cluster's own; one that a rule touches is a deep
// copy, as the tracker's.
func taintedSlices(in []*resourcev1.ResourceSlice, rules []*resourcev1.DeviceTaintRule) []*resourcev1.ResourceSlice {
	if len(rules) == 0 {
		return in
	}
	// The tracker lists the rules from its informer in no set order; the
	// order only orders a device's taints, which the allocator checks
	// all of. Name order makes the result one.
	ordered := append([]*resourcev1.DeviceTaintRule(nil), rules...)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].Name < ordered[j].Name })
	out := make([]*resourcev1.ResourceSlice, len(in))
	for i, slice := range in {
		patched := slice
		for _, rule := range ordered {
			sel := rule.Spec.DeviceSelector
			if sel == nil {
				continue
			}
			if sel.Driver != nil && *sel.Driver != slice.Spec.Driver {
				continue
			}
			if sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name {
				continue
			}
			for d, device := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != device.Name {
					continue
				}
				if patched == slice {
					patched = slice.DeepCopy()
				}
				patched.Spec.Devices[d].Taints = append(patched.Spec.Devices[d].Taints, rule.Spec.Taint)
			}
		}
		out[i] = patched
	}
	return out
}
