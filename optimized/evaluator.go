package optimized

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/actuation"
	"github.com/preemptbench/preemptbench/postfilter"
	"github.com/preemptbench/preemptbench/preempt"
)

// Impl is the optimized implementation. Workers is the dry run's number of
// workers (0: DefaultWorkers); the dry run starts workers only for
// ParallelFrom potential nodes or more (0: 64). The result never depends
// on either.
type Impl struct {
	Workers      int
	ParallelFrom int
}

var _ preempt.Implementation = Impl{}

// DefaultWorkers is the dry run's number of workers when Impl.Workers is
// 0: GOMAXPROCS from 4 up, else 1. On the project's 2-core machine a
// second worker made no decision faster (Decide at 5000 and 65000 nodes,
// GOMAXPROCS 1 against 2, three runs each: within 5% of each other, quiet
// or not), cost about twice the CPU per visited node (the two vCPUs share
// a core's caches; a visit is memory-bound), and under load made a
// decision wait on a descheduled worker while this goroutine computed
// chunks past the stop. Workers > 1 stays tested (conformance, the fuzz
// target) and available.
func DefaultWorkers() int {
	if n := runtime.GOMAXPROCS(0); n >= 4 {
		return n
	}
	return 1
}

// Name is "optimized".
func (Impl) Name() string { return "optimized" }

// NewEvaluator prepares c and returns an evaluator on it.
func (i Impl) NewEvaluator(c *preempt.Cluster) (preempt.Evaluator, error) {
	s, err := Prepare(c)
	if err != nil {
		return nil, err
	}
	ev := s.NewEvaluator(i.Workers).(*evaluator)
	ev.owned = true
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
	b := currentBehaviour()
	return &evaluator{s: s, workers: workers, parallelFrom: defaultParallelFrom, b: b, filterB: b}
}

// currentBehaviour is preempt.CurrentRelease's behaviour.
func currentBehaviour() preempt.Behaviour {
	b, _ := preempt.ReleaseBehaviour(preempt.CurrentRelease)
	return b
}

type evaluator struct {
	s            *Snapshot
	owned        bool // s is this evaluator's alone: Update changes it in place
	workers      int
	parallelFrom int

	// b is the release behaviour this evaluator answers with: the current
	// release's for the one NewEvaluator returns, which hands a request
	// asking for another (preempt.Config.Behaviour) to a sibling (with).
	// filterB is the behaviour Filter reproduces (SetBehaviour).
	b, filterB preempt.Behaviour
	// filterNow is the clock Filter and FilterCodes read (SetNow).
	filterNow time.Time
	// siblings are the evaluators of other behaviours, made on first use
	// and dropped by Update; alt[m] is the snapshot with the placed
	// requests of mode m (reqMode) they share when the cluster holds a pod
	// whose requests differ (altState[m]: 0 not looked at, 1 none
	// differs, 2 alt[m] is built).
	siblings []*evaluator
	alt      [reqModes]*Snapshot
	altState [reqModes]int8

	dec       *decision // for decPod (its now set per request)
	decPod    *v1.Pod
	dr        dryRun
	potential []int32
	single    scratch // for the single-node stages
	victimBuf []preempt.Victim
	// lastCands are the candidates of the last dry run's output, and last
	// their rows: node and victim count, to notice a caller reordering
	// the list in place, and the scores computed from pod indices while
	// writing it. SelectCandidate on that very list (at the same Now)
	// takes the latest start from them (after checking every row still
	// names its candidate); when the list was lent (Request.ReuseOutput),
	// which its caller may not change, it returns lastBest.
	lastCands []preempt.Candidate
	last      []lastRow
	lastNow   int64
	lastLent  bool
	// outCands, outVictims and outStatuses are output's buffers under
	// Request.ReuseOutput.
	outCands []preempt.Candidate
	// outOrder and outStarts are output's rows: the slot of each
	// candidate, and where its victims start.
	outOrder  []int32
	outStarts []int
	outWG     sync.WaitGroup // output's second writer
	outBest2  int            // the best row of output's second writer
	// lastBest is the best of lastCands by the five criteria, computed as
	// output wrote them: when the list was lent (Request.ReuseOutput: the
	// caller never writes it), SelectCandidate on that very list returns
	// it without scoring.
	lastBest    int
	outVictims  []preempt.Victim
	outStatuses []preempt.NodeStatus
	// gang is the gang path's state (gang.go), made on first use.
	gang *gangWorld
}

