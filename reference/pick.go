package reference

import (
	"math"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/preempt"
)

// A Criterion is one of pickOneNodeForPreemption's criteria: a score of a
// candidate, higher is better.
type Criterion struct {
	Name  string
	Score func(c *preempt.Candidate) int64
}

// Criteria are pickOneNodeForPreemption's five criteria, in its order,
// with start times read by startOf (a victim's start, or now when it has
// none or is not in the cluster). Every candidate has at least one victim.
func criteria(startOf func(v preempt.Victim) time.Time) []Criterion {
	return []Criterion{
		{"pdbViolations", func(c *preempt.Candidate) int64 { return -int64(c.NumPDBViolations) }},
		// upstream's "highest" is the first victim's priority: victims come
		// most important first
		{"highestPriority", func(c *preempt.Candidate) int64 { return -int64(c.Victims[0].Priority) }},
		// each priority shifted by MaxInt32+1 to be non-negative
		{"prioritySum", func(c *preempt.Candidate) int64 {
			var sum int64
			for _, v := range c.Victims {
				sum += int64(v.Priority) + int64(math.MaxInt32+1)
			}
			return -sum
		}},
		{"numVictims", func(c *preempt.Candidate) int64 { return -int64(len(c.Victims)) }},
		{"latestStartTime", func(c *preempt.Candidate) int64 { return earliestStartOfHighest(c, startOf).UnixNano() }},
	}
}

// PickCriteria returns pickOneNodeForPreemption's five criteria on
// cluster c: what the reference's SelectCandidate scores, for a caller
// that shows the scores (compare decide -explain).
func PickCriteria(c *preempt.Cluster, now time.Time) []Criterion {
	byKey := make(map[string]*v1.Pod, len(c.Pods))
	for _, p := range c.Pods {
		byKey[podKey(p)] = p
	}
	return criteria(func(v preempt.Victim) time.Time { return startTime(byKey[preempt.Key(v.Namespace, v.Name)], now) })
}

// EarliestStart is the time the latestStartTime criterion scores, from
// its score.
func EarliestStart(score int64) time.Time { return time.Unix(0, score).UTC() }

// A Loss is why a candidate was not picked: the index of the criterion it
// lost on (len(criteria) for the final tie) and the candidate that beat it
// there, the first best in list order.
type Loss struct {
	Criterion, Against int
}

// Pick is pickOneNodeForPreemption over crit: each criterion in turn keeps
// the candidates with the best score until one is left, and the first in
// list order wins the last tie. It returns the index of the winner (-1
// when there is no candidate) and, for every candidate, its loss (the
// winner's is {-1, -1}).
func Pick(candidates []preempt.Candidate, crit []Criterion) (winner int, losses []Loss) {
	losses = make([]Loss, len(candidates))
	for i := range losses {
		losses[i] = Loss{-1, -1}
	}
	if len(candidates) == 0 {
		return -1, losses
	}
	remaining := make([]int, len(candidates))
	for i := range candidates {
		remaining[i] = i
	}
	for ci := 0; ci < len(crit) && len(remaining) > 1; ci++ {
		best, leader := int64(math.MinInt64), -1
		scores := make([]int64, len(remaining))
		for k, i := range remaining {
			scores[k] = crit[ci].Score(&candidates[i])
			if leader < 0 || scores[k] > best {
				best, leader = scores[k], i
			}
		}
		kept := remaining[:0:0]
		for k, i := range remaining {
			if scores[k] == best {
				kept = append(kept, i)
				continue
			}
			losses[i] = Loss{ci, leader}
		}
		remaining = kept
	}
	for _, i := range remaining[1:] {
		losses[i] = Loss{len(crit), remaining[0]}
	}
	return remaining[0], losses
}

// earliestStartOfHighest is upstream's GetEarliestPodStartTime: the
// earliest start time among the victims of the highest priority.
func earliestStartOfHighest(c *preempt.Candidate, startOf func(v preempt.Victim) time.Time) time.Time {
	earliest, highest := startOf(c.Victims[0]), c.Victims[0].Priority
	for _, v := range c.Victims {
		t := startOf(v)
		switch {
		case v.Priority == highest && t.Before(earliest):
			earliest = t
		case v.Priority > highest:
			highest, earliest = v.Priority, t
		}
	}
	return earliest
}
