package upstream

import (
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"

	"github.com/preemptbench/preemptbench/internal/schedulerconfig"
	"github.com/preemptbench/preemptbench/preempt"
)

// defaultProfile is Version's default KubeSchedulerProfile as kube-scheduler
// builds it from an empty configuration: the default plugins (MultiPoint,
// in upstream's order, with the feature-gated ones the process's gates
// enable) and every plugin's default args, through upstream's own
// defaulting and conversion. DefaultPreemption is left out: the adapter
// builds it itself, with the contract's deterministic hooks (plugin.go).
var defaultProfile = sync.OnceValues(func() (*config.KubeSchedulerProfile, error) {
	return buildProfile(schedulerconfig.Default)
})

func buildProfile(defaults func() (*config.KubeSchedulerConfiguration, error)) (*config.KubeSchedulerProfile, error) {
	cfg, err := defaults()
	if err != nil {
		return nil, err
	}
	p := cfg.Profiles[0]
	p.Plugins.MultiPoint.Enabled = slices.DeleteFunc(slices.Clone(p.Plugins.MultiPoint.Enabled), func(pl config.Plugin) bool {
		return pl.Name == names.DefaultPreemption
	})
	return &p, nil
}

// gatedProfiles are the default profiles built under feature gates that
// add plugins (GenericWorkload adds GangScheduling,
// TopologyAwareWorkloadScheduling its own), by gateKey.
var gatedProfiles sync.Map

// profileFor is the default profile under gates (gateKey), built while
// they are set on the process's gate (the caller holds them): the
// defaulting reads the gate.
func profileFor(gates string) (*config.KubeSchedulerProfile, error) {
	if gates == "" {
		return defaultProfile()
	}
	if p, ok := gatedProfiles.Load(gates); ok {
		return p.(*config.KubeSchedulerProfile), nil
	}
	p, err := buildProfile(schedulerconfig.DefaultUnderGates)
	if err != nil {
		return nil, err
	}
	gatedProfiles.Store(gates, p)
	return p, nil
}

// FilterPlugins names the Filter plugins of the profile the adapter runs,
// in order.
func FilterPlugins() []string {
	p, err := defaultProfile()
	if err != nil {
		return nil
	}
	var out []string
	for _, pl := range p.Plugins.MultiPoint.Enabled {
		if isFilter[pl.Name] {
			out = append(out, pl.Name)
		}
	}
	return out
}

// isFilter: the in-tree plugins with a Filter extension.
var isFilter = map[string]bool{
	names.NodeUnschedulable: true, names.NodeName: true, names.TaintToleration: true, names.NodeAffinity: true,
	names.NodePorts: true, names.NodeResourcesFit: true, names.VolumeRestrictions: true, names.NodeVolumeLimits: true,
	names.VolumeBinding: true, names.VolumeZone: true, names.PodTopologySpread: true, names.InterPodAffinity: true,
	names.DynamicResources: true, names.NodeDeclaredFeatures: true,
}

// volumeObjectSet holds the cluster objects only the volume filters and
// InterPodAffinity's namespaceSelector read.
type volumeObjectSet struct {
	namespaces     []*v1.Namespace
	pvcs           []*v1.PersistentVolumeClaim
	pvs            []*v1.PersistentVolume
	storageClasses []*storagev1.StorageClass
	csiNodes       []*storagev1.CSINode
	csiDrivers     []*storagev1.CSIDriver
	attachments    []*storagev1.VolumeAttachment
	capacities     []*storagev1.CSIStorageCapacity
	// The resource.k8s.io objects DynamicResources reads.
	resourceClaims []*resourcev1.ResourceClaim
	claimTemplates []*resourcev1.ResourceClaimTemplate
	resourceSlices []*resourcev1.ResourceSlice
	deviceClasses  []*resourcev1.DeviceClass
	// The DeviceTaintRules the ResourceSlice tracker applies to the
	// slices (newDRAManager).
	deviceTaintRules []*preempt.DeviceTaintRule
}

