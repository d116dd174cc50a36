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
	// store is the informer's pending pods nominated to each node (the
	// store's objects, which it replaces, never changes) at the last
	// refresh; disagree the nodes whose last read differed from the store.
	store    map[string][]any
	disagree map[string]bool

	// reads counts NominatedPodsForNode calls.
	reads int
}

// nominatedNodeIndex is the index of the scheduler's pod informer the
// plugin adds: pending pods by status.nominatedNodeName.
const nominatedNodeIndex = "preemptbench.dev/nominatedNodeName"

func indexNominatedNode(obj any) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok || p.Spec.NodeName != "" || p.Status.NominatedNodeName == "" {
		return nil, nil
	}
	return []string{p.Status.NominatedNodeName}, nil
}

// maxHintPods bounds the pods hinted between two refreshes (a scheduler
// whose PostFilter seldom runs); past it the next refresh reads every
// node.
const maxHintPods = 10000

func newNominations(read func(string) []fwk.PodInfo, pods cache.SharedIndexInformer) *nominations {
	n := &nominations{read: read}
	if pods != nil {
		if _, ok := pods.GetIndexer().GetIndexers()[nominatedNodeIndex]; ok {
			n.index = pods.GetIndexer()
		} else if err := pods.AddIndexers(cache.Indexers{nominatedNodeIndex: indexNominatedNode}); err == nil {
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
// the cluster (nodes), bound telling the pods the cycle's snapshot has
// bound. all reads every node.
func (n *nominations) refresh(nodes map[string]int64, bound func(types.UID) bool, all bool) {
	n.mu.Lock()
	hintNodes, hintPods := n.hintNodes, n.hintPods
	all = all || n.readAll || n.index == nil || n.byNode == nil
	n.hintNodes, n.hintPods, n.readAll = nil, nil, false
	n.mu.Unlock()

	if all || n.index == nil || n.byNode == nil {
		n.store = n.storeView(nil)
		n.byNode = map[string]map[types.UID]*entry{}
		n.nodeOf = map[types.UID]string{}
		n.disagree = map[string]bool{}
		for name := range nodes {
			n.readNode(name, n.store[name])
		}
		return
	}
	dirty := map[string]bool{}
	n.store = n.storeView(dirty)
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
	for uid, name := range n.nodeOf {
		if bound(uid) {
			dirty[name] = true
		}
	}
	for name := range dirty {
		if _, ok := nodes[name]; ok {
			n.readNode(name, n.store[name])
		} else {
			n.dropNode(name)
		}
	}
}

// storeView is the informer's pending pods nominated to each node. The
// nodes where it differs from n.store go to changed (when not nil). A
// node's pods are kept as the index gives them (the same objects in any
// order): their list is reused when unchanged.
func (n *nominations) storeView(changed map[string]bool) map[string][]any {
	view := make(map[string][]any, len(n.store))
	if n.index == nil {
		return view
	}
	for _, name := range n.index.ListIndexFuncValues(nominatedNodeIndex) {
		objs, err := n.index.ByIndex(nominatedNodeIndex, name)
		if err != nil || len(objs) == 0 {
			continue
		}
		if old, ok := n.store[name]; ok && sameObjects(old, objs) {
			view[name] = old
			continue
		}
		view[name] = objs
		if changed != nil {
			changed[name] = true
		}
	}
	if changed != nil {
		for name := range n.store {
			if _, ok := view[name]; !ok {
				changed[name] = true
			}
		}
	}
	return view
}

// sameObjects reports whether a and b hold the same objects (few: the
// pods nominated to one node), in any order.
func sameObjects(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// readNode asks the nominator for name's pods and compares them with the
// store's (store).
func (n *nominations) readNode(name string, store []any) {
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
			obj := p
			if p.Status.NominatedNodeName != name {
				obj = p.DeepCopy()
				obj.Status.NominatedNodeName = name
			}
			e = &entry{obj: obj, src: p, node: name}
		}
		next[p.UID] = e
		// The nominator holds a pod on one node at most.
		if prev, ok := n.nodeOf[p.UID]; ok && prev != name {
			delete(n.byNode[prev], p.UID)
		}
		n.nodeOf[p.UID] = name
	}
	for uid := range old {
		if _, ok := next[uid]; !ok && n.nodeOf[uid] == name {
			delete(n.nodeOf, uid)
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
func inStore(store []any, p *v1.Pod) bool {
	if p.ResourceVersion == "" {
		return false
	}
	for _, o := range store {
		if q := o.(*v1.Pod); q.UID == p.UID && q.ResourceVersion == p.ResourceVersion {
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

// dropNode forgets a node the cluster does not hold.
func (n *nominations) dropNode(name string) {
	for uid := range n.byNode[name] {
		if n.nodeOf[uid] == name {
			delete(n.nodeOf, uid)
		}
	}
	delete(n.byNode, name)
	delete(n.disagree, name)
}

// readAllNodes is what the nominator holds on every node of nodes, as
// pods gives it, read afresh and leaving the mirror as it is (for check).
func readAllNodes(read func(string) []fwk.PodInfo, nodes map[string]int64, preemptor *v1.Pod, isBound func(types.UID) bool) map[types.UID]*entry {
	want := map[types.UID]*entry{}
	for name := range nodes {
		for _, pi := range read(name) {
			p := pi.GetPod()
			if p.UID == preemptor.UID || isBound(p.UID) || p.Spec.NodeName != "" {
				continue
			}
			obj := p
			if p.Status.NominatedNodeName != name {
				obj = p.DeepCopy()
				obj.Status.NominatedNodeName = name
			}
			want[p.UID] = &entry{obj: obj, src: p, node: name}
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
