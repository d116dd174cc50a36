package optimized

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
	"k8s.io/component-helpers/storage/ephemeral"
	"k8s.io/component-helpers/storage/volume"
	csiplugins "k8s.io/csi-translation-lib/plugins"

	"github.com/preemptbench/preemptbench/internal/kube/v1helper"
	"github.com/preemptbench/preemptbench/preempt"
)

// Upstream's VolumeBinding reasons (volumebinding/binder.go,
// volume_binding.go), in FindPodVolumes' order.
const (
	reasonVolumeNodeConflict = "node(s) didn't match PersistentVolume's node affinity"
	reasonVolumeBindConflict = "node(s) didn't find available persistent volumes to bind"
	reasonVolumeNoSpace      = "node(s) did not have enough free storage"
	reasonVolumePVNotExist   = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)

// volumeBindingState is VolumeBinding's (v1.37.2) PreFilter state and its
// Filter's outcome on every node, computed once per preemptor: the
// outcome reads the node object and the cluster's claims, volumes,
// classes, CSINodes and CSIDrivers, never the node's pods (upstream has
// no PreFilterExtensions for it), so the dry run, with victims removed and
// nominated pods added, gets the answer Filter got, and the hot loops
// read one entry. A pod without a PVC or generic ephemeral volume has
// none (decision.volumes nil: upstream's PreFilter Skips).
//
// When PreFilter fails (missing, lost, deleting or foreign claim; unbound
// Immediate or prebound claim: UnschedulableAndUnresolvable; a class
// without binding mode: Error) rejected is every node's status, which
// nodeFilters returns before any filter runs, as RunPreFilterPlugins
// stops there. Otherwise fits checks code[n] after NodeResourcesFit,
// where the profile runs VolumeBinding.
//
// The unbound claims' volumes are taken in name order (upstream lists its
// assume cache, a map; the adapter pins name order, upstream/pvorder.go).
// A class whose CSIDriver opts into capacity tracking provisions where a
// CSIStorageCapacity of the class holds the claim and selects the node
// (hasCapacity). Not modelled: the Skip for a deferred resize under
// the alpha gate InPlacePodVerticalScalingSchedulerPreemption (off).
type volumeBindingState struct {
	rejected     []string
	rejectedCode preempt.Code
	code         []preempt.Code // per node index
	reasons      [][]string     // per node index
	// What Reserve reads (a gang member's, gang_volumes.go): the index
	// PreFilter read, the bound and delayed claims and the volumes of
	// the delayed claims' classes.
	x       *vbIndex
	bound   []*v1.PersistentVolumeClaim
	delayed []*v1.PersistentVolumeClaim
	volumes map[string][]*v1.PersistentVolume
}

// vbFound is what FindPodVolumes found on a node: the static bindings
// (claim -> volume) and the claims to provision.
type vbFound struct {
	pvcs       []*v1.PersistentVolumeClaim
	pvs        []*v1.PersistentVolume
	provisions []*v1.PersistentVolumeClaim
}

// vbIndex is the cluster's volume objects by name, built once per
// snapshot with NodeVolumeLimits' index, whose maps it shares (it does not
// change with the pods: Update keeps it).
type vbIndex struct {
	pvcs    map[podKey]*v1.PersistentVolumeClaim
	pvs     map[string]*v1.PersistentVolume
	classes map[string]*storagev1.StorageClass
	csi     map[string]*storagev1.CSINode
	drivers map[string]*storagev1.CSIDriver
	// migrated are the in-tree plugins some CSINode names in its
	// migrated-plugins annotation: tryTranslatePVToCSI translates a
	// volume of another plugin on no node.
	migrated map[string]bool
	// capacities are the CSIStorageCapacities by storage class, each its
	// limit and node selector, in the cluster's order.
	capacities map[string][]vbCapacity
}

// vbCapacity is a CSIStorageCapacity as hasEnoughCapacity reads it: the
// largest volume it holds (maximumVolumeSize, else capacity; has says
// there is one) and its nodeTopology as a selector (nil: it selects no
// node, being absent or invalid).
type vbCapacity struct {
	limit int64
	has   bool
	nodes labels.Selector
}

