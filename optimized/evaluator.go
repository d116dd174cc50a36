package optimized

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/preempt"
)

// Impl is the optimized implementation. Workers is the dry run's number of
// workers (0: GOMAXPROCS); the dry run starts workers only for ParallelFrom
// potential nodes or more (0: 64). The result never depends on either.
type Impl struct {
	Workers      int
	ParallelFrom int
}

var _ preempt.Implementation = Impl{}

// Name is "optimized".
func (Impl) Name() string { return "optimized" }

// NewEvaluator prepares c and returns an evaluator on it.
func (i Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	s, err := Prepare(c)
	if err != nil {
		return nil, err
	}
	ev := s.NewEvaluator(i.Workers).(*evaluator)
	if i.ParallelFrom > 0 {
		ev.parallelFrom = i.ParallelFrom
	}
	return ev, nil
}

// NewEvaluator returns an evaluator on s. Evaluators on one snapshot are
// independent; each serves one request at a time.
//
// An evaluator keeps what it computed about the last preemptor, keyed by
// the *v1.Pod and Request.Now: do not modify a pod between requests that
// pass it. The victims SelectVictimsOnNode returns live in a buffer reused
// by the next call; everything else it returns is the caller's.
func (s *Snapshot) NewEvaluator(workers int) preempt.Evaluator {
	return &evaluator{s: s, workers: workers, parallelFrom: defaultParallelFrom}
}

type evaluator struct {
	s            *Snapshot
	workers      int
	parallelFrom int

	dec       *decision // for decPod at decNow
	decPod    *v1.Pod
	decNow    int64
	dr        dryRun
	potential []int32
	single    scratch // for the single-node stages
	victimBuf []preempt.Victim
	pickA     []int32
	pickB     []int32
	// lastCands are the candidates of the last dry run's output, and
	// lastStart their latest-start-time scores, computed from pod indices:
	// SelectCandidate on that very list (at the same Now) needs no lookups.
	lastCands []preempt.Candidate
	lastNodes []string // lastCands' nodes and victim counts, to notice a
	lastLens  []int    // caller reordering the list in place
	lastStart []int64
	lastNow   int64
}

func (ev *evaluator) decision(pod *v1.Pod, now int64) *decision {
	if ev.dec == nil || ev.decPod != pod || ev.decNow != now {
		ev.dec, ev.decPod, ev.decNow = newDecision(ev.s, pod, now), pod, now
	}
	return ev.dec
}

func (ev *evaluator) decisionFor(req *preempt.Request) *decision {
	return ev.decision(req.Pod, req.Now.UnixNano())
}

func (ev *evaluator) Filter(_ context.Context, pod *v1.Pod) preempt.FilterResult {
	d := newDecision(ev.s, pod, 0)
	sc := &ev.single
	sc.reset(d)
	res := preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	s := ev.s
	for n := range int32(len(s.nodes)) {
		name := s.nodes[n].Name
		if r := d.nodeFilters(n); r != nil {
			res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: name, Code: preempt.UnschedulableAndUnresolvable, Reasons: r})
			continue
		}
		u := &sc.use
		d.loadNode(n, u)
		d.nominatedUse(n, sc)
		if code, r, mask := d.fits(n, u, &sc.nom); code != preempt.Success {
			if r == nil {
				r = d.reasons(mask)
			}
			res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: name, Code: code, Reasons: r})
			continue
		}
		res.Feasible = append(res.Feasible, name)
	}
	return res
}

func (ev *evaluator) PodEligibleToPreemptOthers(req *preempt.Request) (bool, string) {
	pod := req.Pod
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" || req.FilterCode(nominated) == preempt.UnschedulableAndUnresolvable {
		return true, ""
	}
	s := ev.s
	if n, ok := s.nodeIndex[nominated]; ok {
		prio := corev1helpers.PodPriority(pod)
		for _, p := range s.bound[s.boundStart[n]:s.boundStart[n+1]] {
			if s.priority[p] < prio && s.terminating[p] {
				return false, "not eligible due to a terminating pod on the nominated node."
			}
		}
	}
	return true, ""
}

func (ev *evaluator) FindCandidates(_ context.Context, req *preempt.Request) (preempt.DryRun, error) {
	s := ev.s
	if len(s.nodes) == 0 {
		return preempt.DryRun{}, fmt.Errorf("no nodes available")
	}
	ev.potential = ev.potential[:0]
	for n, name := range s.names {
		// Load, then compare: `req.Filter[name] == preempt.Unschedulable`
		// written in one expression measured 12x slower here (go1.26).
		if code := req.Filter[name]; code == preempt.Unschedulable {
			ev.potential = append(ev.potential, int32(n))
		}
	}
	if len(ev.potential) == 0 {
		return preempt.DryRun{}, nil
	}
	num := req.Config.NumCandidates(int32(len(ev.potential)))
	ev.run(ev.decisionFor(req), ev.potential, req.Offset, num)
	return ev.output(), nil
}

func (ev *evaluator) DryRunPreemption(_ context.Context, req *preempt.Request, potential []string, offset, numCandidates int32) preempt.DryRun {
	ev.potential = ev.potential[:0]
	for _, name := range potential {
		if n, ok := ev.s.nodeIndex[name]; ok {
			ev.potential = append(ev.potential, n)
		}
	}
	if len(ev.potential) == 0 {
		return preempt.DryRun{}
	}
	ev.run(ev.decisionFor(req), ev.potential, offset, numCandidates)
	return ev.output()
}

