package reference

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/preemptbench/preemptbench/internal/kube/v1helper"
	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's reasons (volumebinding/binder.go, volume_binding.go), in the
// order FindPodVolumes appends them.
const (
	reasonVolumeNodeConflict = "node(s) didn't match PersistentVolume's node affinity"
	reasonVolumeBindConflict = "node(s) didn't find available persistent volumes to bind"
	reasonVolumeNoSpace      = "node(s) did not have enough free storage"
	reasonVolumePVNotExist   = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	reasonUnboundImmediate   = "pod has unbound immediate PersistentVolumeClaims"
)

// volumeBinding is upstream's VolumeBinding (v1.37.2
// framework/plugins/volumebinding: PreFilter, Filter, and the binder's
// GetPodVolumeClaims and FindPodVolumes), read from the cluster's PVCs,
// PVs, StorageClasses, CSINodes and CSIDrivers.
//
// PreFilter Skips a pod without a PVC or generic ephemeral volume; it
// fails with UnschedulableAndUnresolvable (every node's status) on a
// missing, lost, deleting or foreign claim and on an unbound Immediate
// claim (a claim of a missing class counts as Immediate, as
// IsDelayBindingMode has it), and with Error on a class without a binding
// mode. Filter fails with UnschedulableAndUnresolvable, its reasons in
// FindPodVolumes' order: a bound claim's PV whose node affinity (after
// CSI migration, as upstream translates) excludes the node, or whose PV is
// missing; an unbound WaitForFirstConsumer claim selected for another
// node, or with neither a matching PV (FindMatchingVolume) nor a class
// that provisions on the node (provisioner, allowedTopologies); or, for a
// CSIDriver with storageCapacity, no CSIStorageCapacity of the claim's
// class that holds the request and selects the node (hasEnoughCapacity).
//
// Not modelled: the Skip of a pod whose resize is deferred, under the
// alpha gate InPlacePodVerticalScalingSchedulerPreemption (off).
//
// Victims: the outcome does not depend on the pods of the node. Upstream
// has no PreFilterExtensions for it (PreFilterExtensions returns nil) and
// FindPodVolumes reads only the node object (its name and labels), the
// CSINode of the node, and the claims, volumes, classes and drivers of the
// cluster, never NodeInfo's pods; so in the dry run, with victims removed
// and nominated pods added, it gives the answer it gave at Filter, and its
// failures being UnschedulableAndUnresolvable no eviction can help them.
// An unbound claim's matching excludes only volumes bound to another
// claim (ClaimRef), whatever pods use them.
type volumeBinding struct{}

func (volumeBinding) Name() string { return "VolumeBinding" }

// volumeBindingState is PreFilter's split of the pod's claims
// (GetPodVolumeClaims); AddPod and RemovePod do not exist for it.
type volumeBindingState struct {
	c *preempt.Cluster
	// bound are the fully bound claims, delayed the unbound
	// WaitForFirstConsumer ones, in the pod's volume order.
	bound, delayed []*v1.PersistentVolumeClaim
	// volumes are the PVs of each delayed claim's class, in name order:
	// upstream lists them from its assume cache, a map; the contract (and
	// the upstream adapter, upstream/pvorder.go) takes name order.
	volumes map[string][]*v1.PersistentVolume
}

func (s *volumeBindingState) clone() stateData { return s }

