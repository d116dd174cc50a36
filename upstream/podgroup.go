//go:build !preemptbench_v1_36

package upstream

import (
	"k8s.io/klog/v2"
	"sort"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
)

// orderedSnapshot is the world's snapshot as the framework's listers, with
// the one order upstream leaves to a map pinned: a pod group's members
// (PodGroupState.ScheduledPods, built from a map of UIDs) come in
// (namespace, name) order, and a composite pod group's children
// (CompositePodGroupState.GetChildren, a set) in (type, namespace, name)
// order. Upstream's victims list a group's members in that order, and
// pickOneNodeForPreemption reads the first victim's priority, so the
// decision would otherwise depend on the map (docs/divergences.md).
type orderedSnapshot struct {
	*internalcache.Snapshot
	// log records AddPod and RemovePod while it is on (gangVictimsLog).
	log *snapshotLog
}

// AddPod is the snapshot's, logged.
func (s orderedSnapshot) AddPod(pi fwk.PodInfo, nodeName string) error {
	s.log.note(pi.GetPod(), true)
	return s.Snapshot.AddPod(pi, nodeName)
}

// RemovePod is the snapshot's, logged.
func (s orderedSnapshot) RemovePod(logger klog.Logger, pod *v1.Pod, nodeName string) error {
	s.log.note(pod, false)
	return s.Snapshot.RemovePod(logger, pod, nodeName)
}

// snapshotLog is the mutable snapshot's AddPod and RemovePod calls, in
// order, while on.
type snapshotLog struct {
	on     bool
	events []snapshotEvent
}

type snapshotEvent struct {
	pod *v1.Pod
	add bool
}

func (l *snapshotLog) note(p *v1.Pod, add bool) {
	if l != nil && l.on {
		l.events = append(l.events, snapshotEvent{pod: p, add: add})
	}
}

var _ fwk.MutableSnapshotSharedLister = orderedSnapshot{}

// PodGroupStates is the snapshot's, members in (namespace, name) order.
func (s orderedSnapshot) PodGroupStates() fwk.PodGroupStateLister {
	return orderedPodGroupStates{s.Snapshot.PodGroupStates()}
}

// CompositePodGroupStates is the snapshot's, children in order.
func (s orderedSnapshot) CompositePodGroupStates() fwk.CompositePodGroupStateLister {
	return orderedCompositeStates{s.Snapshot.CompositePodGroupStates()}
}

type orderedPodGroupStates struct{ fwk.PodGroupStateLister }

func (l orderedPodGroupStates) Get(namespace, name string) (fwk.PodGroupState, error) {
	st, err := l.PodGroupStateLister.Get(namespace, name)
	if err != nil || st == nil {
		return st, err
	}
	return orderedPodGroupState{st}, nil
}

type orderedPodGroupState struct{ fwk.PodGroupState }

// ScheduledPods is the state's, in (namespace, name) order.
func (s orderedPodGroupState) ScheduledPods() []*v1.Pod {
	pods := s.PodGroupState.ScheduledPods()
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	return pods
}

type orderedCompositeStates struct {
	fwk.CompositePodGroupStateLister
}

func (l orderedCompositeStates) Get(namespace, name string) (fwk.CompositePodGroupState, error) {
	st, err := l.CompositePodGroupStateLister.Get(namespace, name)
	if err != nil || st == nil {
		return st, err
	}
	return orderedCompositeState{st}, nil
}

type orderedCompositeState struct{ fwk.CompositePodGroupState }

// GetChildren is the state's, in (type, namespace, name) order.
func (s orderedCompositeState) GetChildren() []fwk.EntityKey {
	keys := s.CompositePodGroupState.GetChildren()
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return keys
}
