package reference

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's ErrReasonDiskConflict and ErrReasonReadWriteOncePodConflict
// (framework/plugins/volumerestrictions).
const (
	reasonDiskConflict             = "node(s) had no available disk"
	reasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

// volumeRestrictions is upstream's VolumeRestrictions: an inline GCE PD,
// AWS EBS, ISCSI or RBD volume of the pod may not conflict with one of a
// pod on the node (Filter), and a ReadWriteOncePod claim of the pod may
// not be in use by any pod of the cluster (PreFilter counts the claims in
// use, AddPod and RemovePod move the count, Filter refuses while it is
// above zero).
//
// Not modelled: the Skip of a pod whose resize is deferred, under the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption (off by
// default; the implementations refuse a gate they do not model).
type volumeRestrictions struct{}

func (volumeRestrictions) Name() string { return "VolumeRestrictions" }

// volumeRestrictionsState is upstream's preFilterState: the names of the
// pod's claims with the ReadWriteOncePod access mode, and the number of
// references to them by the pods placed.
type volumeRestrictionsState struct {
	readWriteOncePodPVCs map[string]bool // never changed after PreFilter
	conflictingPVCRefs   int
}

func (s *volumeRestrictionsState) clone() stateData {
	c := *s
	return &c
}

// PreFilterStatus is PreFilter's failure: a claim of the pod that does
// not exist (the lister's NotFound, UnschedulableAndUnresolvable, as
// upstream's).
func (volumeRestrictions) PreFilterStatus(ev *evaluator, pod *v1.Pod) preempt.Status {
	_, st := readWriteOncePodPVCs(ev, pod)
	return st
}

// PreFilter counts the pods of the cluster using a ReadWriteOncePod claim
// of the pod: one per claim in use, whatever the number of its users
// (upstream's IsPVCUsedByPods over the snapshot's pods, the pods bound to
// the cluster's nodes). It skips when the pod has no inline volume to
// check and none of its ReadWriteOncePod claims is in use.
func (volumeRestrictions) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	needsCheck := slices.ContainsFunc(pod.Spec.Volumes, needsRestrictionsCheck)
	pvcs, _ := readWriteOncePodPVCs(ev, pod)
	st := &volumeRestrictionsState{readWriteOncePodPVCs: pvcs}
	if len(pvcs) > 0 {
		used := claimsInUse(ev)
		for name := range pvcs {
			if used[pod.Namespace+"/"+name] {
				st.conflictingPVCRefs++
			}
		}
	}
	if !needsCheck && st.conflictingPVCRefs == 0 {
		return nil, true
	}
	return st, false
}

// claimsInUse is the snapshot's set of claims in use (IsPVCUsedByPods):
// namespace/name of every claim a pod bound to a node names.
func claimsInUse(ev *evaluator) map[string]bool {
	used := map[string]bool{}
	for _, n := range ev.nodes {
		for _, p := range ev.bound[n.Name] {
			if r := ev.reserved; r != nil && r.assumed[p] && !ev.stages.AssumedClaimsInUse() {
				continue
			}
			for _, vol := range p.Spec.Volumes {
				if vol.PersistentVolumeClaim != nil {
					used[p.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName] = true
				}
			}
		}
	}
	return used
}

// readWriteOncePodPVCs is upstream's readWriteOncePodPVCsForPod: the
// names of the pod's claims with the ReadWriteOncePod access mode; the
// first claim missing fails it.
func readWriteOncePodPVCs(ev *evaluator, pod *v1.Pod) (map[string]bool, preempt.Status) {
	pvcs := map[string]bool{}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		i := slices.IndexFunc(ev.cluster.PVCs, func(c *v1.PersistentVolumeClaim) bool {
			return c.Namespace == pod.Namespace && c.Name == name
		})
		if i < 0 {
			err := apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name)
			return nil, unresolvable(err.Error())
		}
		if slices.Contains(ev.cluster.PVCs[i].Spec.AccessModes, v1.ReadWriteOncePod) {
			pvcs[name] = true
		}
	}
	return pvcs, preempt.Status{}
}

// AddPod and RemovePod count the added or removed pod's volumes naming a
// ReadWriteOncePod claim of the pod, by claim name alone, as upstream's
// conflictingPVCRefCountForPod does.
func (volumeRestrictions) AddPod(state stateData, _, added *v1.Pod, _ *nodeState) {
	st := state.(*volumeRestrictionsState)
	st.conflictingPVCRefs += st.refsBy(added)
}

func (volumeRestrictions) RemovePod(state stateData, _, removed *v1.Pod, _ *nodeState) {
	st := state.(*volumeRestrictionsState)
	st.conflictingPVCRefs -= st.refsBy(removed)
}

func (s *volumeRestrictionsState) refsBy(p *v1.Pod) int {
	n := 0
	for _, vol := range p.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil && s.readWriteOncePodPVCs[vol.PersistentVolumeClaim.ClaimName] {
			n++
		}
	}
	return n
}

// Filter is upstream's: the disk conflicts with the node's pods first,
// then the ReadWriteOncePod claims in use.
func (volumeRestrictions) Filter(state stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsRestrictionsCheck(*v) {
			continue
		}
		for _, existing := range s.pods {
			if isVolumeConflict(v, existing) {
				return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonDiskConflict}}
			}
		}
	}
	if state.(*volumeRestrictionsState).conflictingPVCRefs > 0 {
		return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonReadWriteOncePodConflict}}
	}
	return preempt.Status{}
}

// needsRestrictionsCheck is upstream's: the inline volumes Filter checks.
func needsRestrictionsCheck(v v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// isVolumeConflict is upstream's: volume conflicts with one of pod's.
func isVolumeConflict(volume *v1.Volume, pod *v1.Pod) bool {
	for _, ev := range pod.Spec.Volumes {
		// The same GCE disk conflicts unless both mount it read-only.
		if d, e := volume.GCEPersistentDisk, ev.GCEPersistentDisk; d != nil && e != nil {
			if d.PDName == e.PDName && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		// The same EBS volume always conflicts.
		if d, e := volume.AWSElasticBlockStore, ev.AWSElasticBlockStore; d != nil && e != nil {
			if d.VolumeID == e.VolumeID {
				return true
			}
		}
		// The same IQN conflicts unless both mount it read-only.
		if d, e := volume.ISCSI, ev.ISCSI; d != nil && e != nil {
			if d.IQN == e.IQN && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
		// The same RBD image (a shared monitor, the same pool and image)
		// conflicts unless both mount it read-only.
		if d, e := volume.RBD, ev.RBD; d != nil && e != nil {
			if haveOverlap(d.CephMonitors, e.CephMonitors) && d.RBDPool == e.RBDPool && d.RBDImage == e.RBDImage && !(d.ReadOnly && e.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func haveOverlap(a, b []string) bool {
	return slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) })
}
