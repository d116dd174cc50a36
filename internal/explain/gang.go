package explain

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/preemptbench/preemptbench/preempt"
)

// GangExplanation says why a gang decision is what it is: each group of
// the preemptor in the order the scheduling function takes them (its
// minCount, its members already scheduled, where each unscheduled member
// was placed), and the potential victims, the units below the gang's
// priority anywhere in the cluster, split into those preempted (in the
// decision's order) and those the reprieve kept.
type GangExplanation struct {
	// Priority is the gang's: its PodGroup's or CompositePodGroup's.
	Priority int32              `json:"priority"`
	Groups   []GroupExplanation `json:"groups"`
	// Preempted are the victim units, Reprieved the other potential
	// victims (by name: the reprieve took them by MoreImportantVictim,
	// PDB-violating first).
	Preempted []UnitExplanation `json:"preempted"`
	Reprieved []UnitExplanation `json:"reprieved"`
}

// GroupExplanation is one group of the gang's hierarchy.
type GroupExplanation struct {
	Kind string `json:"kind"` // PodGroup or CompositePodGroup
	Name string `json:"name"`
	// Depth is 0 for the preemptor, 1 for its children, and so on.
	Depth int `json:"depth"`
	// MinCount is GangScheduling's: minCount, minGroupCount, or 1 for a
	// basic policy.
	MinCount int `json:"minCount"`
	// Scheduled counts a PodGroup's members already bound (they count
	// towards its minCount).
	Scheduled int `json:"scheduled,omitempty"`
	// Members are a PodGroup's unscheduled members in the cycle,
	// name@node ("@" alone when unplaced, or when the gang failed and
	// nothing is nominated).
	Members []string `json:"members,omitempty"`
	// Left are the members the cycle leaves out, each with why: being
	// deleted (skipped), or of another scheduler (never queued).
	Left []string `json:"left,omitempty"`
	// FailedChild marks, in a successful composite preemption, a PodGroup
	// whose placed and scheduled members miss its minCount: the scheduler
	// kept its placed members' proposals all the same
	// (docs/upstream-findings.md).
	FailedChild bool `json:"failedChild,omitempty"`
}

// GangDecision is what Gang reads of a gang's decision.
type GangDecision struct {
	Status      preempt.Code
	Nominations []preempt.Nomination
	Placement   []preempt.Nomination
	Skipped     []preempt.PodRef
	Victims     []preempt.Victim
}

