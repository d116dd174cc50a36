// Package draext holds what v1.37.2's scheduler does with an extended
// resource a DeviceClass backs (DRAExtendedResource, GA and locked on in
// v1.37), for the implementations that model it (reference, optimized)
// and the refusals they share (preempt.ExtendedResourceClaimGaps):
//
//   - the DeviceClass resolver, as the extended-resource cache
//     (k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache)
//     holds it once told of every class;
//   - which of a pod's requests go to DynamicResources
//     (hasDeviceClassMappedExtendedResource, preFilterExtendedResources);
//   - the device requests of the claim DynamicResources makes for them on
//     a node (createRequestsAndMappings).
package draext

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/kube/v1helper"
	"github.com/preemptbench/preemptbench/internal/podinfo"
)

// ClaimName is the name of the claim DynamicResources makes in memory for
// a pod's extended resources (specialClaimInMemName): not a valid object
// name, so it cannot be a claim of the cluster.
const ClaimName = "<extended-resources>"

// Resolver is the extended-resource cache: which DeviceClass backs an
// extended resource name. A class backs its implicit name
// "deviceclass.resource.kubernetes.io/<class>" and its
// spec.extendedResourceName; of the classes naming one extended resource,
// the newest (creationTimestamp) backs it, ties to the smallest name.
//
// Upstream is told of the classes in its informer's order, a map's: a
// class that loses an explicit name to a class it was told of before is
// dropped whole, its implicit name too (updateResourceName2class returns
// early), so whether the loser's implicit name is backed depends on that
// order. Ambiguous reports those names; the implementations refuse a pod
// that asks for one.
type Resolver struct {
	backs     map[v1.ResourceName]*resourcev1.DeviceClass
	ambiguous map[v1.ResourceName]string
}

// NewResolver is the resolver over classes.
func NewResolver(classes []*resourcev1.DeviceClass) Resolver {
	r := Resolver{backs: map[v1.ResourceName]*resourcev1.DeviceClass{}, ambiguous: map[v1.ResourceName]string{}}
	explicit := map[v1.ResourceName]*resourcev1.DeviceClass{}
	for _, dc := range classes {
		if dc.Spec.ExtendedResourceName == nil {
			continue
		}
		name := v1.ResourceName(*dc.Spec.ExtendedResourceName)
		if cur := explicit[name]; cur == nil || newer(dc, cur) {
			explicit[name] = dc
		}
	}
	for _, dc := range classes {
		implicit := v1.ResourceName(resourcev1.ResourceDeviceClassPrefix + dc.Name)
		if dc.Spec.ExtendedResourceName != nil {
			if w := explicit[v1.ResourceName(*dc.Spec.ExtendedResourceName)]; w != dc {
				r.ambiguous[implicit] = fmt.Sprintf("DeviceClass %s names extended resource %s, as DeviceClass %s does, which wins it: whether the scheduler's extended-resource cache still maps %s to %s depends on the order its informer lists the classes in, a map's",
					dc.Name, *dc.Spec.ExtendedResourceName, w.Name, implicit, dc.Name)
				continue
			}
		}
		r.backs[implicit] = dc
	}
	for name, dc := range explicit {
		if other := r.backs[name]; other != nil && other != dc {
			// An explicit name that is another class's implicit one
			// (API validation refuses it, the contract does not).
			r.ambiguous[name] = fmt.Sprintf("DeviceClass %s names extended resource %s, DeviceClass %s's implicit one: which backs it depends on the order the scheduler's informer lists the classes in", dc.Name, name, other.Name)
			delete(r.backs, name)
			continue
		}
		r.backs[name] = dc
	}
	return r
}

// newer is whether a wins an explicit name over b: created later, or at
// the same time with a smaller name.
func newer(a, b *resourcev1.DeviceClass) bool {
	ta, tb := a.CreationTimestamp.UnixNano(), b.CreationTimestamp.UnixNano()
	if ta != tb {
		return ta > tb
	}
	return a.Name < b.Name
}

// Class is the class that backs name, nil when none does.
func (r Resolver) Class(name v1.ResourceName) *resourcev1.DeviceClass { return r.backs[name] }

// Ambiguous is why name's class depends on upstream's informer order, ""
// when it does not.
func (r Resolver) Ambiguous(name v1.ResourceName) string { return r.ambiguous[name] }

// IsDRAExtendedResourceName is upstream's schedutil.IsDRAExtendedResourceName.
func IsDRAExtendedResourceName(name v1.ResourceName) bool {
	return v1helper.IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourcev1.ResourceDeviceClassPrefix)
}

// PodRequests are pod's requests as preFilterExtendedResources reads them
// (PodRequests with default options, on a copy: component-helpers adds
// the overhead into pod-level quantities in place).
func PodRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod.DeepCopy(), resourcehelper.PodResourcesOptions{})
}

