//go:build preemptbench_v1_36 && !preemptbench_v1_35

package upstream

// v1.36's side of the seams where v1.35 differs from it (seams_v1_35.go
// has v1.35's): seams_v1_36.go holds what v1.36 and v1.35 share, and
// seams.go the current release's side. Built for release v1.36.3 only.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Version is the release this build runs.
const Version = "v1.36.3"

// newSchedulerCache is kube-scheduler's scheduler cache under fts.
func newSchedulerCache(ctx context.Context, fts feature.Features) internalcache.Cache {
	return internalcache.New(ctx, nil, fts.EnableGenericWorkload)
}

// newSnapshot builds w.snapshot of the bound pods on ev's nodes, and
// returns the framework options that list from it. With GenericWorkload,
// DefaultPreemption lists pod groups from the framework's
// PodGroupManager, the scheduler cache, built here; v1.36's evaluator
// has no mutable snapshot lister.
func (w *world) newSnapshot(_ klog.Logger, ev *evaluator, bound, _ []*v1.Pod) ([]frameworkruntime.Option, error) {
	w.snapshot = internalcache.NewSnapshot(bound, ev.nodes)
	if w.fts.EnableGenericWorkload {
		if err := w.ensureCache(nil, nil, nil); err != nil {
			return nil, err
		}
	}
	w.lister = w.snapshot
	return []frameworkruntime.Option{frameworkruntime.WithSnapshotSharedLister(w.lister)}, nil
}
