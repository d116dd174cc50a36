package optimized

import (
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

var _ preempt.Updater = (*evaluator)(nil)

// errRebuild: a change the snapshot cannot take in place (a pod asking
// for a scalar resource that no dimension holds).
var errRebuild = errors.New("rebuild")

// Update is preempt.Updater. An evaluator made by Impl.NewEvaluator owns
// its snapshot and changes it in place, in time proportional to the pods
// changed (and their nodes' pods); one made by Snapshot.NewEvaluator
// shares its snapshot and prepares a new one of c instead.
func (ev *evaluator) Update(c *preempt.Cluster, ch preempt.Change) error {
	ev.dec, ev.decPod = nil, nil // per-preemptor work is of the old cluster
	// The other behaviours' evaluators and snapshots are of the old
	// cluster: made again on their next use.
	ev.siblings, ev.alt, ev.altState = nil, [reqModes]*Snapshot{}, [reqModes]int8{}
	// The start-time cache is of the old cluster: its key (lastCands)
	// goes; its lists keep their arrays for the next output.
	ev.lastCands, ev.last, ev.lastLent = nil, ev.last[:0], false
	if ev.owned {
		err := ev.s.update(c, ch)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errRebuild) {
			return err
		}
	}
	s, err := Prepare(c)
	if err != nil {
		return err
	}
	ev.s, ev.owned = s, true
	return nil
}

// update applies ch to s, which then describes c.
func (s *Snapshot) update(c *preempt.Cluster, ch preempt.Change) error {
	reqs := make([]v1.ResourceList, len(ch.Added)) // each added pod's, computed once
	for i, p := range ch.Added {
		reqs[i] = placedRequestsFast(p, s.reqs)
		for name := range reqs[i] {
			if _, ok := s.scalarDims[name]; podinfo.IsScalarResource(name) && !ok {
				return errRebuild
			}
		}
	}
	s.updateGroupsBegin(c)
	touched := map[int32]bool{}
	for _, r := range ch.Removed {
		p, ok := s.podIndex[podKey{r.Namespace, r.Name}]
		if !ok {
			return fmt.Errorf("update: pod %s is not in the cluster", r)
		}
		s.groupsRemoved(p)
		delete(s.podIndex, podKey{r.Namespace, r.Name})
		if n := s.podNode[p]; n >= 0 {
			s.boundOf[n] = remove(s.boundOf[n], p)
			s.addRequested(n, p, -1)
			s.podNode[p] = -1
			touched[n] = true
			if len(s.antiTerms[p]) > 0 {
				s.withAnti = remove(s.withAnti, p)
			}
		}
		if n := s.podNom[p]; n >= 0 {
			s.nomOf[n] = remove(s.nomOf[n], p)
			s.podNom[p] = -1
		}
	}
	s.cluster = c
	first := len(s.pods)
	for k, p := range ch.Added {
		if _, ok := s.podIndex[podKey{p.Namespace, p.Name}]; ok {
			return fmt.Errorf("update: pod %s is already in the cluster", preempt.Key(p.Namespace, p.Name))
		}
		i := int32(len(s.pods))
		if err := s.appendPod(p, reqs[k]); err != nil {
			return fmt.Errorf("update: %w", err)
		}
		s.groupsAdded(i)
		if n := s.podNode[i]; n >= 0 {
			s.boundOf[n] = append(s.boundOf[n], i)
			touched[n] = true
		}
		if n := s.podNom[i]; n >= 0 {
			s.nomOf[n] = append(s.nomOf[n], i)
		}
	}
	for n := range touched {
		s.sortNode(n)
	}
	s.groupsRefreshed()
	// The volume objects are the same (preempt.Updater): the volume index
	// needs only the added pods'.
	for _, x := range []*volumeIndex{s.volIdx, s.volIdxPX} {
		if x != nil {
			x.addPods(s, first)
		}
	}
	return nil
}

// remove deletes p from xs, keeping the order of the others.
func remove(xs []int32, p int32) []int32 {
	if i := slices.Index(xs, p); i >= 0 {
		return slices.Delete(xs, i, i+1)
	}
	return xs
}
