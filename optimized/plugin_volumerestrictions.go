package optimized

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's ErrReasonDiskConflict and ErrReasonReadWriteOncePodConflict
// (framework/plugins/volumerestrictions).
var (
	reasonsDiskConflict             = []string{"node(s) had no available disk"}
	reasonsReadWriteOncePodConflict = []string{"node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"}
)

// volumeRestrictionsState is VolumeRestrictions' PreFilter state. Its
// per-node state is nodeUse.disk (the pods on the node whose inline GCE
// PD, AWS EBS, ISCSI or RBD volume conflicts with one of the preemptor's)
// and nodeUse.rwop (the references to the preemptor's ReadWriteOncePod
// claims added by AddPod net of RemovePod); addPod moves both through
// refs, the pods of the cluster that count, computed once per decision.
//
// Not modelled: the Skip of a pod whose resize is deferred, under the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption (off by
// default).
type volumeRestrictionsState struct {
	check bool // upstream's PreFilter did not Skip
	// conflicting is PreFilter's conflictingPVCRefCount: the preemptor's
	// ReadWriteOncePod claims in use by a pod bound to a node, one per
	// claim however many use it (IsPVCUsedByPods).
	conflicting int32
	refs        map[int32]volumeRefs
}

// volumeRefs is what one pod weighs in VolumeRestrictions' Filter: a disk
// conflicting with the preemptor's, and its volumes naming one of the
// preemptor's ReadWriteOncePod claims (by claim name alone, in any
// namespace, as upstream's conflictingPVCRefCountForPod).
type volumeRefs struct {
	disk bool
	rwop int32
}

// newVolumeRestrictionsStateIn is PreFilter on a snapshot whose bound pods
// are those of s for which bound says so (nil: every one) and the pods
// extra (a gang's members placed before: Snapshot.AssumePod). Its failure
// is a claim of the pod that does not exist (UnschedulableAndUnresolvable,
// the lister's message); it Skips when the pod has no inline volume to
// check and none of its ReadWriteOncePod claims is in use.
func newVolumeRestrictionsStateIn(s *Snapshot, pod *v1.Pod, bound func(p int32) bool, extra []*v1.Pod) (volumeRestrictionsState, preempt.Status) {
	var st volumeRestrictionsState
	if len(pod.Spec.Volumes) == 0 {
		return st, preempt.Status{}
	}
	var rwop []string // the pod's ReadWriteOncePod claims' names
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		i := at(s.volumeIndexOf().firstPVC, podKey{pod.Namespace, name})
		if i < 0 {
			err := apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
			return st, preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{err.Error()}}
		}
		if slices.Contains(s.cluster.PVCs[i].Spec.AccessModes, v1.ReadWriteOncePod) && !slices.Contains(rwop, name) {
			rwop = append(rwop, name)
		}
	}
	needsCheck := slices.ContainsFunc(pod.Spec.Volumes, needsRestrictionsCheck)
	if !needsCheck && len(rwop) == 0 {
		return st, preempt.Status{}
	}
	var used []string
	for p, other := range s.pods {
		if len(other.Spec.Volumes) == 0 {
			continue
		}
		var r volumeRefs
		for i := range other.Spec.Volumes {
			c := other.Spec.Volumes[i].PersistentVolumeClaim
			if c == nil || !slices.Contains(rwop, c.ClaimName) {
				continue
			}
			r.rwop++
			if s.podNode[p] >= 0 && (bound == nil || bound(int32(p))) && other.Namespace == pod.Namespace && !slices.Contains(used, c.ClaimName) {
				used = append(used, c.ClaimName)
			}
		}
		if needsCheck {
			for i := range pod.Spec.Volumes {
				if v := &pod.Spec.Volumes[i]; needsRestrictionsCheck(*v) && isVolumeConflict(v, other) {
					r.disk = true
					break
				}
			}
		}
		if r != (volumeRefs{}) {
			if st.refs == nil {
				st.refs = map[int32]volumeRefs{}
			}
			st.refs[int32(p)] = r
		}
	}
	for _, other := range extra {
		if other.Namespace != pod.Namespace {
			continue
		}
		for i := range other.Spec.Volumes {
			if c := other.Spec.Volumes[i].PersistentVolumeClaim; c != nil && slices.Contains(rwop, c.ClaimName) && !slices.Contains(used, c.ClaimName) {
				used = append(used, c.ClaimName)
			}
		}
	}
	st.conflicting = int32(len(used))
	st.check = needsCheck || st.conflicting > 0
	return st, preempt.Status{}
}

// addPod is AddPod (sign 1) and RemovePod (-1) of pod p on u.
func (st *volumeRestrictionsState) addPod(u *nodeUse, p int32, sign int32) {
	if r, ok := st.refs[p]; ok {
		if r.disk {
			u.disk += sign
		}
		u.rwop += sign * r.rwop
	}
}

// addRemote is AddPod or RemovePod of pod p on another node than u's: the
// count of ReadWriteOncePod references is the cluster's.
func (st *volumeRestrictionsState) addRemote(u *nodeUse, p int32, sign int32) {
	u.rwop += sign * st.refs[p].rwop
}

// filter is VolumeRestrictions' Filter on the pods of u and nom: the disk
// conflicts first, then the ReadWriteOncePod claims in use; nil means it
// passes.
func (st *volumeRestrictionsState) filter(u, nom *nodeUse) []string {
	if u.disk+nom.disk > 0 {
		return reasonsDiskConflict
	}
	if st.conflicting+u.rwop+nom.rwop > 0 {
		return reasonsReadWriteOncePodConflict
	}
	return nil
}

// needsRestrictionsCheck is upstream's: the inline volumes Filter checks.
func needsRestrictionsCheck(v v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// isVolumeConflict is upstream's: volume conflicts with one of pod's.
func isVolumeConflict(volume *v1.Volume, pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		e := &pod.Spec.Volumes[i]
		if d, x := volume.GCEPersistentDisk, e.GCEPersistentDisk; d != nil && x != nil && d.PDName == x.PDName && !(d.ReadOnly && x.ReadOnly) {
			return true
		}
		if d, x := volume.AWSElasticBlockStore, e.AWSElasticBlockStore; d != nil && x != nil && d.VolumeID == x.VolumeID {
			return true
		}
		if d, x := volume.ISCSI, e.ISCSI; d != nil && x != nil && d.IQN == x.IQN && !(d.ReadOnly && x.ReadOnly) {
			return true
		}
		if d, x := volume.RBD, e.RBD; d != nil && x != nil && d.RBDPool == x.RBDPool && d.RBDImage == x.RBDImage && !(d.ReadOnly && x.ReadOnly) &&
			slices.ContainsFunc(d.CephMonitors, func(m string) bool { return slices.Contains(x.CephMonitors, m) }) {
			return true
		}
	}
	return false
}