func newVBIndex(x *volumeIndex, c *preempt.Cluster) *vbIndex {
	vb := &vbIndex{pvcs: x.pvcs, pvs: x.pvs, classes: x.classes, csi: make(map[string]*storagev1.CSINode, len(c.CSINodes)), drivers: x.csiDrvrs,
		migrated: map[string]bool{}}
	for _, o := range c.CSIStorageCapacities {
		if vb.capacities == nil {
			vb.capacities = map[string][]vbCapacity{}
		}
		var cp vbCapacity
		limit := o.Capacity
		if o.MaximumVolumeSize != nil {
			limit = o.MaximumVolumeSize
		}
		if limit != nil {
			cp.limit, cp.has = limit.Value(), true
		}
		if o.NodeTopology != nil {
			if sel, err := metav1.LabelSelectorAsSelector(o.NodeTopology); err == nil {
				cp.nodes = sel
			}
		}
		vb.capacities[o.StorageClassName] = append(vb.capacities[o.StorageClassName], cp)
	}
	for _, o := range c.CSINodes {
		vb.csi[o.Name] = o
		for _, p := range strings.Split(o.Annotations[v1.MigratedPluginsAnnotationKey], ",") {
			if p != "" {
				vb.migrated[p] = true
			}
		}
	}
	return vb
}

// Get makes vbIndex the StorageClassLister IsDelayBindingMode reads.
func (x *vbIndex) Get(name string) (*storagev1.StorageClass, error) {
	if sc := x.classes[name]; sc != nil {
		return sc, nil
	}
	return nil, apierrors.NewNotFound(storagev1.Resource("storageclass"), name)
}

func (x *vbIndex) List(sel labels.Selector) ([]*storagev1.StorageClass, error) {
	var out []*storagev1.StorageClass
	for _, sc := range x.classes {
		if sel.Matches(labels.Set(sc.Labels)) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func vbClaimName(pod *v1.Pod, vol *v1.Volume) (string, bool) {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName, false
	case vol.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, vol), true
	}
	return "", false
}

// newVolumeBindingState is nil for a pod without a PVC or generic
// ephemeral volume (upstream's PreFilter Skips).
func newVolumeBindingState(s *Snapshot, pod *v1.Pod) *volumeBindingState {
	return newVolumeBindingStateIn(s, pod, s.volumeIndexOf().vb, s.cluster.PVs)
}

// newVolumeBindingStateIn is PreFilter reading the claims of x and the
// volumes pvList (a gang's assume caches over the cluster's).
func newVolumeBindingStateIn(s *Snapshot, pod *v1.Pod, x *vbIndex, pvList []*v1.PersistentVolume) *volumeBindingState {
	on := false
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; v.PersistentVolumeClaim != nil || v.Ephemeral != nil {
			on = true
			break
		}
	}
	if !on {
		return nil
	}
	st := &volumeBindingState{}
	reject := func(code preempt.Code, r string) *volumeBindingState {
		return &volumeBindingState{rejected: []string{r}, rejectedCode: code}
	}
	// podHasPVCs
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name, eph := vbClaimName(pod, vol)
		if name == "" {
			continue
		}
		pvc := x.pvcs[podKey{pod.Namespace, name}]
		switch {
		case pvc == nil && eph:
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name))
		case pvc == nil:
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", name))
		case pvc.Status.Phase == v1.ClaimLost:
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", pvc.Name, pvc.Spec.VolumeName))
		case pvc.DeletionTimestamp != nil:
			return reject(preempt.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q is being deleted", pvc.Name))
		}
		if eph {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return reject(preempt.UnschedulableAndUnresolvable, err.Error())
			}
		}
	}
	// GetPodVolumeClaims
	var bound, delayed []*v1.PersistentVolumeClaim
	immediate := false
	for i := range pod.Spec.Volumes {
		name, _ := vbClaimName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		pvc := x.pvcs[podKey{pod.Namespace, name}]
		if pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, volume.AnnBindCompleted) {
			bound = append(bound, pvc)
			continue
		}
		delay, err := volume.IsDelayBindingMode(pvc, x)
		if err != nil {
			return reject(preempt.Error, fmt.Sprintf("running PreFilter plugin %q: %v", "VolumeBinding", err))
		}
		if delay && pvc.Spec.VolumeName == "" {
			delayed = append(delayed, pvc)
		} else {
			immediate = true
		}
	}
	if immediate {
		return reject(preempt.UnschedulableAndUnresolvable, "pod has unbound immediate PersistentVolumeClaims")
	}
	st.x, st.bound, st.delayed = x, bound, delayed
	if len(delayed) == 0 && x.boundFitEverywhere(bound) {
		return st // code nil: Success on every node
	}
	volumes := map[string][]*v1.PersistentVolume{}
	for _, pvc := range delayed {
		class := volume.GetPersistentVolumeClaimClass(pvc)
		if _, ok := volumes[class]; ok {
			continue
		}
		var pvs []*v1.PersistentVolume
		for _, pv := range pvList {
			if volume.GetPersistentVolumeClass(pv) == class {
				pvs = append(pvs, pv)
			}
		}
		sort.Slice(pvs, func(i, j int) bool { return pvs[i].Name < pvs[j].Name })
		volumes[class] = pvs
	}
	st.volumes = volumes
	// FindPodVolumes on every node; the reason lists interned.
	st.code = make([]preempt.Code, len(s.nodes))
	st.reasons = make([][]string, len(s.nodes))
	interned := map[string][]string{}
	for n, node := range s.nodes {
		code, r := x.findPodVolumes(node, bound, delayed, volumes, nil)
		st.code[n] = code
		if code == preempt.Success {
			continue
		}
		key := strings.Join(r, "\x00")
		if _, ok := interned[key]; !ok {
			interned[key] = r
		}
		st.reasons[n] = interned[key]
	}
	return st
}

