// Package explain says why a preemption decision is what it is, for
// `compare decide -explain`: the dry run's sampling window, every
// candidate's five criteria as upstream scores them (with the reference's
// own PickCriteria and Pick, so there is no scoring of its own), why every
// other node is not a candidate, the events upstream records; for a gang
// (Gang), its groups in the scheduling function's order, each member's
// node and the victim units preempted and reprieved. Pod and Gang build an
// explanation; WriteText and WriteGangText print it for people.
package explain

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// Explanation says why a decision is what it is: which nodes the dry run
// looked at (the sampling window), every candidate's five criteria and the
// one that eliminated it, why every other node was not a candidate, and
// the events upstream would emit.
type Explanation struct {
	Implementation string `json:"implementation"`
	Status         string `json:"status"`
	// Window is the dry run's sampling window; nil when no dry run ran.
	Window        *Window                `json:"window,omitempty"`
	Candidates    []CandidateExplanation `json:"candidates"`
	NotCandidates []NodeExplanation      `json:"notCandidates"`
	// ExtendersChanged: extenders ran and replaced the candidates; the
	// ranking is of the dry run's candidates, the choice of the extenders'.
	ExtendersChanged bool    `json:"extendersChanged,omitempty"`
	Events           []Event `json:"events"`

	criteria []string // the names of the criteria, then finalTie
}

// Window is the dry run's sampling: the potential nodes (those whose
// filter status is Unschedulable, in name order), where the dry run
// started, how many candidates it wanted and how many nodes it visited
// before it stopped.
type Window struct {
	PotentialNodes int      `json:"potentialNodes"`
	Offset         int32    `json:"offset"`
	NumCandidates  int32    `json:"numCandidates"`
	Visited        int      `json:"visited"`
	FirstVisited   string   `json:"firstVisited,omitempty"`
	LastVisited    string   `json:"lastVisited,omitempty"`
	NotVisited     []string `json:"notVisited"`
}

// finalTie names the last step of pickOneNodeForPreemption, after its
// criteria (reference.PickCriteria).
const finalTie = "finalTie"

var criterionText = map[string]string{
	"pdbViolations":   "has fewer PDB violations",
	"highestPriority": "has a lower highest victim priority",
	"prioritySum":     "has a smaller sum of victim priorities",
	"numVictims":      "has fewer victims",
	"latestStartTime": "has a later start of its highest-priority victims",
	"finalTie":        "won the final tie among equals (the contract: first in list order; upstream: at random)",
}

// CandidateExplanation is one candidate's five criteria (the scores
// upstream compares; higher wins) and its fate.
type CandidateExplanation struct {
	Node             string `json:"node"`
	NumPDBViolations int    `json:"numPDBViolations"`
	HighestPriority  int32  `json:"highestPriority"`
	// PrioritySum adds MaxInt32+1 to each victim's priority, as upstream.
	PrioritySum int64 `json:"prioritySum"`
	NumVictims  int   `json:"numVictims"`
	// EarliestStartOfHighest is the earliest start time among the victims
	// of the highest priority (later is better).
	EarliestStartOfHighest time.Time `json:"earliestStartOfHighest"`
	Chosen                 bool      `json:"chosen"`
	// EliminatedBy is the criterion on which it lost, Against the node
	// that beat it there (the first best in list order).
	EliminatedBy string `json:"eliminatedBy,omitempty"`
	Against      string `json:"against,omitempty"`

	// Units are the candidate's victims as preemption takes them under
	// GenericWorkload (absent otherwise): a pod on its own, or a group
	// whose disruption mode is All with every scheduled member, on every
	// node. Eligibility and the reprieve order read a unit's priority.
	Units []UnitExplanation `json:"units,omitempty"`

	scores []int64 // the reference's score on each criterion
}

