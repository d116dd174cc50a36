package reference

import (
	"context"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/preemptbench/preemptbench/internal/refstages"
	"github.com/preemptbench/preemptbench/preempt"
)

// What a gang member's placement leaves for the members after it, beyond
// the snapshot (v1.37.2, schedule_one_podgroup.go: podGroupPodSchedulingAlgorithm
// calls assumeAndReserve). The pod assumed in the snapshot
// (Snapshot.AssumePod) is the world's bound pod (gangView.Place): its
// node's pods (NodeVolumeLimits' counts, VolumeRestrictions' disk
// conflicts) and the snapshot's claims in use (usedPVCRefCounts, which
// VolumeRestrictions' PreFilter reads for ReadWriteOncePod claims). The
// Reserve plugins leave the rest, kept here until the placement reverts
// the member (Unreserve):
//
//   - VolumeBinding's Reserve (binder.AssumePodVolumes) assumes, in the
//     binder's assume caches, each static binding's PV bound to its claim
//     (ClaimRef set) and each claim to provision annotated with the node
//     (volume.kubernetes.io/selected-node). A later member's PreFilter
//     (GetPodVolumeClaims) reads both caches: the PVs it may match, and
//     its claims' annotations. NodeVolumeLimits, VolumeZone and
//     VolumeRestrictions read the informers' listers, which Reserve does
//     not touch.
//   - DynamicResources' Reserve records each claim it allocated as an
//     in-flight allocation (SignalClaimPendingAllocation) and in the pod
//     group's cycle state (pendingAllocations), the claim made for the
//     member's extended resources too (its own UID). A later member's
//     PreFilter counts the in-flight devices as allocated
//     (GatherAllocatedState), and takes a claim pending in this cycle as
//     allocated there (informationsForClaim's allocation and node
//     selector).
//
// PodGroupPostFilter's reprieve runs Reserve and Unreserve again
// (selectVictimsOnDomain), but the members' Filters there read the
// states their PreFilters made during the scheduling function: the PV
// lists and the allocator are the PreFilter's, so those Reserves change
// no verdict and are not modelled.
type gangReserved struct {
	assumed map[*v1.Pod]bool                     // the members assumed in the snapshot
	pvs     map[string]*v1.PersistentVolume      // PV name -> the PV assumed bound
	pvcs    map[string]*v1.PersistentVolumeClaim // namespace/name -> the claim assumed with a selected node
	pending map[types.UID]*resourcev1.AllocationResult
	// pendingIn is, per pending claim, the PodGroup whose member's Reserve
	// made the allocation: each PodGroup's pod-group cycle state is its
	// own (a CompositePodGroup's children each get a new one,
	// compositePodGroupSchedulingDefaultAlgorithm), and only there is it
	// a pendingAllocation; elsewhere the claim is in flight.
	pendingIn map[types.UID]string
}

// assumedPVC is the binder's pvcCache.Get: the claim as assumed, else the
// cluster's.
func (ev *evaluator) assumedPVC(namespace, name string) *v1.PersistentVolumeClaim {
	if r := ev.reserved; r != nil {
		if pvc := r.pvcs[namespace+"/"+name]; pvc != nil {
			return pvc
		}
	}
	return findPVC(ev.cluster, namespace, name)
}

// assumedPV is the binder's pvCache view of pv: the PV as assumed, else
// pv.
func (ev *evaluator) assumedPV(pv *v1.PersistentVolume) *v1.PersistentVolume {
	if r := ev.reserved; r != nil {
		if a := r.pvs[pv.Name]; a != nil {
			return a
		}
	}
	return pv
}

// pendingAllocation is the allocation a member placed earlier in pod's
// PodGroup's scheduling cycle made for claim (nil for none), and whether
// the claim's allocation is in flight from another PodGroup's (upstream's
// PreFilter then waits for it: "is in the process of being allocated").
func (ev *evaluator) pendingAllocation(claim *resourcev1.ResourceClaim, pod *v1.Pod) (alloc *resourcev1.AllocationResult, elsewhere bool) {
	r := ev.reserved
	if r == nil || r.pending[claim.UID] == nil {
		return nil, false
	}
	if r.pendingIn[claim.UID] != memberGroup(pod) {
		return nil, true
	}
	return r.pending[claim.UID], false
}

// memberGroup is the PodGroup of pod, a gang's member, as namespace/name.
func memberGroup(pod *v1.Pod) string {
	name, _ := preempt.PodGroupName(pod)
	return preempt.Key(pod.Namespace, name)
}

