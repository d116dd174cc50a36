package optimized

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/internal/draext"
	"github.com/preemptbench/preemptbench/internal/kube/features"
	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's DynamicResources reasons (v1.37.2 dynamicresources.go).
var (
	reasonsClaimUnavailable = []string{"resourceclaim not available on the node"}
	reasonsCannotAllocate   = []string{"cannot allocate all claims"}
	reasonsCannotFit        = []string{"cannot fit resource"}
)

// dynamicResourcesState is DynamicResources' (v1.37.2) PreFilter state and
// its Filter's outcome on every node, computed once per preemptor. The
// outcome reads the node object, the pod's claims and an allocator whose
// allocated devices are gathered once, at PreFilter, from every allocated
// claim of the cluster (a victim's included); upstream has no
// PreFilterExtensions for it, so the dry run, with victims removed and
// nominated pods added, gets the answer Filter got: evicting a victim
// frees no device. Every failure is UnschedulableAndUnresolvable (or
// Error), so a node it rejects is never a candidate. nil: the pod has no
// claim (PreFilter Skips).
//
// When PreFilter fails (an allocated claim not reservable, a device class
// missing, a request of unknown type: UnschedulableAndUnresolvable; a
// request naming no class, an allocator that cannot be built: Error),
// rejected is every node's status, which nodeFilters returns before any
// filter runs, unless a volume plugin's PreFilter, earlier in the profile,
// failed first. Otherwise fits checks code[n] last, after the topology
// plugins, where the profile runs DynamicResources (before
// DefaultPreemption, after InterPodAffinity).
//
// Extended resources a DeviceClass backs (DRAExtendedResource, GA and
// locked on in v1.37): the pod gets a claim made in memory
// (draext.InMemoryClaim), last, whose requests on node n are those of
// the extended resources n does not advertise (filterExtendedResources).
// Claims allocated with binding conditions not met yet are unavailable
// on every node once their allocation is older than the binding timeout
// at the decision's clock (readsClock: the state is made again when the
// clock changes).
//
// What Impl.Unmodelled refuses is not handled here: claims PreEnqueue
// holds and claims DynamicResources' own PostFilter acts on
// (preempt.DRACycleGaps), a claim an earlier cycle made for the extended
// resources and a class that depends on informer order
// (preempt.ExtendedResourceClaimGaps). The allocator's features are
// AllocatorFeatures at v1.37.2's default gates (a DRA gate set away from
// its default is refused, preempt.GateGaps).
type dynamicResourcesState struct {
	rejected     []string
	rejectedCode preempt.Code
	code         []preempt.Code // per node index
	reasons      [][]string     // per node index
	clocked      bool           // a claim's availability read the clock
	// What Reserve reads (a gang member's, gang_volumes.go): the
	// allocator, the claims it allocates (the claim for the extended
	// resources with no request), every claim in PreFilter's order (the
	// extended resources' last), each one's allocation pending in the
	// gang's cycle (nil for none; nil outside a gang), and what
	// draFilterExtended reads.
	alloc      structured.Allocator
	toAllocate []*resourcev1.ResourceClaim
	claims     []*resourcev1.ResourceClaim
	pending    []*resourcev1.AllocationResult
	ext        *resourcev1.ResourceClaim
	scalar     map[v1.ResourceName]int64
	userClaims int
}

// draGang is what a pod-group cycle's earlier members left for
// DynamicResources' PreFilter: the allocations in flight (their Reserve's)
// and, per claim, the one pending in this cycle (nil outside a gang).
type draGang struct {
	inFlight []*resourcev1.AllocationResult
	pending  map[types.UID]*resourcev1.AllocationResult
	// pendingIn is, per pending claim, the PodGroup (namespace/name)
	// whose member allocated it, and group the pod's: each PodGroup's
	// cycle state is its own, so a claim pending in another (a
	// CompositePodGroup's other child) is in flight, and the pod waits.
	pendingIn map[types.UID]string
	group     string
}

// readsClock is whether st's verdicts depend on the clock they were made
// at.
func (st *dynamicResourcesState) readsClock() bool { return st != nil && st.clocked }

