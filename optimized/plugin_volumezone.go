package optimized

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's ErrReasonConflict (framework/plugins/volumezone).
var reasonsVolumeZoneConflict = []string{"node(s) had no available volume zone"}

// volumeZoneTopologyLabels are upstream's topologyLabels, in its order.
var volumeZoneTopologyLabels = [...]string{
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
}

// volumeZoneState is VolumeZone's PreFilter state: the topology labels of
// the volumes bound to the preemptor's claims, none when upstream's
// PreFilter Skips. It reads the node alone: no AddPod, no RemovePod.
//
// Not modelled: the Skip of a pod whose resize is deferred, under the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption (off by
// default).
type volumeZoneState struct {
	tops []volumeZoneTopology
}

type volumeZoneTopology struct {
	key, gaKey string // the label's key, and its GA key (translateToGALabel)
	values     sets.Set[string]
}

func (st *volumeZoneState) on() bool { return len(st.tops) > 0 }

// newVolumeZoneState is PreFilter (upstream's getPVbyPod): its failure is
// a claim without a name, a missing claim, volume or storage class, an
// unbound claim without a class, of a class without a binding mode, or of
// Immediate binding; an unbound claim of a WaitForFirstConsumer class is
// left to VolumeBinding.
func newVolumeZoneState(s *Snapshot, pod *v1.Pod) (volumeZoneState, preempt.Status) {
	var st volumeZoneState
	c := s.cluster
	var x *volumeIndex // built for the first claim
	fail := func(msg string) (volumeZoneState, preempt.Status) {
		return volumeZoneState{}, preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: []string{msg}}
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		name := vol.PersistentVolumeClaim.ClaimName
		if name == "" {
			return fail("PersistentVolumeClaim had no name")
		}
		if x == nil {
			x = s.volumeIndexOf()
		}
		i := at(x.firstPVC, podKey{pod.Namespace, name})
		if i < 0 {
			return fail(apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name).Error())
		}
		pvName := c.PVCs[i].Spec.VolumeName
		if pvName == "" {
			scName := storagehelpers.GetPersistentVolumeClaimClass(c.PVCs[i])
			if scName == "" {
				return fail("PersistentVolumeClaim had no pv name and storageClass name")
			}
			j := at(x.firstClass, scName)
			if j < 0 {
				return fail(apierrors.NewNotFound(storagev1.Resource("storageclass"), scName).Error())
			}
			mode := c.StorageClasses[j].VolumeBindingMode
			if mode == nil {
				return fail(fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", scName))
			}
			if *mode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return fail("PersistentVolume had no name")
		}
		j := at(x.firstPV, pvName)
		if j < 0 {
			return fail(apierrors.NewNotFound(v1.Resource("persistentvolume"), pvName).Error())
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
			ga := key
			switch key {
			case v1.LabelFailureDomainBetaRegion:
				ga = v1.LabelTopologyRegion
			case v1.LabelFailureDomainBetaZone:
				ga = v1.LabelTopologyZone
			}
			st.tops = append(st.tops, volumeZoneTopology{key: key, gaKey: ga, values: sets.Set[string](zones)})
		}
	}
	return st, preempt.Status{}
}

// filter is VolumeZone's Filter on node; nil means it passes (always on a
// node without any topology label).
func (st *volumeZoneState) filter(node *v1.Node) []string {
	labels := node.Labels
	any := false
	for _, k := range volumeZoneTopologyLabels {
		if _, ok := labels[k]; ok {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	for i := range st.tops {
		t := &st.tops[i]
		v, ok := labels[t.key]
		if !ok {
			v, ok = labels[t.gaKey]
		}
		if !ok || !t.values.Has(v) {
			return reasonsVolumeZoneConflict
		}
	}
	return nil
}
