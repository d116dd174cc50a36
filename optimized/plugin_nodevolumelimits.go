package optimized

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/ephemeral"
	storagehelpers "k8s.io/component-helpers/storage/volume"
	csitrans "k8s.io/csi-translation-lib"
	csilibplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/klog/v2"

	"github.com/preemptbench/preemptbench/preempt"
)

// NodeVolumeLimits (upstream's CSILimits, nodevolumelimits/csi.go,
// v1.37.2 with VolumeLimitScaling on, its default; earlier releases by
// two switches, as the reference: preempt.SwitchMissingCSIDriver, the
// check of a missing driver, and preempt.SwitchPortworxMigrated, off in
// v1.35, whose Portworx migration follows the CSINode's annotation: a
// snapshot then keeps a second index, volIdxPX, for that rule): the preemptor's new
// CSI volumes per driver must fit in the driver's attach limit in the
// node's CSINode beside the unique volumes of the pods on the node and the
// node's VolumeAttachments. A volume is its unique name, driver/handle,
// interned per snapshot (volumeIndex, built on the first preemptor that
// has such volumes: the pods' volumes do not depend on the preemptor;
// Update keeps it, the cluster's volume objects being the same, and
// indexes the added pods' volumes only).
// Per node, nodeUse.vols is the multiset of the volume ids of its pods
// (each pod's ids deduplicated), which addPod keeps as victims go and
// come back: a volume leaves the node when its last pod does. A pod whose
// volumes upstream cannot read (an ephemeral claim it does not own) holds
// a negative id, -1-pod: Filter then fails with its error, as upstream's
// on any pod of the node. A preemptor without claims, generic ephemeral
// volumes or migratable inline volumes has no state (upstream's PreFilter
// Skips), nor has one whose volumes count on no node (no CSI volume
// without a CSINode, none with one or no node has one: Filter passes
// every node before it looks at the node's pods), and every hot loop
// checks d.vols == nil only.

var reasonsMaxVolumeCount = []string{"node(s) exceed max volume count"}

var volumeTranslator = csitrans.New()

// volKey is one volume id and its driver id (-1: a driver no node limits).
type volKey struct {
	id, driver int32
}

// volCount is an entry of nodeUse.vols: a volume id, its driver, and the
// number of the node's pods that hold it.
type volCount struct {
	id, driver, n int32
}

// volumeIndex is the snapshot's NodeVolumeLimits data, and VolumeBinding's
// view of the volume objects (vb). Only podVols and podErr depend on the
// pods: Update extends them to the added pods (addPods) and keeps the
// rest.
type volumeIndex struct {
	ids     map[string]int32     // unique name -> id
	drivers map[string]int32     // driver name -> id
	podVols [][]volKey           // pod -> its volumes on its node (bound, else nominated); one negative id on error
	podErr  []string             // pod -> its error status's reason, when it has one
	csiNode []*storagev1.CSINode // node -> its CSINode
	anyCSI  bool                 // some node has one
	limits  [][]volLimit         // node -> the drivers with a count
	vas     [][]volKey           // node -> its VolumeAttachments' volumes, unique

	pvcs     map[podKey]*v1.PersistentVolumeClaim
	pvs      map[string]*v1.PersistentVolume
	inTree   map[*v1.PersistentVolume]inTreeCSI // the in-tree PVs' translations
	classes  map[string]*storagev1.StorageClass
	csiDrvrs map[string]*storagev1.CSIDriver

	vb *vbIndex

	// pxByAnnotation: Portworx volumes migrate only on a node whose
	// CSINode's annotation lists the plugin (v1.35,
	// preempt.SwitchPortworxMigrated off); pxOff[n] is whether node n's
	// CSINode does not.
	pxByAnnotation bool
	pxOff          []bool

	// firstPVC, firstPV and firstClass are the positions in the
	// cluster's lists of the first claim, volume and class of each name:
	// VolumeRestrictions and VolumeZone take the first (a search of the
	// list), the maps above the last.
	firstPVC   map[podKey]int
	firstPV    map[string]int
	firstClass map[string]int
}

