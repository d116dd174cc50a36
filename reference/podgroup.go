package reference

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/refstages"
	"github.com/preemptbench/preemptbench/preempt"
)

// Pod groups as victims (GenericWorkload). Upstream v1.37.2 preempts
// units, its preemption.Victim: a pod, or, for a pod whose pod-group
// hierarchy has an ancestor with disruption mode All, every scheduled
// member of every leaf group under the highest such ancestor, wherever
// they run (getCrossNodesVictims, searchCrossNodesVictimPods). A unit
// takes the priority of the highest group of its pod's hierarchy
// (GetPodPriority), and is compared with others by MoreImportantVictim.
// With the gate off every pod is a unit of its own, at its own priority,
// and everything below reduces to the single-pod algorithm.

// Unit kinds, upstream's fwk.EntityKeyType values.
const (
	kindPod               = "pod"
	kindPodGroup          = "podgroup"
	kindCompositePodGroup = "compositepodgroup"
)

// unit is upstream's preemption.Victim (a DomainVictim): pods preempted
// together.
type unit struct {
	// pods are the members, in upstream's order (pinned: leaf groups in
	// (kind, name) order, each group's members in (namespace, name)
	// order).
	pods     []*v1.Pod
	priority int32
	kind     string
	// earliest is the earliest start time of the pods (now for a pod
	// without one).
	earliest time.Time
}

func newUnit(pods []*v1.Pod, priority int32, kind string, now time.Time) *unit {
	u := &unit{pods: pods, priority: priority, kind: kind}
	for i, p := range pods {
		if t := startTime(p, now); i == 0 || t.Before(u.earliest) {
			u.earliest = t
		}
	}
	return u
}

// isGroup is Victim.IsGroup: counted by NumPodGroupDisruptions. A
// Single-mode member (or any pod naming a pod group, under the gate) is
// typed as a pod group, as upstream's NewPodVictim types it.
func (u *unit) isGroup() bool { return u.kind != kindPod }

// rank is upstream's victimRank: composites above groups above pods.
func (u *unit) rank() int {
	switch u.kind {
	case kindCompositePodGroup:
		return 3
	case kindPodGroup:
		return 2
	}
	return 1
}

// moreImportantVictim is upstream's MoreImportantVictim: priority, then
// rank, then size, then the earliest start; the contract adds the first
// pod's namespace, name and UID so that the order is total.
func moreImportantVictim(a, b *unit) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.rank() != b.rank() {
		return a.rank() > b.rank()
	}
	if len(a.pods) != len(b.pods) {
		return len(a.pods) > len(b.pods)
	}
	if !a.earliest.Equal(b.earliest) {
		return a.earliest.Before(b.earliest)
	}
	pa, pb := a.pods[0], b.pods[0]
	if pa.Namespace != pb.Namespace {
		return pa.Namespace < pb.Namespace
	}
	if pa.Name != pb.Name {
		return pa.Name < pb.Name
	}
	return pa.UID < pb.UID
}

func sortUnits(us []*unit) {
	sort.SliceStable(us, func(i, j int) bool { return moreImportantVictim(us[i], us[j]) })
}

// groups is the pod-group view of one request under GenericWorkload; nil
// with the gate off.
type groups struct {
	index     *preempt.PodGroupIndex
	composite bool // CompositePodGroup is on
	c         *preempt.Cluster
	stages    *refstages.Stages
}

// groupsFor is the view under gates of cluster c with the evaluator's
// stages, nil without GenericWorkload.
func groupsFor(c *preempt.Cluster, gates map[string]bool, stages *refstages.Stages) *groups {
	if !gates[preempt.GenericWorkloadGate] {
		return nil
	}
	composite := gates[compositePodGroupGate]
	return &groups{index: preempt.NewPodGroupIndex(c, composite), composite: composite, c: c, stages: stages}
}

// priority is the pod's priority as a victim: GetPodPriority under the
// gate, its own without.
func (g *groups) priority(p *v1.Pod) int32 {
	if g == nil {
		return corev1helpers.PodPriority(p)
	}
	return g.stages.VictimPriority(g.index, p)
}

