package draext

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

func class(name, explicit string, created int) *resourcev1.DeviceClass {
	dc := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name,
		CreationTimestamp: metav1.Time{Time: time.Date(2026, 1, 1, created, 0, 0, 0, time.UTC)}}}
	if explicit != "" {
		dc.Spec.ExtendedResourceName = ptr.To(explicit)
	}
	return dc
}

func permutations(in []*resourcev1.DeviceClass) [][]*resourcev1.DeviceClass {
	if len(in) <= 1 {
		return [][]*resourcev1.DeviceClass{in}
	}
	var out [][]*resourcev1.DeviceClass
	for i := range in {
		rest := append(append([]*resourcev1.DeviceClass{}, in[:i]...), in[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]*resourcev1.DeviceClass{in[i]}, p...))
		}
	}
	return out
}

// The resolver is upstream's extended-resource cache told of the classes
// in any order: where every order gives the cache one answer, the
// resolver gives it; where orders differ, the resolver calls the name
// ambiguous.
func TestResolverAsExtendedResourceCache(t *testing.T) {
	ambiguousSeen := 0
	for _, tc := range [][]*resourcev1.DeviceClass{
		{class("gpu", "", 0)},
		{class("gpu", "example.com/gpu", 0)},
		{class("gpu", "example.com/gpu", 0), class("tpu", "example.com/tpu", 0)},
		{class("old", "example.com/gpu", 0), class("new", "example.com/gpu", 1)},
		{class("b", "example.com/gpu", 0), class("a", "example.com/gpu", 0)},
		{class("a", "example.com/gpu", 0), class("b", "example.com/gpu", 1), class("c", "example.com/gpu", 1), class("d", "", 2)},
		{class("a", "deviceclass.resource.kubernetes.io/b", 0), class("b", "", 0)},
	} {
		r := NewResolver(tc)
		names := map[v1.ResourceName]bool{}
		for _, dc := range tc {
			names[v1.ResourceName(resourcev1.ResourceDeviceClassPrefix+dc.Name)] = true
			if dc.Spec.ExtendedResourceName != nil {
				names[v1.ResourceName(*dc.Spec.ExtendedResourceName)] = true
			}
		}
		for name := range names {
			answers := map[string]bool{}
			for _, order := range permutations(tc) {
				cache := extendedresourcecache.NewExtendedResourceCache(klog.Background())
				for _, dc := range order {
					cache.OnAdd(dc, true)
				}
				got := ""
				if dc := cache.GetDeviceClass(name); dc != nil {
					got = dc.Name
				}
				answers[got] = true
			}
			want := ""
			if dc := r.Class(name); dc != nil {
				want = dc.Name
			}
			if len(answers) > 1 {
				ambiguousSeen++
			}
			switch ambiguous := r.Ambiguous(name) != ""; {
			case len(answers) > 1 && !ambiguous:
				t.Errorf("%v: %s: the cache answers %v by order, the resolver %q without calling it ambiguous", names, name, answers, want)
			case len(answers) == 1 && ambiguous:
				t.Errorf("%v: %s: the cache always answers %v, the resolver calls it ambiguous", names, name, answers)
			case len(answers) == 1 && !answers[want]:
				t.Errorf("%v: %s: the cache answers %v, the resolver %q", names, name, answers, want)
			}
		}
	}
	if ambiguousSeen < 3 {
		t.Errorf("%d names depend on the order, want the table to hold at least 3", ambiguousSeen)
	}
}
