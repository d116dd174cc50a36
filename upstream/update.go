package upstream

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Updater = (*evaluator)(nil)

// Update is preempt.Updater, done as kube-scheduler does it between
// scheduling cycles: the world's pods go through a scheduler cache
// (internalcache.Cache's AddPod and RemovePod, built on the first Update)
// whose UpdateSnapshot refreshes the framework's snapshot in place, and
// through the pod informer's store. A change to nominated pods, or a
// world with extenders, is not followed in place: the world is built
// again on the next request.
func (ev *evaluator) Update(c *preempt.Cluster, ch preempt.Change) error {
	defer ev.lockWorld()()
	gone := make(map[preempt.PodRef]bool, len(ch.Removed))
	for _, r := range ch.Removed {
		gone[r] = true
	}
	var removed []*v1.Pod
	kept := ev.pods[:0]
	for _, p := range ev.pods {
		if gone[preempt.PodRef{Namespace: p.Namespace, Name: p.Name}] {
			removed = append(removed, p)
			continue
		}
		kept = append(kept, p)
	}
	if len(removed) != len(gone) {
		return fmt.Errorf("update: %d of the %d removed pods are not in the cluster", len(gone)-len(removed), len(gone))
	}
	clear(ev.pods[len(kept):])
	ev.pods = kept
	nominatedChanged := false
	for _, p := range removed {
		if preempt.IsNominated(p) {
			delete(ev.nominatedUIDs, p.UID)
			nominatedChanged = true
		}
	}
	var added []*v1.Pod
	for _, p := range ch.Added {
		p = p.DeepCopy()
		ev.pods = append(ev.pods, p)
		added = append(added, p)
		if preempt.IsNominated(p) {
			ev.nominatedUIDs[p.UID] = true
			nominatedChanged = true
		}
	}
	w := ev.w
	if w == nil {
		return nil
	}
	// A NodeInfo keeps its used host ports as a set: removing a pod frees
	// its ports even when another pod of the node holds the same one (two
	// such pods cannot both run, but a dump can hold them), so the
	// scheduler cache's node would no longer be a fresh evaluator's. Such
	// a change rebuilds the world instead (found by preempttest's Update
	// property).
	if nominatedChanged || len(w.key.extenders) > 0 || sharesHostPorts(removed, ev.pods) {
		ev.w = nil
		return nil
	}
	if err := w.follow(removed, added); err != nil {
		ev.w = nil // built again from ev.pods on the next request
		return err
	}
	return nil
}

// ensureCache builds w.cache, the scheduler cache of the world's nodes and
// bound pods (in the cluster's order), and of the given pod groups,
// composite pod groups and unbound members (nominated pods), if not yet
// built.
func (w *world) ensureCache(groups []*preempt.PodGroup, composites []*preempt.CompositePodGroup, unbound []*v1.Pod) error {
	if w.cache != nil {
		return nil
	}
	ctx := quiet(context.Background())
	logger := klogFrom(ctx)
	// The cache's metrics goroutine stops with its context; the cache
	// itself works on.
	cctx, cancel := context.WithCancel(ctx)
	cache := newSchedulerCache(cctx, w.fts)
	cancel()
	for _, n := range w.nodeObjects {
		cache.AddNode(logger, n)
	}
	for _, p := range w.initial {
		if err := cache.AddPod(logger, p); err != nil {
			return err
		}
	}
	addPodGroups(logger, cache, w.fts, groups, composites, unbound)
	// The cache keeps the PVC reference counts' changes since its last
	// snapshot and applies them to the next snapshot it updates in place:
	// here every initial pod's, which w.snapshot (NewSnapshot of the same
	// pods) already counts. Taking them into a throwaway snapshot leaves
	// only the changes that follow, so that a ReadWriteOncePod claim
	// whose last holder an Update removes is no longer in use (it stayed
	// in use, counted twice; found by TestVolumesUpdate).
	if err := cache.UpdateSnapshot(logger, internalcache.NewEmptySnapshot()); err != nil {
		return err
	}
	w.cache = cache
	return nil
}

// follow applies removed and added (bound pods, as the evaluator holds
// them) to the world.
func (w *world) follow(removed, added []*v1.Pod) error {
	ctx := quiet(context.Background())
	logger := klogFrom(ctx)
	if err := w.ensureCache(nil, nil, nil); err != nil {
		return err
	}
	for _, p := range removed {
		key := preempt.Key(p.Namespace, p.Name)
		wp := w.podByKey[key]
		if wp == nil {
			return fmt.Errorf("update: pod %s is not in the world", key)
		}
		if preempt.IsBound(wp) {
			if err := w.cache.RemovePod(logger, wp); err != nil {
				return err
			}
		}
		if err := w.podStore.Delete(wp); err != nil {
			return err
		}
		delete(w.podByKey, key)
	}
	for _, p := range added {
		wp := worldPod(p, w.key.now)
		key := preempt.Key(p.Namespace, p.Name)
		w.podByKey[key] = wp
		if err := w.podStore.Add(wp); err != nil {
			return err
		}
		if preempt.IsBound(wp) {
			if err := w.cache.AddPod(logger, wp); err != nil {
				return err
			}
		}
	}
	return w.cache.UpdateSnapshot(logger, w.snapshot)
}

// sharesHostPorts reports whether a pod of removed holds a host port that
// a pod of kept bound to the same node also holds.
func sharesHostPorts(removed, kept []*v1.Pod) bool {
	for _, r := range removed {
		ports := podinfo.AppendHostPorts(nil, r)
		if len(ports) == 0 || !preempt.IsBound(r) {
			continue
		}
		for _, k := range kept {
			if k.Spec.NodeName != r.Spec.NodeName {
				continue
			}
			for _, used := range podinfo.AppendHostPorts(nil, k) {
				for _, want := range ports {
					if want.Conflicts(used) {
						return true
					}
				}
			}
		}
	}
	return false
}
