package optimized

import (
	"context"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/storage/volume"

	"github.com/preemptbench/preemptbench/preempt"
)

// Gangs whose members have volumes or resource claims (v1.37.2's
// pod-group cycle; docs/upstream-findings.md "Gangs with volumes and
// claims"). The world the gang path keeps (per-node sums, ports,
// topology counts) is not what the volume plugins read, so a member with
// volumes or claims has its volume plugins' PreFilter made again when
// the placement first tries it (volumePreFilter), over what the members
// placed before it left:
//
//   - the snapshot: the potential victims are off and the placed members
//     are pods of their nodes (Snapshot.AssumePod), so their claims are in
//     use (VolumeRestrictions), their CSI volumes count against the node's
//     attach limit (NodeVolumeLimits) and their inline disks conflict;
//   - VolumeBinding's Reserve: each volume a placed member matched is
//     assumed bound to its claim, each claim it provisions assumed with
//     the node selected, in the binder's assume caches (gangVolumes.pvs,
//     pvcs), which a later member's PreFilter reads;
//   - DynamicResources' Reserve: each claim a placed member allocated is
//     in flight (its devices taken) and pending in the cycle (a member
//     sharing it takes it as allocated there).
//
// The member's Filters on a node read the world's pods there (volumeUse).
// The reprieve runs them on the states made in the scheduling function,
// whose assumptions are reverted: VolumeBinding's and DynamicResources'
// verdicts are those of the scheduling function; a victim put back is a
// pod of its node again and reaches VolumeRestrictions' AddPod when that
// plugin ran.
//
// Gangs without such members never reach this file: gangVolumes.on is
// false and the world is the one above.

// gangVolumes is the volume plugins' state of a gang request.
type gangVolumes struct {
	on bool
	// x is the snapshot's NodeVolumeLimits index with the members'
	// volumes interned (member j is pod len(s.pods)+j); memberVols are
	// each member's volumes on the node it was last placed on.
	x          *volumeIndex
	memberVols [][]volKey
	// The assume caches: PV name -> the PV assumed bound, claim -> the
	// claim assumed with a selected node; pending are the allocations in
	// flight by claim UID. log undoes the Reserves (last in, first out).
	pvs       map[string]*v1.PersistentVolume
	pvcs      map[podKey]*v1.PersistentVolumeClaim
	pending   map[types.UID]*resourcev1.AllocationResult
	pendingIn map[types.UID]string // claim UID -> the PodGroup whose member allocated it
	log       []func()
	// back are the potential victims the reprieve put back.
	back     []bool
	backList []int32
}

// hasVolumesOrClaims: pod has a volume or a resource claim.
func hasVolumesOrClaims(pod *v1.Pod) bool {
	return len(pod.Spec.Volumes) > 0 || len(pod.Spec.ResourceClaims) > 0
}

// usesVolumes: member i has a volume or a resource claim, or asks for an
// extended resource a DeviceClass backs (its DynamicResources state is
// made: the claim for them).
func (w *gangWorld) usesVolumes(i int) bool {
	return hasVolumesOrClaims(w.members[i]) || w.dec[i].dra != nil
}

// setVolumes resets the gang's volume state for members (setMembers,
// after their decisions).
func (w *gangWorld) setVolumes(members []*v1.Pod, b preempt.Behaviour) {
	gv := &w.vols
	gv.on = false
	for i := range members {
		gv.on = gv.on || w.usesVolumes(i)
	}
	if !gv.on {
		return
	}
	s := w.s
	base := s.volumeIndexFor(!b.PortworxMigrated)
	x := *base
	x.ids, x.drivers = maps.Clone(base.ids), maps.Clone(base.drivers)
	x.podVols = append(slices.Clip(base.podVols), make([][]volKey, len(members))...)
	x.podErr = append(slices.Clip(base.podErr), make([]string, len(members))...)
	gv.x = &x
	gv.memberVols = make([][]volKey, len(members))
	gv.pvs, gv.pvcs = map[string]*v1.PersistentVolume{}, map[podKey]*v1.PersistentVolumeClaim{}
	gv.pending, gv.pendingIn = map[types.UID]*resourcev1.AllocationResult{}, map[types.UID]string{}
	gv.log = gv.log[:0]
}

