package optimized

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/preemptbench/preemptbench/preempt"
)

// slot is the outcome of the i-th node of a dry run's visit order.
type slot struct {
	node int32
	res  result
}

// chunkSize is the number of nodes a parallel worker claims at a time.
const chunkSize = 16

// dryRun is the state of one DryRunPreemption, reused across decisions.
type dryRun struct {
	slots        []slot
	nonViolating []int32 // slot indices, in visit order
	violating    []int32
	failed       []int32
	scratches    []*scratch

	chunkDone []atomic.Bool
	next      atomic.Int64
	stop      atomic.Bool
}

// defaultParallelFrom is the number of potential nodes from which the dry
// run starts workers: below it, goroutines cost more than they save.
const defaultParallelFrom = 64

// run visits potential[(offset+i) % n] for i = 0, 1, ... and commits the
// results in that order, stopping before the next node once there is a
// non-violating candidate and numCandidates candidates in all; each list
// keeps at most numCandidates. Workers compute ahead of the commit point;
// what they computed past the stop is dropped, so the result is the
// sequential one for any number of workers.
func (ev *evaluator) run(d *decision, potential []int32, offset, numCandidates int32) {
	dr := &ev.dr
	n := len(potential)
	if cap(dr.slots) < n {
		dr.slots = make([]slot, n)
	}
	dr.slots = dr.slots[:n]
	dr.nonViolating, dr.violating, dr.failed = dr.nonViolating[:0], dr.violating[:0], dr.failed[:0]
	workers := ev.workers
	if workers <= 0 {
		workers = DefaultWorkers()
	}
	if n < ev.parallelFrom {
		workers = 1
	}
	for len(dr.scratches) < workers {
		dr.scratches = append(dr.scratches, &scratch{})
	}
	for _, sc := range dr.scratches[:workers] {
		sc.reset(d)
	}
	nodeAt := func(i int) int32 { return potential[(int(offset)+i)%n] }
	full := func() bool {
		return len(dr.nonViolating) > 0 && int32(len(dr.nonViolating)+len(dr.violating)) >= numCandidates
	}

	if workers == 1 {
		sc := dr.scratches[0]
		for i := 0; i < n && !full(); i++ {
			dr.slots[i] = slot{node: nodeAt(i), res: d.selectVictims(nodeAt(i), sc)}
			dr.commit(i, numCandidates)
		}
		return
	}

	// Parallel: the nodes are cut in chunks claimed in visit order by
	// workers-1 goroutines and by this one; this goroutine also commits,
	// chunk after chunk, in visit order, and stops at the same node as the
	// sequential loop. Chunks claimed past that point are finished and
	// dropped.
	chunks := (n + chunkSize - 1) / chunkSize
	if cap(dr.chunkDone) < chunks {
		dr.chunkDone = make([]atomic.Bool, chunks)
	}
	dr.chunkDone = dr.chunkDone[:chunks]
	for i := range dr.chunkDone {
		dr.chunkDone[i].Store(false)
	}
	dr.next.Store(0)
	dr.stop.Store(false)
	compute := func(c int, sc *scratch) {
		for i := c * chunkSize; i < min(n, (c+1)*chunkSize); i++ {
			dr.slots[i] = slot{node: nodeAt(i), res: d.selectVictims(nodeAt(i), sc)}
		}
		dr.chunkDone[c].Store(true) // publishes the chunk's slots
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := 1; w < workers; w++ {
		go func(sc *scratch) {
			defer wg.Done()
			for !dr.stop.Load() {
				c := int(dr.next.Add(1) - 1)
				if c >= chunks {
					return
				}
				compute(c, sc)
			}
		}(dr.scratches[w])
	}
	mine := dr.scratches[0]
commit:
	for c := 0; c < chunks; c++ {
		// A chunk takes microseconds: help with the next unclaimed one, or
		// yield, rather than sleep on a condition variable.
		for !dr.chunkDone[c].Load() {
			if claimed := int(dr.next.Add(1) - 1); claimed < chunks {
				compute(claimed, mine)
			} else {
				runtime.Gosched()
			}
		}
		for i := c * chunkSize; i < min(n, (c+1)*chunkSize); i++ {
			if full() {
				break commit
			}
			dr.commit(i, numCandidates)
		}
	}
	dr.stop.Store(true)
	wg.Wait()
}

// commit files slot i under candidates or failures.
func (dr *dryRun) commit(i int, numCandidates int32) {
	r := &dr.slots[i].res
	switch {
	case r.code == preempt.Success && len(r.victims) > 0 && r.numViolations == 0:
		if int32(len(dr.nonViolating)) < numCandidates {
			dr.nonViolating = append(dr.nonViolating, int32(i))
		}
	case r.code == preempt.Success && len(r.victims) > 0:
		if int32(len(dr.violating)) < numCandidates {
			dr.violating = append(dr.violating, int32(i))
		}
	default:
		dr.failed = append(dr.failed, int32(i))
	}
}

// output builds the contract's DryRun with one allocation per list: every
// victim of every candidate shares one backing array. With reuse
// (Request.ReuseOutput) the lists are the evaluator's buffers, kept for
// the next output: nothing is allocated per candidate.
func (ev *evaluator) output(reuse bool) preempt.DryRun {
	dr := &ev.dr
	var out preempt.DryRun
	// The candidates in output order (non-violating first, each list in
	// visit order) and where each one's victims start.
	order := append(append(ev.outOrder[:0], dr.nonViolating...), dr.violating...)
	starts := ev.outStarts[:0]
	total := 0
	for _, i := range order {
		starts = append(starts, total)
		total += len(dr.slots[i].res.victims)
	}
	ev.outOrder, ev.outStarts = order, starts
	ev.last, ev.lastLent = ev.last[:0], reuse
	if k := len(order); k > 0 {
		var victims []preempt.Victim
		if reuse {
			victims, out.Candidates = grow(ev.outVictims, total)[:total], grow(ev.outCands, k)[:k]
			ev.outVictims, ev.outCands = victims, out.Candidates
		} else {
			victims = make([]preempt.Victim, total)
			out.Candidates = make([]preempt.Candidate, k)
		}
		ev.last = grow(ev.last, k)[:k]
		workers := ev.workers
		if workers <= 0 {
			workers = DefaultWorkers()
		}
		if workers > 1 && k >= parallelOutputFrom {
			// Two halves on two goroutines: each row is written in
			// place, so the halves share nothing but the read-only
			// snapshot.
			half := k / 2
			ev.outWG.Add(1)
			go ev.writeRowsAndDone(half, k, victims, out.Candidates)
			ev.lastBest = ev.writeRows(0, half, victims, out.Candidates)
			ev.outWG.Wait()
			if ev.better(ev.outBest2, ev.lastBest, out.Candidates) {
				ev.lastBest = ev.outBest2
			}
		} else {
			ev.lastBest = ev.writeRows(0, k, victims, out.Candidates)
		}
	}
	ev.lastCands, ev.lastNow = out.Candidates, ev.dec.now
	if len(dr.failed) > 0 {
		for _, i := range dr.failed { // visit order, as upstream's error list
			if sl := &dr.slots[i]; sl.res.code == preempt.Success || sl.res.code == preempt.Error {
				out.Errors = append(out.Errors, ev.failure(sl).Reasons[0])
			}
		}
		rotateToNodeOrder(dr.failed, dr.slots)
		if reuse {
			out.NodeStatuses = grow(ev.outStatuses, len(dr.failed))
		} else {
			out.NodeStatuses = make([]preempt.NodeStatus, 0, len(dr.failed))
		}
		for _, i := range dr.failed {
			out.NodeStatuses = append(out.NodeStatuses, ev.failure(&dr.slots[i]))
		}
		if reuse {
			ev.outStatuses = out.NodeStatuses
		}
	}
	return out
}

// failure is the dry-run status of a node that is not a candidate.
func (ev *evaluator) failure(sl *slot) preempt.NodeStatus {
	name := ev.s.names[sl.node]         // not the Node object: a cache miss per node
	if sl.res.code == preempt.Success { // no victims needed: upstream's error
		return preempt.NodeStatus{Node: name, Code: preempt.Error, Reasons: []string{fmt.Sprintf("expected at least one victim pod on node %q", name)}}
	}
	return preempt.NodeStatus{Node: name, Code: sl.res.code, Reasons: ev.reasonsOf(&sl.res)}
}

func (ev *evaluator) reasonsOf(r *result) []string {
	if r.reasons != nil {
		return r.reasons
	}
	return ev.dec.fit.reasons(r.mask)
}

// rotateToNodeOrder sorts idx by node index. The visit order is a rotation
// of node-name order, so idx is two ascending runs: swap them in place.
func rotateToNodeOrder(idx []int32, slots []slot) {
	k := 0
	for i := 1; i < len(idx); i++ {
		if slots[idx[i]].node < slots[idx[i-1]].node {
			k = i
			break
		}
	}
	if k == 0 {
		return
	}
	slices.Reverse(idx[:k])
	slices.Reverse(idx[k:])
	slices.Reverse(idx)
}

// grow returns buf emptied, with room for n elements: buf's own array when
// it is large enough, a new one otherwise (the array the caller keeps for
// next time, never smaller).
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, 0, max(n, 2*cap(buf)))
	}
	return buf[:0]
}

