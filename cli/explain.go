package cli

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
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

// Criterion names, in pickOneNodeForPreemption's order.
var criteria = []string{"pdbViolations", "highestPriority", "prioritySum", "numVictims", "latestStartTime", "finalTie"}

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
}

// NodeExplanation is why a node is not a candidate: the filter phase found
// it UnschedulableAndUnresolvable, or the dry run visited it and found no
// way, or the dry run never visited it.
type NodeExplanation struct {
	Node    string   `json:"node"`
	Stage   string   `json:"stage"` // filter, dryRun, notVisited
	Code    string   `json:"code,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
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

// explain builds the explanation of o on cluster c.
func explain(o Outcome, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config) Explanation {
	d := o.Decision
	ex := Explanation{Implementation: o.Implementation, Status: string(d.Status), Candidates: []CandidateExplanation{}, NotCandidates: []NodeExplanation{}, Events: []Event{}}
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

	// The candidates, ranked as pickOneNodeForPreemption ranks them.
	now := time.Time{}
	if o.Request != nil {
		now = o.Request.Now
	}
	start := map[string]time.Time{}
	for _, p := range c.Pods {
		t := now
		if p.Status.StartTime != nil {
			t = p.Status.StartTime.Time
		}
		start[preempt.Key(p.Namespace, p.Name)] = t
	}
	for _, cand := range d.Candidates {
		ex.Candidates = append(ex.Candidates, scoreCandidate(cand, start, now))
	}
	rank(ex.Candidates)
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

func scoreCandidate(c preempt.Candidate, start map[string]time.Time, now time.Time) CandidateExplanation {
	ce := CandidateExplanation{Node: c.Node, NumPDBViolations: c.NumPDBViolations, NumVictims: len(c.Victims)}
	if len(c.Victims) == 0 {
		return ce
	}
	// Upstream's "highest" is the first victim's priority (victims come
	// most important first); the start time is GetEarliestPodStartTime's.
	ce.HighestPriority = c.Victims[0].Priority
	highest, earliest := c.Victims[0].Priority, startOf(c.Victims[0], start, now)
	for _, v := range c.Victims {
		ce.PrioritySum += int64(v.Priority) + int64(math.MaxInt32+1)
		t := startOf(v, start, now)
		switch {
		case v.Priority == highest && t.Before(earliest):
			earliest = t
		case v.Priority > highest:
			highest, earliest = v.Priority, t
		}
	}
	ce.EarliestStartOfHighest = earliest.UTC()
	return ce
}

func startOf(v preempt.Victim, start map[string]time.Time, now time.Time) time.Time {
	if t, ok := start[preempt.Key(v.Namespace, v.Name)]; ok {
		return t
	}
	return now
}

// score is candidate c's score on criterion i (higher wins), as upstream's
// score functions: the first Victims[0] priority is upstream's "highest".
func score(c *CandidateExplanation, i int) int64 {
	switch criteria[i] {
	case "pdbViolations":
		return -int64(c.NumPDBViolations)
	case "highestPriority":
		return -int64(c.HighestPriority)
	case "prioritySum":
		return -c.PrioritySum
	case "numVictims":
		return -int64(c.NumVictims)
	case "latestStartTime":
		return c.EarliestStartOfHighest.UnixNano()
	}
	return 0
}

// rank marks the chosen candidate and, for every other, the criterion it
// lost on and the node that beat it: each criterion keeps the candidates
// with the best score, in list order, until one is left; the first in list
// order wins the last tie.
func rank(cs []CandidateExplanation) {
	remaining := make([]int, len(cs))
	for i := range cs {
		remaining[i] = i
	}
	for crit := 0; crit < len(criteria)-1 && len(remaining) > 1; crit++ {
		best := int64(math.MinInt64)
		leader := -1
		for _, i := range remaining {
			if s := score(&cs[i], crit); s > best {
				best, leader = s, i
			}
		}
		var kept []int
		for _, i := range remaining {
			if score(&cs[i], crit) == best {
				kept = append(kept, i)
				continue
			}
			cs[i].EliminatedBy, cs[i].Against = criteria[crit], cs[leader].Node
		}
		remaining = kept
	}
	if len(remaining) == 0 {
		return
	}
	cs[remaining[0]].Chosen = true
	for _, i := range remaining[1:] {
		cs[i].EliminatedBy, cs[i].Against = "finalTie", cs[remaining[0]].Node
	}
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
	if idx < 0 || cs[idx].Chosen || cs[idx].EliminatedBy != "finalTie" {
		return
	}
	for i := range cs {
		if cs[i].Chosen || cs[i].EliminatedBy == "finalTie" {
			cs[i].Chosen, cs[i].EliminatedBy, cs[i].Against = false, "finalTie", node
		}
	}
	cs[idx].Chosen, cs[idx].EliminatedBy, cs[idx].Against = true, "", ""
}

// nearestRivals is how many eliminated candidates the text shows per
// criterion (all of them are in the JSON).
const nearestRivals = 3

// writeExplanation prints ex for people: the window, the chosen node and,
// for each criterion, the nearest rivals it eliminated, then the other
// nodes grouped by reason.
func writeExplanation(w io.Writer, ex Explanation) {
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
			}
		}
		// The nearest rivals first: the last criterion to separate them,
		// and within it the closest scores.
		for ci := len(criteria) - 1; ci >= 0; ci-- {
			crit := criteria[ci]
			var lost []CandidateExplanation
			for _, c := range ex.Candidates {
				if c.EliminatedBy == crit {
					lost = append(lost, c)
				}
			}
			if len(lost) == 0 {
				continue
			}
			sort.SliceStable(lost, func(i, j int) bool { return score(&lost[i], ci) > score(&lost[j], ci) })
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
	for _, e := range ex.Events {
		fmt.Fprintf(w, "event %s %s %s: %s\n", e.Type, e.Reason, e.Object, e.Message)
	}
	fmt.Fprintln(w)
}
