package schedplugin

import (
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
)

// volumeObjects are the objects the volume filters read (claims, volumes,
// storage classes, CSI nodes and drivers, volume attachments, CSI
// storage capacities) and the
// DeviceClasses (which may back an extended resource: preempt.ClaimGaps),
// as the scheduler's informers hold them, each kind sorted by namespace
// and name. The volume filters of kube-scheduler's default profile read
// them through the same informers (VolumeBinding's PersistentVolume and
// claim caches are assume caches over them: a binding the scheduler has
// assumed and not yet written is not seen here; see docs/real-scheduler.md).
type volumeObjects struct {
	pvcs          []*v1.PersistentVolumeClaim
	pvs           []*v1.PersistentVolume
	classes       []*storagev1.StorageClass
	csiNodes      []*storagev1.CSINode
	csiDrivers    []*storagev1.CSIDriver
	attachments   []*storagev1.VolumeAttachment
	capacities    []*storagev1.CSIStorageCapacity
	deviceClasses []*resourcev1.DeviceClass
}

// volumeListers lists volumeObjects; nil when the handle has no informer
// factory (then the cluster holds none).
type volumeListers struct {
	list func() (volumeObjects, error)
}

// newVolumeListers registers the informers (kube-scheduler starts the
// factory after building its profiles, so they run; the default
// profile's volume filters and DynamicResources register the same).
func newVolumeListers(inf informers.SharedInformerFactory) volumeListers {
	if inf == nil {
		return volumeListers{}
	}
	pvcs := inf.Core().V1().PersistentVolumeClaims().Lister()
	pvs := inf.Core().V1().PersistentVolumes().Lister()
	classes := inf.Storage().V1().StorageClasses().Lister()
	csiNodes := inf.Storage().V1().CSINodes().Lister()
	csiDrivers := inf.Storage().V1().CSIDrivers().Lister()
	attachments := inf.Storage().V1().VolumeAttachments().Lister()
	capacities := inf.Storage().V1().CSIStorageCapacities().Lister()
	deviceClasses := inf.Resource().V1().DeviceClasses().Lister()
	return volumeListers{list: func() (volumeObjects, error) {
		var o volumeObjects
		var err error
		if o.pvcs, err = listSorted("PersistentVolumeClaims", pvcs.List); err != nil {
			return o, err
		}
		if o.pvs, err = listSorted("PersistentVolumes", pvs.List); err != nil {
			return o, err
		}
		if o.classes, err = listSorted("StorageClasses", classes.List); err != nil {
			return o, err
		}
		if o.csiNodes, err = listSorted("CSINodes", csiNodes.List); err != nil {
			return o, err
		}
		if o.csiDrivers, err = listSorted("CSIDrivers", csiDrivers.List); err != nil {
			return o, err
		}
		if o.attachments, err = listSorted("VolumeAttachments", attachments.List); err != nil {
			return o, err
		}
		if o.capacities, err = listSorted("CSIStorageCapacities", capacities.List); err != nil {
			return o, err
		}
		o.deviceClasses, err = listSorted("DeviceClasses", deviceClasses.List)
		return o, err
	}}
}

func listSorted[T metav1.Object](kind string, list func(labels.Selector) ([]T, error)) ([]T, error) {
	objs, err := list(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", kind, err)
	}
	sort.Slice(objs, func(i, j int) bool {
		if a, b := objs[i].GetNamespace(), objs[j].GetNamespace(); a != b {
			return a < b
		}
		return objs[i].GetName() < objs[j].GetName()
	})
	return objs, nil
}

func (l volumeListers) listVolumes() (volumeObjects, error) {
	if l.list == nil {
		return volumeObjects{}, nil
	}
	return l.list()
}

// same reports whether o and p hold the same objects, by pointer (an
// informer replaces an object it updates).
func (o volumeObjects) same(p volumeObjects) bool {
	return slices.Equal(o.pvcs, p.pvcs) && slices.Equal(o.pvs, p.pvs) && slices.Equal(o.classes, p.classes) &&
		slices.Equal(o.csiNodes, p.csiNodes) && slices.Equal(o.csiDrivers, p.csiDrivers) &&
		slices.Equal(o.attachments, p.attachments) && slices.Equal(o.capacities, p.capacities) && slices.Equal(o.deviceClasses, p.deviceClasses)
}