// boundFitEverywhere says whether checkBoundClaims passes the bound
// claims on every node, whatever its labels and CSINode: each claim's
// volume exists and has no node affinity, nor has its CSI translation
// when some CSINode migrates its plugin (tryTranslatePVToCSI translates
// it there; CheckNodeAffinity passes a volume without affinity). False
// leaves the answer to findPodVolumes on each node.
func (x *vbIndex) boundFitEverywhere(bound []*v1.PersistentVolumeClaim) bool {
	for _, pvc := range bound {
		pv := x.pvs[pvc.Spec.VolumeName]
		if pv == nil || pv.Spec.NodeAffinity != nil {
			return false
		}
		if !volumeTranslator.IsPVMigratable(pv) {
			continue
		}
		plugin, err := volumeTranslator.GetInTreePluginNameFromSpec(pv, nil)
		if err != nil {
			return false
		}
		if !x.migrated[plugin] {
			continue
		}
		tr, err := volumeTranslator.TranslateInTreePVToCSI(logr.Discard(), pv)
		if err != nil || tr.Spec.NodeAffinity != nil {
			return false
		}
	}
	return true
}

// findPodVolumes is upstream's FindPodVolumes on node as the plugin's
// Filter reports it; out, when not nil, gets its bindings and
// provisions (what Reserve assumes).
func (x *vbIndex) findPodVolumes(node *v1.Node, bound, delayed []*v1.PersistentVolumeClaim, volumes map[string][]*v1.PersistentVolume, out *vbFound) (preempt.Code, []string) {
	boundOK, found, unboundOK, space := true, true, true, true
	fail := func(err error) (preempt.Code, []string) {
		return preempt.Error, []string{fmt.Sprintf("running %q filter plugin: %v", "VolumeBinding", err)}
	}
	done := func() (preempt.Code, []string) {
		var r []string
		if !boundOK {
			r = append(r, reasonVolumeNodeConflict)
		}
		if !unboundOK {
			r = append(r, reasonVolumeBindConflict)
		}
		if !space {
			r = append(r, reasonVolumeNoSpace)
		}
		if !found {
			r = append(r, reasonVolumePVNotExist)
		}
		if r == nil {
			return preempt.Success, nil
		}
		return preempt.UnschedulableAndUnresolvable, r
	}
	// checkBoundClaims
	if len(bound) > 0 {
		csiNode := x.csi[node.Name]
		for _, pvc := range bound {
			pv := x.pvs[pvc.Spec.VolumeName]
			if pv == nil {
				found = false
				break
			}
			pv, err := vbTranslate(pv, csiNode)
			if err != nil {
				return fail(err)
			}
			if volume.CheckNodeAffinity(pv, node.Labels) != nil {
				boundOK = false
				break
			}
		}
	}
	if len(delayed) == 0 {
		return done()
	}
	var toMatch, toProvision []*v1.PersistentVolumeClaim
	for _, pvc := range delayed {
		if selected, ok := pvc.Annotations[volume.AnnSelectedNode]; ok {
			if selected != node.Name {
				unboundOK = false
				return done()
			}
			toProvision = append(toProvision, pvc)
		} else {
			toMatch = append(toMatch, pvc)
		}
	}
	if len(toMatch) > 0 {
		// findMatchingVolumes: upstream's sort.Sort by request, so that
		// equal requests keep upstream's order.
		sort.Sort(vbBySize(toMatch))
		chosen := map[string]*v1.PersistentVolume{}
		for _, pvc := range toMatch {
			pv, err := volume.FindMatchingVolume(pvc, volumes[volume.GetPersistentVolumeClaimClass(pvc)], node, chosen, true, true)
			if err != nil {
				return fail(err)
			}
			if pv == nil {
				toProvision = append(toProvision, pvc)
				unboundOK = false
				continue
			}
			chosen[pv.Name] = pv
			if out != nil {
				out.pvcs, out.pvs = append(out.pvcs, pvc), append(out.pvs, pv)
			}
		}
	}
	// checkVolumeProvisions
	if len(toProvision) > 0 {
		unboundOK = true
		for _, pvc := range toProvision {
			className := volume.GetPersistentVolumeClaimClass(pvc)
			if className == "" {
				return fail(fmt.Errorf("no class for claim %q", pvc.Namespace+"/"+pvc.Name))
			}
			class := x.classes[className]
			if class == nil {
				return fail(fmt.Errorf("failed to find storage class %q", className))
			}
			if class.Provisioner == "" || class.Provisioner == volume.NotSupportedProvisioner ||
				!v1helper.MatchTopologySelectorTerms(class.AllowedTopologies, node.Labels) {
				unboundOK = false
				return done()
			}
			if q, asks := pvc.Spec.Resources.Requests[v1.ResourceStorage]; asks {
				if d := x.drivers[class.Provisioner]; d != nil && d.Spec.StorageCapacity != nil && *d.Spec.StorageCapacity && !x.hasCapacity(class.Name, q.Value(), node) {
					space = false
					return done()
				}
			}
		}
	}
	if out != nil && unboundOK && space {
		out.provisions = toProvision
	}
	return done()
}