// Gang builds the explanation of d, a decision on req in c; tree is the
// gang's group tree (PodGroupRequest.Tree).
func Gang(c *preempt.Cluster, req *preempt.PodGroupRequest, tree *preempt.GroupNode, d GangDecision) GangExplanation {
	cc := req.WithGroups(c)
	gates := req.Config.FeatureGates
	x := preempt.NewPodGroupIndex(cc, gates[preempt.CompositePodGroupGate])
	ex := GangExplanation{Priority: req.PreemptorPriority(), Groups: []GroupExplanation{}, Preempted: []UnitExplanation{}, Reprieved: []UnitExplanation{}}
	node := map[string]string{}
	for _, n := range append(append([]preempt.Nomination(nil), d.Placement...), d.Nominations...) {
		node[preempt.Key(n.Namespace, n.Name)] = n.Node
	}
	left := map[string]string{}
	for _, p := range d.Skipped {
		left[p.String()] = "being deleted: skipped"
	}
	if _, others := req.OfDefaultScheduler(); len(others) > 0 {
		for _, p := range others {
			left[p.String()] = "another scheduler's: never queued"
		}
	}
	var walk func(n *preempt.GroupNode, depth int)
	walk = func(n *preempt.GroupNode, depth int) {
		g := GroupExplanation{Name: n.Name(), Depth: depth, MinCount: n.MinCount(), Kind: "CompositePodGroup"}
		if pg := n.PodGroup; pg != nil {
			g.Kind = "PodGroup"
			for _, p := range c.Pods {
				if name, ok := preempt.PodGroupName(p); ok && preempt.IsBound(p) && name == pg.Name && p.Namespace == pg.Namespace {
					g.Scheduled++
				}
			}
			placed := 0
			for _, i := range n.Members {
				p := req.Pods[i]
				if why := left[preempt.Key(p.Namespace, p.Name)]; why != "" {
					g.Left = append(g.Left, preempt.Key(p.Namespace, p.Name)+" ("+why+")")
					continue
				}
				at := node[preempt.Key(p.Namespace, p.Name)]
				if at != "" {
					placed++
				}
				g.Members = append(g.Members, preempt.Key(p.Namespace, p.Name)+"@"+at)
			}
			g.FailedChild = d.Status == preempt.Success && req.CompositePodGroup != nil && placed+g.Scheduled < g.MinCount
		}
		ex.Groups = append(ex.Groups, g)
		for _, child := range n.Children {
			walk(child, depth+1)
		}
	}
	walk(tree, 0)

	if d.Status != preempt.Success || len(d.Victims) == 0 {
		// No reprieve ran: PodGroupPostFilter did not run, or did not
		// get that far, or the preemption is ongoing.
		return ex
	}
	victims := map[string]bool{}
	for _, v := range d.Victims {
		victims[preempt.Key(v.Namespace, v.Name)] = true
	}
	byUnit := map[string]*UnitExplanation{}
	unitOf := map[string]string{} // pod -> its unit's id
	var reprieved []*UnitExplanation
	for _, p := range c.Pods {
		if !preempt.IsBound(p) {
			continue
		}
		prio := x.VictimPriority(p)
		if prio >= ex.Priority {
			continue
		}
		key := preempt.Key(p.Namespace, p.Name)
		u := UnitExplanation{Kind: "Pod", Name: key, Priority: prio}
		if name, ok := preempt.PodGroupName(p); ok && x.PodGroup(p.Namespace, name) != nil {
			u.PodGroup = preempt.Key(p.Namespace, name)
		}
		if kind, ns, name, ok := x.GroupKey(p); ok {
			u = UnitExplanation{Kind: kind, Name: preempt.Key(ns, name), Priority: prio}
		}
		id := u.Kind + "/" + u.Name
		unitOf[key] = id
		if byUnit[id] == nil {
			byUnit[id] = &u
			if !victims[key] {
				reprieved = append(reprieved, &u)
			}
		}
		byUnit[id].Pods = append(byUnit[id].Pods, key+"@"+p.Spec.NodeName)
	}
	// The preempted units in the decision's order.
	seen := map[string]bool{}
	for _, v := range d.Victims {
		if id := unitOf[preempt.Key(v.Namespace, v.Name)]; id != "" && !seen[id] {
			seen[id] = true
			ex.Preempted = append(ex.Preempted, *byUnit[id])
		}
	}
	sort.Slice(reprieved, func(i, j int) bool {
		return reprieved[i].Kind+"/"+reprieved[i].Name < reprieved[j].Kind+"/"+reprieved[j].Name
	})
	for _, u := range reprieved {
		sort.Strings(u.Pods)
		ex.Reprieved = append(ex.Reprieved, *u)
	}
	return ex
}

// writeGangExplanation is -o text's explanation of a gang decision.
// WriteGangText prints ex for people (-explain -o text).
func WriteGangText(w io.Writer, ex GangExplanation) {
	fmt.Fprintf(w, "gang priority: %d\n", ex.Priority)
	for _, g := range ex.Groups {
		fmt.Fprintf(w, "%s%s %s: minCount %d", strings.Repeat("  ", g.Depth+1), g.Kind, g.Name, g.MinCount)
		if g.Scheduled > 0 {
			fmt.Fprintf(w, ", %d scheduled", g.Scheduled)
		}
		if g.FailedChild {
			fmt.Fprint(w, " (not met: a failed child, its placed members nominated all the same)")
		}
		fmt.Fprintln(w)
		for _, m := range g.Members {
			name, node, _ := strings.Cut(m, "@")
			if node == "" {
				node = "(unplaced)"
			}
			fmt.Fprintf(w, "%s  member %s -> %s\n", strings.Repeat("  ", g.Depth+1), name, node)
		}
		for _, m := range g.Left {
			fmt.Fprintf(w, "%s  member %s left out\n", strings.Repeat("  ", g.Depth+1), m)
		}
	}
	write := func(what string, us []UnitExplanation) {
		fmt.Fprintf(w, "%s: %d units\n", what, len(us))
		for _, u := range us {
			fmt.Fprintf(w, "  %s %s priority %d: %s\n", u.Kind, u.Name, u.Priority, strings.Join(u.Pods, " "))
		}
	}
	write("preempted", ex.Preempted)
	write("reprieved", ex.Reprieved)
}
