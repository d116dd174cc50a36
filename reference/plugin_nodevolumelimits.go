package reference

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csilibplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

const reasonMaxVolumeCount = "node(s) exceed max volume count"

// nodeVolumeLimits is upstream's NodeVolumeLimits (CSILimits,
// framework/plugins/nodevolumelimits/csi.go, v1.37.2, with
// VolumeLimitScaling on as it is by default there; two switches give the
// earlier releases': preempt.SwitchMissingCSIDriver, the check of a
// missing CSI driver, off in v1.36 and v1.35, and
// preempt.SwitchPortworxMigrated, v1.36's Portworx migration on wherever
// there is a CSINode, which v1.35 read from the CSINode's annotation): the CSI volumes the
// pod adds to a node, per driver, must fit in the driver's attach limit
// in the node's CSINode (spec.drivers[].allocatable.count), beside the
// unique volumes of the pods on the node and the node's
// VolumeAttachments. A volume counts as driver/handle: a claim bound to a
// CSI volume, or to an in-tree volume migrated to CSI (csi-translation-lib,
// migration on for the five plugins upstream's isCSIMigrationOn names on a
// node with a CSINode), an unbound claim (or one whose volume is missing)
// through its StorageClass's provisioner, a generic ephemeral volume's
// claim, and an inline in-tree volume migrated to CSI. Inline CSI volumes
// are not counted (upstream's plugin counts them nowhere). It has no
// PreFilterExtensions: its Filter reads the pods on the node as they are,
// so a victim taken off frees its volumes unless another pod on the node
// (or a VolumeAttachment) still holds them.
type nodeVolumeLimits struct{}

func (nodeVolumeLimits) Name() string { return "NodeVolumeLimits" }

// translator is upstream's (csitrans.New(); it holds no state).
var translator = csitrans.New()

// nodeVolumeLimitsState is the cluster's storage objects by name, read
// once per cycle; it never changes.
type nodeVolumeLimitsState struct {
	pvcs     map[string]*v1.PersistentVolumeClaim // namespace/name
	pvs      map[string]*v1.PersistentVolume
	classes  map[string]*storagev1.StorageClass
	csiNodes map[string]*storagev1.CSINode
	drivers  map[string]*storagev1.CSIDriver
	vas      []*storagev1.VolumeAttachment
	// missingDriver is preempt.SwitchMissingCSIDriver (v1.37's
	// VolumeLimitScaling on), portworx preempt.SwitchPortworxMigrated.
	missingDriver, portworx bool
}

func (s *nodeVolumeLimitsState) clone() stateData { return s }

// PreFilter skips, as upstream's, a pod without a claim, a generic
// ephemeral volume or an inline volume csi-translation-lib can migrate.
// (The InPlacePodVerticalScalingSchedulerPreemption gate's Skip of a pod
// whose resize is deferred is not modelled: the gate is alpha, off, and
// refused when set.)
func (nodeVolumeLimits) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	need := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil || translator.IsInlineMigratable(vol) {
			need = true
			break
		}
	}
	if !need {
		return nil, true
	}
	c := ev.cluster
	st := &nodeVolumeLimitsState{pvcs: map[string]*v1.PersistentVolumeClaim{}, pvs: map[string]*v1.PersistentVolume{},
		classes: map[string]*storagev1.StorageClass{}, csiNodes: map[string]*storagev1.CSINode{},
		drivers: map[string]*storagev1.CSIDriver{}, vas: c.VolumeAttachments,
		missingDriver: ev.b.MissingCSIDriver, portworx: ev.b.PortworxMigrated}
	for _, o := range c.PVCs {
		st.pvcs[o.Namespace+"/"+o.Name] = o
	}
	for _, o := range c.PVs {
		st.pvs[o.Name] = o
	}
	for _, o := range c.StorageClasses {
		st.classes[o.Name] = o
	}
	for _, o := range c.CSINodes {
		st.csiNodes[o.Name] = o
	}
	for _, o := range c.CSIDrivers {
		st.drivers[o.Name] = o
	}
	return st, false
}