// reserve is RunReservePluginsReserve for pod placed on node with cycle
// state cs (the one its PreFilter and Filters used): VolumeBinding's and
// DynamicResources' Reserve. It returns the Unreserve.
func (ev *evaluator) reserve(pod *v1.Pod, cs *cycleState, node *v1.Node) func() {
	r := ev.reserved
	if r == nil || cs.failed != nil {
		return func() {}
	}
	var undo []func()
	for _, run := range cs.running {
		switch st := run.state.(type) {
		case *volumeBindingState:
			undo = append(undo, ev.reserveVolumes(r, pod, st, node))
		case *draState:
			undo = append(undo, r.reserveClaims(st, pod, ev.node(node.Name), memberGroup(pod), &ev.stages))
		}
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// reserveVolumes is binder.AssumePodVolumes with the pod volumes Filter
// found on node: nothing when every claim of the pod is fully bound;
// otherwise each static binding's PV assumed bound to its claim (when
// not already: GetBindVolumeToClaim's dirty), each claim to provision
// assumed with the node selected. RevertAssumedPodVolumes restores the
// informers' objects.
func (ev *evaluator) reserveVolumes(r *gangReserved, pod *v1.Pod, st *volumeBindingState, node *v1.Node) func() {
	allBound := true
	for i := range pod.Spec.Volumes {
		name, _ := claimNameOf(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		pvc := ev.assumedPVC(pod.Namespace, name)
		if pvc == nil || pvc.Spec.VolumeName == "" || !metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
			allBound = false
		}
	}
	if allBound {
		return func() {}
	}
	found, err := st.podVolumesOn(node)
	if err != nil {
		return func() {}
	}
	var pvNames, pvcKeys []string
	for _, b := range found.bindings {
		newPV, dirty, err := volume.GetBindVolumeToClaim(b.pv, b.pvc)
		if err != nil || !dirty {
			continue
		}
		r.pvs[newPV.Name] = newPV
		pvNames = append(pvNames, newPV.Name)
	}
	for _, pvc := range found.provisions {
		c := pvc.DeepCopy()
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, volume.AnnSelectedNode, node.Name)
		key := c.Namespace + "/" + c.Name
		r.pvcs[key] = c
		pvcKeys = append(pvcKeys, key)
	}
	return func() {
		// The assume caches' Restore: the informers' objects again.
		for _, n := range pvNames {
			delete(r.pvs, n)
		}
		for _, k := range pvcKeys {
			delete(r.pvcs, k)
		}
	}
}

// reserveClaims is DynamicResources' Reserve on node s, with the
// allocations its Filter made there (nodeAllocations): the claims to
// allocate but those pending in this cycle are allocated on the node,
// the claim for the extended resources with the requests the node needs
// (filterExtendedResources); nothing when that claim is the only one and
// the node advertises them all. Filter lists the results of the claims it
// allocated, then those of the pending ones, and Reserve hands them out
// in claim order: a pending claim before a claim allocated here swaps
// their results (docs/upstream-findings.md). Each claim gets its result
// in flight (SignalClaimPendingAllocation), unless already in flight,
// where it gains a sharer only and keeps its allocation. Unreserve drops
// the in-flight allocations this Reserve started (the last sharer's
// Unreserve removes one; reverts run last in, first out).
func (r *gangReserved) reserveClaims(st *draState, pod *v1.Pod, s *nodeState, group string, stages *refstages.Stages) func() {
	if st.allocator == nil {
		return func() {}
	}
	nodeClaim, status := st.filterExtendedResources(pod, s)
	if status != nil || (nodeClaim == nil && st.extended != nil && len(st.claims) == 1) {
		return func() {}
	}
	if !stages.ReservesExtendedClaim() {
		nodeClaim = nil
	}
	var toAllocate, order []*resourcev1.ResourceClaim
	var pending []*resourcev1.AllocationResult
	for i, claim := range st.claims {
		if claim.Status.Allocation != nil {
			continue
		}
		order = append(order, claim)
		pending = append(pending, st.pending[i])
		if st.pending[i] != nil {
			continue
		}
		if claim == st.extended && nodeClaim != nil {
			claim = nodeClaim
		}
		toAllocate = append(toAllocate, claim)
	}
	result, err := st.allocator.Allocate(context.Background(), s.node, toAllocate)
	if err != nil || len(result) != len(toAllocate) {
		return func() {}
	}
	results := stages.ReserveResults(result, pending)
	var started []types.UID
	for i, claim := range order {
		if r.pending[claim.UID] != nil {
			continue
		}
		alloc := results[i]
		r.pending[claim.UID] = &alloc
		r.pendingIn[claim.UID] = group
		started = append(started, claim.UID)
	}
	return func() {
		for _, uid := range started {
			delete(r.pending, uid)
			delete(r.pendingIn, uid)
		}
	}
}

// inFlight are the allocations in flight (the claim tracker's
// inFlightAllocations): the gang's pending ones, none outside a gang.
// GatherAllocatedState counts their devices as allocated; the order is
// the claims' UIDs', though the allocated state is a set.
func (ev *evaluator) inFlight() []*resourcev1.AllocationResult {
	r := ev.reserved
	if r == nil {
		return nil
	}
	uids := slices.Sorted(maps.Keys(r.pending))
	out := make([]*resourcev1.AllocationResult, 0, len(uids))
	for _, uid := range uids {
		out = append(out, r.pending[uid])
	}
	return out
}
