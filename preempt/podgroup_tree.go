//go:build !preemptbench_v1_36

package preempt

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupNode is one group of a gang preemptor's hierarchy, as upstream's
// scheduling queue builds it (framework.PodGroupInfo, workload_forest.go):
// a leaf PodGroup with its unscheduled members, or a CompositePodGroup
// with its child groups.
type GroupNode struct {
	PodGroup          *PodGroup
	CompositePodGroup *CompositePodGroup
	// Children of a composite, in the order upstream's composite
	// algorithm takes them (PodGroupInfo.GetChildGroups): by creation
	// time, then by name. A PodGroup and a CompositePodGroup of the same
	// name and creation time are equal to that sort, which leaves them in
	// the map order of the queue's children set; the project puts the
	// CompositePodGroup first (docs/divergences.md).
	Children []*GroupNode
	// Members of a leaf: indexes into the request's Pods, in the
	// request's order (the group's queue order).
	Members []int
}

// Name is the group's "namespace/name".
func (n *GroupNode) Name() string {
	if n.CompositePodGroup != nil {
		return Key(n.CompositePodGroup.Namespace, n.CompositePodGroup.Name)
	}
	return Key(n.PodGroup.Namespace, n.PodGroup.Name)
}

// MinCount is GangScheduling's getMinCount: a PodGroup's minCount, a
// CompositePodGroup's minGroupCount, 1 under a basic policy.
func (n *GroupNode) MinCount() int {
	if cpg := n.CompositePodGroup; cpg != nil {
		if g := cpg.Spec.SchedulingPolicy.Gang; g != nil {
			return int(g.MinGroupCount)
		}
		return 1
	}
	if g := n.PodGroup.Spec.SchedulingPolicy.Gang; g != nil {
		return int(g.MinCount)
	}
	return 1
}

// TopologyConstrained reports whether the group names a topology
// constraint (TopologyPlacementGenerator's getTopologyKey).
func (n *GroupNode) TopologyConstrained() bool {
	if cpg := n.CompositePodGroup; cpg != nil {
		return cpg.Spec.SchedulingConstraints != nil && len(cpg.Spec.SchedulingConstraints.Topology) > 0
	}
	return n.PodGroup.Spec.SchedulingConstraints != nil && len(n.PodGroup.Spec.SchedulingConstraints.Topology) > 0
}

// Walk calls f on n and every group below it, depth first, children in
// order.
func (n *GroupNode) Walk(f func(*GroupNode)) {
	f(n)
	for _, c := range n.Children {
		c.Walk(f)
	}
}

// PreemptorPriority is the gang's priority: its PodGroup's
// (util.PodGroupPriority) or its CompositePodGroup's.
func (r *PodGroupRequest) PreemptorPriority() int32 {
	if r.CompositePodGroup != nil {
		return CompositePodGroupPriority(r.CompositePodGroup)
	}
	return PodGroupPriority(r.PodGroup)
}

// PreemptorName is the gang's "namespace/name".
func (r *PodGroupRequest) PreemptorName() string {
	if r.CompositePodGroup != nil {
		return Key(r.CompositePodGroup.Namespace, r.CompositePodGroup.Name)
	}
	return Key(r.PodGroup.Namespace, r.PodGroup.Name)
}

// WithGroups is c with the request's group objects in place of the
// cluster's of the same names (and added where the cluster has none):
// the groups as the scheduler holds them while it schedules the gang.
func (r *PodGroupRequest) WithGroups(c *Cluster) *Cluster {
	out := *c
	mine := map[string]bool{}
	out.PodGroups = nil
	if r.PodGroup != nil {
		out.PodGroups = append(out.PodGroups, r.PodGroup)
		mine[Key(r.PodGroup.Namespace, r.PodGroup.Name)] = true
	}
	for _, pg := range r.PodGroups {
		out.PodGroups = append(out.PodGroups, pg)
		mine[Key(pg.Namespace, pg.Name)] = true
	}
	for _, pg := range c.PodGroups {
		if !mine[Key(pg.Namespace, pg.Name)] {
			out.PodGroups = append(out.PodGroups, pg)
		}
	}
	if r.CompositePodGroup != nil {
		out.CompositePodGroups = []*CompositePodGroup{r.CompositePodGroup}
		for _, cpg := range c.CompositePodGroups {
			if cpg.Namespace != r.CompositePodGroup.Namespace || cpg.Name != r.CompositePodGroup.Name {
				out.CompositePodGroups = append(out.CompositePodGroups, cpg)
			}
		}
	}
	return &out
}