// hasCapacity is hasEnoughCapacity's search for a CSIStorageCapacity of
// class that holds size bytes and selects node.
func (x *vbIndex) hasCapacity(class string, size int64, node *v1.Node) bool {
	for _, cp := range x.capacities[class] {
		if cp.has && cp.limit >= size && cp.nodes != nil && cp.nodes.Matches(labels.Set(node.Labels)) {
			return true
		}
	}
	return false
}

// vbTranslate is upstream's tryTranslatePVToCSI.
func vbTranslate(pv *v1.PersistentVolume, csiNode *storagev1.CSINode) (*v1.PersistentVolume, error) {
	tr := volumeTranslator
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
	for _, p := range strings.Split(csiNode.Annotations[v1.MigratedPluginsAnnotationKey], ",") {
		migrated = migrated || (p != "" && p == plugin)
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

// vbBySize is upstream's byPVCSize.
type vbBySize []*v1.PersistentVolumeClaim

func (a vbBySize) Len() int      { return len(a) }
func (a vbBySize) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a vbBySize) Less(i, j int) bool {
	iq, jq := a[i].Spec.Resources.Requests[v1.ResourceStorage], a[j].Spec.Resources.Requests[v1.ResourceStorage]
	return iq.Cmp(jq) == -1
}

// filter is VolumeBinding's Filter on node n (after NodeResourcesFit).
func (st *volumeBindingState) filter(n int32) (preempt.Code, []string) {
	if st.code == nil {
		return preempt.Success, nil
	}
	return st.code[n], st.reasons[n]
}

// nodeFiltersCode is the code of a nodeFilters failure: VolumeBinding's
// or else DynamicResources' PreFilter's when it failed (maybe Error), else
// UnschedulableAndUnresolvable.
func (d *decision) nodeFiltersCode() preempt.Code {
	if d.volumes != nil && d.volumes.rejected != nil {
		return d.volumes.rejectedCode
	}
	if d.dra != nil && d.dra.rejected != nil {
		return d.dra.rejectedCode
	}
	return preempt.UnschedulableAndUnresolvable
}