// at is the position of key's first object in first, -1 when none.
func at[K comparable](first map[K]int, key K) int {
	if i, ok := first[key]; ok {
		return i
	}
	return -1
}

type volLimit struct {
	driver int32
	limit  int64
}

// volumeIndexOf is s's volume index, built once (Update keeps it).
func (s *Snapshot) volumeIndexOf() *volumeIndex {
	return s.volumeIndexFor(false)
}

// volumeIndexFor is s's volume index with Portworx migrated as
// preempt.SwitchPortworxMigrated says (pxByAnnotation: off), each built
// once (Update keeps them).
func (s *Snapshot) volumeIndexFor(pxByAnnotation bool) *volumeIndex {
	s.volMu.Lock()
	defer s.volMu.Unlock()
	at := &s.volIdx
	if pxByAnnotation {
		at = &s.volIdxPX
	}
	if *at == nil {
		*at = newVolumeIndex(s, pxByAnnotation)
	}
	return *at
}

func newVolumeIndex(s *Snapshot, pxByAnnotation bool) *volumeIndex {
	c := s.cluster
	x := &volumeIndex{ids: map[string]int32{}, drivers: map[string]int32{}, pxByAnnotation: pxByAnnotation,
		pvcs: make(map[podKey]*v1.PersistentVolumeClaim, len(c.PVCs)), pvs: make(map[string]*v1.PersistentVolume, len(c.PVs)),
		classes: map[string]*storagev1.StorageClass{}, csiDrvrs: map[string]*storagev1.CSIDriver{},
		csiNode: make([]*storagev1.CSINode, len(s.nodes)), limits: make([][]volLimit, len(s.nodes)), vas: make([][]volKey, len(s.nodes))}
	x.firstPVC, x.firstPV, x.firstClass = make(map[podKey]int, len(c.PVCs)), make(map[string]int, len(c.PVs)), map[string]int{}
	for i, o := range c.PVCs {
		k := podKey{o.Namespace, o.Name}
		x.pvcs[k] = o
		if _, ok := x.firstPVC[k]; !ok {
			x.firstPVC[k] = i
		}
	}
	for i, o := range c.PVs {
		x.pvs[o.Name] = o
		if _, ok := x.firstPV[o.Name]; !ok {
			x.firstPV[o.Name] = i
		}
		if o.Spec.CSI == nil {
			if x.inTree == nil {
				x.inTree = map[*v1.PersistentVolume]inTreeCSI{}
			}
			x.inTree[o] = translateInTree(o)
		}
	}
	for i, o := range c.StorageClasses {
		x.classes[o.Name] = o
		if _, ok := x.firstClass[o.Name]; !ok {
			x.firstClass[o.Name] = i
		}
	}
	for _, o := range c.CSIDrivers {
		x.csiDrvrs[o.Name] = o
	}
	for _, cn := range c.CSINodes {
		n, ok := s.nodeIndex[cn.Name]
		if !ok {
			continue
		}
		x.csiNode[n], x.anyCSI = cn, true
		if pxByAnnotation && !migratedOnNode(cn, csilibplugins.PortworxVolumePluginName) {
			if x.pxOff == nil {
				x.pxOff = make([]bool, len(s.nodes))
			}
			x.pxOff[n] = true
		}
		for _, d := range cn.Spec.Drivers {
			if d.Allocatable != nil && d.Allocatable.Count != nil {
				// getVolumeLimits' map: a driver listed twice, the last.
				l := volLimit{x.driver(d.Name, true), int64(*d.Allocatable.Count)}
				if i := slices.IndexFunc(x.limits[n], func(o volLimit) bool { return o.driver == l.driver }); i >= 0 {
					x.limits[n][i] = l
				} else {
					x.limits[n] = append(x.limits[n], l)
				}
			}
		}
	}
	for _, va := range c.VolumeAttachments {
		n, ok := s.nodeIndex[va.Spec.NodeName]
		if !ok || va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv := x.pvs[*va.Spec.Source.PersistentVolumeName]
		if pv == nil || pv.Spec.CSI == nil {
			continue
		}
		k := x.key(va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle, va.Spec.Attacher, true)
		if !slices.Contains(x.vas[n], k) {
			x.vas[n] = append(x.vas[n], k)
		}
	}
	x.vb = newVBIndex(x, c)
	x.addPods(s, 0)
	return x
}

