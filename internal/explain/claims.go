package explain

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/utils/ptr"

	"github.com/preemptbench/preemptbench/internal/draext"
	"github.com/preemptbench/preemptbench/preempt"
)

// ClaimBlock is a claim of the preemptor DynamicResources cannot satisfy
// on a node, and why: explain's own reading of the cluster, since
// upstream's status ("cannot allocate all claims", "resourceclaim not
// available on the node") names no claim. Each claim is tried alone with
// the allocator kube-scheduler uses, over the devices every allocated
// claim holds (a victim's included: preemption frees none).
type ClaimBlock struct {
	Claim string `json:"claim"` // namespace/name
	Why   string `json:"why"`
	// Held are the node's devices that other claims hold, as
	// "driver/pool/device (claim namespace/name, pod namespace/name)",
	// the pods those the claim is reserved for, when Why is a shortage.
	Held []string `json:"held,omitempty"`
}

// draBlocked is whether reasons are DynamicResources' Filter's.
func draBlocked(reasons []string) bool {
	return slices.Contains(reasons, "cannot allocate all claims") || slices.Contains(reasons, "resourceclaim not available on the node")
}

// claimExplainer tries the preemptor's claims on nodes; built on first use.
type claimExplainer struct {
	c      *preempt.Cluster
	pod    *v1.Pod
	now    time.Time // the clock of binding timeouts (Request.Now)
	claims []*resourcev1.ResourceClaim
	// The extended resources a DeviceClass backs the pod asks for
	// (DRAExtendedResource), by value, and their classes: on a node that
	// does not advertise them DynamicResources allocates a claim it makes
	// for them.
	extended map[v1.ResourceName]int64
	resolver draext.Resolver
	alloc    structured.Allocator
	err      error
	// late is set once an allocation ran out of preempt.DRAFilterTimeout:
	// no claim is tried after it.
	late bool
	// held are the allocated devices by node-local pool (driver/pool),
	// each as "driver/pool/device (claim)".
	held map[string][]string
}

