package schedplugin

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/preemptbench/preemptbench/preempt"
)

// follower keeps a preempt.Cluster and an evaluator of it in step with
// the scheduler's cache, cycle after cycle.
//
// What is incremental, and what is not:
//   - Nodes: each cycle walks the snapshot's NodeInfos (O(nodes)) and
//     compares each one's generation (NodeInfo.GetGeneration, bumped by
//     the cache on every change of the node or its pods; the snapshot
//     keeps one NodeInfo per node and overwrites it in place) and its
//     node object with what it saw. Only the pods of nodes whose
//     generation moved are compared (O(their pods)). A node added or
//     removed, or changed in what preemption reads of it (labels,
//     taints, unschedulable, allocatable), builds everything again
//     (Change carries pods only); a node whose update changed nothing of
//     that (a kubelet's status heartbeat, conditions, images) is taken
//     as it was.
//   - Nominated pods: a mirror of the scheduling queue's nominator
//     (nominations) reads again only the nodes where a nomination may
//     have changed (fwk.Handle.NominatedPodsForNode deep-copies the
//     node's nominated pods); O(nominated pods) a cycle otherwise. The
//     mirror's pods are compared by UID, resourceVersion and node with
//     what the cluster holds.
//   - PDBs, namespaces and the volume objects (claims, volumes, storage
//     classes, CSI nodes and drivers, volume attachments, CSI storage
//     capacities; DeviceClasses):
//     listed from the informers every cycle (O(objects)) and compared by
//     pointer; a change builds again.
//   - Pod groups: the PodGroups the cluster's pods name, and the
//     CompositePodGroups above them, got from the scheduler's snapshot
//     (where upstream's preemption reads them: its PodGroups() and
//     CompositePodGroups() listers, which answer only under
//     GenericWorkload and CompositePodGroup) every cycle (O(groups)) and
//     compared by pointer; a change builds again. A group the snapshot
//     lacks is left out, as upstream's lookups miss it.
//   - The evaluator: the changed pods go to preempt.Follow as a
//     preempt.Change: an Updater (optimized, upstream) updates in time
//     proportional to the pods changed; reference is built again.
//     preempt.Change.Apply makes the new pod list (a copy of O(pods)
//     pointers), as Updater wants the new cluster whole.
//   - Validation: a build validates the whole cluster
//     (preempt.Cluster.Validate); an update validates the added pods
//     only (preempt.ValidatePod; their nodes are the snapshot's).
type follower struct {
	impl       preempt.Implementation
	nodeLister func() ([]fwk.NodeInfo, error)
	nominator  *nominations
	pdbs       policylisters.PodDisruptionBudgetLister
	namespaces corelisters.NamespaceLister
	volumes    volumeListers
	snapshot   func() fwk.SharedLister

	c  *preempt.Cluster
	ev preempt.Evaluator
	// nodes are the cluster's nodes in the snapshot's order (which is
	// stable while the set of nodes is: a new order builds again), each
	// with its generation and object; gen is their generations by name.
	nodes []nodeState
	gen   map[string]int64
	pdbOf []*policyv1.PodDisruptionBudget // as listed, sorted
	nsOf  []*v1.Namespace                 // as listed, sorted
	volOf volumeObjects                   // as listed, sorted
	// pods are the cluster's pods by UID; boundOn the UIDs bound to each
	// node; nom the nominated ones.
	pods    map[types.UID]*entry
	boundOn map[string]map[types.UID]bool
	nom     map[types.UID]*entry
	// groupPods counts the cluster's pods naming each PodGroup
	// (namespace/name); pgOf and cpgOf are the groups the cluster holds,
	// as got from the snapshot, sorted.
	groupPods map[string]int
	pgOf      []*preempt.PodGroup
	cpgOf     []*preempt.CompositePodGroup
	// lastOut are the last cycle's preemptors, kept out of the cluster
	// then.
	lastOut preemptors

	builds, updates int
}

// nodeState is one node of the cluster as the last cycle saw it.
type nodeState struct {
	name string
	node *v1.Node
	gen  int64
}

// entry is one pod of the cluster: obj is what Cluster.Pods holds, src
// the cache's object it was made from (the same for a bound pod), node
// where it is bound or nominated.
type entry struct {
	obj, src *v1.Pod
	node     string
	bound    bool
}

