package reference

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/draext"
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
// unallocated claim it builds the allocator over every ResourceSlice
// with the cluster's DeviceTaintRules applied (taintedSlices), the
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
// Extended resources a DeviceClass backs (DRAExtendedResource, GA and
// locked on): PreFilter makes a claim in memory for the pod
// (preFilterExtendedResources), last among its claims, and Filter gives
// it, per node, the requests of the resources the node does not
// advertise (filterExtendedResources); nodeResourcesFit skips those
// there. Allocated claims with binding conditions: unavailable when a
// failure condition is true, or when a condition is not met and the
// binding timeout has passed at ev.now (Request.Now, or the time SetNow
// gave Filter; upstream reads time.Now()).
//
// Not modelled (refused, Impl.Unmodelled): what preempt.DRACycleGaps
// refuses (no scheduling cycle, or DynamicResources' own PostFilter could
// act); what preempt.ExtendedResourceClaimGaps refuses (a claim an
// earlier cycle made for the extended resources, a class that depends on
// informer order). The Filter timeout (DRASchedulerFilterTimeout,
// preempt.DRAFilterTimeout) bounds each node's allocation, in the filter
// phase and in the dry run: past it the node is an Error, as upstream's.
// Not read: pending allocations of other scheduling cycles (none: one pod
// is decided at a time; a gang's own members' are, gang_reserve.go), the
// Skip of a deferred resize (alpha gate
// InPlacePodVerticalScalingSchedulerPreemption, off), the
// node-allocatable resources of devices (alpha DRANodeAllocatableResources,
// off).
type dynamicResources struct{}

func (dynamicResources) Name() string { return "DynamicResources" }

// draState is PreFilter's: the pod's claims in pod.Spec.ResourceClaims
// order, then the claim for its extended resources (extended, when it
// asks for one a DeviceClass backs); each allocated one's node selector
// (nil for an unallocated claim or an allocation without one); which
// allocated claims are unavailable on every node for their binding
// conditions (a failure condition met, or not all met and the binding
// timeout reached at the evaluator's clock); and the allocator, nil when
// every claim is allocated. Nothing of it changes in the dry run.
type draState struct {
	claims    []*resourcev1.ResourceClaim
	available []*nodeaffinity.NodeSelector
	unbound   []bool
	allocator structured.Allocator
	// pending is, per claim, the allocation a gang member placed
	// earlier in the pod-group cycle made for it (gang_reserve.go), nil
	// for none: the claim is taken as allocated there.
	pending []*resourcev1.AllocationResult

	// The extended resources (preFilterExtendedResources): the claim
	// made in memory for them, the pod's scalar requests and the
	// resolver of their classes.
	extended *resourcev1.ResourceClaim
	scalar   map[v1.ResourceName]int64
	resolver draext.Resolver
}

func (s *draState) clone() stateData { return s }

// draBindingTimeout is DynamicResourcesArgs.bindingTimeout's default,
// which the contract's configuration cannot change.
const draBindingTimeout = 600 * time.Second

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
	// preFilterExtendedResources (DRAExtendedResource, GA and locked on
	// in v1.37): a claim made in memory, with no requests yet, when the
	// pod asks for an extended resource a DeviceClass backs, whether or
	// not nodes advertise it. A claim left by an earlier cycle is refused
	// (preempt.ExtendedResourceClaimGaps).
	st.resolver = draext.NewResolver(c.DeviceClasses)
	if reqs := draext.PodRequests(pod); st.resolver.Backed(reqs) {
		st.scalar = draext.ScalarRequests(reqs)
		st.extended = draext.InMemoryClaim(pod)
		st.claims = append(st.claims, st.extended)
	}
	if len(st.claims) == 0 {
		return nil, true
	}
	st.available = make([]*nodeaffinity.NodeSelector, len(st.claims))
	st.pending = make([]*resourcev1.AllocationResult, len(st.claims))
	st.unbound = make([]bool, len(st.claims))
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
			st.unbound[i] = bindingUnavailable(claim, ev.now)
			continue
		}
		toAllocate++
		if claim == st.extended {
			// Its requests are made per node, in Filter.
			continue
		}
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
		classList(c.DeviceClasses), sortedSlices(taintedSlices(c.ResourceSlices, c.DeviceTaintRules)),
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