var _ preempt.BehaviourSetter = (*evaluator)(nil)

// SetBehaviour sets the release behaviour Filter and FilterCodes
// reproduce.
func (ev *evaluator) SetBehaviour(b preempt.Behaviour) { ev.filterB = b }

var _ preempt.ClockSetter = (*evaluator)(nil)

// SetNow sets the clock Filter and FilterCodes read (DynamicResources'
// binding timeout), for ev and the siblings it hands Filter to.
func (ev *evaluator) SetNow(now time.Time) {
	ev.filterNow = now
	for _, sib := range ev.siblings {
		sib.filterNow = now
	}
}

// at is the evaluator answering req with its configuration's behaviour.
func (ev *evaluator) at(req *preempt.Request) *evaluator {
	if req == nil || (req.Config.Release == "" && len(req.Config.Switches) == 0) {
		return ev // the current release's: ev's own
	}
	return ev.with(req.Config.Behaviour())
}

// with is the evaluator answering with behaviour b: ev itself, or a
// sibling on ev's snapshot (or, without preempt.SwitchResizedPodRequests,
// on the v0.36 snapshot when some pod's requests differ).
func (ev *evaluator) with(b preempt.Behaviour) *evaluator {
	if b == ev.b {
		return ev
	}
	for _, sib := range ev.siblings {
		if sib.b == b {
			return sib
		}
	}
	s := ev.s
	if m := reqModeOf(b); m != 0 {
		if ev.altState[m] == 0 {
			ev.altState[m] = 1
			if resizedDiffer(ev.s.cluster, m) {
				alt, err := prepare(ev.s.cluster, m)
				if err == nil { // the cluster prepared once: it prepares again
					ev.alt[m], ev.altState[m] = alt, 2
				}
			}
		}
		if ev.altState[m] == 2 {
			s = ev.alt[m]
		}
	}
	sib := &evaluator{s: s, workers: ev.workers, parallelFrom: ev.parallelFrom, b: b, filterB: b, filterNow: ev.filterNow}
	ev.siblings = append(ev.siblings, sib)
	return sib
}

func (ev *evaluator) decision(pod *v1.Pod, now int64, clock time.Time) *decision {
	if ev.dec == nil || ev.decPod != pod || (ev.dec.dra.readsClock() && !ev.dec.clock.Equal(clock)) {
		ev.dec, ev.decPod = newDecision(ev.s, pod, now, clock, ev.b), pod
	}
	ev.dec.completeTopology()
	ev.dec.now = now // nothing a decision keeps depends on it
	return ev.dec
}

func (ev *evaluator) decisionFor(req *preempt.Request) *decision {
	d := ev.decision(req.Pod, req.Now.UnixNano(), req.Now)
	d.groups = ev.s.groupsFor(req.Config.FeatureGates)
	return d
}

func (ev *evaluator) Filter(_ context.Context, pod *v1.Pod) preempt.FilterResult {
	if ev.filterB != ev.b {
		return ev.with(ev.filterB).Filter(context.Background(), pod)
	}
	d := newDecision(ev.s, pod, 0, ev.filterNow, ev.b)
	sc := &ev.single
	sc.reset(d)
	res := preempt.FilterResult{Feasible: []string{}, NodeStatuses: []preempt.NodeStatus{}}
	s := ev.s
	if f := d.preFilterFailed(); f != nil {
		// The volume plugins come before DynamicResources.
		res.PreFilterRejected = f.Code == preempt.UnschedulableAndUnresolvable
		for n := range s.nodes {
			res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: s.nodes[n].Name, Code: f.Code, Reasons: f.Reasons})
		}
		return res
	}
	for n := range int32(len(s.nodes)) {
		name := s.nodes[n].Name
		if r := d.nodeFilters(n); r != nil {
			res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: name, Code: d.nodeFiltersCode(), Reasons: r})
			continue
		}
		u := &sc.use
		d.loadNode(n, u)
		d.nominatedUse(n, sc)
		if code, r, mask := d.fits(n, u, &sc.nom); code != preempt.Success {
			if r == nil {
				r = d.fit.reasons(mask)
			}
			res.NodeStatuses = append(res.NodeStatuses, preempt.NodeStatus{Node: name, Code: code, Reasons: r})
			continue
		}
		res.Feasible = append(res.Feasible, name)
	}
	return res
}

