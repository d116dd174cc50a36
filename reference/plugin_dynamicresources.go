package reference

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/kube/features"
	"github.com/preemptbench/preemptbench/preempt"
)

// dynamicResources is upstream's DynamicResources (v1.37.2
// framework/plugins/dynamicresources: PreFilter, Filter), read from the
// cluster's ResourceClaims, ResourceSlices and DeviceClasses, deciding
// with the allocator kube-scheduler itself uses
// (k8s.io/dynamic-resource-allocation/structured).
//
// PreFilter resolves the pod's claims as podResourceClaims does (by name,
// or from a template through status.resourceClaimStatuses) and Skips a
// pod without one. It fails with UnschedulableAndUnresolvable (every
// node's status) on an allocated claim that can be reserved for no more
// consumers and is not reserved for the pod ("resourceclaim in use"), on
// a request of an unallocated claim whose DeviceClass does not exist or
// of an unknown type; with Error on a request naming no class. With an
// unallocated claim it builds the allocator over every ResourceSlice, the
// DeviceClasses, and as allocated the devices of every allocated claim of
// the cluster (GatherAllocatedState, DRAConsumableCapacity being on),
// with the features AllocatorFeatures gives for v1.37.2's default gates
// (a configuration setting a DRA gate away from its default is refused,
// preempt.GateGaps).
//
// Filter, on a node: an allocated claim whose allocation's node selector
// does not match it, or whose devices skip node operations the node does
// not declare, is unavailable; the unallocated claims are allocated on the
// node (a failure is UnschedulableAndUnresolvable with the allocator's
// message, an allocator error is Error); when allocation succeeds, an
// unavailable claim fails the node with "resourceclaim not available on
// the node".
//
// Victims: upstream has no PreFilterExtensions for it
// (PreFilterExtensions returns nil) and its allocated state is gathered
// once, at PreFilter, from the claims: evicting a victim frees none of
// the devices its claims hold, in the dry run as in the filter phase; and
// every failure being UnschedulableAndUnresolvable, a node it rejects is
// never a candidate. Its per-node verdict is fixed during preemption.
//
// Not modelled (refused, Impl.Unmodelled): what preempt.DRACycleGaps
// refuses (no scheduling cycle, or DynamicResources' own PostFilter could
// act); extended resources a DeviceClass backs (the claim DynamicResources
// makes for them, preempt.DeviceClassResourceGaps); allocated claims with
// binding conditions (their timeout reads the clock). The Filter timeout
// (DRASchedulerFilterTimeout, preempt.DRAFilterTimeout) bounds each
// node's allocation, in the filter phase and in the dry run: past it the
// node is an Error, as upstream's. Not read: pending allocations of
// other scheduling cycles (none: one pod is decided at a time), the Skip
// of a deferred resize (alpha gate InPlacePodVerticalScalingSchedulerPreemption,
// off).
type dynamicResources struct{}

func (dynamicResources) Name() string { return "DynamicResources" }

// draState is PreFilter's: the pod's claims in pod.Spec.ResourceClaims
// order, each allocated one's node selector (nil for an unallocated
// claim or an allocation without one), and the allocator, nil when every
// claim is allocated. Nothing of it changes in the dry run.
type draState struct {
	claims    []*resourcev1.ResourceClaim
	available []*nodeaffinity.NodeSelector
	allocator structured.Allocator
	// pending is, per claim, the allocation a gang member placed
	// earlier in the pod-group cycle made for it (gang_reserve.go), nil
	// for none: the claim is taken as allocated there.
	pending []*resourcev1.AllocationResult
}

func (s *draState) clone() stateData { return s }

// draFeatures are v1.37.2's AllocatorFeatures at the default gates.
func draFeatures() structured.Features {
	on := func(g string) bool { return features.Default(featuregate.Feature(g)) }
	return structured.Features{
		AdminAccess:             on("DRAAdminAccess"),
		PrioritizedList:         on("DRAPrioritizedList"),
		PartitionableDevices:    on("DRAPartitionableDevices"),
		DeviceTaints:            on("DRADeviceTaints"),
		DeviceBindingAndStatus:  on("DRADeviceBindingConditions") && on("DRAResourceClaimDeviceStatus"),
		ConsumableCapacity:      on("DRAConsumableCapacity"),
		FractionalCapacityRange: on("DRAFractionalCapacityRange"),
		ListTypeAttributes:      on("DRAListTypeAttributes"),
		OptionalNodeOperations:  on("DRAOptionalNodeOperations"),
		DerivedAttributes:       on("DRADerivedAttributes"),
		CompatibilityGroups:     on("DRADeviceCompatibilityGroups"),
	}
}

