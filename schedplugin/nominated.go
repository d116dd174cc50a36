package schedplugin

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"
)

// nominations mirrors the scheduling queue's nominator (what
// fwk.Handle.NominatedPodsForNode answers, node by node) without asking
// it for every node every cycle: each of those calls deep-copies the
// node's nominated pods, and in a preemption storm hundreds of pods are
// nominated at once.
//
// A node is read again (NominatedPodsForNode) at a cycle when one of
// these holds, and only then:
//   - the informer's pending pods nominated to it (status.nominatedNodeName,
//     spec.nodeName empty; an index of the scheduler's own pod informer)
//     changed since the last cycle, by UID and resourceVersion. The
//     informer's store is updated before any of its handlers runs, the
//     queue's included, so a change the queue has taken in from the
//     informer is in the store by then;
//   - when it was last read, the nominator's pods on it were not the
//     store's (by UID and resourceVersion): the queue had not caught up
//     yet, a nomination was in memory only (the scheduler nominates
//     before the API server hears of it), a pod was in flight (the
//     nominator answers a bare pod for it), or a pod of another scheduler
//     is nominated there. Such a node is read every cycle until both
//     agree;
//   - a cycle nominated to it in memory: a PostFilter's or
//     PodGroupPostFilter's result (hintNode);
//   - a pod that ran a cycle since (hintPod, from PreFilter) was
//     nominated to it, in the mirror, in its own object or in the store:
//     the failure handler clears or re-adds that pod's nomination in
//     memory, and an assumed pod's is deleted;
//   - a pod the mirror holds there is bound in the cycle's snapshot.
//
// Anything else the nominator does comes from the informer (the queue's
// Add, Update and Delete) or from the scheduling goroutine on the pod of
// a cycle, which the rules above cover. Without the index (no informer)
// or with readAll set, every node is read.
type nominations struct {
	read  func(node string) []fwk.PodInfo
	index cache.Indexer

	mu        sync.Mutex // guards the hints, set from PreFilter and PostFilter
	hintNodes map[string]bool
	hintPods  map[types.UID]*v1.Pod
	readAll   bool

	// byNode is the nominator's pods as last read, by node; nodeOf where
	// each is.
	byNode map[string]map[types.UID]*entry
	nodeOf map[types.UID]string
	// store is the informer's nominated pending pods at the last refresh
	// (the store's objects, which it replaces and never changes), spare
	// the set the next refresh fills; disagree the nodes whose last read
	// differed from the store.
	store, spare map[*v1.Pod]struct{}
	disagree     map[string]bool

	// reads counts NominatedPodsForNode calls.
	reads int
}

// nominatedIndex is the index of the scheduler's pod informer the
// plugin adds: the pending pods with a status.nominatedNodeName, all
// under one value (nominatedValue), read in one call.
const (
	nominatedIndex = "preemptbench.dev/nominated"
	nominatedValue = "nominated"
)

func indexNominated(obj any) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok || p.Spec.NodeName != "" || p.Status.NominatedNodeName == "" {
		return nil, nil
	}
	return []string{nominatedValue}, nil
}

// maxHintPods bounds the pods hinted between two refreshes (a scheduler
// whose PostFilter seldom runs); past it the next refresh reads every
// node.
const maxHintPods = 10000

func newNominations(read func(string) []fwk.PodInfo, pods cache.SharedIndexInformer) *nominations {
	n := &nominations{read: read}
	if pods != nil {
		if _, ok := pods.GetIndexer().GetIndexers()[nominatedIndex]; ok {
			n.index = pods.GetIndexer()
		} else if err := pods.AddIndexers(cache.Indexers{nominatedIndex: indexNominated}); err == nil {
			n.index = pods.GetIndexer()
		}
	}
	return n
}

// hintPod records that p runs a scheduling cycle.
func (n *nominations) hintPod(p *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.readAll {
		return
	}
	if len(n.hintPods) >= maxHintPods {
		n.readAll, n.hintPods = true, nil
		return
	}
	if n.hintPods == nil {
		n.hintPods = map[types.UID]*v1.Pod{}
	}
	n.hintPods[p.UID] = p
}

// hintNode records that a cycle nominated a pod to node in memory.
func (n *nominations) hintNode(node string) {
	if node == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hintNodes == nil {
		n.hintNodes = map[string]bool{}
	}
	n.hintNodes[node] = true
}