// Tree is the gang's hierarchy in c (the request's groups in place,
// WithGroups), checked against the request's gates:
//   - a CompositePodGroup preemptor needs CompositePodGroup=true (which
//     needs TopologyAwareWorkloadScheduling); its children are the
//     PodGroups and CompositePodGroups naming it as their parent, and so
//     on down (a group met twice, in a cycle, is left out as upstream's
//     queue leaves it out, at most WorkloadMaxTreeDepth levels);
//   - with CompositePodGroup on, a PodGroup preemptor must have no
//     parent (the scheduler schedules and preempts for the root);
//   - every member belongs to a leaf of the tree, and every PodGroup of
//     the request is one;
//   - with TopologyAwareWorkloadScheduling on, no group of the tree has
//     a topology constraint: without one the placement generator gives
//     the one placement of every node, and the scheduler's placement
//     algorithm is its default algorithm (what the implementations
//     model); with one it generates a placement per topology domain and
//     scores them, which no implementation models (an error says so).
func (r *PodGroupRequest) Tree(c *Cluster) (*GroupNode, error) {
	gates := r.Config.FeatureGates
	composite := gates[CompositePodGroupGate]
	var root *GroupNode
	switch {
	case r.CompositePodGroup != nil && !composite:
		return nil, fmt.Errorf("a CompositePodGroup preemptor (%s) needs %s=true", r.PreemptorName(), CompositePodGroupGate)
	case r.CompositePodGroup != nil:
		root = buildGroupTree(r.WithGroups(c), r.CompositePodGroup, map[string]bool{})
	default:
		if parent := PodGroupParent(r.PodGroup); composite && parent != "" {
			return nil, fmt.Errorf("PodGroup %s has the parent CompositePodGroup %q: with %s=true the scheduler schedules and preempts for the root of its hierarchy, not for the PodGroup alone",
				r.PreemptorName(), parent, CompositePodGroupGate)
		}
		root = &GroupNode{PodGroup: r.PodGroup}
	}
	if r.PodGroup == nil && len(r.PodGroups) == 0 {
		return nil, fmt.Errorf("CompositePodGroup %s: the request holds none of its PodGroups", r.PreemptorName())
	}
	leaves := map[string]*GroupNode{}
	root.Walk(func(n *GroupNode) {
		if n.PodGroup != nil {
			leaves[Key(n.PodGroup.Namespace, n.PodGroup.Name)] = n
		}
	})
	for _, pg := range r.PodGroups {
		if leaves[Key(pg.Namespace, pg.Name)] == nil {
			return nil, fmt.Errorf("PodGroup %s is not under CompositePodGroup %s", Key(pg.Namespace, pg.Name), r.PreemptorName())
		}
	}
	for i, p := range r.Pods {
		name, _ := PodGroupName(p)
		leaf := leaves[Key(p.Namespace, name)]
		if leaf == nil {
			return nil, fmt.Errorf("member %s belongs to pod group %s, not to the preemptor %s", Key(p.Namespace, p.Name), Key(p.Namespace, name), r.PreemptorName())
		}
		leaf.Members = append(leaf.Members, i)
	}
	if gates[TopologyAwareGate] {
		var constrained []string
		root.Walk(func(n *GroupNode) {
			if n.TopologyConstrained() {
				constrained = append(constrained, n.Name())
			}
		})
		if len(constrained) > 0 {
			return nil, fmt.Errorf("%s has a topology constraint: TopologyAwareWorkloadScheduling's placements (one per topology domain, scored) are not modelled, only its single placement of every node", constrained[0])
		}
	}
	return root, nil
}

// buildGroupTree is workloadForest.buildPodGroupInfoForCPG for cpg in c:
// a group already in the tree is left out (a cycle, which upstream's
// queue logs and leaves out).
func buildGroupTree(c *Cluster, cpg *CompositePodGroup, seen map[string]bool) *GroupNode {
	n := &GroupNode{CompositePodGroup: cpg}
	seen["c/"+Key(cpg.Namespace, cpg.Name)] = true
	// The children: the composites in name order, built depth first (a
	// composite met again, in a cycle, is left out), then the PodGroups;
	// then in GetChildGroups' order.
	var composites []*CompositePodGroup
	for _, child := range c.CompositePodGroups {
		if child.Namespace == cpg.Namespace && CompositePodGroupParent(child) == cpg.Name {
			composites = append(composites, child)
		}
	}
	sort.Slice(composites, func(i, j int) bool { return composites[i].Name < composites[j].Name })
	for _, child := range composites {
		if seen["c/"+Key(child.Namespace, child.Name)] {
			continue
		}
		n.Children = append(n.Children, buildGroupTree(c, child, seen))
	}
	for _, pg := range c.PodGroups {
		if pg.Namespace == cpg.Namespace && PodGroupParent(pg) == cpg.Name && !seen["p/"+Key(pg.Namespace, pg.Name)] {
			seen["p/"+Key(pg.Namespace, pg.Name)] = true
			n.Children = append(n.Children, &GroupNode{PodGroup: pg})
		}
	}
	sort.SliceStable(n.Children, func(i, j int) bool {
		a, b := n.Children[i].meta(), n.Children[j].meta()
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return n
}

// meta is the group's object metadata.
func (n *GroupNode) meta() *metav1.ObjectMeta {
	if n.CompositePodGroup != nil {
		return &n.CompositePodGroup.ObjectMeta
	}
	return &n.PodGroup.ObjectMeta
}

// TopologyAwareGate is TopologyAwareWorkloadScheduling, which
// CompositePodGroup needs.
const TopologyAwareGate = "TopologyAwareWorkloadScheduling"