func (nodeVolumeLimits) Filter(state stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	st := state.(*nodeVolumeLimitsState)
	if len(pod.Spec.Volumes) == 0 {
		return preempt.Status{}
	}
	csiNode := st.csiNodes[s.node.Name] // nil without one: no limit, no migration

	newVolumes := map[string]string{} // unique name (driver/handle) -> driver
	if err := st.attachableVolumes(pod, csiNode, true, newVolumes); err != nil {
		if apierrors.IsNotFound(err) {
			return unresolvable(err.Error())
		}
		return asError(err)
	}
	if len(newVolumes) == 0 {
		return preempt.Status{}
	}

	// VolumeLimitScaling (preempt.SwitchMissingCSIDriver): a driver
	// whose CSIDriver sets preventPodSchedulingIfMissing must be in the
	// node's CSINode. Upstream walks newVolumes in map order and reports
	// the first missing driver it meets, so with two missing drivers its
	// message is random; this takes the drivers in name order.
	if st.missingDriver {
		var drivers []string
		for _, d := range newVolumes {
			if !slices.Contains(drivers, d) {
				drivers = append(drivers, d)
			}
		}
		slices.Sort(drivers)
		for _, d := range drivers {
			if !st.driverInstalled(d, csiNode) {
				return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{fmt.Sprintf("%s CSI driver is not installed on the node", d)}}
			}
		}
	}

	limits := map[string]int64{}
	if csiNode != nil {
		for _, d := range csiNode.Spec.Drivers {
			if d.Allocatable != nil && d.Allocatable.Count != nil {
				limits[d.Name] = int64(*d.Allocatable.Count)
			}
		}
	}
	if len(limits) == 0 {
		return preempt.Status{}
	}

	attached := map[string]string{}
	for _, p := range s.pods {
		if err := st.attachableVolumes(p, csiNode, false, attached); err != nil {
			return asError(err)
		}
	}
	count := map[string]int{}
	for name, driver := range attached {
		delete(newVolumes, name) // a volume already on the node adds nothing
		count[driver]++
	}
	// A VolumeAttachment keeps its slot while it exists, whether or not a
	// pod on the node still uses its volume (unless one does: then it is
	// counted once, above). A preemptor's volume that only an attachment
	// holds still counts as new, as upstream counts it.
	for name, driver := range st.attachments(s.node.Name) {
		if _, ok := attached[name]; !ok {
			count[driver]++
		}
	}
	adding := map[string]int{}
	for _, driver := range newVolumes {
		adding[driver]++
	}
	for driver, n := range adding {
		if limit, ok := limits[driver]; ok && count[driver]+n > int(limit) {
			return preempt.Status{Code: preempt.Unschedulable, Reasons: []string{reasonMaxVolumeCount}}
		}
	}
	return preempt.Status{}
}

// asError is the Error status upstream's framework makes of the plugin's
// error (RunFilterPlugins wraps it with the plugin's name).
func asError(err error) preempt.Status {
	return preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("running %q filter plugin: %v", "NodeVolumeLimits", err)}}
}

// driverInstalled is upstream's checkCSIDriverOnNode: only a CSIDriver
// with preventPodSchedulingIfMissing needs its driver in the CSINode.
func (st *nodeVolumeLimitsState) driverInstalled(driver string, csiNode *storagev1.CSINode) bool {
	d := st.drivers[driver]
	if d == nil || d.Spec.PreventPodSchedulingIfMissing == nil || !*d.Spec.PreventPodSchedulingIfMissing {
		return true
	}
	if csiNode == nil {
		return false
	}
	for _, nd := range csiNode.Spec.Drivers {
		if nd.Name == driver {
			return true
		}
	}
	return false
}

// attachments is upstream's getNodeVolumeAttachmentInfo: the node's
// VolumeAttachments with an attacher and an existing CSI volume, as
// attacher/handle -> attacher.
func (st *nodeVolumeLimitsState) attachments(node string) map[string]string {
	out := map[string]string{}
	for _, va := range st.vas {
		if va.Spec.NodeName != node || va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv := st.pvs[*va.Spec.Source.PersistentVolumeName]
		if pv == nil || pv.Spec.CSI == nil {
			continue
		}
		out[va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle] = va.Spec.Attacher
	}
	return out
}

// attachableVolumes is upstream's filterAttachableVolumes: pod's CSI
// volumes into result as driver/handle -> driver. A new pod's missing
// claim is an error (NotFound); an existing pod's is skipped.
func (st *nodeVolumeLimitsState) attachableVolumes(pod *v1.Pod, csiNode *storagev1.CSINode, newPod bool, result map[string]string) error {
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		var claim string
		isEphemeral := false
		switch {
		case vol.PersistentVolumeClaim != nil:
			claim = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claim = ephemeral.VolumeClaimName(pod, vol)
			isEphemeral = true
		default:
			if err := st.inlineVolume(vol, csiNode, pod, result); err != nil {
				return err
			}
			continue
		}
		if claim == "" {
			return fmt.Errorf("PersistentVolumeClaim had no name")
		}
		pvc := st.pvcs[pod.Namespace+"/"+claim]
		if pvc == nil {
			if newPod {
				err := apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), claim)
				return fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, claim, err)
			}
			continue
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return err
			}
		}
		driver, handle := st.driverInfo(csiNode, pvc)
		if driver == "" || handle == "" {
			continue
		}
		result[driver+"/"+handle] = driver
	}
	return nil
}