func newClaimExplainer(c *preempt.Cluster, pod *v1.Pod, now time.Time) *claimExplainer {
	e := &claimExplainer{c: c, pod: pod, now: now, held: map[string][]string{}, resolver: draext.NewResolver(c.DeviceClasses)}
	if reqs := draext.PodRequests(pod); e.resolver.Backed(reqs) {
		e.extended = map[v1.ResourceName]int64{}
		for name, q := range draext.ScalarRequests(reqs) {
			if q != 0 && draext.IsDRAExtendedResourceName(name) && e.resolver.Class(name) != nil {
				e.extended[name] = q
			}
		}
	}
	for i := range pod.Spec.ResourceClaims {
		name, _, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil || name == nil {
			continue
		}
		for _, rc := range c.ResourceClaims {
			if rc.Namespace == pod.Namespace && rc.Name == *name {
				e.claims = append(e.claims, rc)
			}
		}
	}
	allocated := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	fts := dynamicresources.AllocatorFeatures(feature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
	for _, rc := range c.ResourceClaims {
		if rc.Status.Allocation == nil {
			continue
		}
		for _, r := range rc.Status.Allocation.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			pool := r.Driver + "/" + r.Pool
			holder := "claim " + preempt.Key(rc.Namespace, rc.Name)
			for _, ref := range rc.Status.ReservedFor {
				if ref.Resource == "pods" {
					holder += ", pod " + preempt.Key(rc.Namespace, ref.Name)
				}
			}
			e.held[pool] = append(e.held[pool], fmt.Sprintf("%s/%s (%s)", pool, r.Device, holder))
			if fts.ConsumableCapacity && r.ShareID != nil {
				allocated.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					allocated.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			allocated.AllocatedDevices.Insert(id)
		}
	}
	slicesByName := taintedSlices(c.ResourceSlices, c.DeviceTaintRules)
	sort.SliceStable(slicesByName, func(i, j int) bool { return slicesByName[i].Name < slicesByName[j].Name })
	e.alloc, e.err = structured.NewAllocator(context.Background(), fts, allocated, classes(c.DeviceClasses), slicesByName,
		cel.NewCache(10, cel.Features{EnableConsumableCapacity: fts.ConsumableCapacity, EnableListTypeAttributes: fts.ListTypeAttributes}))
	return e
}

// blocks are the claims that cannot be satisfied on node, each tried
// alone.
func (e *claimExplainer) blocks(node *v1.Node) []ClaimBlock {
	var out []ClaimBlock
	for _, rc := range e.claims {
		key := preempt.Key(rc.Namespace, rc.Name)
		if a := rc.Status.Allocation; a != nil {
			if a.NodeSelector != nil {
				sel, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
				if err != nil || !sel.Match(node) {
					out = append(out, ClaimBlock{Claim: key, Why: "allocated already, to devices this node cannot reach (status.allocation.nodeSelector)"})
					continue
				}
			}
			if why := bindingBlock(rc, e.now); why != "" {
				out = append(out, ClaimBlock{Claim: key, Why: why})
			}
			continue
		}
		if e.err != nil {
			out = append(out, ClaimBlock{Claim: key, Why: "not tried: " + e.err.Error()})
			continue
		}
		if e.late {
			out = append(out, ClaimBlock{Claim: key, Why: "not tried: an allocation ran out of the filter timeout before"})
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), preempt.DRAFilterTimeout)
		res, err := e.alloc.Allocate(ctx, node, []*resourcev1.ResourceClaim{rc})
		cancel()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			e.late = true
			out = append(out, ClaimBlock{Claim: key, Why: fmt.Sprintf("not tried: allocating it alone ran out of the filter timeout (%v)", preempt.DRAFilterTimeout)})
		case err != nil && !errors.Is(err, structured.ErrFailedAllocationOnNode):
			out = append(out, ClaimBlock{Claim: key, Why: "not tried: " + err.Error()})
		case err != nil || len(res) == 0:
			out = append(out, ClaimBlock{Claim: key, Why: "its requests find no free device on the node; evicting pods frees none (DynamicResources has no RemovePod)", Held: e.heldOn(node)})
		}
	}
	return append(out, e.extendedBlock(node)...)
}

// extendedBlock is the claim DynamicResources makes for the pod's
// extended resources that node does not advertise, when it cannot be
// allocated on node (tried alone).
func (e *claimExplainer) extendedBlock(node *v1.Node) []ClaimBlock {
	viaDRA := map[v1.ResourceName]int64{}
	var names []string
	for name, q := range e.extended {
		if a := node.Status.Allocatable[name]; a.Value() == 0 {
			viaDRA[name] = q
			names = append(names, fmt.Sprintf("%s: %d (DeviceClass %s)", name, q, e.resolver.Class(name).Name))
		}
	}
	if len(viaDRA) == 0 || e.err != nil {
		return nil
	}
	sort.Strings(names)
	rc := draext.InMemoryClaim(e.pod)
	rc.Spec.Devices.Requests = draext.Requests(e.pod, viaDRA, e.resolver)
	key := "extended resources " + strings.Join(names, ", ")
	res, err := e.alloc.Allocate(context.Background(), node, []*resourcev1.ResourceClaim{rc})
	switch {
	case err != nil && !errors.Is(err, structured.ErrFailedAllocationOnNode):
		return []ClaimBlock{{Claim: key, Why: "not tried: " + err.Error()}}
	case err != nil || len(res) == 0:
		return []ClaimBlock{{Claim: key, Why: "the node does not advertise them, and the claim DynamicResources makes for them finds no free device on the node; evicting pods frees none (DynamicResources has no RemovePod)", Held: e.heldOn(node)}}
	}
	return nil
}