// PreFilter is upstream's: podHasPVCs, then GetPodVolumeClaims.
func (volumeBinding) PreFilter(ev *evaluator, pod *v1.Pod) (stateData, bool) {
	c := ev.cluster
	hasPVC := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, isEphemeral := claimNameOf(pod, vol)
		if name == "" {
			continue
		}
		hasPVC = true
		pvc := findPVC(c, pod.Namespace, name)
		if pvc == nil {
			msg := fmt.Sprintf("persistentvolumeclaim %q not found", name)
			if isEphemeral {
				msg = fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
			}
			return rejection{unresolvable(msg)}, false
		}
		if pvc.Status.Phase == v1.ClaimLost {
			return rejection{unresolvable(fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName))}, false
		}
		if pvc.DeletionTimestamp != nil {
			return rejection{unresolvable(fmt.Sprintf("persistentvolumeclaim %q is being deleted", pvc.Name))}, false
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return rejection{unresolvable(err.Error())}, false
			}
		}
	}
	if !hasPVC {
		return nil, true
	}
	st := &volumeBindingState{c: c, volumes: map[string][]*v1.PersistentVolume{}}
	immediate := false
	for i := range pod.Spec.Volumes {
		name, _ := claimNameOf(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		// GetPodVolumeClaims reads the binder's assume cache, where a
		// gang member placed before this one may have assumed the claim
		// (gang_reserve.go); podHasPVCs above reads the lister.
		pvc := ev.assumedPVC(pod.Namespace, name)
		if pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
			st.bound = append(st.bound, pvc)
			continue
		}
		delay, err := volume.IsDelayBindingMode(pvc, classLister(c.StorageClasses))
		if err != nil {
			return rejection{preFilterError(err)}, false
		}
		if delay && pvc.Spec.VolumeName == "" {
			st.delayed = append(st.delayed, pvc)
		} else {
			// Prebound claims count as immediate too.
			immediate = true
		}
	}
	for _, pvc := range st.delayed {
		class := volume.GetPersistentVolumeClaimClass(pvc)
		var pvs []*v1.PersistentVolume
		for _, pv := range c.PVs {
			if volume.GetPersistentVolumeClass(pv) == class {
				pvs = append(pvs, ev.assumedPV(pv))
			}
		}
		sort.Slice(pvs, func(i, j int) bool { return pvs[i].Name < pvs[j].Name })
		st.volumes[class] = pvs
	}
	if immediate {
		return rejection{unresolvable(reasonUnboundImmediate)}, false
	}
	return st, false
}

// Filter is upstream's FindPodVolumes on the node; Error statuses carry
// the framework's wrapping.
func (volumeBinding) Filter(state stateData, pod *v1.Pod, s *nodeState) preempt.Status {
	st := state.(*volumeBindingState)
	reasons, err := st.findPodVolumes(s.node)
	if err != nil {
		return preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("running %q filter plugin: %v", "VolumeBinding", err)}}
	}
	if len(reasons) > 0 {
		return preempt.Status{Code: preempt.UnschedulableAndUnresolvable, Reasons: reasons}
	}
	return preempt.Status{}
}

func (st *volumeBindingState) findPodVolumes(node *v1.Node) ([]string, error) {
	found, err := st.podVolumesOn(node)
	return found.reasons, err
}

// podVolumes is FindPodVolumes' answer on a node: its reasons, and the
// PodVolumes Reserve assumes (the static bindings, the claims to
// provision).
type podVolumes struct {
	reasons    []string
	bindings   []pvBinding
	provisions []*v1.PersistentVolumeClaim
}

// pvBinding is a static binding (upstream's BindingInfo).
type pvBinding struct {
	pv  *v1.PersistentVolume
	pvc *v1.PersistentVolumeClaim
}

