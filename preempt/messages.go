package preempt

import (
	"fmt"
	"sort"
	"strings"
)

// Upstream's message formats, shared by the implementations written here.

// AggregateMessage is utilerrors.NewAggregate(errs).Error().
func AggregateMessage(msgs []string) string {
	if len(msgs) == 1 {
		return msgs[0]
	}
	var uniq []string
	seen := map[string]bool{}
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			uniq = append(uniq, m)
		}
	}
	if len(uniq) == 1 {
		return uniq[0]
	}
	return "[" + strings.Join(uniq, ", ") + "]"
}

// FitErrorMessage is framework.FitError.Error() for the dry run's statuses:
// a histogram of reasons over all nodes, where nodes without a status count
// as "Preemption is not helpful for scheduling".
func FitErrorMessage(numAllNodes int, statuses []NodeStatus) string {
	counts := map[string]int{}
	for _, s := range statuses {
		for _, r := range s.Reasons {
			counts[r]++
		}
	}
	if len(statuses) < numAllNodes {
		counts["Preemption is not helpful for scheduling"] += numAllNodes - len(statuses)
	}
	var parts []string
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%v %v", n, r))
	}
	sort.Strings(parts)
	msg := fmt.Sprintf("0/%v nodes are available:", numAllNodes)
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}

// SuccessMessage is the message of Evaluator.Preempt's Success status
// (v1.37), without DefaultPreemption's "preemption: " prefix.
func SuccessMessage(node string, numVictims int) string {
	return fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", node, numVictims)
}
