package bench

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// Seed is the scenario seed of every fixture.
const Seed = 1

// Fixture is one benchmark input: a built shape and the request the filter
// phase leads to. Fixtures are shared by every implementation and must not
// be modified.
type Fixture struct {
	Shape    string
	Nodes    int
	Scenario *synth.Scenario
	// Req is the preemption request: the filter codes from the
	// reference's filter phase, DefaultConfig with the shape's feature
	// gates (Scenario.FeatureGates) under -bench.feature-gates, offset 0,
	// the scenario's Now,
	// ReuseOutput (a benchmark keeps nothing past the next call, as a
	// scheduler acting on one decision before the next).
	Req *preempt.Request
	// Potential are the nodes whose filter code is Unschedulable, in name
	// order, and NumCandidates the dry run's candidate budget for them.
	Potential     []string
	NumCandidates int32
	// Requests are copies of Req, each with its own deep copy of the
	// preemptor and the filter outcome as Request.Codes (a scheduler's
	// form: a code per node in the cluster's order) instead of the Filter
	// map: benchmarks pass Request(i) to op i, so that no op sees the
	// preemptor object of the op before it (an implementation may cache
	// per-preemptor work by the object, as optimized does).
	Requests []*preempt.Request
}

// requestPool is the number of preemptor copies a fixture cycles through.
const requestPool = 8

// Request is the request of op i: Req with a preemptor object other than
// op i-1's.
func (f *Fixture) Request(i int) *preempt.Request { return f.Requests[i%len(f.Requests)] }

var fixtures struct {
	sync.Mutex
	m map[string]*Fixture
}

// FixtureFor builds the fixture of shape at nodes on first use and returns
// the cached one afterwards.
func FixtureFor(shape string, nodes int) (*Fixture, error) {
	fixtures.Lock()
	defer fixtures.Unlock()
	key := fmt.Sprintf("%s/%d", shape, nodes)
	if f, ok := fixtures.m[key]; ok {
		return f, nil
	}
	s, err := synth.Build(shape, nodes, Seed)
	if err != nil {
		return nil, err
	}
	if err := s.Cluster.Validate(); err != nil {
		return nil, fmt.Errorf("shape %s at %d nodes: %w", shape, nodes, err)
	}
	ev, err := reference.Impl{}.NewEvaluator(s.Cluster)
	if err != nil {
		return nil, err
	}
	fr := ev.Filter(context.Background(), s.Pod)
	given, err := FeatureGates()
	if err != nil {
		return nil, err
	}
	// The shape's workload's gates, under those given explicitly.
	var gates map[string]bool
	if len(s.FeatureGates)+len(given) > 0 {
		gates = maps.Clone(s.FeatureGates)
		if gates == nil {
			gates = map[string]bool{}
		}
		maps.Copy(gates, given)
	}
	req := &preempt.Request{Pod: s.Pod, Filter: fr.Codes(), Config: preempt.DefaultConfig(), Offset: 0, Now: s.Now, ReuseOutput: true}
	req.Config.FeatureGates = gates
	if err := req.Validate(); err != nil {
		return nil, err
	}
	f := &Fixture{Shape: shape, Nodes: nodes, Scenario: s, Req: req}
	for node, code := range req.Filter {
		if code == preempt.Unschedulable {
			f.Potential = append(f.Potential, node)
		}
	}
	sort.Strings(f.Potential)
	f.NumCandidates = req.Config.NumCandidates(int32(len(f.Potential)))
	codes := preempt.NewNodeOrder(s.Cluster).Codes(fr, nil)
	for range requestPool {
		r := *req
		r.Pod = req.Pod.DeepCopy()
		r.Filter, r.Codes = nil, codes
		f.Requests = append(f.Requests, &r)
	}
	if fixtures.m == nil {
		fixtures.m = map[string]*Fixture{}
	}
	fixtures.m[key] = f
	return f, nil
}

// evaluators caches the evaluators of one fixture at a time: benchmarks run
// every implementation at one size before the next size, and keeping
// upstream's framework for every size at once would hold gigabytes.
var evaluators struct {
	sync.Mutex
	fixture *Fixture
	m       map[string]preempt.Evaluator
}

// EvaluatorFor returns impl's evaluator of f, warmed by one FindCandidates
// (upstream builds its framework on first use), cached until an evaluator
// of another fixture is asked for.
func EvaluatorFor(impl preempt.Implementation, f *Fixture) (preempt.Evaluator, error) {
	evaluators.Lock()
	defer evaluators.Unlock()
	if evaluators.fixture != f {
		evaluators.fixture, evaluators.m = f, map[string]preempt.Evaluator{}
	}
	if ev, ok := evaluators.m[impl.Name()]; ok {
		return ev, nil
	}
	ev, err := impl.NewEvaluator(f.Scenario.Cluster)
	if err != nil {
		return nil, err
	}
	preempt.SetFeatureGates(ev, f.Req.Config.FeatureGates)
	if _, err := ev.FindCandidates(context.Background(), f.Req); err != nil {
		return nil, fmt.Errorf("%s: warming up: %w", impl.Name(), err)
	}
	evaluators.m[impl.Name()] = ev
	return ev, nil
}

// ActuationCluster holds only the pods PrepareCandidate touches on c's node:
// its victims and the pods nominated to it. A clientset of it is cheap to
// build, so PrepareCandidate's benchmark measures the API calls rather than
// the loading of every pod of the cluster into a fake clientset.
func ActuationCluster(full *preempt.Cluster, c *preempt.Candidate) *preempt.Cluster {
	victims := map[string]bool{}
	for _, v := range c.Victims {
		victims[preempt.Key(v.Namespace, v.Name)] = true
	}
	out := &preempt.Cluster{}
	for _, p := range full.Pods {
		if victims[preempt.Key(p.Namespace, p.Name)] || (preempt.IsNominated(p) && p.Status.NominatedNodeName == c.Node) {
			out.Pods = append(out.Pods, p)
		}
	}
	return out
}

// Counts are the domain counts a benchmark reports per op.
type Counts struct {
	Candidates   int // candidates the dry run returned
	Victims      int // victims of the chosen candidate, or of every candidate when nothing is chosen
	NodesVisited int // nodes the dry run visited: candidates plus node statuses; -1 for stages without a dry run
}

// DryRunCounts counts a dry run whose candidates were not narrowed to one.
func DryRunCounts(dr preempt.DryRun) Counts {
	c := Counts{Candidates: len(dr.Candidates), NodesVisited: len(dr.Candidates) + len(dr.NodeStatuses)}
	for _, cand := range dr.Candidates {
		c.Victims += len(cand.Victims)
	}
	return c
}

// ChosenCounts counts a dry run and the candidate chosen from it.
func ChosenCounts(dr preempt.DryRun, chosen *preempt.Candidate) Counts {
	c := DryRunCounts(dr)
	c.Victims = 0
	if chosen != nil {
		c.Victims = len(chosen.Victims)
	}
	return c
}