// resetBack forgets the reprieve's victims (buildWorld).
func (w *gangWorld) resetBack() {
	gv := &w.vols
	if !gv.on {
		return
	}
	gv.back = resizeBool(gv.back, len(w.s.pods))
	clear(gv.back)
	gv.backList = gv.backList[:0]
}

// inWorld says whether pod p of the snapshot is a pod of the world: not a
// potential victim, or one the reprieve put back.
func (w *gangWorld) inWorld(p int32) bool {
	return w.gone[p] != w.epoch || (w.vols.on && w.vols.back[p])
}

// volumePreFilter makes member i's volume plugins' and DynamicResources'
// PreFilter states over the world with the members placed so far
// (gangPreFilter calls it when the placement first tries i).
func (w *gangWorld) volumePreFilter(i int) {
	m, d, s, gv := w.members[i], w.dec[i], w.s, &w.vols
	if !gv.on || !w.usesVolumes(i) {
		return
	}
	var placed []*v1.Pod
	for j, n := range w.viewNode {
		if n >= 0 && w.inView[j] {
			placed = append(placed, w.members[j])
		}
	}
	if d.vols != nil {
		d.vols = newNodeVolumeLimitsStateIn(gv.x, m, d.b, true)
	}
	if d.volumes != nil {
		vb := *s.volumeIndexOf().vb
		pvList := s.cluster.PVs
		if len(gv.pvcs) > 0 {
			vb.pvcs = maps.Clone(vb.pvcs)
			maps.Copy(vb.pvcs, gv.pvcs)
		}
		if len(gv.pvs) > 0 {
			pvList = slices.Clone(pvList)
			for k, pv := range pvList {
				if a := gv.pvs[pv.Name]; a != nil {
					pvList[k] = a
				}
			}
		}
		d.volumes = newVolumeBindingStateIn(s, m, &vb, pvList)
	}
	d.vol = nil
	if len(m.Spec.Volumes) > 0 {
		d.vol = newVolumeStatesIn(s, m, d.volumes, w.inWorld, placed)
	}
	if d.dra != nil {
		g := &draGang{pending: gv.pending, pendingIn: gv.pendingIn, group: memberGroup(m)}
		for _, uid := range slices.Sorted(maps.Keys(gv.pending)) {
			g.inFlight = append(g.inFlight, gv.pending[uid])
		}
		d.dra = newDynamicResourcesStateIn(s, m, d.clock, g)
	}
	d.checkNodes = d.nodeName.mayFail(m) || d.nodeAffinity.mayFail() || (d.volumes != nil && d.volumes.rejected != nil) || d.dra != nil
}

// volumePreFiltered says whether member i's PreFilter reached
// DynamicResources' (no volume plugin's PreFilter rejected it before).
func (w *gangWorld) volumePreFiltered(i int) bool {
	return w.tried[i] && (!w.vols.on || w.dec[i].preFilterFailed() == nil)
}

// volumeUse sets u's volume plugins' part for member i on node n: the
// world's pods there and the members assumed there (view: those the
// placement placed; else those before i in the reprieve's order on n),
// and the ReadWriteOncePod references of the victims the reprieve put
// back (VolumeRestrictions' AddPod, wherever they are). It reports false
// when a volume PreFilter of i failed (every node fails).
func (w *gangWorld) volumeUse(i int, n int32, u *nodeUse, view bool) bool {
	d, s, gv := w.dec[i], w.s, &w.vols
	if d.preFilterFailed() != nil {
		return false
	}
	u.vols = u.vols[:0]
	u.disk, u.rwop = 0, 0
	if d.vols == nil && d.vol == nil {
		return true
	}
	for _, p := range s.boundOf[n] {
		if !w.inWorld(p) {
			continue
		}
		if d.vols != nil {
			u.addVolumes(d.vols.x, p, 1)
		}
		if d.vol != nil {
			if r, ok := d.vol.restrictions.refs[p]; ok && r.disk {
				u.disk++
			}
		}
	}
	assumed := func(j int) {
		if d.vols != nil {
			u.addVolKeys(gv.memberVols[j], 1)
		}
		if d.vol != nil && d.vol.restrictions.check && memberDiskConflict(w.members[i], w.members[j]) {
			u.disk++
		}
	}
	if view {
		for j, at := range w.viewNode {
			if j != i && at == n && w.inView[j] {
				assumed(j)
			}
		}
	} else {
		for _, j := range w.onNode[n] {
			if int(j) == i {
				break
			}
			assumed(int(j))
		}
		if d.vol != nil {
			for _, p := range gv.backList {
				u.rwop += d.vol.restrictions.refs[p].rwop
			}
		}
	}
	return true
}