// draBindingTimeout is DynamicResourcesArgs.bindingTimeout's default.
const draBindingTimeout = 600 * time.Second

// draAllocatorFeatures are AllocatorFeatures of the default gates.
var draAllocatorFeatures = func() structured.Features {
	g := func(name string) bool { return features.Default(featuregate.Feature(name)) }
	return structured.Features{
		AdminAccess:             g("DRAAdminAccess"),
		CompatibilityGroups:     g("DRADeviceCompatibilityGroups"),
		ConsumableCapacity:      g("DRAConsumableCapacity"),
		DerivedAttributes:       g("DRADerivedAttributes"),
		DeviceBindingAndStatus:  g("DRADeviceBindingConditions") && g("DRAResourceClaimDeviceStatus"),
		DeviceTaints:            g("DRADeviceTaints"),
		FractionalCapacityRange: g("DRAFractionalCapacityRange"),
		ListTypeAttributes:      g("DRAListTypeAttributes"),
		OptionalNodeOperations:  g("DRAOptionalNodeOperations"),
		PartitionableDevices:    g("DRAPartitionableDevices"),
		PrioritizedList:         g("DRAPrioritizedList"),
	}
}()

// draClasses is the cluster's DeviceClasses by name, the allocator's
// DeviceClassLister.
type draClasses map[string]*resourcev1.DeviceClass