func (ev *evaluator) SelectVictimsOnNode(_ context.Context, req *preempt.Request, node string) ([]preempt.Victim, int, preempt.Status) {
	n, ok := ev.s.nodeIndex[node]
	if !ok {
		return nil, 0, preempt.Status{Code: preempt.Error, Reasons: []string{fmt.Sprintf("nodeinfo not found for node name %q", node)}}
	}
	d := ev.decisionFor(req)
	sc := &ev.single
	sc.reset(d)
	r := d.selectVictims(n, sc)
	if r.code != preempt.Success {
		reasons := r.reasons
		if reasons == nil {
			reasons = d.reasons(r.mask)
		}
		return nil, 0, preempt.Status{Code: r.code, Reasons: reasons}
	}
	if ev.victimBuf == nil {
		ev.victimBuf = make([]preempt.Victim, 0, 16) // empty, not nil, as the reference
	}
	ev.victimBuf = ev.victimBuf[:0]
	for _, p := range r.victims {
		ev.victimBuf = append(ev.victimBuf, preempt.Victim{Namespace: ev.s.podNS[p], Name: ev.s.podName[p], Priority: ev.s.priority[p]})
	}
	return ev.victimBuf, int(r.numViolations), preempt.Status{Code: preempt.Success}
}

// SelectCandidate is pickOneNodeForPreemption over candidate indices in two
// reused buffers (the minNodes1/minNodes2 idea), one pass per criterion.
func (ev *evaluator) SelectCandidate(cands []preempt.Candidate, req *preempt.Request) *preempt.Candidate {
	switch len(cands) {
	case 0:
		return nil
	case 1:
		return &cands[0]
	}
	now := req.Now.UnixNano()
	known := len(cands) == len(ev.lastCands) && &cands[0] == &ev.lastCands[0] && now == ev.lastNow
	a := ev.pickA[:0]
	for i := range cands {
		a = append(a, int32(i))
	}
	b := ev.pickB[:0]
	defer func() { ev.pickA, ev.pickB = a[:0], b[:0] }()
	for criterion := range 5 {
		best := int64(math.MinInt64)
		b = b[:0]
		for _, i := range a {
			var score int64
			if criterion == 4 && known && ev.lastNodes[i] == cands[i].Node && ev.lastLens[i] == len(cands[i].Victims) {
				score = ev.lastStart[i]
			} else {
				score = ev.score(criterion, &cands[i], now)
			}
			if score > best {
				best, b = score, b[:0]
			}
			if score == best {
				b = append(b, i)
			}
		}
		if len(b) == 1 {
			return &cands[b[0]]
		}
		a, b = b, a
	}
	return &cands[a[0]]
}

func (ev *evaluator) score(criterion int, c *preempt.Candidate, now int64) int64 {
	switch criterion {
	case 0: // fewest PDB violations
		return -int64(c.NumPDBViolations)
	case 1: // lowest highest-priority victim
		return -int64(c.Victims[0].Priority)
	case 2: // smallest sum of priorities, each shifted to be non-negative
		var sum int64
		for _, v := range c.Victims {
			sum += int64(v.Priority) + int64(math.MaxInt32+1)
		}
		return -sum
	case 3: // fewest victims
		return -int64(len(c.Victims))
	default: // latest start among the highest-priority victims
		earliest, highest := ev.startOf(c.Victims[0], now), c.Victims[0].Priority
		for _, v := range c.Victims {
			switch t := ev.startOf(v, now); {
			case v.Priority == highest && t < earliest:
				earliest = t
			case v.Priority > highest:
				highest, earliest = v.Priority, t
			}
		}
		return earliest
	}
}

func (ev *evaluator) startOf(v preempt.Victim, now int64) int64 {
	p, ok := ev.s.podIndex[podKey{v.Namespace, v.Name}]
	if !ok || !ev.s.hasStart[p] {
		return now
	}
	return ev.s.startNanos[p]
}

func (ev *evaluator) PrepareCandidate(ctx context.Context, cs kubernetes.Interface, c *preempt.Candidate, req *preempt.Request) error {
	s := ev.s
	pod := req.Pod
	victims := make([]*v1.Pod, 0, len(c.Victims))
	for _, v := range c.Victims {
		p, ok := s.podIndex[podKey{v.Namespace, v.Name}]
		if !ok {
			return fmt.Errorf("victim %s is not in the cluster", preempt.Key(v.Namespace, v.Name))
		}
		victims = append(victims, s.pods[p])
	}
	var lower []*v1.Pod
	if n, ok := s.nodeIndex[c.Node]; ok {
		prio := corev1helpers.PodPriority(pod)
		for _, p := range s.nominated[s.nomStart[n]:s.nomStart[n+1]] {
			if s.priority[p] < prio {
				lower = append(lower, s.pods[p])
			}
		}
	}
	return preempt.Actuate(ctx, cs, pod, c.Node, victims, lower, req.Config.Synchronous)
}

func (ev *evaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	return preempt.PreemptWithStages(ctx, ev, cs, req, ev.s.cluster)
}