// Filter is upstream's on node s: first the extended resources
// (filterExtendedResources), then the claims.
func (dynamicResources) Filter(state stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	st := state.(*draState)
	node := s.node
	nodeClaim, status := st.filterExtendedResources(pod, s)
	if status != nil {
		return *status
	}
	userClaims := len(st.claims)
	if st.extended != nil {
		userClaims--
	}
	if nodeClaim == nil && userClaims == 0 {
		return preempt.Status{}
	}
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
		if st.unbound[i] {
			unavailable = true
		}
	}
	if st.allocator != nil {
		var toAllocate []*resourcev1.ResourceClaim
		for i, claim := range st.claims {
			if claim.Status.Allocation != nil {
				continue
			}
			if claim == st.extended && nodeClaim != nil {
				claim = nodeClaim
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

// filterExtendedResources is upstream's: the claim for the extended
// resources that node s does not advertise (allocatable zero) and a class
// backs, with its requests for them; nil when there is no such claim, or
// when no user claim needs the allocator either and the node advertises
// them all (NodeResourcesFit counted them). A resource neither advertised
// nor backed fails the node (NodeResourcesFit, earlier in the profile,
// already failed it: "Insufficient").
func (st *draState) filterExtendedResources(pod *v1.Pod, s *nodeState) (*resourcev1.ResourceClaim, *preempt.Status) {
	if st.extended == nil {
		return nil, nil
	}
	viaDRA := map[v1.ResourceName]int64{}
	for name, q := range st.scalar {
		if !draext.IsDRAExtendedResourceName(name) || q == 0 {
			continue
		}
		allocatable, advertised := s.allocated.scalar[name]
		if st.resolver.Class(name) != nil && allocatable == 0 {
			viaDRA[name] = q
		} else if !advertised {
			status := unresolvable("cannot fit resource")
			return nil, &status
		}
	}
	if len(st.claims) == 1 && len(viaDRA) == 0 {
		return nil, nil
	}
	claim := st.extended.DeepCopy()
	claim.Spec.Devices.Requests = draext.Requests(pod, viaDRA, st.resolver)
	return claim, nil
}

// bindingUnavailable is Filter's check of an allocated claim's binding
// conditions (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus,
// both on by default): unavailable when a device's binding failure
// condition is true (isClaimReadyForBinding's error), or when some
// condition is not true yet and the allocation is older than the binding
// timeout at now (isClaimTimeout, which reads time.Now() upstream).
func bindingUnavailable(claim *resourcev1.ResourceClaim, now time.Time) bool {
	on := func(g string) bool { return features.Default(featuregate.Feature(g)) }
	if !on("DRADeviceBindingConditions") || !on("DRAResourceClaimDeviceStatus") {
		return false
	}
	a := claim.Status.Allocation
	ready := true
	for _, r := range a.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		var status *resourcev1.AllocatedDeviceStatus
		for i := range claim.Status.Devices {
			d := &claim.Status.Devices[i]
			if d.Device == r.Device && d.Driver == r.Driver && d.Pool == r.Pool {
				status = d
				break
			}
		}
		if status == nil {
			ready = false
			break
		}
		for _, cond := range r.BindingFailureConditions {
			if meta.IsStatusConditionTrue(status.Conditions, cond) {
				return true
			}
		}
		for _, cond := range r.BindingConditions {
			if !meta.IsStatusConditionTrue(status.Conditions, cond) {
				ready = false
				break
			}
		}
		if !ready {
			break
		}
	}
	if ready || a.AllocationTimestamp == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if r.BindingConditions != nil && a.AllocationTimestamp.Add(draBindingTimeout).Before(now) {
			return true
		}
	}
	return false
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