func (m draClasses) Get(name string) (*resourcev1.DeviceClass, error) {
	if dc := m[name]; dc != nil {
		return dc, nil
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclass"), name)
}

func (m draClasses) List() ([]*resourcev1.DeviceClass, error) {
	out := make([]*resourcev1.DeviceClass, 0, len(m))
	for _, dc := range m {
		out = append(out, dc)
	}
	slices.SortFunc(out, func(a, b *resourcev1.DeviceClass) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// newDynamicResourcesState is nil for a pod without claims, and asking
// for no extended resource a DeviceClass backs.
func newDynamicResourcesState(s *Snapshot, pod *v1.Pod, clock time.Time) *dynamicResourcesState {
	return newDynamicResourcesStateIn(s, pod, clock, nil)
}

// newDynamicResourcesStateIn is PreFilter with what a gang's members
// placed earlier left (g; nil for none): their in-flight allocations
// count as allocated, and a claim pending in the cycle is taken as
// allocated there (its node selector; its requests not checked again).
// A member's claim for its extended resources is its own (its UID, the
// key of its allocation in flight once Reserve made it).
func newDynamicResourcesStateIn(s *Snapshot, pod *v1.Pod, clock time.Time, g *draGang) *dynamicResourcesState {
	var reqs v1.ResourceList
	if len(s.cluster.DeviceClasses) > 0 {
		reqs = draext.PodRequests(pod)
	}
	extended := s.backedBy.Backed(reqs)
	if len(pod.Spec.ResourceClaims) == 0 && !extended {
		return nil
	}
	c := s.cluster
	st := &dynamicResourcesState{}
	reject := func(code preempt.Code, msg string) *dynamicResourcesState {
		st.rejected, st.rejectedCode = []string{msg}, code
		return st
	}
	byName := make(map[string]*resourcev1.ResourceClaim, len(c.ResourceClaims))
	for _, rc := range c.ResourceClaims {
		byName[rc.Namespace+"/"+rc.Name] = rc
	}
	claims := make([]*resourcev1.ResourceClaim, 0, len(pod.Spec.ResourceClaims))
	for i := range pod.Spec.ResourceClaims {
		name, checkOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		switch {
		case err != nil:
			return reject(preempt.UnschedulableAndUnresolvable, err.Error())
		case name == nil:
			continue
		}
		key := pod.Namespace + "/" + *name
		rc := byName[key]
		if rc == nil {
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("could not find ResourceClaim %q", key))
		}
		if rc.DeletionTimestamp != nil {
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("resourceclaim %q is being deleted", rc.Name))
		}
		if checkOwner {
			if err := resourceclaim.IsForPod(pod, rc, false); err != nil {
				return reject(preempt.UnschedulableAndUnresolvable, err.Error())
			}
		}
		claims = append(claims, rc)
	}
	userClaims := len(claims)
	var ext *resourcev1.ResourceClaim
	var scalar map[v1.ResourceName]int64
	if extended {
		ext, scalar = draext.InMemoryClaim(pod), draext.ScalarRequests(reqs)
		claims = append(claims, ext)
	}
	if len(claims) == 0 {
		return nil
	}
	classes := make(draClasses, len(c.DeviceClasses))
	for _, dc := range c.DeviceClasses {
		classes[dc.Name] = dc
	}
	preFilterError := func(err error) *dynamicResourcesState {
		return reject(preempt.Error, fmt.Sprintf("running PreFilter plugin %q: %v", "DynamicResources", err))
	}
	// checkClass is validateDeviceClass: nil, or the failed state.
	checkClass := func(class, request string) *dynamicResourcesState {
		if class == "" {
			return preFilterError(fmt.Errorf("request %s: unsupported request type", request))
		}
		if classes[class] == nil {
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("request %s: device class %s does not exist", request, class))
		}
		return nil
	}
	selectors := make([]*nodeaffinity.NodeSelector, len(claims))
	unbound := false // a claim unavailable on every node for its binding conditions
	var toAllocate []*resourcev1.ResourceClaim
	var pending []*resourcev1.AllocationResult // per claim, its allocation pending in the gang's cycle
	anyPending := false
	for i, rc := range claims {
		if rc == ext {
			toAllocate = append(toAllocate, rc)
			continue
		}
		if a := rc.Status.Allocation; a != nil {
			if !resourceclaim.CanBeReserved(rc) && !resourceclaim.IsReservedForPod(pod, rc, false) {
				return reject(preempt.UnschedulableAndUnresolvable, "resourceclaim in use")
			}
			if a.NodeSelector != nil {
				ns, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
				if err != nil {
					return preFilterError(err)
				}
				selectors[i] = ns
			}
			u, clocked := draBindingUnavailable(rc, clock)
			unbound = unbound || u
			st.clocked = st.clocked || clocked
			continue
		}
		if g != nil && g.pending[rc.UID] != nil && g.pendingIn[rc.UID] != g.group {
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("resource claim %s is in the process of being allocated", klog.KObj(rc)))
		}
		if a := g.pendingOf(rc); a != nil {
			if a.NodeSelector != nil {
				ns, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
				if err != nil {
					return preFilterError(err)
				}
				selectors[i] = ns
			}
			if pending == nil {
				pending = make([]*resourcev1.AllocationResult, len(claims))
			}
			pending[i], anyPending = a, true
			continue
		}
		toAllocate = append(toAllocate, rc)
		for _, r := range rc.Spec.Devices.Requests {
			if r.Exactly != nil {
				if f := checkClass(r.Exactly.DeviceClassName, r.Name); f != nil {
					return f
				}
				continue
			}
			if len(r.FirstAvailable) == 0 {
				return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("resource claim %s, request %s: unknown request type", klog.KObj(rc), r.Name))
			}
			for _, sub := range r.FirstAvailable {
				if f := checkClass(sub.DeviceClassName, r.Name+"/"+sub.Name); f != nil {
					return f
				}
			}
		}
	}
	var alloc structured.Allocator
	if len(toAllocate) > 0 || anyPending {
		var err error
		alloc, err = structured.NewAllocator(context.Background(), draAllocatorFeatures, draAllocated(c.ResourceClaims, g.allocations()),
			classes, s.slices, cel.NewCache(10, cel.Features{
				EnableConsumableCapacity: draAllocatorFeatures.ConsumableCapacity,
				EnableListTypeAttributes: draAllocatorFeatures.ListTypeAttributes,
			}))
		if err != nil {
			return preFilterError(err)
		}
	}
	st.alloc, st.toAllocate = alloc, toAllocate
	st.claims, st.pending, st.ext, st.scalar, st.userClaims = claims, pending, ext, scalar, userClaims
	st.code = make([]preempt.Code, len(s.nodes))
	st.reasons = make([][]string, len(s.nodes))
	for n, node := range s.nodes {
		nodeAllocate := toAllocate
		if ext != nil {
			code, reasons, nodeClaim := draFilterExtended(s, pod, node, ext, scalar, userClaims)
			switch {
			case code != preempt.Success:
				st.code[n], st.reasons[n] = code, reasons
				continue
			case nodeClaim == nil && userClaims == 0:
				st.code[n] = preempt.Success
				continue
			}
			nodeAllocate = slices.Clone(toAllocate)
			i := slices.Index(nodeAllocate, ext)
			if nodeClaim == nil {
				nodeAllocate[i] = ext
			} else {
				nodeAllocate[i] = nodeClaim
			}
		}
		st.code[n], st.reasons[n] = draFilter(node, claims, selectors, unbound, alloc, nodeAllocate, pending)
	}
	return st
}