// refresh brings the mirror to the nominator's state for the nodes of
// the cluster (nodes). newlyBound are the pods the cycle's snapshot
// binds that the last cycle's did not. all reads every node. It returns
// the pods whose entry changed (added, replaced or dropped), or nil when
// it read every node.
func (n *nominations) refresh(nodes map[string]int64, newlyBound map[types.UID]bool, all bool) map[types.UID]bool {
	n.mu.Lock()
	hintNodes, hintPods := n.hintNodes, n.hintPods
	all = all || n.readAll || n.index == nil || n.byNode == nil
	n.hintNodes, n.hintPods, n.readAll = nil, nil, false
	n.mu.Unlock()

	objs := n.listStore()
	if all {
		n.store = make(map[*v1.Pod]struct{}, len(objs))
		on := map[string][]*v1.Pod{}
		for _, o := range objs {
			p := o.(*v1.Pod)
			n.store[p] = struct{}{}
			on[p.Status.NominatedNodeName] = append(on[p.Status.NominatedNodeName], p)
		}
		n.byNode = map[string]map[types.UID]*entry{}
		n.nodeOf = map[types.UID]string{}
		n.disagree = map[string]bool{}
		for name := range nodes {
			n.readNode(name, on[name], nil)
		}
		return nil
	}

	// The nodes where the store's nominations moved.
	dirty := map[string]bool{}
	cur := n.spare
	if cur == nil {
		cur = make(map[*v1.Pod]struct{}, len(objs))
	}
	clear(cur)
	for _, o := range objs {
		p := o.(*v1.Pod)
		cur[p] = struct{}{}
		if _, ok := n.store[p]; !ok {
			dirty[p.Status.NominatedNodeName] = true
		}
	}
	if len(cur) != len(n.store) || len(dirty) > 0 {
		for p := range n.store {
			if _, ok := cur[p]; !ok {
				dirty[p.Status.NominatedNodeName] = true
			}
		}
	}
	n.store, n.spare = cur, n.store

	for name := range n.disagree {
		dirty[name] = true
	}
	for name := range hintNodes {
		dirty[name] = true
	}
	for uid, p := range hintPods {
		if name, ok := n.nodeOf[uid]; ok {
			dirty[name] = true
		}
		if p.Status.NominatedNodeName != "" {
			dirty[p.Status.NominatedNodeName] = true
		}
		if o, ok, err := n.index.GetByKey(p.Namespace + "/" + p.Name); err == nil && ok {
			if q := o.(*v1.Pod); q.Spec.NodeName == "" && q.Status.NominatedNodeName != "" {
				dirty[q.Status.NominatedNodeName] = true
			}
		}
	}
	for uid := range newlyBound {
		if name, ok := n.nodeOf[uid]; ok {
			dirty[name] = true
		}
	}
	changed := map[types.UID]bool{}
	if len(dirty) == 0 {
		return changed
	}
	on := map[string][]*v1.Pod{}
	for _, o := range objs {
		if p := o.(*v1.Pod); dirty[p.Status.NominatedNodeName] {
			on[p.Status.NominatedNodeName] = append(on[p.Status.NominatedNodeName], p)
		}
	}
	for name := range dirty {
		if _, ok := nodes[name]; !ok {
			n.dropNode(name, changed)
			continue
		}
		n.readNode(name, on[name], changed)
	}
	return changed
}

// listStore is the informer's nominated pending pods.
func (n *nominations) listStore() []any {
	if n.index == nil {
		return nil
	}
	objs, err := n.index.ByIndex(nominatedIndex, nominatedValue)
	if err != nil {
		return nil
	}
	return objs
}

// storeMoved is the nodes where the store's nominations differ from
// those of the last refresh (for check).
func (n *nominations) storeMoved() map[string]bool {
	moved := map[string]bool{}
	cur := map[*v1.Pod]bool{}
	for _, o := range n.listStore() {
		p := o.(*v1.Pod)
		cur[p] = true
		if _, ok := n.store[p]; !ok {
			moved[p.Status.NominatedNodeName] = true
		}
	}
	for p := range n.store {
		if !cur[p] {
			moved[p.Status.NominatedNodeName] = true
		}
	}
	return moved
}