// memberDiskConflict: an inline disk of pod conflicts with one of other's
// (VolumeRestrictions' Filter over the node's pods).
func memberDiskConflict(pod, other *v1.Pod) bool {
	for k := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[k]; needsRestrictionsCheck(*v) && isVolumeConflict(v, other) {
			return true
		}
	}
	return false
}

// volumeReserve is Place's Reserve of member i on node n: its volumes
// interned as a pod of n, VolumeBinding's and DynamicResources' Reserve
// into the assume caches, undone by revertVolumes.
func (w *gangWorld) volumeReserve(i int, n int32) {
	gv, s := &w.vols, w.s
	if !gv.on || !w.usesVolumes(i) {
		return
	}
	m, d, node := w.members[i], w.dec[i], s.nodes[n]
	// The member as a pod of n for NodeVolumeLimits (an existing pod).
	x, p := gv.x, len(s.pods)+i
	gv.memberVols[i] = gv.memberVols[i][:0]
	if len(m.Spec.Volumes) > 0 {
		names := map[string]string{}
		if err := x.attachable(m, x.csiNode[n], false, names); err != nil {
			gv.memberVols[i] = append(gv.memberVols[i], volKey{id: -1 - int32(p), driver: -1})
			x.podErr[p] = volumeErrorReason(err)
		} else {
			for _, name := range slices.Sorted(maps.Keys(names)) {
				gv.memberVols[i] = append(gv.memberVols[i], x.key(name, names[name], true))
			}
		}
	}
	if d.preFilterFailed() != nil || (d.volumes != nil && d.volumes.rejected != nil) || (d.dra != nil && d.dra.rejected != nil) {
		return // the cycle state failed: no Reserve
	}
	if st := d.volumes; st != nil && !w.allBound(m) {
		var found vbFound
		if code, _ := st.x.findPodVolumes(node, st.bound, st.delayed, st.volumes, &found); code != preempt.Error {
			var pvNames []string
			var pvcKeys []podKey
			for k, pv := range found.pvs {
				newPV, dirty, err := volume.GetBindVolumeToClaim(pv, found.pvcs[k])
				if err != nil || !dirty {
					continue
				}
				gv.pvs[newPV.Name] = newPV
				pvNames = append(pvNames, newPV.Name)
			}
			for _, pvc := range found.provisions {
				c := pvc.DeepCopy()
				metav1.SetMetaDataAnnotation(&c.ObjectMeta, volume.AnnSelectedNode, node.Name)
				key := podKey{c.Namespace, c.Name}
				gv.pvcs[key] = c
				pvcKeys = append(pvcKeys, key)
			}
			// RevertAssumedPodVolumes: the informers' objects again.
			gv.log = append(gv.log, func() {
				for _, name := range pvNames {
					delete(gv.pvs, name)
				}
				for _, k := range pvcKeys {
					delete(gv.pvcs, k)
				}
			})
		}
	}
	if st := d.dra; st != nil && st.alloc != nil {
		w.draReserve(st, m, node)
	}
}