var _ preempt.CodeFilter = (*evaluator)(nil)

// FilterCodes is Filter's outcome as codes in the cluster's node order,
// without the reasons.
func (ev *evaluator) FilterCodes(ctx context.Context, pod *v1.Pod, dst []preempt.Code) []preempt.Code {
	if ev.filterB != ev.b {
		return ev.with(ev.filterB).FilterCodes(ctx, pod, dst)
	}
	s := ev.s
	if cap(dst) < len(s.nodes) {
		dst = make([]preempt.Code, len(s.nodes))
	}
	dst = dst[:len(s.nodes)]
	d := ev.filterDecision(pod)
	sc := &ev.single
	sc.reset(d)
	if f := d.preFilterFailed(); f != nil {
		for i := range dst {
			dst[i] = f.Code
		}
		return dst
	}
	for n := range int32(len(s.nodes)) {
		// A node where no node filter can fail and no pod is nominated
		// is often settled by its sums alone: NodePorts refuses with
		// Unschedulable too, and the topology plugins (theirs maybe not
		// made yet) run only after both pass.
		if !d.checkNodes && !s.tainted[n] && len(s.nomOf[n]) == 0 {
			code := d.sumsFit(n)
			if code == preempt.Unschedulable || (!d.ports.on() && (code != preempt.Success || (d.topo == nil && !d.topoPending && d.vols == nil && d.vol == nil))) {
				dst[s.clusterIdx[n]] = code
				continue
			}
		}
		code := preempt.Success
		if d.nodeFilters(n) != nil {
			code = d.nodeFiltersCode()
		} else {
			d.loadNode(n, &sc.use)
			d.nominatedUse(n, sc)
			code, _, _ = d.fits(n, &sc.use, &sc.nom)
			if code == preempt.Success && d.topoPending {
				// The first node to reach the topology plugins: their
				// PreFilter, then this node again with them.
				d.completeTopology()
				sc.reset(d)
				d.loadNode(n, &sc.use)
				d.nominatedUse(n, sc)
				code, _, _ = d.fits(n, &sc.use, &sc.nom)
			}
		}
		dst[s.clusterIdx[n]] = code
	}
	return dst
}

func (ev *evaluator) PodEligibleToPreemptOthers(req *preempt.Request) (bool, string) {
	pod := req.Pod
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		return true, ""
	}
	s := ev.s
	n, ok := s.nodeIndex[nominated]
	if req.Codes != nil {
		if !ok || int(s.clusterIdx[n]) >= len(req.Codes) || req.Codes[s.clusterIdx[n]] == preempt.UnschedulableAndUnresolvable {
			return true, ""
		}
	} else if req.FilterCode(nominated) == preempt.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ok {
		prio, victimPrio := corev1helpers.PodPriority(pod), s.victimPriorities(req.Config.FeatureGates)
		for _, p := range s.boundOf[n] {
			if victimPrio[p] < prio && s.terminating[p] {
				return false, "not eligible due to a terminating pod on the nominated node."
			}
		}
	}
	return true, ""
}

func (ev *evaluator) FindCandidates(ctx context.Context, req *preempt.Request) (preempt.DryRun, error) {
	if at := ev.at(req); at != ev {
		return at.FindCandidates(ctx, req)
	}
	s := ev.s
	if len(s.nodes) == 0 {
		return preempt.DryRun{}, fmt.Errorf("no nodes available")
	}
	ev.potential = ev.potential[:0]
	if codes := req.Codes; codes != nil {
		if len(codes) != len(s.nodes) {
			return preempt.DryRun{}, fmt.Errorf("request: %d filter codes for %d nodes", len(codes), len(s.nodes))
		}
		for n, i := range s.clusterIdx {
			if codes[i] == preempt.Unschedulable {
				ev.potential = append(ev.potential, int32(n))
			}
		}
	} else {
		for n, name := range s.names {
			// Load, then compare: `req.Filter[name] == preempt.Unschedulable`
			// written in one expression measured 12x slower here (go1.26).
			if code := req.Filter[name]; code == preempt.Unschedulable {
				ev.potential = append(ev.potential, int32(n))
			}
		}
	}
	if len(ev.potential) == 0 {
		return preempt.DryRun{}, nil
	}
	num := req.Config.NumCandidates(int32(len(ev.potential)))
	ev.run(ev.decisionFor(req), ev.potential, req.Offset, num)
	return ev.output(req.ReuseOutput), nil
}

