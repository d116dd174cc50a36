//go:build !preemptbench_v1_36

package upstream

import (
	"errors"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/preemptbench/preemptbench/preempt"
)

// The victims of a gang preemption none of whose victims the executor
// deletes (every one already terminating: actuatePodGroupPreemption
// skips them and calls no PreemptPod, where the adapter otherwise sees
// the candidate). PodGroupEvaluator.Preempt returns no victims, but its
// message counts them; the candidate it actuated is rebuilt from the
// mutable snapshot's log of selectVictimsOnDomain with upstream's own
// functions:
//   - removePods removed every potential victim, unit by unit, in the
//     domain's order (the log's first run of RemovePod calls);
//   - the reprieve then put each unit back (a run of AddPod calls of
//     pods that are not members), violating units first, each in
//     MoreImportantVictim order, and removed it again when a member no
//     longer fit: the units whose pods end removed are victimsToPreempt,
//     in the order they were tried;
//   - each unit is the Victim upstream builds (NewVictim for a unit of
//     a mode-All hierarchy, NewPodVictim otherwise), sorted by
//     sort.Slice with MoreImportantVictim from the same input order (the
//     same permutation), and its PDB violations counted by
//     FilterVictimsWithPDBViolation over the sorted potential victims.

// errNoLog is logVictims' error when the log does not show a reprieve.
var errNoLog = errors.New("the snapshot log shows no reprieve")

// logVictims rebuilds the actuated candidate of a gang preemption from
// the world's snapshot log (see above): its pods in upstream's order,
// its PDB violations and its pod-group disruptions. members are the
// gang's (their AddPod calls are the reprieve's assumed members).
func (w *world) logVictims(members []*v1.Pod, x *preempt.PodGroupIndex) ([]*v1.Pod, int, int, error) {
	isMember := map[types.UID]bool{}
	for _, m := range members {
		isMember[m.UID] = true
	}
	events := w.lister.log.events
	// The domain's order: the first run of removals.
	var initial []*v1.Pod
	i := 0
	for ; i < len(events) && !events[i].add; i++ {
		initial = append(initial, events[i].pod)
	}
	if len(initial) == 0 || i == len(events) {
		return nil, 0, 0, errNoLog
	}
	// The reprieve: units in the order tried, and which pods end removed.
	var tried [][]*v1.Pod
	removed := map[types.UID]bool{}
	for _, p := range initial {
		removed[p.UID] = true
	}
	inRun := false
	for _, e := range events[i:] {
		if isMember[e.pod.UID] {
			inRun = false
			continue
		}
		removed[e.pod.UID] = !e.add
		if !e.add {
			inRun = false
			continue
		}
		if !inRun {
			tried = append(tried, nil)
			inRun = true
		}
		tried[len(tried)-1] = append(tried[len(tried)-1], e.pod)
	}
	unitOf := map[types.UID]int{}
	for k, u := range tried {
		for _, p := range u {
			unitOf[p.UID] = k
		}
	}
	lister := w.fh.SnapshotSharedLister()
	pgLister := lister.PodGroups()
	var cpgLister fwk.CompositePodGroupLister
	if w.fts.EnableCompositePodGroup {
		cpgLister = lister.CompositePodGroups()
	}
	victimOf := func(pods []*v1.Pod) (preemption.Victim, error) {
		infos := make([]fwk.PodInfo, len(pods))
		for k, p := range pods {
			pi, err := framework.NewPodInfo(p)
			if err != nil {
				return nil, err
			}
			infos[k] = pi
		}
		kind, _, _, all := x.GroupKey(pods[0])
		if !all {
			return preemption.NewPodVictim(infos[0], pgLister, cpgLister), nil
		}
		t := fwk.PodGroupKeyType
		if kind == "CompositePodGroup" {
			t = fwk.CompositePodGroupKeyType
		}
		return preemption.NewVictim(infos, preemption.GetPodPriority(pods[0], pgLister, cpgLister), t)
	}
	units := make([]preemption.Victim, len(tried))
	for k, u := range tried {
		v, err := victimOf(u)
		if err != nil {
			return nil, 0, 0, err
		}
		units[k] = v
	}
	// The potential victims in the domain's order, sorted as upstream
	// sorts them, and their PDB violations.
	var potential []preemption.Victim
	seen := map[int]bool{}
	for _, p := range initial {
		k, ok := unitOf[p.UID]
		if !ok {
			return nil, 0, 0, errNoLog
		}
		if !seen[k] {
			seen[k] = true
			potential = append(potential, units[k])
		}
	}
	sort.Slice(potential, func(a, b int) bool { return preemption.MoreImportantVictim(potential[a], potential[b]) })
	pdbs, err := w.fh.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Lister().List(labels.Everything())
	if err != nil {
		return nil, 0, 0, err
	}
	violating, _ := preemption.FilterVictimsWithPDBViolation(potential, pdbs)
	violations := map[preemption.Victim]int{}
	for _, v := range violating {
		violations[v.Victim] = v.ViolateCount
	}
	var chosen []preemption.Victim
	numViolations := 0
	for k, u := range tried {
		if removed[u[0].UID] {
			chosen = append(chosen, units[k])
			numViolations += violations[units[k]]
		}
	}
	sort.Slice(chosen, func(a, b int) bool { return preemption.MoreImportantVictim(chosen[a], chosen[b]) })
	var pods []*v1.Pod
	groups := 0
	for _, v := range chosen {
		if v.IsGroup() {
			groups++
		}
		for _, pi := range v.Pods() {
			pods = append(pods, pi.GetPod())
		}
	}
	return pods, numViolations, groups, nil
}