// bindingBlock is why an allocated claim is unavailable for its binding
// conditions (DynamicResources' Filter, v1.37.2's default gates), "" when
// it is not: a failure condition met, or a condition not met when the
// binding timeout (600s) has passed at now (Request.Now; upstream reads
// the wall clock).
func bindingBlock(rc *resourcev1.ResourceClaim, now time.Time) string {
	a := rc.Status.Allocation
	for _, r := range a.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		var conds []metav1.Condition
		found := false
		for _, d := range rc.Status.Devices {
			if d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device {
				conds, found = d.Conditions, true
				break
			}
		}
		if found {
			for _, c := range r.BindingFailureConditions {
				if meta.IsStatusConditionTrue(conds, c) {
					return fmt.Sprintf("allocated already, and device %s/%s/%s's binding failure condition %s is true", r.Driver, r.Pool, r.Device, c)
				}
			}
			met := true
			for _, c := range r.BindingConditions {
				met = met && meta.IsStatusConditionTrue(conds, c)
			}
			if met {
				continue
			}
		}
		if a.AllocationTimestamp != nil && a.AllocationTimestamp.Add(600*time.Second).Before(now) {
			return fmt.Sprintf("allocated already at %s, and device %s/%s/%s's binding conditions are not met 600s later (the binding timeout), before %s", a.AllocationTimestamp.UTC().Format(time.RFC3339), r.Driver, r.Pool, r.Device, now.UTC().Format(time.RFC3339))
		}
		return ""
	}
	return ""
}

// heldOn are the allocated devices of node's own pools (slices with
// spec.nodeName the node).
func (e *claimExplainer) heldOn(node *v1.Node) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range e.c.ResourceSlices {
		pool := s.Spec.Driver + "/" + s.Spec.Pool.Name
		if ptr.Deref(s.Spec.NodeName, "") != node.Name || seen[pool] {
			continue
		}
		seen[pool] = true
		out = append(out, e.held[pool]...)
	}
	sort.Strings(out)
	return out
}

// taintedSlices are copies of the slices with the DeviceTaintRules
// taints on the devices they select, as v1.37.2's ResourceSlice tracker
// gives DynamicResources its slices (DRADeviceTaintRules; applyPatches): a
// rule without a selector selects nothing, a set driver, pool or device
// name must match the slice's driver, pool name or device name.
func taintedSlices(in []*resourcev1.ResourceSlice, rules []*resourcev1.DeviceTaintRule) []*resourcev1.ResourceSlice {
	out := slices.Clone(in)
	for i, s := range out {
		for _, r := range rules {
			sel := r.Spec.DeviceSelector
			if sel == nil || ptr.Deref(sel.Driver, s.Spec.Driver) != s.Spec.Driver || ptr.Deref(sel.Pool, s.Spec.Pool.Name) != s.Spec.Pool.Name {
				continue
			}
			for d := range s.Spec.Devices {
				if ptr.Deref(sel.Device, s.Spec.Devices[d].Name) != s.Spec.Devices[d].Name {
					continue
				}
				if s == in[i] {
					s = s.DeepCopy()
					out[i] = s
				}
				s.Spec.Devices[d].Taints = append(s.Spec.Devices[d].Taints, r.Spec.Taint)
			}
		}
	}
	return out
}

// classes is the allocator's DeviceClassLister over the cluster's classes.
type classes []*resourcev1.DeviceClass

func (l classes) List() ([]*resourcev1.DeviceClass, error) { return l, nil }

func (l classes) Get(name string) (*resourcev1.DeviceClass, error) {
	for _, dc := range l {
		if dc.Name == name {
			return dc, nil
		}
	}
	return nil, apierrors.NewNotFound(resourcev1.Resource("deviceclass"), name)
}

// formatBlocks is the text form of a node's blocked claims.
func formatBlocks(bs []ClaimBlock) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = b.Claim + ": " + b.Why
		if len(b.Held) > 0 {
			parts[i] += "; held: " + strings.Join(b.Held, ", ")
		}
	}
	return strings.Join(parts, "; ")
}