// Backed is hasDeviceClassMappedExtendedResource: pod asks for a non-zero
// quantity of an extended resource a class backs. DynamicResources then
// makes a claim for the pod, even where every node advertises the
// resource.
func (r Resolver) Backed(reqs v1.ResourceList) bool {
	for name, q := range reqs {
		if !q.IsZero() && IsDRAExtendedResourceName(name) && r.Class(name) != nil {
			return true
		}
	}
	return false
}

// ScalarRequests are the scalar resources of reqs (framework.NewResource's
// ScalarResources), by value.
func ScalarRequests(reqs v1.ResourceList) map[v1.ResourceName]int64 {
	out := map[v1.ResourceName]int64{}
	for name, q := range reqs {
		switch name {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, v1.ResourceEphemeralStorage:
			continue
		}
		if podinfo.IsScalarResource(name) {
			out[name] += q.Value()
		}
	}
	return out
}

// InMemoryClaim is the claim PreFilter makes for pod's extended
// resources, with no requests. Upstream gives it a random UID, which no
// answer shows but which keys its in-flight allocation once Reserve
// allocates it (SignalClaimPendingAllocation): in a gang each member's
// is its own, so here it is the pod's namespace and name.
func InMemoryClaim(pod *v1.Pod) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:    pod.Namespace,
			Name:         ClaimName,
			UID:          types.UID("extended-resources-claim/" + pod.Namespace + "/" + pod.Name),
			GenerateName: pod.Name + "-extended-resources-",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
			}},
			Annotations: map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"},
		},
	}
}

// ExistingClaim is findExtendedResourceClaim: a claim of claims annotated
// as an extended-resource claim and controlled by pod (name and UID).
func ExistingClaim(pod *v1.Pod, claims []*resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	for _, c := range claims {
		if c.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" {
			continue
		}
		for _, or := range c.OwnerReferences {
			if or.Name == pod.Name && ptr.Deref(or.Controller, false) && or.UID == pod.UID {
				return c
			}
		}
	}
	return nil
}

// Requests is createRequestsAndMappings' requests: the device requests of
// the claim for the extended resources DynamicResources allocates on a
// node (each name's quantity in resources), per container, an init
// container (not a sidecar) reusing the requests of the long-lived
// containers after it and the init containers sharing their largest
// request, sorted by name.
func Requests(pod *v1.Pod, resources map[v1.ResourceName]int64, r Resolver) []resourcev1.DeviceRequest {
	containers := slices.Clone(pod.Spec.InitContainers)
	containers = append(containers, pod.Spec.Containers...)
	var longLived, shortLived []int
	for i, c := range containers {
		isSidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		if i < len(pod.Spec.InitContainers) && !isSidecar {
			shortLived = append(shortLived, i)
			continue
		}
		longLived = append(longLived, i)
	}
	names := make([]v1.ResourceName, 0, len(resources))
	for name := range resources {
		names = append(names, name)
	}
	slices.Sort(names)
	var out []resourcev1.DeviceRequest
	for _, name := range names {
		class := r.Class(name)
		if class == nil {
			continue
		}
		longReqs := make([]*resourcev1.DeviceRequest, len(containers))
		for _, i := range longLived {
			longReqs[i] = containerRequest(i, &containers[i], name, class.Name, nil)
		}
		var maxShort *resourcev1.DeviceRequest
		shortNames := sets.New[string]()
		for _, i := range shortLived {
			if req := containerRequest(i, &containers[i], name, class.Name, longReqs[i:]); req != nil {
				shortNames.Insert(req.Name)
				if maxShort == nil || maxShort.Exactly.Count < req.Exactly.Count {
					maxShort = req
				}
			}
		}
		if maxShort != nil {
			out = append(out, *maxShort)
		}
		for _, req := range longReqs {
			if req != nil {
				out = append(out, *req)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// containerRequest is createResourceRequestAndMappings' request: nil when
// the container asks none of name, or reusable covers it.
func containerRequest(index int, c *v1.Container, name v1.ResourceName, class string, reusable []*resourcev1.DeviceRequest) *resourcev1.DeviceRequest {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil
	}
	want, ok := q.AsInt64()
	if !ok || want == 0 {
		return nil
	}
	sum := int64(0)
	for _, r := range reusable {
		if r != nil {
			sum += r.Exactly.Count
			if sum >= want {
				return nil
			}
		}
	}
	keys := make([]string, 0, len(c.Resources.Requests))
	for k := range c.Resources.Requests {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	idx := slices.Index(keys, string(name))
	return &resourcev1.DeviceRequest{
		Name: fmt.Sprintf("container-%d-request-%d", index, idx),
		Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: class,
			AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
			Count:           want - sum,
		},
	}
}