// podVolumesOn is upstream's FindPodVolumes on node.
func (st *volumeBindingState) podVolumesOn(node *v1.Node) (podVolumes, error) {
	var out podVolumes
	boundSatisfied, pvsFound, unboundSatisfied, enoughSpace := true, true, true, true
	done := func() (podVolumes, error) {
		if !boundSatisfied {
			out.reasons = append(out.reasons, reasonVolumeNodeConflict)
		}
		if !unboundSatisfied {
			out.reasons = append(out.reasons, reasonVolumeBindConflict)
		}
		if !enoughSpace {
			out.reasons = append(out.reasons, reasonVolumeNoSpace)
		}
		if !pvsFound {
			out.reasons = append(out.reasons, reasonVolumePVNotExist)
		}
		return out, nil
	}
	if len(st.bound) > 0 {
		var err error
		if boundSatisfied, pvsFound, err = st.checkBoundClaims(node); err != nil {
			return podVolumes{}, err
		}
	}
	if len(st.delayed) == 0 {
		return done()
	}
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, pvc := range st.delayed {
		if selected, ok := pvc.Annotations[volume.AnnSelectedNode]; ok {
			if selected != node.Name {
				unboundSatisfied = false
				return done()
			}
			toProvision = append(toProvision, pvc)
		} else {
			toMatch = append(toMatch, pvc)
		}
	}
	if len(toMatch) > 0 {
		// findMatchingVolumes: smallest request first (upstream's
		// sort.Sort, so equal sizes keep its order), each claim taking the
		// first smallest fitting volume not taken by an earlier one.
		sort.Sort(byClaimSize(toMatch))
		chosen := map[string]*v1.PersistentVolume{}
		unboundSatisfied = true
		for _, pvc := range toMatch {
			pv, err := volume.FindMatchingVolume(pvc, st.volumes[volume.GetPersistentVolumeClaimClass(pvc)], node, chosen, true, true)
			if err != nil {
				return podVolumes{}, err
			}
			if pv == nil {
				toProvision = append(toProvision, pvc)
				unboundSatisfied = false
				continue
			}
			chosen[pv.Name] = pv
			out.bindings = append(out.bindings, pvBinding{pv: pv, pvc: pvc})
		}
	}
	if len(toProvision) > 0 {
		var err error
		if unboundSatisfied, enoughSpace, err = st.checkVolumeProvisions(toProvision, node); err != nil {
			return podVolumes{}, err
		}
		if unboundSatisfied && enoughSpace {
			out.provisions = toProvision
		}
	}
	return done()
}

// checkBoundClaims is upstream's: each bound claim's PV, translated to CSI
// when its in-tree plugin is migrated on the node, must admit the node.
func (st *volumeBindingState) checkBoundClaims(node *v1.Node) (satisfied, found bool, err error) {
	csiNode := findCSINode(st.c, node.Name)
	for _, pvc := range st.bound {
		pv := findPV(st.c, pvc.Spec.VolumeName)
		if pv == nil {
			return true, false, nil
		}
		if pv, err = translateToCSI(pv, csiNode); err != nil {
			return false, true, err
		}
		if volume.CheckNodeAffinity(pv, node.Labels) != nil {
			return false, true, nil
		}
	}
	return true, true, nil
}

// checkVolumeProvisions is upstream's: every claim's class provisions
// (not "kubernetes.io/no-provisioner") where the node's labels meet its
// allowedTopologies, with enough capacity.
func (st *volumeBindingState) checkVolumeProvisions(claims []*v1.PersistentVolumeClaim, node *v1.Node) (satisfied, enoughSpace bool, err error) {
	for _, pvc := range claims {
		className := volume.GetPersistentVolumeClaimClass(pvc)
		if className == "" {
			return false, false, fmt.Errorf("no class for claim %q", pvc.Namespace+"/"+pvc.Name)
		}
		class := findStorageClass(st.c, className)
		if class == nil {
			return false, false, fmt.Errorf("failed to find storage class %q", className)
		}
		if class.Provisioner == "" || class.Provisioner == volume.NotSupportedProvisioner {
			return false, true, nil
		}
		if !v1helper.MatchTopologySelectorTerms(class.AllowedTopologies, node.Labels) {
			return false, true, nil
		}
		if !st.hasEnoughCapacity(class.Provisioner, pvc, class, node) {
			return true, false, nil
		}
	}
	return true, true, nil
}

// hasEnoughCapacity is upstream's: a claim asking for storage from a
// CSI driver that opts into capacity tracking needs a CSIStorageCapacity
// of its class (in any namespace) whose maximumVolumeSize, or else
// capacity, holds the request, and whose nodeTopology selects the node
// (none selects no node; one that does not parse selects none either,
// upstream logging it); any other claim has enough.
func (st *volumeBindingState) hasEnoughCapacity(provisioner string, pvc *v1.PersistentVolumeClaim, class *storagev1.StorageClass, node *v1.Node) bool {
	quantity, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok {
		return true
	}
	tracked := false
	for _, d := range st.c.CSIDrivers {
		if d.Name == provisioner {
			tracked = d.Spec.StorageCapacity != nil && *d.Spec.StorageCapacity
			break
		}
	}
	if !tracked {
		return true
	}
	size := quantity.Value()
	for _, capacity := range st.c.CSIStorageCapacities {
		limit := capacity.Capacity
		if capacity.MaximumVolumeSize != nil {
			limit = capacity.MaximumVolumeSize
		}
		if capacity.StorageClassName != class.Name || limit == nil || limit.Value() < size || capacity.NodeTopology == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(capacity.NodeTopology)
		if err == nil && sel.Matches(labels.Set(node.Labels)) {
			return true
		}
	}
	return false
}