// inlineVolume is upstream's checkAttachableInlineVolume: an inline
// in-tree volume counts under its CSI driver when csi-translation-lib can
// migrate it and migration is on for its plugin on the node.
func (st *nodeVolumeLimitsState) inlineVolume(vol *v1.Volume, csiNode *storagev1.CSINode, pod *v1.Pod, result map[string]string) error {
	if !translator.IsInlineMigratable(vol) {
		return nil
	}
	plugin, err := translator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return fmt.Errorf("looking up provisioner name for volume %s: %w", vol.Name, err)
	}
	if !st.migrationOn(csiNode, plugin) {
		return nil
	}
	pv, err := translator.TranslateInTreeInlineVolumeToCSI(klog.Background(), vol, pod.Namespace)
	if err != nil || pv == nil {
		return fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	driver, err := translator.GetCSINameFromInTreeName(plugin)
	if err != nil {
		return fmt.Errorf("looking up CSI driver name for provisioner %s: %w", plugin, err)
	}
	if pv.Spec.CSI == nil {
		return nil
	}
	result[driver+"/"+pv.Spec.CSI.VolumeHandle] = driver
	return nil
}

// migrationOn is upstream's isCSIMigrationOn: on a node with a CSINode,
// for the five plugins it names; for Portworx before v1.36
// (preempt.SwitchPortworxMigrated off) only where the CSINode's
// migrated-plugins annotation lists it (v1.35's CSIMigrationPortworx,
// locked on, let it through to that check).
func (st *nodeVolumeLimitsState) migrationOn(csiNode *storagev1.CSINode, plugin string) bool {
	if csiNode == nil {
		return false
	}
	switch plugin {
	case csilibplugins.AWSEBSInTreePluginName, csilibplugins.GCEPDInTreePluginName,
		csilibplugins.AzureDiskInTreePluginName, csilibplugins.CinderInTreePluginName:
		return true
	case csilibplugins.PortworxVolumePluginName:
		return st.portworx || migratedOnNode(csiNode, plugin)
	}
	return false
}

// migratedOnNode is whether the CSINode's migrated-plugins annotation
// (a comma-separated list) names plugin.
func migratedOnNode(csiNode *storagev1.CSINode, plugin string) bool {
	return slices.Contains(strings.Split(csiNode.Annotations[v1.MigratedPluginsAnnotationKey], ","), plugin)
}

// scHandlePrefix stands for upstream's randomVolumeIDPrefix (32 random
// letters and digits, drawn once per scheduler): the handle of a volume
// counted through its StorageClass must match no real handle. NUL is in
// no handle the API server accepts from a CSI driver, so it never does.
const scHandlePrefix = "\x00storageclass"

// driverInfo is upstream's getCSIDriverInfo: the driver and handle of the
// claim's volume, its CSI translation for a migrated in-tree one, or,
// for an unbound claim or one whose volume is missing, its
// StorageClass's provisioner (getCSIDriverInfoFromSC). Empty strings:
// not counted.
func (st *nodeVolumeLimitsState) driverInfo(csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	pv := st.pvs[pvc.Spec.VolumeName]
	if pvc.Spec.VolumeName == "" || pv == nil {
		return st.driverInfoFromClass(csiNode, pvc)
	}
	csi := pv.Spec.CSI
	if csi == nil {
		if !translator.IsPVMigratable(pv) {
			return "", ""
		}
		plugin, err := translator.GetInTreePluginNameFromSpec(pv, nil)
		if err != nil || !st.migrationOn(csiNode, plugin) {
			return "", ""
		}
		csiPV, err := translator.TranslateInTreePVToCSI(klog.Background(), pv)
		if err != nil || csiPV.Spec.CSI == nil {
			return "", ""
		}
		csi = csiPV.Spec.CSI
	}
	return csi.Driver, csi.VolumeHandle
}

func (st *nodeVolumeLimitsState) driverInfoFromClass(csiNode *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	if name == "" {
		return "", ""
	}
	class := st.classes[name]
	if class == nil {
		return "", ""
	}
	handle := fmt.Sprintf("%s-%s/%s", scHandlePrefix, pvc.Namespace, pvc.Name)
	provisioner := class.Provisioner
	if translator.IsMigratableIntreePluginByName(provisioner) {
		if !st.migrationOn(csiNode, provisioner) {
			return "", ""
		}
		driver, err := translator.GetCSINameFromInTreeName(provisioner)
		if err != nil {
			return "", ""
		}
		return driver, handle
	}
	return provisioner, handle
}
