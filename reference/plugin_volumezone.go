package reference

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's ErrReasonConflict (framework/plugins/volumezone).
const reasonVolumeZoneConflict = "node(s) had no available volume zone"

// volumeZone is upstream's VolumeZone: the zone and region labels (GA and
// beta keys) of the volumes bound to the pod's claims must match the
// node's. It has no AddPod or RemovePod: it reads no pod.
//
// Not modelled: the Skip of a pod whose resize is deferred, under the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption (off by
// default).
type volumeZone struct{}

func (volumeZone) Name() string { return "VolumeZone" }

// volumeZoneTopologyLabels are upstream's topologyLabels, in its order.
var volumeZoneTopologyLabels = []string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

// pvTopology is one topology label of a bound volume: its key and the
// zones its value lists.
type pvTopology struct {
	key    string
	values sets.Set[string]
}

// volumeZoneState is upstream's stateData; it never changes.
type volumeZoneState []pvTopology

func (s volumeZoneState) clone() stateData { return s }

// PreFilterStatus is PreFilter's failure (getPVbyPod's): a claim without
// a name, a missing claim, volume or storage class, an unbound claim of a
// class without a binding mode or with Immediate binding, or without a
// class.
func (volumeZone) PreFilterStatus(ev *evaluator, pod *v1.Pod) preempt.Status {
	_, st := volumeZoneTopologies(ev, pod)
	return st
}

// PreFilter skips a pod none of whose claims is bound to a volume with a
// topology label (upstream's); a claim unbound under WaitForFirstConsumer
// is left to VolumeBinding.
func (volumeZone) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	tops, _ := volumeZoneTopologies(ev, pod)
	if len(tops) == 0 {
		return nil, true
	}
	return volumeZoneState(tops), false
}

// volumeZoneTopologies is upstream's getPVbyPod.
func volumeZoneTopologies(ev *evaluator, pod *v1.Pod) ([]pvTopology, preempt.Status) {
	var tops []pvTopology
	c := ev.cluster
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		if name == "" {
			return nil, unresolvable("PersistentVolumeClaim had no name")
		}
		i := slices.IndexFunc(c.PVCs, func(c *v1.PersistentVolumeClaim) bool { return c.Namespace == pod.Namespace && c.Name == name })
		if i < 0 {
			return nil, unresolvable(apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name).Error())
		}
		pvc := c.PVCs[i]
		pvName := pvc.Spec.VolumeName
		if pvName == "" {
			scName := storagehelpers.GetPersistentVolumeClaimClass(pvc)
			if scName == "" {
				return nil, unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
			}
			j := slices.IndexFunc(c.StorageClasses, func(sc *storagev1.StorageClass) bool { return sc.Name == scName })
			if j < 0 {
				return nil, unresolvable(apierrors.NewNotFound(storagev1.Resource("storageclass"), scName).Error())
			}
			class := c.StorageClasses[j]
			if class.VolumeBindingMode == nil {
				return nil, unresolvable(fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", scName))
			}
			if *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, unresolvable("PersistentVolume had no name")
		}
		j := slices.IndexFunc(c.PVs, func(pv *v1.PersistentVolume) bool { return pv.Name == pvName })
		if j < 0 {
			return nil, unresolvable(apierrors.NewNotFound(v1.Resource("persistentvolume"), pvName).Error())
		}
		for _, key := range volumeZoneTopologyLabels {
			value, ok := c.PVs[j].Labels[key]
			if !ok {
				continue
			}
			zones, err := volumehelpers.LabelZonesToSet(value)
			if err != nil { // upstream logs and ignores the label
				continue
			}
			tops = append(tops, pvTopology{key: key, values: sets.Set[string](zones)})
		}
	}
	return tops, preempt.Status{}
}

// Filter is upstream's: a node without any topology label passes; else
// each volume label's key (or, for a beta key, its GA key) must be on the
// node with one of the label's zones.
func (volumeZone) Filter(state stateData, _ *v1.Pod, s *nodeState) preempt.Status {
	labels := s.node.Labels
	if !slices.ContainsFunc(volumeZoneTopologyLabels, func(k string) bool { _, ok := labels[k]; return ok }) {
		return preempt.Status{}
	}
	for _, t := range state.(volumeZoneState) {
		v, ok := labels[t.key]
		if !ok {
			v, ok = labels[volumeZoneGALabel(t.key)]
		}
		if !ok || !t.values.Has(v) {
			return unresolvable(reasonVolumeZoneConflict)
		}
	}
	return preempt.Status{}
}

// volumeZoneGALabel is upstream's translateToGALabel.
func volumeZoneGALabel(key string) string {
	switch key {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return key
}