// translateToCSI is upstream's tryTranslatePVToCSI.
func translateToCSI(pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	tr := csitrans.New()
	if !tr.IsPVMigratable(pv) {
		return pv, nil
	}
	plugin, err := tr.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return nil, fmt.Errorf("could not get plugin name from pv: %v", err)
	}
	switch plugin {
	case csiplugins.AWSEBSInTreePluginName, csiplugins.GCEPDInTreePluginName, csiplugins.AzureDiskInTreePluginName,
		csiplugins.CinderInTreePluginName, csiplugins.PortworxVolumePluginName:
	default:
		return pv, nil
	}
	if csiNode == nil {
		return pv, nil
	}
	migrated := false
	if mpa := csiNode.Annotations[v1.MigratedPluginsAnnotationKey]; mpa != "" {
		for _, p := range strings.Split(mpa, ",") {
			migrated = migrated || p == plugin
		}
	}
	if !migrated {
		return pv, nil
	}
	out, err := tr.TranslateInTreePVToCSI(logr.Discard(), pv)
	if err != nil {
		return nil, fmt.Errorf("could not translate pv: %v", err)
	}
	return out, nil
}

// claimNameOf is the claim a volume uses: its PVC's, or a generic
// ephemeral volume's (<pod>-<volume>); "" for any other volume.
func claimNameOf(pod *v1.Pod, vol *v1.Volume) (name string, isEphemeral bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// byClaimSize is upstream's byPVCSize.
type byClaimSize []*v1.PersistentVolumeClaim

func (a byClaimSize) Len() int      { return len(a) }
func (a byClaimSize) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a byClaimSize) Less(i, j int) bool {
	iSize := a[i].Spec.Resources.Requests[v1.ResourceStorage]
	jSize := a[j].Spec.Resources.Requests[v1.ResourceStorage]
	return iSize.Cmp(jSize) == -1
}

// rejection is the state of a PreFilter that failed: upstream's
// RunPreFilterPlugins stops there and the status is every node's.
type rejection struct{ status preempt.Status }

func (r rejection) clone() stateData { return r }

// preFilterError is the framework's status for a PreFilter error.
func preFilterError(err error) preempt.Status {
	return preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("running PreFilter plugin %q: %v", "VolumeBinding", err)}}
}

func findPVC(c *preempt.Cluster, namespace, name string) *v1.PersistentVolumeClaim {
	for _, pvc := range c.PVCs {
		if pvc.Namespace == namespace && pvc.Name == name {
			return pvc
		}
	}
	return nil
}

func findPV(c *preempt.Cluster, name string) *v1.PersistentVolume {
	for _, pv := range c.PVs {
		if pv.Name == name {
			return pv
		}
	}
	return nil
}

func findStorageClass(c *preempt.Cluster, name string) *storagev1.StorageClass {
	for _, sc := range c.StorageClasses {
		if sc.Name == name {
			return sc
		}
	}
	return nil
}

func findCSINode(c *preempt.Cluster, name string) *storagev1.CSINode {
	for _, n := range c.CSINodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// classLister is the cluster's StorageClasses as the lister
// IsDelayBindingMode reads.
type classLister []*storagev1.StorageClass

var _ storagelisters.StorageClassLister = classLister(nil)

func (l classLister) List(sel labels.Selector) ([]*storagev1.StorageClass, error) {
	var out []*storagev1.StorageClass
	for _, sc := range l {
		if sel.Matches(labels.Set(sc.Labels)) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func (l classLister) Get(name string) (*storagev1.StorageClass, error) {
	for _, sc := range l {
		if sc.Name == name {
			return sc, nil
		}
	}
	return nil, apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
}