// UnitExplanation is one victim unit of a candidate.
type UnitExplanation struct {
	// Kind is Pod, PodGroup or CompositePodGroup (the highest group of the
	// pod's hierarchy whose disruption mode is All).
	Kind string `json:"kind"`
	// Name is namespace/name of the pod or group.
	Name string `json:"name"`
	// PodGroup is the group of a Pod unit that is a Single-mode member.
	PodGroup string `json:"podGroup,omitempty"`
	// Priority is the unit's: its group's priority for a group member,
	// the pod's own otherwise.
	Priority int32 `json:"priority"`
	// Pods are the unit's pods, namespace/name@node, in the victims'
	// order.
	Pods []string `json:"pods"`
	// RemoteNodes are the nodes other than the candidate's that lose a
	// pod with the unit.
	RemoteNodes []string `json:"remoteNodes,omitempty"`
}

// units groups a candidate's victims into units, under GenericWorkload.
func units(c *preempt.Cluster, cfg preempt.Config, node string, victims []preempt.Victim) []UnitExplanation {
	if !cfg.FeatureGates[preempt.GenericWorkloadGate] {
		return nil
	}
	grouped := false
	for _, v := range victims {
		grouped = grouped || v.PodGroup != ""
	}
	if !grouped {
		return nil
	}
	x := preempt.NewPodGroupIndex(c, cfg.FeatureGates[preempt.CompositePodGroupGate])
	byKey := make(map[string]*v1.Pod, len(c.Pods))
	for _, p := range c.Pods {
		byKey[preempt.Key(p.Namespace, p.Name)] = p
	}
	var out []UnitExplanation
	at := map[string]int{}
	for _, v := range victims {
		key := preempt.Key(v.Namespace, v.Name)
		p := byKey[key]
		if p == nil {
			continue
		}
		u := UnitExplanation{Kind: "Pod", Name: key, PodGroup: v.PodGroup, Priority: x.VictimPriority(p)}
		if kind, ns, name, ok := x.GroupKey(p); ok {
			u = UnitExplanation{Kind: kind, Name: preempt.Key(ns, name), Priority: x.VictimPriority(p)}
		}
		id := u.Kind + "/" + u.Name
		i, seen := at[id]
		if !seen {
			i = len(out)
			at[id] = i
			out = append(out, u)
		}
		out[i].Pods = append(out[i].Pods, key+"@"+p.Spec.NodeName)
		if n := p.Spec.NodeName; n != node && !slices.Contains(out[i].RemoteNodes, n) {
			out[i].RemoteNodes = append(out[i].RemoteNodes, n)
		}
	}
	for i := range out {
		sort.Strings(out[i].RemoteNodes)
	}
	return out
}