// addPods indexes the volumes of s's pods from the first to the last, the
// pods added since the index was built or last extended.
func (x *volumeIndex) addPods(s *Snapshot, first int) {
	for len(x.podVols) < len(s.pods) {
		x.podVols = append(x.podVols, nil)
		x.podErr = append(x.podErr, "")
	}
	var names map[string]string
	for p := first; p < len(s.pods); p++ {
		pod := s.pods[p]
		n := s.podNode[p]
		if n < 0 {
			n = s.podNom[p]
		}
		if n < 0 || len(pod.Spec.Volumes) == 0 {
			continue
		}
		clear(names)
		if names == nil {
			names = map[string]string{}
		}
		if err := x.attachable(pod, x.csiNode[n], false, names); err != nil {
			x.podVols[p] = []volKey{{id: -1 - int32(p), driver: -1}}
			x.podErr[p] = volumeErrorReason(err)
			continue
		}
		for name, driver := range names {
			x.podVols[p] = append(x.podVols[p], x.key(name, driver, true))
		}
	}
}

// driver is the id of driver name, made when add, else -1 for one not
// seen.
func (x *volumeIndex) driver(name string, add bool) int32 {
	if id, ok := x.drivers[name]; ok {
		return id
	}
	if !add {
		return -1
	}
	id := int32(len(x.drivers))
	x.drivers[name] = id
	return id
}

// key interns a unique volume name; without add, a name not seen gets -1
// (a volume of the preemptor alone: nothing on any node holds it).
func (x *volumeIndex) key(name, driver string, add bool) volKey {
	k := volKey{id: -1, driver: x.driver(driver, add)}
	if id, ok := x.ids[name]; ok {
		k.id = id
	} else if add {
		k.id = int32(len(x.ids))
		x.ids[name] = k.id
	}
	return k
}

func volumeErrorReason(err error) string {
	return fmt.Sprintf("running %q filter plugin: %v", "NodeVolumeLimits", err)
}

// nodeVolumeLimitsState is the preemptor's side: its volumes on a node
// with a CSINode and on one without (migration needs one), or the status
// they give (a missing claim, an ephemeral claim it does not own); the
// side with a CSINode only when some node has one (no filter reads it
// otherwise), and under v1.35's Portworx rule a third side, a CSINode
// that does not list Portworx as migrated, when some node's does not.
type nodeVolumeLimitsState struct {
	x    *volumeIndex
	side [3]volumeSide // [0]: node without CSINode, [1]: with, [2]: with, Portworx not migrated
}

// sideOf is the side of node n.
func (st *nodeVolumeLimitsState) sideOf(n int32) *volumeSide {
	x := st.x
	switch {
	case x.csiNode[n] == nil:
		return &st.side[0]
	case x.pxOff != nil && x.pxOff[n]:
		return &st.side[2]
	}
	return &st.side[1]
}

type volumeSide struct {
	code    preempt.Code // not Success: every node fails with it
	reasons []string
	vols    []volKey // new volumes; id -1 for those no pod or attachment holds
	// prevent are the drivers of vols whose CSIDriver sets
	// preventPodSchedulingIfMissing, in name order (upstream meets them in
	// map order, so with two missing its message is random; name order
	// is the rule here).
	prevent []string
}