func (ev *evaluator) DryRunPreemption(ctx context.Context, req *preempt.Request, potential []string, offset, numCandidates int32) preempt.DryRun {
	if at := ev.at(req); at != ev {
		return at.DryRunPreemption(ctx, req, potential, offset, numCandidates)
	}
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
	return ev.output(req.ReuseOutput)
}

func (ev *evaluator) SelectVictimsOnNode(ctx context.Context, req *preempt.Request, node string) ([]preempt.Victim, int, preempt.Status) {
	if at := ev.at(req); at != ev {
		return at.SelectVictimsOnNode(ctx, req, node)
	}
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
			reasons = d.fit.reasons(r.mask)
		}
		return nil, 0, preempt.Status{Code: r.code, Reasons: reasons}
	}
	if ev.victimBuf == nil {
		ev.victimBuf = make([]preempt.Victim, 0, 16) // empty, not nil, as the reference
	}
	ev.victimBuf = ev.victimBuf[:0]
	recs := d.victimRecords()
	for _, p := range r.victims {
		ev.victimBuf = append(ev.victimBuf, recs[p])
	}
	return ev.victimBuf, int(r.numViolations), preempt.Status{Code: preempt.Success}
}

// SelectCandidate is pickOneNodeForPreemption in one pass: keeping the
// best set criterion after criterion, then the first in the list, picks the
// lexicographic maximum of the five scores, the first such in the list.
// Each candidate's later scores are computed only when it ties the best so
// far on the earlier ones.
func (ev *evaluator) SelectCandidate(cands []preempt.Candidate, req *preempt.Request) *preempt.Candidate {
	if at := ev.at(req); at != ev {
		// the sibling that wrote cands knows their rows
		return at.SelectCandidate(cands, req)
	}
	switch len(cands) {
	case 0:
		return nil
	case 1:
		return &cands[0]
	}
	now := req.Now.UnixNano()
	// The rows output kept describe cands when cands is that very list
	// (at the same Now) and every row still names its candidate's node and
	// victim count: checked once for the list, not per score.
	known := len(cands) == len(ev.lastCands) && &cands[0] == &ev.lastCands[0] && now == ev.lastNow
	if known && ev.lastLent {
		return &cands[ev.lastBest]
	}
	for i := 0; known && i < len(cands); i++ {
		r := &ev.last[i]
		known = r.node == cands[i].Node && r.n == len(cands[i].Victims)
	}
	scoreOf := func(i, criterion int) int64 {
		if known && criterion == 4 {
			return ev.last[i].start
		}
		return ev.score(criterion, &cands[i], now)
	}
	var best [5]int64
	computed := 0 // scores of the best candidate known so far: best[:computed]
	bi := 0
	for i := 1; i < len(cands); i++ {
		for criterion := range 5 {
			if criterion == computed {
				best[criterion] = scoreOf(bi, criterion)
				computed++
			}
			sc := scoreOf(i, criterion)
			if sc < best[criterion] {
				break
			}
			if sc > best[criterion] {
				bi, best[criterion], computed = i, sc, criterion+1
				break
			}
		}
	}
	return &cands[bi]
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
		for _, p := range s.nomOf[n] {
			if s.priority[p] < prio {
				lower = append(lower, s.pods[p])
			}
		}
	}
	return actuation.Actuate(ctx, cs, pod, c.Node, victims, lower, req.Config.Synchronous, req.Config.Behaviour().AsyncSkipsLastVictim)
}

func (ev *evaluator) Preempt(ctx context.Context, cs kubernetes.Interface, req *preempt.Request) preempt.Decision {
	d := postfilter.PreemptWithStages(ctx, ev, cs, req, ev.s.cluster)
	ev.s.nameVictimGroups(d.Victims, req.Config.FeatureGates)
	return d
}