func newFollower(impl preempt.Implementation, h fwk.Handle) *follower {
	f := &follower{
		impl:       impl,
		nodeLister: h.SnapshotSharedLister().NodeInfos().List,
		snapshot:   h.SnapshotSharedLister,
	}
	var pods cache.SharedIndexInformer
	if inf := h.SharedInformerFactory(); inf != nil {
		f.pdbs = inf.Policy().V1().PodDisruptionBudgets().Lister()
		f.namespaces = inf.Core().V1().Namespaces().Lister()
		pods = inf.Core().V1().Pods().Informer()
		f.volumes = newVolumeListers(inf)
	}
	f.nominator = newNominations(h.NominatedPodsForNode, pods)
	return f
}

// syncKind is what sync did: built the evaluator, updated it with a
// change, or nothing (no change since the last cycle).
type syncKind string

const (
	synced  syncKind = ""
	built   syncKind = "build"
	updated syncKind = "update"
)

// sync brings the cluster and evaluator to the scheduler's state of this
// cycle, out being the pods the cycle is for (the pod, or the gang's
// unscheduled members: kept out of the cluster, as the contract wants).
// It returns the evaluator and what it took.
func (f *follower) sync(out preemptors) (ev preempt.Evaluator, kind syncKind, err error) {
	infos, err := f.nodeLister()
	if err != nil {
		return nil, synced, err
	}
	if checkSync != nil {
		defer func() {
			if err == nil {
				checkSync(f.check(infos, out))
			}
		}()
	}
	pdbs, nss, err := f.listObjects()
	if err != nil {
		return nil, synced, err
	}
	vol, err := f.volumes.listVolumes()
	if err != nil {
		return nil, synced, err
	}
	if f.ev == nil || !f.sameObjects(infos, pdbs, nss) || !vol.same(f.volOf) {
		if err := f.build(infos, pdbs, nss, vol, out); err != nil {
			return nil, built, err
		}
		return f.ev, built, nil
	}

	removed := map[types.UID]bool{}
	var added []*entry
	addedBound := map[types.UID]bool{}
	for i, ni := range infos {
		st := &f.nodes[i]
		if ni.GetGeneration() == st.gen {
			continue
		}
		name := st.name
		st.gen = ni.GetGeneration()
		f.gen[name] = st.gen
		seen := map[types.UID]bool{}
		for _, pi := range ni.GetPods() {
			p := pi.GetPod()
			seen[p.UID] = true
			if e := f.pods[p.UID]; e != nil {
				if e.bound && e.src == p {
					continue
				}
				removed[p.UID] = true
			}
			added = append(added, &entry{obj: p, src: p, node: name, bound: true})
			addedBound[p.UID] = true
		}
		for uid := range f.boundOn[name] {
			if !seen[uid] {
				removed[uid] = true
			}
		}
	}
	isBound := func(uid types.UID) bool {
		if addedBound[uid] {
			return true
		}
		e := f.pods[uid]
		return e != nil && e.bound && !removed[uid]
	}
	changed := f.nominator.refresh(f.gen, addedBound, false)
	// The mirror keeps an entry while the nominator's pod is the same
	// (UID, resourceVersion, node), and the cluster holds the mirror's
	// entries: the same entry is the same pod. Only the pods whose entry
	// changed, the pods whose binding changed and the preemptors of this
	// cycle and the last can differ from the cluster; when the mirror
	// read every node (changed nil), every pod.
	diff := func(uid types.UID) {
		w, e := f.nominator.entry(uid), f.nom[uid]
		want := w != nil && inCluster(uid, w, out, isBound)
		if e != nil && (!want || w != e) {
			removed[uid] = true
		}
		if want && (w != e || removed[uid]) {
			added = append(added, w)
		}
	}
	if changed == nil {
		for uid := range f.nom {
			diff(uid)
		}
		for _, on := range f.nominator.byNode {
			for uid := range on {
				if f.nom[uid] == nil {
					diff(uid)
				}
			}
		}
	} else {
		for uid := range removed {
			changed[uid] = true
		}
		for uid := range addedBound {
			changed[uid] = true
		}
		for uid := range out {
			changed[uid] = true
		}
		for uid := range f.lastOut {
			changed[uid] = true
		}
		for uid := range changed {
			diff(uid)
		}
	}
	f.lastOut = out
	if len(removed) == 0 && len(added) == 0 {
		if f.groupsMoved() {
			if err := f.build(infos, pdbs, nss, vol, out); err != nil {
				return nil, built, err
			}
			return f.ev, built, nil
		}
		return f.ev, synced, nil
	}

	ch := preempt.Change{}
	for uid := range removed {
		e := f.pods[uid]
		ch.Removed = append(ch.Removed, preempt.PodRef{Namespace: e.obj.Namespace, Name: e.obj.Name})
	}
	for _, e := range added {
		if err := preempt.ValidatePod(e.obj); err != nil {
			f.ev = nil // the next cycle builds again
			return nil, updated, errInvalid{err}
		}
		ch.Added = append(ch.Added, e.obj)
	}
	pods := f.apply(removed, ch.Added)
	for uid := range removed {
		f.forget(uid)
	}
	for _, e := range added {
		f.remember(e)
	}
	// The indexes now hold the new pods: a failure below leaves f.ev nil,
	// and the next cycle builds everything again.
	if f.groupsMoved() {
		if err := f.build(infos, pdbs, nss, vol, out); err != nil {
			return nil, built, err
		}
		return f.ev, built, nil
	}
	next := *f.c
	next.Pods = pods
	ev, err = preempt.Follow(f.impl, f.ev, &next, ch)
	if err != nil {
		f.ev = nil
		return nil, updated, err
	}
	f.c, f.ev = &next, ev
	f.updates++
	return ev, updated, nil
}