// newNodeVolumeLimitsState is PreFilter: nil (Skip) for a pod without a
// claim, a generic ephemeral volume or a migratable inline volume.
func newNodeVolumeLimitsState(s *Snapshot, pod *v1.Pod, b preempt.Behaviour) *nodeVolumeLimitsState {
	need := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil || volumeTranslator.IsInlineMigratable(vol) {
			need = true
			break
		}
	}
	if !need {
		return nil
	}
	return newNodeVolumeLimitsStateIn(s.volumeIndexFor(!b.PortworxMigrated), pod, b, false)
}

// newNodeVolumeLimitsStateIn is PreFilter on index x (a gang's, with its
// members' volumes interned) for a pod that has a volume it counts. With
// intern (a gang's own index), the pod's volumes no pod holds yet are
// interned too, so they keep their key when a member placed later
// interns the same volume: upstream's Filter compares volumes by name
// on every call, and this state, made when the member is first tried,
// is read again by the reprieve after the other members were placed.
// Without it (the snapshot's shared index) such a volume is id -1.
func newNodeVolumeLimitsStateIn(x *volumeIndex, pod *v1.Pod, b preempt.Behaviour, intern bool) *nodeVolumeLimitsState {
	st := &nodeVolumeLimitsState{x: x}
	// A CSINode stands for every one: the plugin reads only whether there
	// is one (isCSIMigrationOn; under v1.35's rule, and whether its
	// annotation lists Portworx) and, below, its drivers.
	withCSI := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: csilibplugins.PortworxVolumePluginName}}}
	for i, cn := range []*storagev1.CSINode{nil, withCSI, {}} {
		if (i == 1 && !x.anyCSI) || (i == 2 && x.pxOff == nil) {
			break
		}
		side := &st.side[i]
		side.code = preempt.Success
		names := map[string]string{}
		if err := x.attachable(pod, cn, true, names); err != nil {
			if apierrors.IsNotFound(err) {
				side.code, side.reasons = preempt.UnschedulableAndUnresolvable, []string{err.Error()}
			} else {
				side.code, side.reasons = preempt.Error, []string{volumeErrorReason(err)}
			}
			continue
		}
		for name, driver := range names {
			side.vols = append(side.vols, x.key(name, driver, intern))
			if d := x.csiDrvrs[driver]; b.MissingCSIDriver && d != nil && d.Spec.PreventPodSchedulingIfMissing != nil && *d.Spec.PreventPodSchedulingIfMissing &&
				!slices.Contains(side.prevent, driver) {
				side.prevent = append(side.prevent, driver)
			}
		}
		slices.Sort(side.prevent)
	}
	if passes := func(side *volumeSide) bool { return side.code == preempt.Success && len(side.vols) == 0 }; passes(&st.side[0]) &&
		(!x.anyCSI || passes(&st.side[1])) && (x.pxOff == nil || passes(&st.side[2])) {
		return nil
	}
	return st
}

// filter is NodeVolumeLimits' Filter on node n in state u plus the
// nominated pods nom.
func (st *nodeVolumeLimitsState) filter(n int32, u, nom *nodeUse) (preempt.Code, []string) {
	x := st.x
	cn := x.csiNode[n]
	side := st.sideOf(n)
	if side.code != preempt.Success {
		return side.code, side.reasons
	}
	if len(side.vols) == 0 {
		return preempt.Success, nil
	}
	for _, d := range side.prevent {
		if cn == nil || !slices.ContainsFunc(cn.Spec.Drivers, func(nd storagev1.CSINodeDriver) bool { return nd.Name == d }) {
			return preempt.Unschedulable, []string{d + " CSI driver is not installed on the node"}
		}
	}
	limits := x.limits[n]
	if len(limits) == 0 {
		return preempt.Success, nil
	}
	// A pod of the node whose volumes cannot be read fails the node.
	for _, set := range [2][]volCount{u.vols, nom.vols} {
		for _, e := range set {
			if e.id < 0 {
				return preempt.Error, []string{x.podErr[-1-e.id]}
			}
		}
	}
	held := func(id int32) bool {
		if id < 0 {
			return false
		}
		for _, set := range [2][]volCount{u.vols, nom.vols} {
			for _, e := range set {
				if e.id == id {
					return true
				}
			}
		}
		return false
	}
	for _, l := range limits {
		adding := 0
		for _, k := range side.vols {
			if k.driver == l.driver && !held(k.id) {
				adding++
			}
		}
		if adding == 0 {
			continue
		}
		// The node's unique volumes of the driver: the pods' (a volume on
		// the node and among the nominated pods counted once), then the
		// attachments no pod holds (an attachment keeps its slot while it
		// exists).
		count := 0
		for _, e := range u.vols {
			if e.driver == l.driver {
				count++
			}
		}
		for _, e := range nom.vols {
			if e.driver == l.driver && !slices.ContainsFunc(u.vols, func(f volCount) bool { return f.id == e.id }) {
				count++
			}
		}
		for _, k := range x.vas[n] {
			if k.driver == l.driver && !held(k.id) {
				count++
			}
		}
		if int64(count+adding) > l.limit {
			return preempt.Unschedulable, reasonsMaxVolumeCount
		}
	}
	return preempt.Success, nil
}