func volumeObjects(c *preempt.Cluster) volumeObjectSet {
	var s volumeObjectSet
	for _, o := range c.Namespaces {
		s.namespaces = append(s.namespaces, o.DeepCopy())
	}
	for _, o := range c.PVCs {
		s.pvcs = append(s.pvcs, o.DeepCopy())
	}
	for _, o := range c.PVs {
		s.pvs = append(s.pvs, o.DeepCopy())
	}
	for _, o := range c.StorageClasses {
		s.storageClasses = append(s.storageClasses, o.DeepCopy())
	}
	for _, o := range c.CSINodes {
		s.csiNodes = append(s.csiNodes, o.DeepCopy())
	}
	for _, o := range c.CSIDrivers {
		s.csiDrivers = append(s.csiDrivers, o.DeepCopy())
	}
	for _, o := range c.VolumeAttachments {
		s.attachments = append(s.attachments, o.DeepCopy())
	}
	for _, o := range c.CSIStorageCapacities {
		s.capacities = append(s.capacities, o.DeepCopy())
	}
	for _, o := range c.ResourceClaims {
		s.resourceClaims = append(s.resourceClaims, o.DeepCopy())
	}
	for _, o := range c.ResourceClaimTemplates {
		s.claimTemplates = append(s.claimTemplates, o.DeepCopy())
	}
	for _, o := range c.ResourceSlices {
		s.resourceSlices = append(s.resourceSlices, o.DeepCopy())
	}
	for _, o := range c.DeviceClasses {
		s.deviceClasses = append(s.deviceClasses, o.DeepCopy())
	}
	for _, o := range c.DeviceTaintRules {
		s.deviceTaintRules = append(s.deviceTaintRules, o.DeepCopy())
	}
	return s
}

// claimObjects are s's ResourceClaims.
func (s volumeObjectSet) claimObjects() []any {
	out := make([]any, len(s.resourceClaims))
	for i, o := range s.resourceClaims {
		out[i] = o
	}
	return out
}

// draObjects are s's resource.k8s.io objects.
func (s volumeObjectSet) draObjects() []runtime.Object {
	var out []runtime.Object
	for _, o := range s.resourceClaims {
		out = append(out, o)
	}
	for _, o := range s.claimTemplates {
		out = append(out, o)
	}
	for _, o := range s.resourceSlices {
		out = append(out, o)
	}
	for _, o := range s.deviceClasses {
		out = append(out, o)
	}
	return append(out, deviceTaintRuleObjects(s.deviceTaintRules)...)
}

// addTo puts the objects in the informers' stores, where the plugins'
// listers read them.
func (s volumeObjectSet) addTo(f informers.SharedInformerFactory) error {
	add := func(store cache.Store, o any) error {
		if err := store.Add(o); err != nil {
			return fmt.Errorf("informer store: %w", err)
		}
		return nil
	}
	for _, o := range s.namespaces {
		if err := add(f.Core().V1().Namespaces().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.pvcs {
		if err := add(f.Core().V1().PersistentVolumeClaims().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.pvs {
		if err := add(f.Core().V1().PersistentVolumes().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.storageClasses {
		if err := add(f.Storage().V1().StorageClasses().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.csiNodes {
		if err := add(f.Storage().V1().CSINodes().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.csiDrivers {
		if err := add(f.Storage().V1().CSIDrivers().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.attachments {
		if err := add(f.Storage().V1().VolumeAttachments().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.capacities {
		if err := add(f.Storage().V1().CSIStorageCapacities().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	// The claims go to the DRA manager's assume cache (newDRAManager);
	// the informer's store holds them too, as kube-scheduler's does.
	for _, o := range s.resourceClaims {
		if err := add(f.Resource().V1().ResourceClaims().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.claimTemplates {
		if err := add(f.Resource().V1().ResourceClaimTemplates().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.resourceSlices {
		if err := add(f.Resource().V1().ResourceSlices().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	for _, o := range s.deviceClasses {
		if err := add(f.Resource().V1().DeviceClasses().Informer().GetStore(), o); err != nil {
			return err
		}
	}
	return addDeviceTaintRules(f, s.deviceTaintRules)
}