// unitOf is the unit p is preempted in (its key, "" for a pod of its own).
func (g *groups) unitOf(p *v1.Pod, now time.Time) (key string, u func() *unit) {
	single := func() *unit {
		kind := kindPod
		if g != nil && p.Spec.SchedulingGroup != nil {
			kind = kindPodGroup
		}
		return newUnit([]*v1.Pod{p}, g.priority(p), kind, now)
	}
	if g == nil {
		return "", single
	}
	kind, ns, name, ok := g.stages.VictimGroup(g.index, p)
	if !ok {
		return "", single
	}
	key = kind + "/" + preempt.Key(ns, name)
	return key, func() *unit {
		members := g.scheduledUnder(kind, ns, name)
		if len(members) == 0 {
			return single()
		}
		k := kindPodGroup
		if kind == "CompositePodGroup" {
			k = kindCompositePodGroup
		}
		return newUnit(members, g.priority(p), k, now)
	}
}

// scheduledUnder is every bound member of every leaf pod group under the
// group kind/namespace/name (upstream's GetPodGroupStates walk, and each
// state's ScheduledPods): children composites first, then pod groups,
// each in name order, members in (namespace, name) order. Like upstream's
// walk it gives up below WorkloadMaxTreeDepth levels.
func (g *groups) scheduledUnder(kind, namespace, name string) []*v1.Pod {
	var out []*v1.Pod
	var walk func(kind, name string, depth int)
	walk = func(kind, name string, depth int) {
		if depth >= maxTreeDepth {
			return
		}
		if kind == "PodGroup" || !g.composite {
			out = append(out, g.members(namespace, name)...)
			return
		}
		var pgs, cpgs []string
		for _, cpg := range g.c.CompositePodGroups {
			if cpg.Namespace == namespace && preempt.CompositePodGroupParent(cpg) == name {
				cpgs = append(cpgs, cpg.Name)
			}
		}
		for _, pg := range g.c.PodGroups {
			if pg.Namespace == namespace && preempt.PodGroupParent(pg) == name {
				pgs = append(pgs, pg.Name)
			}
		}
		sort.Strings(cpgs)
		sort.Strings(pgs)
		for _, c := range cpgs {
			walk("CompositePodGroup", c, depth+1)
		}
		for _, pg := range pgs {
			walk("PodGroup", pg, depth+1)
		}
	}
	walk(kind, name, 0)
	return out
}

// members are the bound pods of pod group namespace/name, in (namespace,
// name) order (PodGroupState.ScheduledPods, pinned).
func (g *groups) members(namespace, name string) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range g.c.Pods {
		if pg, ok := preempt.PodGroupName(p); ok && pg == name && p.Namespace == namespace && preempt.IsBound(p) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// unitsOn is getCrossNodesVictims over nodes: the units of the pods bound
// to them, each once, in the order of their first pod.
func (ev *evaluator) unitsOn(g *groups, nodes []string, now time.Time) []*unit {
	var out []*unit
	seen := map[string]bool{}
	for _, node := range nodes {
		for _, p := range ev.bound[node] {
			key, u := g.unitOf(p, now)
			if key != "" {
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			out = append(out, u())
		}
	}
	return out
}

// splitUnitsByPDBViolation is upstream's FilterVictimsWithPDBViolation
// over units: a unit violates when any of its pods does, and counts
// every pod that does (splitByPDBViolation's walk, pod by pod, budgets
// shared by all units).
func (ev *evaluator) splitUnitsByPDBViolation(units []*unit) (violating []*unit, counts []int, nonViolating []*unit) {
	var pods []*v1.Pod
	for _, u := range units {
		pods = append(pods, u.pods...)
	}
	bad, _ := ev.splitByPDBViolation(pods)
	isBad := map[*v1.Pod]bool{}
	for _, p := range bad {
		isBad[p] = true
	}
	for _, u := range units {
		n := 0
		for _, p := range u.pods {
			if isBad[p] {
				n++
			}
		}
		if n > 0 {
			violating = append(violating, u)
			counts = append(counts, n)
		} else {
			nonViolating = append(nonViolating, u)
		}
	}
	return violating, counts, nonViolating
}

// flatten is the victims' pods in unit order, as upstream returns them:
// each with its own priority and its pod group.
func flatten(g *groups, units []*unit) []preempt.Victim {
	out := []preempt.Victim{}
	for _, u := range units {
		for _, p := range u.pods {
			out = append(out, preempt.VictimOf(p))
		}
	}
	return out
}

// compositePodGroupGate is the gate under which upstream reads
// CompositePodGroups.
const compositePodGroupGate = preempt.CompositePodGroupGate

// maxTreeDepth is the depth below which upstream's walk of a hierarchy
// gives up.
const maxTreeDepth = schedulingv1beta1.WorkloadMaxTreeDepth