// pendingOf is the allocation pending for claim in the gang's cycle, nil
// for none.
func (g *draGang) pendingOf(claim *resourcev1.ResourceClaim) *resourcev1.AllocationResult {
	if g == nil {
		return nil
	}
	return g.pending[claim.UID]
}

// allocations are the allocations in flight.
func (g *draGang) allocations() []*resourcev1.AllocationResult {
	if g == nil {
		return nil
	}
	return g.inFlight
}

// draFilterExtended is filterExtendedResources on node: the claim for
// the extended resources the node does not advertise and a class backs,
// nil when there are none and the pod has no claim of its own (the
// claim with no request is allocated with the user claims otherwise); a
// resource neither advertised nor backed fails the node.
func draFilterExtended(s *Snapshot, pod *v1.Pod, node *v1.Node, ext *resourcev1.ResourceClaim,
	scalar map[v1.ResourceName]int64, userClaims int) (preempt.Code, []string, *resourcev1.ResourceClaim) {
	var viaDRA map[v1.ResourceName]int64
	for name, q := range scalar {
		if q == 0 || !draext.IsDRAExtendedResourceName(name) {
			continue
		}
		a, advertised := node.Status.Allocatable[name]
		switch {
		case s.backedBy.Class(name) != nil && a.Value() == 0:
			if viaDRA == nil {
				viaDRA = map[v1.ResourceName]int64{}
			}
			viaDRA[name] = q
		case !advertised:
			return preempt.UnschedulableAndUnresolvable, reasonsCannotFit, nil
		}
	}
	if userClaims == 0 && len(viaDRA) == 0 {
		return preempt.Success, nil, nil
	}
	claim := ext.DeepCopy()
	claim.Spec.Devices.Requests = draext.Requests(pod, viaDRA, s.backedBy)
	return preempt.Success, nil, claim
}

// draBindingUnavailable is Filter's check of an allocated claim's binding
// conditions (on by default in v1.37.2): unavailable when a device's
// failure condition is true, or when a condition is not true yet and
// allocationTimestamp + the binding timeout is before clock (then
// clocked: the verdict read the clock).
func draBindingUnavailable(rc *resourcev1.ResourceClaim, clock time.Time) (unavailable, clocked bool) {
	if !draAllocatorFeatures.DeviceBindingAndStatus {
		return false, false
	}
	a := rc.Status.Allocation
	for _, r := range a.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		i := slices.IndexFunc(rc.Status.Devices, func(d resourcev1.AllocatedDeviceStatus) bool {
			return d.Device == r.Device && d.Driver == r.Driver && d.Pool == r.Pool
		})
		if i < 0 {
			return draTimedOut(a, clock), true
		}
		conds := rc.Status.Devices[i].Conditions
		if slices.ContainsFunc(r.BindingFailureConditions, func(c string) bool { return meta.IsStatusConditionTrue(conds, c) }) {
			return true, false
		}
		if !slices.ContainsFunc(r.BindingConditions, func(c string) bool { return !meta.IsStatusConditionTrue(conds, c) }) {
			continue
		}
		return draTimedOut(a, clock), true
	}
	return false, false
}