// checkSync, when set (by tests), gets after every successful sync the
// outcome of check: nil when the followed cluster is the one a build
// would make.
var checkSync func(error)

// check compares the cluster's pods with those a build from infos would
// hold: the same pods, each bound to or nominated on the same node.
func (f *follower) check(infos []fwk.NodeInfo, out preemptors) error {
	where := func(p *v1.Pod) string {
		if p.Spec.NodeName != "" {
			return "bound to " + p.Spec.NodeName
		}
		return "nominated to " + p.Status.NominatedNodeName
	}
	want := map[string]string{}
	bound := map[types.UID]bool{}
	for _, ni := range infos {
		for _, pi := range ni.GetPods() {
			p := pi.GetPod()
			want[preempt.Key(p.Namespace, p.Name)] = where(p)
			bound[p.UID] = true
		}
	}
	// The nodes a pod is nominated to, in either view.
	nominatedTo := map[string][]string{}
	for _, e := range readAllNodes(f.nominator.read, f.gen, out, func(uid types.UID) bool { return bound[uid] }) {
		k := preempt.Key(e.obj.Namespace, e.obj.Name)
		want[k] = where(e.obj)
		nominatedTo[k] = append(nominatedTo[k], e.node)
	}
	got := map[string]string{}
	for _, p := range f.c.Pods {
		k := preempt.Key(p.Namespace, p.Name)
		if _, dup := got[k]; dup {
			return fmt.Errorf("pod %s twice in the followed cluster", k)
		}
		got[k] = where(p)
		if p.Spec.NodeName == "" {
			nominatedTo[k] = append(nominatedTo[k], p.Status.NominatedNodeName)
		}
	}
	// The queue may change a node's nominations from the informer
	// between the sync and this check: a node whose store moved since
	// the sync, or whose nominator and store differed then (the queue
	// catching up), may differ from the sync's read without a fault.
	moved := f.nominator.storeMoved()
	raced := func(k string) bool {
		for _, n := range nominatedTo[k] {
			if f.nominator.disagree[n] || moved[n] {
				return true
			}
		}
		return false
	}
	for k, w := range want {
		if got[k] != w && !raced(k) {
			return fmt.Errorf("pod %s: followed cluster has it %q, the scheduler %q", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok && !raced(k) {
			return fmt.Errorf("pod %s: followed cluster has it %s, the scheduler does not", k, g)
		}
	}
	if len(f.pods) != len(f.c.Pods) {
		return fmt.Errorf("%d pods indexed, %d in the cluster", len(f.pods), len(f.c.Pods))
	}
	return nil
}

// errInvalid is a cluster or preemptor the contract's validation refuses.
type errInvalid struct{ err error }

func (e errInvalid) Error() string { return "invalid: " + e.err.Error() }
func (e errInvalid) Unwrap() error { return e.err }

func (f *follower) remember(e *entry) {
	f.pods[e.obj.UID] = e
	if e.bound {
		s := f.boundOn[e.node]
		if s == nil {
			s = map[types.UID]bool{}
			f.boundOn[e.node] = s
		}
		s[e.obj.UID] = true
	} else {
		f.nom[e.obj.UID] = e
	}
	if name, ok := preempt.PodGroupName(e.obj); ok {
		f.groupPods[preempt.Key(e.obj.Namespace, name)]++
	}
}

func (f *follower) forget(uid types.UID) {
	e := f.pods[uid]
	if e == nil {
		return
	}
	delete(f.pods, uid)
	if e.bound {
		delete(f.boundOn[e.node], uid)
	} else {
		delete(f.nom, uid)
	}
	if name, ok := preempt.PodGroupName(e.obj); ok {
		k := preempt.Key(e.obj.Namespace, name)
		if f.groupPods[k]--; f.groupPods[k] == 0 {
			delete(f.groupPods, k)
		}
	}
}

// build makes the cluster and a new evaluator from scratch.
func (f *follower) build(infos []fwk.NodeInfo, pdbs []*policyv1.PodDisruptionBudget, nss []*v1.Namespace, vol volumeObjects, out preemptors) error {
	f.ev, f.c = nil, nil
	f.gen = make(map[string]int64, len(infos))
	f.nodes = make([]nodeState, 0, len(infos))
	f.pods = map[types.UID]*entry{}
	f.boundOn = make(map[string]map[types.UID]bool, len(infos))
	f.nom = map[types.UID]*entry{}
	f.groupPods = map[string]int{}
	c := &preempt.Cluster{PDBs: pdbs, Namespaces: nss, PVCs: vol.pvcs, PVs: vol.pvs, StorageClasses: vol.classes,
		CSINodes: vol.csiNodes, CSIDrivers: vol.csiDrivers, VolumeAttachments: vol.attachments,
		CSIStorageCapacities: vol.capacities, DeviceClasses: vol.deviceClasses}
	for _, ni := range infos {
		n := ni.Node()
		c.Nodes = append(c.Nodes, n)
		f.gen[n.Name] = ni.GetGeneration()
		f.nodes = append(f.nodes, nodeState{name: n.Name, node: n, gen: ni.GetGeneration()})
		for _, pi := range ni.GetPods() {
			p := pi.GetPod()
			e := &entry{obj: p, src: p, node: n.Name, bound: true}
			f.remember(e)
			c.Pods = append(c.Pods, p)
		}
	}
	isBound := func(uid types.UID) bool { return f.pods[uid] != nil }
	f.nominator.refresh(f.gen, nil, true)
	f.lastOut = out
	want := map[types.UID]*entry{}
	for _, on := range f.nominator.byNode {
		for uid, e := range on {
			if inCluster(uid, e, out, isBound) {
				want[uid] = e
			}
		}
	}
	uids := make([]types.UID, 0, len(want))
	for uid := range want {
		uids = append(uids, uid)
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	for _, uid := range uids {
		f.remember(want[uid])
		c.Pods = append(c.Pods, want[uid].obj)
	}
	f.pdbOf, f.nsOf, f.volOf = pdbs, nss, vol
	f.pgOf, f.cpgOf = f.listGroups()
	c.PodGroups, c.CompositePodGroups = f.pgOf, f.cpgOf
	if err := c.Validate(); err != nil {
		return errInvalid{err}
	}
	ev, err := f.impl.NewEvaluator(c)
	if err != nil {
		return err
	}
	f.c, f.ev = c, ev
	f.builds++
	return nil
}

// listObjects lists the PDBs and namespaces, sorted by namespace and name.
func (f *follower) listObjects() ([]*policyv1.PodDisruptionBudget, []*v1.Namespace, error) {
	var pdbs []*policyv1.PodDisruptionBudget
	var nss []*v1.Namespace
	var err error
	if f.pdbs != nil {
		if pdbs, err = f.pdbs.List(labels.Everything()); err != nil {
			return nil, nil, fmt.Errorf("listing PodDisruptionBudgets: %w", err)
		}
		sort.Slice(pdbs, func(i, j int) bool {
			if pdbs[i].Namespace != pdbs[j].Namespace {
				return pdbs[i].Namespace < pdbs[j].Namespace
			}
			return pdbs[i].Name < pdbs[j].Name
		})
	}
	if f.namespaces != nil {
		if nss, err = f.namespaces.List(labels.Everything()); err != nil {
			return nil, nil, fmt.Errorf("listing namespaces: %w", err)
		}
		sort.Slice(nss, func(i, j int) bool { return nss[i].Name < nss[j].Name })
	}
	return pdbs, nss, nil
}

// listGroups gets from the scheduler's snapshot the PodGroups the
// cluster's pods name and the CompositePodGroups above them (up to
// upstream's depth, stopping at a missing parent or a cycle, as its
// TraverseHierarchyUp does), each sorted by namespace and name. The
// snapshot's listers fail when their gate is off, and a group it does not
// hold is left out: upstream's preemption gets nothing either.
func (f *follower) listGroups() ([]*preempt.PodGroup, []*preempt.CompositePodGroup) {
	if len(f.groupPods) == 0 || f.snapshot == nil {
		return nil, nil
	}
	snap := f.snapshot()
	pgl, cpgl := snap.PodGroups(), snap.CompositePodGroups()
	var pgs []*preempt.PodGroup
	var cpgs []*preempt.CompositePodGroup
	seen := map[string]bool{}
	for k := range f.groupPods {
		ns, name, _ := strings.Cut(k, "/")
		pg, err := pgl.Get(ns, name)
		if err != nil || pg == nil {
			continue
		}
		pgs = append(pgs, pg)
		parent := preempt.PodGroupParent(pg)
		for level := 1; level < schedulingv1beta1.WorkloadMaxTreeDepth && parent != "" && !seen[preempt.Key(ns, parent)]; level++ {
			seen[preempt.Key(ns, parent)] = true
			cpg, err := cpgl.Get(ns, parent)
			if err != nil || cpg == nil {
				break
			}
			cpgs = append(cpgs, cpg)
			parent = preempt.CompositePodGroupParent(cpg)
		}
	}
	sort.Slice(pgs, func(i, j int) bool {
		return preempt.Key(pgs[i].Namespace, pgs[i].Name) < preempt.Key(pgs[j].Namespace, pgs[j].Name)
	})
	sort.Slice(cpgs, func(i, j int) bool {
		return preempt.Key(cpgs[i].Namespace, cpgs[i].Name) < preempt.Key(cpgs[j].Namespace, cpgs[j].Name)
	})
	return pgs, cpgs
}

// groupsMoved reports whether the snapshot's groups of the cluster's
// pods (listGroups) are other objects than those the cluster holds, by
// pointer (the snapshot keeps the cache's object until it changes).
func (f *follower) groupsMoved() bool {
	pgs, cpgs := f.listGroups()
	return !slices.Equal(pgs, f.pgOf) || !slices.Equal(cpgs, f.cpgOf)
}

// sameObjects reports whether the nodes (their names, in the same order,
// and what preemption reads of them: samePreemptionView), PDBs and
// namespaces are those of the cluster.
func (f *follower) sameObjects(infos []fwk.NodeInfo, pdbs []*policyv1.PodDisruptionBudget, nss []*v1.Namespace) bool {
	if len(infos) != len(f.nodes) || len(pdbs) != len(f.pdbOf) || len(nss) != len(f.nsOf) {
		return false
	}
	for i, ni := range infos {
		n, st := ni.Node(), &f.nodes[i]
		if st.node == n {
			continue
		}
		if n.Name != st.name || !samePreemptionView(st.node, n) {
			return false
		}
		// The cluster keeps the old object, which preemption reads as n.
		st.node = n
	}
	for i := range pdbs {
		if pdbs[i] != f.pdbOf[i] {
			return false
		}
	}
	for i := range nss {
		if nss[i] != f.nsOf[i] {
			return false
		}
	}
	return true
}

// samePreemptionView reports whether a and b, two versions of a node,
// are the same to preemption: name, UID, labels (node affinity,
// topology), taints, spec.unschedulable and allocatable. (The filters
// that read other fields, NodeDeclaredFeatures' status.declaredFeatures
// for one, fail a node UnschedulableAndUnresolvable whatever its pods,
// and reach the implementation through the filter codes.)
func samePreemptionView(a, b *v1.Node) bool {
	if a.Name != b.Name || a.UID != b.UID || a.Spec.Unschedulable != b.Spec.Unschedulable ||
		!maps.Equal(a.Labels, b.Labels) || !apiequality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints) ||
		len(a.Status.Allocatable) != len(b.Status.Allocatable) {
		return false
	}
	for name, q := range a.Status.Allocatable {
		if r, ok := b.Status.Allocatable[name]; !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

// apply is preempt.Change.Apply of the cluster's pods for the change
// sync makes (removed, by UID; added), by pointer: every pod of the
// cluster is one object, the entry's, and sync removes only pods of the
// cluster and adds only pods it does not hold. The new list shares the
// old one's array when nothing is removed (the Updater does not read the
// old cluster again).
func (f *follower) apply(removed map[types.UID]bool, added []*v1.Pod) []*v1.Pod {
	pods := f.c.Pods
	if len(removed) > 0 {
		gone := make(map[*v1.Pod]bool, len(removed))
		for uid := range removed {
			gone[f.pods[uid].obj] = true
		}
		out := make([]*v1.Pod, 0, len(pods)-len(removed)+len(added))
		for _, p := range pods {
			if !gone[p] {
				out = append(out, p)
			}
		}
		pods = out
	}
	return append(pods, added...)
}

// has reports whether uid is a pod of the cluster.
func (f *follower) has(uid types.UID) bool { return f.pods[uid] != nil }