// addVolumes applies pod p's volumes to u with sign 1 and takes them off
// with sign -1.
func (u *nodeUse) addVolumes(x *volumeIndex, p int32, sign int64) {
	u.addVolKeys(x.podVols[p], sign)
}

// addVolKeys applies the volumes keys to u with sign 1 and takes them off
// with sign -1.
func (u *nodeUse) addVolKeys(keys []volKey, sign int64) {
	for _, k := range keys {
		i := slices.IndexFunc(u.vols, func(e volCount) bool { return e.id == k.id })
		switch {
		case sign > 0 && i < 0:
			u.vols = append(u.vols, volCount{id: k.id, driver: k.driver, n: 1})
		case sign > 0:
			u.vols[i].n++
		case i >= 0:
			if u.vols[i].n--; u.vols[i].n == 0 {
				last := len(u.vols) - 1
				u.vols[i] = u.vols[last]
				u.vols = u.vols[:last]
			}
		}
	}
}

// attachable is upstream's filterAttachableVolumes: pod's CSI volumes into
// result as driver/handle -> driver. A new pod's missing claim is an error
// (NotFound); an existing pod's is skipped.
func (x *volumeIndex) attachable(pod *v1.Pod, cn *storagev1.CSINode, newPod bool, result map[string]string) error {
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
			if err := x.inlineAttachable(vol, cn, pod.Namespace, result); err != nil {
				return err
			}
			continue
		}
		if claim == "" {
			return fmt.Errorf("PersistentVolumeClaim had no name")
		}
		pvc := x.pvcs[podKey{pod.Namespace, claim}]
		if pvc == nil {
			if newPod {
				return fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, claim, apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), claim))
			}
			continue
		}
		if isEphemeral {
			if err := ephemeral.VolumeIsForPod(pod, pvc); err != nil {
				return err
			}
		}
		if driver, handle := x.claimDriver(cn, pvc); driver != "" && handle != "" {
			result[driver+"/"+handle] = driver
		}
	}
	return nil
}

// inlineAttachable is upstream's checkAttachableInlineVolume.
func (x *volumeIndex) inlineAttachable(vol *v1.Volume, cn *storagev1.CSINode, namespace string, result map[string]string) error {
	if !volumeTranslator.IsInlineMigratable(vol) {
		return nil
	}
	plugin, err := volumeTranslator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return fmt.Errorf("looking up provisioner name for volume %s: %w", vol.Name, err)
	}
	if !x.csiMigrationOn(cn, plugin) {
		return nil
	}
	pv, err := volumeTranslator.TranslateInTreeInlineVolumeToCSI(klog.Background(), vol, namespace)
	if err != nil || pv == nil {
		return fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	driver, err := volumeTranslator.GetCSINameFromInTreeName(plugin)
	if err != nil {
		return fmt.Errorf("looking up CSI driver name for provisioner %s: %w", plugin, err)
	}
	if pv.Spec.CSI != nil {
		result[driver+"/"+pv.Spec.CSI.VolumeHandle] = driver
	}
	return nil
}