// PreFilter is upstream's, for a pod whose claims all exist (Unmodelled
// refuses the rest, which PreEnqueue keeps out of the queue).
func (dynamicResources) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	c := ev.cluster
	st := &draState{}
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return rejection{unresolvable(err.Error())}, false
		}
		if name == nil {
			continue
		}
		claim := findResourceClaim(c, pod.Namespace, *name)
		if claim == nil {
			return rejection{unresolvable(fmt.Sprintf("could not find ResourceClaim %q", pod.Namespace+"/"+*name))}, false
		}
		if claim.DeletionTimestamp != nil {
			return rejection{unresolvable(fmt.Sprintf("resourceclaim %q is being deleted", claim.Name))}, false
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return rejection{unresolvable(err.Error())}, false
			}
		}
		st.claims = append(st.claims, claim)
	}
	if len(st.claims) == 0 {
		return nil, true
	}
	st.available = make([]*nodeaffinity.NodeSelector, len(st.claims))
	st.pending = make([]*resourcev1.AllocationResult, len(st.claims))
	toAllocate := 0
	for i, claim := range st.claims {
		if claim.Status.Allocation != nil && !resourceclaim.CanBeReserved(claim) && !resourceclaim.IsReservedForPod(pod, claim, false) {
			return rejection{unresolvable("resourceclaim in use")}, false
		}
		if claim.Status.Allocation != nil {
			if sel := claim.Status.Allocation.NodeSelector; sel != nil {
				ns, err := nodeaffinity.NewNodeSelector(sel)
				if err != nil {
					return rejection{draPreFilterError(err)}, false
				}
				st.available[i] = ns
			}
			continue
		}
		toAllocate++
		// In a gang, a claim another member of the PodGroup allocated in
		// Reserve earlier in this pod-group cycle (its pending
		// allocation) is taken as allocated there, its requests not
		// checked again; one a member of another PodGroup allocated is
		// in flight, and the pod waits for it.
		alloc, elsewhere := ev.pendingAllocation(claim, pod)
		if elsewhere {
			return rejection{unresolvable(fmt.Sprintf("resource claim %s is in the process of being allocated", klog.KObj(claim)))}, false
		}
		if alloc != nil {
			st.pending[i] = alloc
			if sel := alloc.NodeSelector; sel != nil {
				ns, err := nodeaffinity.NewNodeSelector(sel)
				if err != nil {
					return rejection{draPreFilterError(err)}, false
				}
				st.available[i] = ns
			}
			continue
		}
		for _, req := range claim.Spec.Devices.Requests {
			switch {
			case req.Exactly != nil:
				if status := validateDeviceClass(c, req.Exactly.DeviceClassName, req.Name); status != nil {
					return rejection{*status}, false
				}
			case len(req.FirstAvailable) > 0:
				// DRAPrioritizedList is GA and locked on in v1.37.
				for _, sub := range req.FirstAvailable {
					if status := validateDeviceClass(c, sub.DeviceClassName, strings.Join([]string{req.Name, sub.Name}, "/")); status != nil {
						return rejection{*status}, false
					}
				}
			default:
				return rejection{unresolvable(fmt.Sprintf("resource claim %s, request %s: unknown request type", klog.KObj(claim), req.Name))}, false
			}
		}
	}
	if toAllocate == 0 {
		return st, false
	}
	fts := draFeatures()
	alloc, err := structured.NewAllocator(context.Background(), fts, allocatedState(c.ResourceClaims, ev.inFlight(), fts.ConsumableCapacity),
		classList(c.DeviceClasses), sortedSlices(c.ResourceSlices),
		cel.NewCache(10, cel.Features{EnableConsumableCapacity: fts.ConsumableCapacity, EnableListTypeAttributes: fts.ListTypeAttributes}))
	if err != nil {
		return rejection{draPreFilterError(err)}, false
	}
	st.allocator = alloc
	return st, false
}