// NodeExplanation is why a node is not a candidate: the filter phase found
// it UnschedulableAndUnresolvable, or the dry run visited it and found no
// way, or the dry run never visited it.
type NodeExplanation struct {
	Node    string   `json:"node"`
	Stage   string   `json:"stage"` // filter, dryRun, notVisited
	Code    string   `json:"code,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Claims are the preemptor's claims DynamicResources cannot satisfy
	// there, when its status is the reason (ClaimBlock).
	Claims []ClaimBlock `json:"claims,omitempty"`
}

// Event is one event upstream records.
type Event struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Object  string `json:"object"`
	Message string `json:"message"`
}

// noteLengthLimit is the API's limit on an event message, which the
// scheduler truncates to.
const noteLengthLimit = 1024

// Pod builds the explanation of o, implementation impl's decision for pod
// on cluster c under cfg.
func Pod(impl string, o harness.Result, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) Explanation {
	d := o.Decision
	ex := Explanation{Implementation: impl, Status: string(d.Status), Candidates: []CandidateExplanation{}, NotCandidates: []NodeExplanation{}, Events: []Event{}}
	filterStatus := map[string]preempt.NodeStatus{}
	for _, s := range o.Filter.NodeStatuses {
		filterStatus[s.Node] = s
	}
	names := make([]string, 0, len(c.Nodes))
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	if d.Status == preempt.Schedulable {
		for _, n := range names {
			if s, ok := filterStatus[n]; ok {
				ex.NotCandidates = append(ex.NotCandidates, NodeExplanation{Node: n, Stage: "filter", Code: string(s.Code), Reasons: s.Reasons})
			}
		}
		return ex
	}

	// The sampling window.
	var potential []string
	for _, n := range names {
		if s, ok := filterStatus[n]; ok && s.Code == preempt.Unschedulable {
			potential = append(potential, n)
		}
	}
	visited := map[string]bool{}
	for _, cand := range d.Candidates {
		visited[cand.Node] = true
	}
	dryRunStatus := map[string]preempt.NodeStatus{}
	for _, s := range d.NodeStatuses {
		visited[s.Node] = true
		dryRunStatus[s.Node] = s
	}
	if len(potential) > 0 && d.Eligible && o.Request != nil {
		w := &Window{PotentialNodes: len(potential), Offset: int32(int(o.Request.Offset) % len(potential)), NumCandidates: cfg.NumCandidates(int32(len(potential))), NotVisited: []string{}}
		for i := range potential {
			n := potential[(int(w.Offset)+i)%len(potential)]
			if visited[n] {
				if w.FirstVisited == "" {
					w.FirstVisited = n
				}
				w.LastVisited = n
				w.Visited++
			} else {
				w.NotVisited = append(w.NotVisited, n)
			}
		}
		ex.Window = w
	}

	// Every node that is not a candidate.
	for _, n := range names {
		if visited[n] {
			if s, ok := dryRunStatus[n]; ok {
				ex.NotCandidates = append(ex.NotCandidates, NodeExplanation{Node: n, Stage: "dryRun", Code: string(s.Code), Reasons: s.Reasons})
			}
			continue
		}
		if s, ok := filterStatus[n]; ok && s.Code != preempt.Unschedulable {
			ex.NotCandidates = append(ex.NotCandidates, NodeExplanation{Node: n, Stage: "filter", Code: string(s.Code), Reasons: s.Reasons})
			continue
		}
		ex.NotCandidates = append(ex.NotCandidates, NodeExplanation{Node: n, Stage: "notVisited"})
	}

	// The claims that block a node (DynamicResources' reasons).
	now := time.Time{}
	if o.Request != nil {
		now = o.Request.Now
	}
	var ce *claimExplainer
	for i := range ex.NotCandidates {
		nc := &ex.NotCandidates[i]
		if !draBlocked(nc.Reasons) {
			continue
		}
		if ce == nil {
			ce = newClaimExplainer(c, pod, now)
		}
		for _, n := range c.Nodes {
			if n.Name == nc.Node {
				nc.Claims = ce.blocks(n)
			}
		}
	}

	// The candidates, ranked as pickOneNodeForPreemption ranks them.
	ex.Candidates, ex.criteria = rank(d.Candidates, reference.PickCriteria(c, now))
	for i := range ex.Candidates {
		if i < len(d.Candidates) {
			ex.Candidates[i].Units = units(c, cfg, d.Candidates[i].Node, d.Candidates[i].Victims)
		}
	}
	chose(ex.Candidates, d.NominatedNode)
	if len(cfg.Extenders) > 0 && d.NominatedNode != "" {
		ex.ExtendersChanged = true
		for i := range ex.Candidates {
			ex.Candidates[i].Chosen = ex.Candidates[i].Node == d.NominatedNode
		}
	}

	// Events.
	msg := preempt.FitErrorMessage(len(c.Nodes), o.Filter.NodeStatuses)
	if d.Message != "" {
		msg += " preemption: " + d.Message
	}
	if len(msg) > noteLengthLimit {
		msg = msg[:noteLengthLimit-4] + " ..."
	}
	ex.Events = append(ex.Events, Event{Type: v1.EventTypeWarning, Reason: "FailedScheduling", Object: "pod/" + preempt.Key(pod.Namespace, pod.Name), Message: msg})
	for _, a := range d.Actions {
		if a.Verb == "delete" && a.Error == "" {
			ex.Events = append(ex.Events, Event{Type: v1.EventTypeNormal, Reason: "Preempted", Object: "pod/" + preempt.Key(a.Namespace, a.Name),
				Message: fmt.Sprintf("Preempted by pod %v on node %v", pod.UID, d.NominatedNode)})
		}
	}
	return ex
}

// rank scores the candidates with the reference's own criteria (crit)
// and ranks them with its own pick (reference.Pick): the chosen candidate
// and, for every other, the criterion it lost on and the node that beat
// it. It returns the criteria's names, then finalTie.
func rank(cands []preempt.Candidate, crit []reference.Criterion) ([]CandidateExplanation, []string) {
	names := make([]string, 0, len(crit)+1)
	for _, c := range crit {
		names = append(names, c.Name)
	}
	names = append(names, finalTie)
	out := make([]CandidateExplanation, 0, len(cands))
	for _, c := range cands {
		ce := CandidateExplanation{Node: c.Node, NumPDBViolations: c.NumPDBViolations, NumVictims: len(c.Victims)}
		if len(c.Victims) == 0 { // not a dry run's candidate: nothing to score
			return append(out, ce), names
		}
		for _, cr := range crit {
			ce.scores = append(ce.scores, cr.Score(&c))
		}
		ce.HighestPriority = int32(-ce.scores[1])
		ce.PrioritySum = -ce.scores[2]
		ce.EarliestStartOfHighest = reference.EarliestStart(ce.scores[4])
		out = append(out, ce)
	}
	if len(out) != len(cands) {
		return out, names
	}
	winner, losses := reference.Pick(cands, crit)
	if winner < 0 {
		return out, names
	}
	out[winner].Chosen = true
	for i, l := range losses {
		if i != winner {
			out[i].EliminatedBy, out[i].Against = names[l.Criterion], cands[l.Against].Node
		}
	}
	return out, names
}

// chose marks node, the decision's, as the chosen candidate when the
// ranking's winner is another among the final tie (upstream breaks it at
// random): the others of the tie lost to node.
func chose(cs []CandidateExplanation, node string) {
	idx := -1
	for i := range cs {
		if cs[i].Node == node {
			idx = i
		}
	}
	if idx < 0 || cs[idx].Chosen || cs[idx].EliminatedBy != finalTie {
		return
	}
	for i := range cs {
		if cs[i].Chosen || cs[i].EliminatedBy == finalTie {
			cs[i].Chosen, cs[i].EliminatedBy, cs[i].Against = false, finalTie, node
		}
	}
	cs[idx].Chosen, cs[idx].EliminatedBy, cs[idx].Against = true, "", ""
}

// score is c's score on criterion ci; 0 on the final tie, where all are
// equal.
func (c CandidateExplanation) score(ci int) int64 {
	if ci < len(c.scores) {
		return c.scores[ci]
	}
	return 0
}

// nearestRivals is how many eliminated candidates the text shows per
// criterion (all of them are in the JSON).
const nearestRivals = 3

// writeUnits prints the chosen candidate's victim units, one a line.
func writeUnits(w io.Writer, us []UnitExplanation) {
	for _, u := range us {
		what := u.Kind + " " + u.Name
		if u.PodGroup != "" {
			what += " (Single-mode member of " + u.PodGroup + ")"
		}
		fmt.Fprintf(w, "           unit %s, priority %d: %s", what, u.Priority, strings.Join(u.Pods, ", "))
		if len(u.RemoteNodes) > 0 {
			fmt.Fprintf(w, " (also evicts on %s)", strings.Join(u.RemoteNodes, ", "))
		}
		fmt.Fprintln(w)
	}
}

// writeExplanation prints ex for people: the window, the chosen node and,
// for each criterion, the nearest rivals it eliminated, then the other
// nodes grouped by reason.
// WriteText prints ex for people (-explain -o text).
func WriteText(w io.Writer, ex Explanation) {
	fmt.Fprintf(w, "explanation (%s): %s\n", ex.Implementation, ex.Status)
	if win := ex.Window; win != nil {
		fmt.Fprintf(w, "sampling window: %d potential nodes, offset %d, %d candidates wanted; visited %d", win.PotentialNodes, win.Offset, win.NumCandidates, win.Visited)
		if win.Visited > 0 {
			fmt.Fprintf(w, " (%s .. %s)", win.FirstVisited, win.LastVisited)
		}
		fmt.Fprintf(w, ", %d never visited\n", len(win.NotVisited))
	}
	if ex.ExtendersChanged {
		fmt.Fprintf(w, "extenders ran: the ranking below is of the dry run's candidates; the choice is made among the extenders' answer\n")
	}
	if len(ex.Candidates) > 0 {
		fmt.Fprintf(w, "candidates (%d): pdbViolations highestPriority prioritySum numVictims earliestStartOfHighest\n", len(ex.Candidates))
		line := func(c CandidateExplanation) string {
			return fmt.Sprintf("%s: %d %d %d %d %s", c.Node, c.NumPDBViolations, c.HighestPriority, c.PrioritySum, c.NumVictims, c.EarliestStartOfHighest.Format(time.RFC3339))
		}
		for _, c := range ex.Candidates {
			if c.Chosen {
				fmt.Fprintf(w, "  chosen   %s\n", line(c))
				writeUnits(w, c.Units)
			}
		}
		// The nearest rivals first: the last criterion to separate them,
		// and within it the closest scores.
		for ci := len(ex.criteria) - 1; ci >= 0; ci-- {
			crit := ex.criteria[ci]
			var lost []CandidateExplanation
			for _, c := range ex.Candidates {
				if c.EliminatedBy == crit {
					lost = append(lost, c)
				}
			}
			if len(lost) == 0 {
				continue
			}
			sort.SliceStable(lost, func(i, j int) bool { return lost[i].score(ci) > lost[j].score(ci) })
			fmt.Fprintf(w, "  %d eliminated by %s (%s %s):\n", len(lost), crit, lost[0].Against, criterionText[crit])
			for _, c := range lost[:min(len(lost), nearestRivals)] {
				fmt.Fprintf(w, "           %s\n", line(c))
			}
			if len(lost) > nearestRivals {
				fmt.Fprintf(w, "           ... %d more\n", len(lost)-nearestRivals)
			}
		}
	}
	groups := map[string][]string{}
	var keys []string
	for _, n := range ex.NotCandidates {
		key := n.Stage
		if n.Stage == "notVisited" {
			key += " (the dry run stopped once it had its candidates)"
		}
		if n.Code != "" {
			key += " " + n.Code + ": " + strings.Join(n.Reasons, ", ")
		}
		if _, ok := groups[key]; !ok {
			keys = append(keys, key)
		}
		groups[key] = append(groups[key], n.Node)
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		fmt.Fprintf(w, "not candidates (%d):\n", len(ex.NotCandidates))
	}
	for _, k := range keys {
		nodes := groups[k]
		shown := strings.Join(nodes[:min(len(nodes), 3)], ", ")
		if len(nodes) > 3 {
			shown += fmt.Sprintf(", ... %d more", len(nodes)-3)
		}
		fmt.Fprintf(w, "  %d %s (%s)\n", len(nodes), k, shown)
	}
	for _, n := range ex.NotCandidates {
		if len(n.Claims) > 0 {
			fmt.Fprintf(w, "  claims on %s: %s\n", n.Node, formatBlocks(n.Claims))
		}
	}
	for _, e := range ex.Events {
		fmt.Fprintf(w, "event %s %s %s: %s\n", e.Type, e.Reason, e.Object, e.Message)
	}
	fmt.Fprintln(w)
}