// draTimedOut is isClaimTimeout for a claim not ready for binding.
func draTimedOut(a *resourcev1.AllocationResult, clock time.Time) bool {
	if a.AllocationTimestamp == nil {
		return false
	}
	deadline := a.AllocationTimestamp.Add(draBindingTimeout)
	return slices.ContainsFunc(a.Devices.Results, func(r resourcev1.DeviceRequestAllocationResult) bool {
		return r.BindingConditions != nil && deadline.Before(clock)
	})
}

// draFilter is Filter on node, after the extended resources; an
// allocation that outlasts preempt.DRAFilterTimeout is an Error, as
// upstream's. pending are the allocations of the claims pending in a
// gang's cycle, per claim (nil outside a gang).
func draFilter(node *v1.Node, claims []*resourcev1.ResourceClaim, selectors []*nodeaffinity.NodeSelector, unbound bool,
	alloc structured.Allocator, toAllocate []*resourcev1.ResourceClaim, pending []*resourcev1.AllocationResult) (preempt.Code, []string) {
	unavailable := unbound
	for i, rc := range claims {
		if selectors[i] != nil && !selectors[i].Match(node) {
			unavailable = true
			continue
		}
		if a := rc.Status.Allocation; a != nil && !slices.Contains(node.Status.DeclaredFeatures, "DRAOptionalNodeOperations") && draSkipsNodeOperations(a) {
			unavailable = true
		}
	}
	if alloc != nil {
		for i, a := range pending {
			if a != nil && draSkipsNodeOperations(a) && !slices.Contains(node.Status.DeclaredFeatures, "DRAOptionalNodeOperations") {
				return preempt.UnschedulableAndUnresolvable, []string{fmt.Sprintf("resource claim %s allocation requires DRAOptionalNodeOperations feature on the node", klog.KObj(claims[i]))}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), preempt.DRAFilterTimeout)
		got, err := alloc.Allocate(ctx, node, toAllocate)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return preempt.Error, []string{preempt.DRAFilterTimeoutReason(node.Name)}
		}
		if errors.Is(err, structured.ErrFailedAllocationOnNode) {
			return preempt.UnschedulableAndUnresolvable, []string{err.Error()}
		}
		if err != nil {
			return preempt.Error, []string{fmt.Sprintf("running %q filter plugin: %v", "DynamicResources", err)}
		}
		if len(got) != len(toAllocate) {
			return preempt.UnschedulableAndUnresolvable, reasonsCannotAllocate
		}
	}
	if unavailable {
		return preempt.UnschedulableAndUnresolvable, reasonsClaimUnavailable
	}
	return preempt.Success, nil
}

// draSkipsNodeOperations: some device of a skips node operations.
func draSkipsNodeOperations(a *resourcev1.AllocationResult) bool {
	return slices.ContainsFunc(a.Devices.Results, func(r resourcev1.DeviceRequestAllocationResult) bool { return len(r.SkipNodeOperations) > 0 })
}

// draAllocated is the claim tracker's GatherAllocatedState over claims,
// with DRAConsumableCapacity on (as by default): every allocated device
// but those used with admin access, a result with a share ID counted as a
// shared device with its consumed capacity.
func draAllocated(claims []*resourcev1.ResourceClaim, inFlight []*resourcev1.AllocationResult) structured.AllocatedState {
	out := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	allocations := slices.Clone(inFlight)
	for _, rc := range claims {
		if rc.Status.Allocation != nil {
			allocations = append(allocations, rc.Status.Allocation)
		}
	}
	for _, a := range allocations {
		for i := range a.Devices.Results {
			r := &a.Devices.Results[i]
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			switch {
			case r.ShareID == nil || !draAllocatorFeatures.ConsumableCapacity:
				out.AllocatedDevices.Insert(id)
			default:
				out.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					out.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
			}
		}
	}
	return out
}

// filter is DynamicResources' Filter on node n (last in the profile).
func (st *dynamicResourcesState) filter(n int32) (preempt.Code, []string) {
	if st.code == nil {
		return preempt.Success, nil
	}
	return st.code[n], st.reasons[n]
}