// parallelOutputFrom is the number of candidates from which output writes
// its rows on two goroutines: below it, starting one costs more than half
// the writing saves.
const parallelOutputFrom = 256

// writeRows writes output's rows [from, to) (ev.outOrder, ev.outStarts):
// each candidate, its victims at their start in victims, and its scores
// in ev.last. One pass over the victims writes them and computes
// SelectCandidate's scores 1, 2 and 4 (score): the highest priority (the
// first victim, the most important), the priority sum, and the earliest
// start among the highest-priority victims (upstream's
// GetEarliestPodStartTime, now for a pod without one).
//
// It returns the best of the rows by SelectCandidate's five criteria,
// the first of equal ones (SelectCandidate returns it for the very list it
// lent, see evaluator.lastBest).
func (ev *evaluator) writeRows(from, to int, victims []preempt.Victim, cands []preempt.Candidate) (best int) {
	s, dr, now := ev.s, &ev.dr, ev.dec.now
	recs := ev.dec.victimRecords()
	best = from
	for j := from; j < to; j++ {
		sl := &dr.slots[ev.outOrder[j]]
		first := ev.outStarts[j]
		vs := victims[first : first+len(sl.res.victims) : first+len(sl.res.victims)]
		var sum int64
		highest, earliest := s.priority[sl.res.victims[0]], int64(math.MaxInt64)
		for x, p := range sl.res.victims {
			prio := s.priority[p]
			vs[x] = recs[p]
			sum += int64(prio) + int64(math.MaxInt32+1)
			t := now
			if s.hasStart[p] {
				t = s.startNanos[p]
			}
			switch {
			case prio > highest:
				highest, earliest = prio, t
			case prio == highest && t < earliest:
				earliest = t
			}
		}
		ev.last[j] = lastRow{node: s.names[sl.node], n: len(vs), high: -int64(vs[0].Priority), sum: -sum, start: earliest}
		cands[j] = preempt.Candidate{Node: s.names[sl.node], NumPDBViolations: int(sl.res.numViolations), Victims: vs}
		if j > from && ev.better(j, best, cands) {
			best = j
		}
	}
	return best
}

// better says whether row i beats row j by the five criteria (fewest PDB
// violations, then ev.last's scores 1 and 2, fewest victims, latest
// start): strictly, so that the first of equal rows stays best.
func (ev *evaluator) better(i, j int, cands []preempt.Candidate) bool {
	a, b := &ev.last[i], &ev.last[j]
	if va, vb := cands[i].NumPDBViolations, cands[j].NumPDBViolations; va != vb {
		return va < vb
	}
	if a.high != b.high {
		return a.high > b.high
	}
	if a.sum != b.sum {
		return a.sum > b.sum
	}
	if a.n != b.n {
		return a.n < b.n
	}
	return a.start > b.start
}

// writeRowsAndDone is writeRows on output's second goroutine; its best
// row goes to ev.outBest2.
func (ev *evaluator) writeRowsAndDone(from, to int, victims []preempt.Victim, cands []preempt.Candidate) {
	defer ev.outWG.Done()
	ev.outBest2 = ev.writeRows(from, to, victims, cands)
}

// lastRow is what output keeps of a candidate it wrote, for
// SelectCandidate (evaluator.last).
type lastRow struct {
	node             string // the candidate's node
	n                int    // its victim count
	high, sum, start int64  // its scores 1, 2 and 4 (evaluator.score)
}