// readNode asks the nominator for name's pods and compares them with the
// store's (store). The pods whose entry it adds, replaces or drops go to
// changed (when not nil).
func (n *nominations) readNode(name string, store []*v1.Pod, changed map[types.UID]bool) {
	got := n.read(name)
	n.reads++
	old := n.byNode[name]
	next := make(map[types.UID]*entry, len(got))
	agree := len(got) == len(store)
	for _, pi := range got {
		p := pi.GetPod()
		if agree && !inStore(store, p) {
			agree = false
		}
		e := old[p.UID]
		if e == nil || e.src.ResourceVersion != p.ResourceVersion || p.ResourceVersion == "" {
			e = nominatedEntry(p, name)
			if changed != nil {
				changed[p.UID] = true
			}
		}
		next[p.UID] = e
		// The nominator holds a pod on one node at most.
		if prev, ok := n.nodeOf[p.UID]; ok && prev != name {
			delete(n.byNode[prev], p.UID)
		}
		n.nodeOf[p.UID] = name
	}
	for uid := range old {
		if _, ok := next[uid]; !ok {
			if n.nodeOf[uid] == name {
				delete(n.nodeOf, uid)
			}
			if changed != nil {
				changed[uid] = true
			}
		}
	}
	if len(next) == 0 {
		delete(n.byNode, name)
	} else {
		n.byNode[name] = next
	}
	if agree {
		delete(n.disagree, name)
	} else {
		n.disagree[name] = true
	}
}

// inStore reports whether store holds p's version (UID and
// resourceVersion; the nominator's pods are copies).
func inStore(store []*v1.Pod, p *v1.Pod) bool {
	if p.ResourceVersion == "" {
		return false
	}
	for _, q := range store {
		if q.UID == p.UID && q.ResourceVersion == p.ResourceVersion {
			return true
		}
	}
	return false
}

// entry is the mirror's entry of the pod uid, or nil.
func (n *nominations) entry(uid types.UID) *entry {
	name, ok := n.nodeOf[uid]
	if !ok {
		return nil
	}
	return n.byNode[name][uid]
}

// dropNode forgets a node the cluster does not hold; its pods go to
// changed.
func (n *nominations) dropNode(name string, changed map[types.UID]bool) {
	for uid := range n.byNode[name] {
		if n.nodeOf[uid] == name {
			delete(n.nodeOf, uid)
		}
		changed[uid] = true
	}
	delete(n.byNode, name)
	delete(n.disagree, name)
}

// readAllNodes is what the nominator holds on every node of nodes, as
// pods gives it, read afresh and leaving the mirror as it is (for check).
func readAllNodes(read func(string) []fwk.PodInfo, nodes map[string]int64, out preemptors, isBound func(types.UID) bool) map[types.UID]*entry {
	want := map[types.UID]*entry{}
	for name := range nodes {
		for _, pi := range read(name) {
			p := pi.GetPod()
			if e := nominatedEntry(p, name); inCluster(p.UID, e, out, isBound) {
				want[p.UID] = e
			}
		}
	}
	return want
}

// readAllNodes makes the next refresh read every node.
func (n *nominations) readAllNodes() {
	n.mu.Lock()
	n.readAll, n.hintPods = true, nil
	n.mu.Unlock()
}

// nominatedEntry is the entry of p, nominated to node by the queue: as
// the cluster holds it, not bound, status.nominatedNodeName set to node
// (the nominator may hold a nomination the pod object does not show
// yet).
func nominatedEntry(p *v1.Pod, node string) *entry {
	obj := p
	if p.Status.NominatedNodeName != node {
		obj = p.DeepCopy()
		obj.Status.NominatedNodeName = node
	}
	return &entry{obj: obj, src: p, node: node}
}

// inCluster reports whether the nominated pod uid (entry e) belongs in
// the cluster of the cycle of preemptors out: not one of them, not bound
// in the snapshot (isBound) nor in the queue's copy.
func inCluster(uid types.UID, e *entry, out preemptors, isBound func(types.UID) bool) bool {
	return !out[uid] && !isBound(uid) && e.src.Spec.NodeName == ""
}

// preemptors are the pods a cycle is for (the pod, or a gang's
// unscheduled members), kept out of the cluster, by UID.
type preemptors map[types.UID]bool

// preemptorsOf is the set of pods' UIDs.
func preemptorsOf(pods ...*v1.Pod) preemptors {
	out := make(preemptors, len(pods))
	for _, p := range pods {
		out[p.UID] = true
	}
	return out
}