// draReserve is DynamicResources' Reserve of member m on node, with the
// allocations its Filter made there: the claims to allocate but those
// pending in the cycle are allocated on the node, the claim for the
// extended resources with the requests the node needs
// (draFilterExtended); nothing when that claim is the only one and the
// node advertises them all. Filter lists the results of the claims it
// allocated, then those of the pending ones, and Reserve hands them out
// in claim order (a pending claim before one allocated here swaps their
// results, as v1.37.2 does); a claim already in flight gains a sharer
// only and keeps its allocation.
func (w *gangWorld) draReserve(st *dynamicResourcesState, m *v1.Pod, node *v1.Node) {
	gv := &w.vols
	var nodeClaim *resourcev1.ResourceClaim
	if st.ext != nil {
		var code preempt.Code
		code, _, nodeClaim = draFilterExtended(w.s, m, node, st.ext, st.scalar, st.userClaims)
		if code != preempt.Success || (nodeClaim == nil && st.userClaims == 0) {
			return
		}
	}
	toAllocate := st.toAllocate
	if nodeClaim != nil {
		// (not there when pending in the cycle already: a sharer only)
		if at := slices.Index(toAllocate, st.ext); at >= 0 {
			toAllocate = slices.Clone(toAllocate)
			toAllocate[at] = nodeClaim
		}
	}
	result, err := st.alloc.Allocate(context.Background(), node, toAllocate)
	if err != nil || len(result) != len(toAllocate) {
		return
	}
	// Filter's results: those of the claims allocated here, then those
	// of the pending claims, each list in claim order.
	results := slices.Clip(result)
	for _, a := range st.pending {
		if a != nil {
			results = append(results, *a)
		}
	}
	var started []types.UID
	k := 0
	for _, claim := range st.claims {
		if claim.Status.Allocation != nil {
			continue
		}
		alloc := results[k]
		k++
		if gv.pending[claim.UID] != nil {
			continue
		}
		gv.pending[claim.UID] = &alloc
		gv.pendingIn[claim.UID] = memberGroup(m)
		started = append(started, claim.UID)
	}
	gv.log = append(gv.log, func() {
		for _, uid := range started {
			delete(gv.pending, uid)
			delete(gv.pendingIn, uid)
		}
	})
}

// memberGroup is the PodGroup of pod, a gang's member, as namespace/name.
func memberGroup(pod *v1.Pod) string {
	name, _ := preempt.PodGroupName(pod)
	return preempt.Key(pod.Namespace, name)
}

// allBound: every claim of pod is bound (AssumePodVolumes does nothing),
// as the assume cache has it.
func (w *gangWorld) allBound(pod *v1.Pod) bool {
	x := w.s.volumeIndexOf().vb
	for k := range pod.Spec.Volumes {
		name, _ := vbClaimName(pod, &pod.Spec.Volumes[k])
		if name == "" {
			continue
		}
		key := podKey{pod.Namespace, name}
		pvc := w.vols.pvcs[key]
		if pvc == nil {
			pvc = x.pvcs[key]
		}
		if pvc == nil || pvc.Spec.VolumeName == "" || !metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
			return false
		}
	}
	return true
}

// volumeMark is the Reserve log's length, for revertVolumes.
func (w *gangWorld) volumeMark() int { return len(w.vols.log) }

// revertVolumes runs the Unreserves logged since mark, last first.
func (w *gangWorld) revertVolumes(mark int) {
	gv := &w.vols
	if !gv.on {
		return
	}
	for k := len(gv.log) - 1; k >= mark; k-- {
		gv.log[k]()
		gv.log[k] = nil
	}
	gv.log = gv.log[:mark]
}

// putBack marks the pods of a unit the reprieve puts back (sign 1) or
// takes off again (-1).
func (w *gangWorld) putBack(pods []int32, sign int) {
	gv := &w.vols
	if !gv.on {
		return
	}
	for _, p := range pods {
		gv.back[p] = sign > 0
		if sign > 0 {
			gv.backList = append(gv.backList, p)
		} else if k := slices.Index(gv.backList, p); k >= 0 {
			gv.backList = slices.Delete(gv.backList, k, k+1)
		}
	}
}

// recheckAssignments recomputes every assignment node's check: a victim
// put back moves VolumeRestrictions' ReadWriteOncePod count of every
// member that ran it, wherever they are.
func (w *gangWorld) recheckAssignments() {
	if !w.vols.on {
		return
	}
	w.nextNodeEpoch()
	for _, n := range w.assignedTo {
		if n >= 0 && w.seenNode[n] != w.nodeEpoch {
			w.seenNode[n] = w.nodeEpoch
			w.setNodeOK(n, w.nodeFits(n))
		}
	}
}