// validateDeviceClass is upstream's: a request naming no class is an
// Error, a missing class UnschedulableAndUnresolvable.
func validateDeviceClass(c *preempt.Cluster, class, request string) *preempt.Status {
	if class == "" {
		st := draPreFilterError(fmt.Errorf("request %s: unsupported request type", request))
		return &st
	}
	for _, dc := range c.DeviceClasses {
		if dc.Name == class {
			return nil
		}
	}
	st := unresolvable(fmt.Sprintf("request %s: device class %s does not exist", request, class))
	return &st
}

func draPreFilterError(err error) preempt.Status {
	return preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("running PreFilter plugin %q: %v", "DynamicResources", err)}}
}

// allocatedState is what v1.37.2's claim tracker gathers from the claims
// (allocatedDevices over the assume cache, GatherAllocatedState): the
// devices of every allocated claim's results but those with admin access,
// a shared device (a result with a share ID) by its share ID and its
// consumed capacity when consumable capacity is on, by its device ID
// otherwise.
func allocatedState(claims []*resourcev1.ResourceClaim, inFlight []*resourcev1.AllocationResult, consumable bool) structured.AllocatedState {
	s := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	allocations := slices.Clone(inFlight)
	for _, claim := range claims {
		if claim.Status.Allocation != nil {
			allocations = append(allocations, claim.Status.Allocation)
		}
	}
	for _, a := range allocations {
		for _, r := range a.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if consumable && r.ShareID != nil {
				s.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					s.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			s.AllocatedDevices.Insert(id)
		}
	}
	return s
}

// classList is the DeviceClassLister the allocator reads: the informer
// lister's answers (a missing class is NotFound).
type classList []*resourcev1.DeviceClass

func (l classList) List() ([]*resourcev1.DeviceClass, error) { return l, nil }

func (l classList) Get(name string) (*resourcev1.DeviceClass, error) {
	for _, dc := range l {
		if dc.Name == name {
			return dc, nil
		}
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclass"), name)
}

// sortedSlices are the slices in name order: upstream lists them from an
// informer's store, a map; the allocator's verdict does not depend on it.
func sortedSlices(in []*resourcev1.ResourceSlice) []*resourcev1.ResourceSlice {
	out := slices.Clone(in)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func findResourceClaim(c *preempt.Cluster, namespace, name string) *resourcev1.ResourceClaim {
	for _, rc := range c.ResourceClaims {
		if rc.Namespace == namespace && rc.Name == name {
			return rc
		}
	}
	return nil
}

// draOptionalNodeOperations is the feature a node declares
// (status.declaredFeatures) for devices that skip node operations.
const draOptionalNodeOperations = "DRAOptionalNodeOperations"

// Filter is upstream's on node s.
func (dynamicResources) Filter(state stateData, _ *v1.Pod, s *nodeState) preempt.Status {
	st := state.(*draState)
	node := s.node
	unavailable := false
	for i, claim := range st.claims {
		if sel := st.available[i]; sel != nil && !sel.Match(node) {
			unavailable = true
			continue
		}
		if skipsNodeOperations(claim.Status.Allocation) && !slices.Contains(node.Status.DeclaredFeatures, draOptionalNodeOperations) {
			unavailable = true
			continue
		}
	}
	if st.allocator != nil {
		var toAllocate []*resourcev1.ResourceClaim
		for i, claim := range st.claims {
			if claim.Status.Allocation != nil {
				continue
			}
			if p := st.pending[i]; p != nil {
				if skipsNodeOperations(p) && !slices.Contains(node.Status.DeclaredFeatures, draOptionalNodeOperations) {
					return unresolvable(fmt.Sprintf("resource claim %s allocation requires DRAOptionalNodeOperations feature on the node", klog.KObj(claim)))
				}
				continue
			}
			toAllocate = append(toAllocate, claim)
		}
		ctx, cancel := context.WithTimeout(context.Background(), preempt.DRAFilterTimeout)
		result, err := st.allocator.Allocate(ctx, node, toAllocate)
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return preempt.Status{Code: preempt.Error, Reasons: []string{preempt.DRAFilterTimeoutReason(node.Name)}}
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			return unresolvable(err.Error())
		case err != nil:
			return preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("running %q filter plugin: %v", "DynamicResources", err)}}
		}
		if len(result) != len(toAllocate) {
			return unresolvable("cannot allocate all claims")
		}
	}
	if unavailable {
		return unresolvable("resourceclaim not available on the node")
	}
	return preempt.Status{}
}

func skipsNodeOperations(a *resourcev1.AllocationResult) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return true
		}
	}
	return false
}