// csiMigrationOn is upstream's isCSIMigrationOn; Portworx, under v1.35's
// rule (pxByAnnotation), only where the CSINode's annotation lists it.
func (x *volumeIndex) csiMigrationOn(cn *storagev1.CSINode, plugin string) bool {
	if cn == nil {
		return false
	}
	switch plugin {
	case csilibplugins.AWSEBSInTreePluginName, csilibplugins.GCEPDInTreePluginName,
		csilibplugins.AzureDiskInTreePluginName, csilibplugins.CinderInTreePluginName:
		return true
	case csilibplugins.PortworxVolumePluginName:
		return !x.pxByAnnotation || migratedOnNode(cn, plugin)
	}
	return false
}

// migratedOnNode is whether the CSINode's migrated-plugins annotation
// (a comma-separated list) names plugin.
func migratedOnNode(cn *storagev1.CSINode, plugin string) bool {
	return slices.Contains(strings.Split(cn.Annotations[v1.MigratedPluginsAnnotationKey], ","), plugin)
}

// classHandlePrefix stands for upstream's randomVolumeIDPrefix: NUL is in
// no real volume handle, so a volume counted through its class matches
// none.
const classHandlePrefix = "\x00storageclass"

// inTreeCSI is what getCSIDriverInfo makes of an in-tree PV, whatever
// the node: whether csi-translation-lib can migrate it and names its
// plugin (migratable, plugin), and whether it translates to a CSI source
// (translated: its driver and handle). Only whether migration is on for
// the plugin depends on the node (csiMigrationOn), and upstream checks it
// between the two: claimDriver does too. Made once per PV when the index
// is built (newVolumeIndex), where upstream translates per pod and node.
type inTreeCSI struct {
	migratable, translated bool
	plugin, driver, handle string
}

func translateInTree(pv *v1.PersistentVolume) inTreeCSI {
	var t inTreeCSI
	if !volumeTranslator.IsPVMigratable(pv) {
		return t
	}
	plugin, err := volumeTranslator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return t
	}
	t.migratable, t.plugin = true, plugin
	csiPV, err := volumeTranslator.TranslateInTreePVToCSI(klog.Background(), pv)
	if err != nil || csiPV.Spec.CSI == nil {
		return t
	}
	t.translated, t.driver, t.handle = true, csiPV.Spec.CSI.Driver, csiPV.Spec.CSI.VolumeHandle
	return t
}

// claimDriver is upstream's getCSIDriverInfo and getCSIDriverInfoFromSC.
func (x *volumeIndex) claimDriver(cn *storagev1.CSINode, pvc *v1.PersistentVolumeClaim) (string, string) {
	if pv := x.pvs[pvc.Spec.VolumeName]; pvc.Spec.VolumeName != "" && pv != nil {
		csi := pv.Spec.CSI
		if csi == nil {
			t, ok := x.inTree[pv]
			if !ok {
				t = translateInTree(pv) // a volume the index was not built from
			}
			if !t.migratable || !x.csiMigrationOn(cn, t.plugin) || !t.translated {
				return "", ""
			}
			return t.driver, t.handle
		}
		return csi.Driver, csi.VolumeHandle
	}
	name := storagehelpers.GetPersistentVolumeClaimClass(pvc)
	class := x.classes[name]
	if name == "" || class == nil {
		return "", ""
	}
	handle := fmt.Sprintf("%s-%s/%s", classHandlePrefix, pvc.Namespace, pvc.Name)
	if volumeTranslator.IsMigratableIntreePluginByName(class.Provisioner) {
		if !x.csiMigrationOn(cn, class.Provisioner) {
			return "", ""
		}
		driver, err := volumeTranslator.GetCSINameFromInTreeName(class.Provisioner)
		if err != nil {
			return "", ""
		}
		return driver, handle
	}
	return class.Provisioner, handle
}
