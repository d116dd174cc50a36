package bench

// The suites: one function per stage, each run for every shape, size and
// implementation, named BenchmarkStage/shape=S/nodes=N/impl=I.
//
// Every benchmark reports, besides time and allocations, the domain counts
// of one op: candidates/op (candidates of the dry run), victims/op (victims
// of the chosen candidate; for FindCandidates and DryRunPreemption, which
// choose none, of every candidate; for SelectVictimsOnNode, of the node)
// and nodes-visited/op (candidates plus node statuses of the dry run; 1 for
// SelectVictimsOnNode). They are the same for every implementation when the
// implementations agree, which the tables make easy to see.
//
// Run the default suite (shape basic; 5, 500, 5000 and 15000 nodes) with
//
//	go test ./bench -run '^$' -bench .
//
// The stages are exported so that an implementation in another module is
// measured under the project's names: Run(b, impl) runs them all as
// sub-benchmarks (BenchmarkX/Decide/shape=basic/nodes=5000/impl=NAME, which
// `compare stat` and `compare gate` read unchanged), or call one stage from
// a benchmark of its own name (func BenchmarkDecide(b *testing.B) {
// bench.Decide(b, impl) }) to get exactly the project's names.
//
// -bench.large adds 65000 nodes, -bench.nodes=N,M runs those node counts
// instead, and -bench.shapes=all every shape of synth.Shapes (or a
// comma-separated list of them, where the gang shapes of
// synth.GangShapes may be named too: PreemptionStream runs them, the
// other benchmarks skip them).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/preemptbench/preemptbench/bench/floor"
	"github.com/preemptbench/preemptbench/internal/extendertest"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// The suites' flags, -bench.large, -bench.shapes, -bench.nodes,
// -bench.preemptors, -bench.gangs and -bench.feature-gates, are registered on the command line of test binaries
// only (testing.Testing), as package testing registers its own: a program
// that imports bench, such as the compare command for the stage names,
// gets none of them.
var flags struct {
	large         bool
	shapes, nodes string
	preemptors    int
	gangs         int
	featureGates  string
}

func init() {
	if !testing.Testing() {
		return
	}
	flag.BoolVar(&flags.large, "bench.large", false, "also run 65000 nodes")
	flag.StringVar(&flags.shapes, "bench.shapes", "basic", "shapes to run: basic, all, or a comma-separated list of scenario shapes")
	flag.StringVar(&flags.nodes, "bench.nodes", "", "node counts to run, comma-separated, instead of the default sizes")
	flag.IntVar(&flags.preemptors, "bench.preemptors", 0, "preemptors of BenchmarkPreemptionStream (0: the shape's measured pods at the size, synth.Scenario.MeasurePods, or as many as nodes)")
	flag.IntVar(&flags.gangs, "bench.gangs", 0, "preemptor gangs of BenchmarkPreemptionStream's gang shapes, each of nodes/gangs members (0: synth.DefaultGangs, 10 at 100 nodes)")
	flag.StringVar(&flags.featureGates, "bench.feature-gates", "", "kube-scheduler's --feature-gates (`K=V,...`) the decisions and streams run with; an implementation that does not model a gate set away from its default is skipped")
}

// FeatureGates is -bench.feature-gates, parsed as kube-scheduler parses
// --feature-gates (preempt.ParseFeatureGates).
func FeatureGates() (map[string]bool, error) {
	g, err := preempt.ParseFeatureGates(flags.featureGates)
	if err != nil {
		return nil, fmt.Errorf("-bench.feature-gates: %w", err)
	}
	return g, nil
}

// Sizes are the node counts of the default suite; LargeSize runs only under
// -bench.large.
func Sizes() []int { return []int{5, 500, 5000, 15000} }

const LargeSize = 65000

func sizes(b *testing.B) []int {
	if flags.nodes != "" {
		var out []int
		for _, s := range strings.Split(flags.nodes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 0 {
				b.Fatalf("-bench.nodes: %q is not a node count", s)
			}
			out = append(out, n)
		}
		return out
	}
	if flags.large {
		return append(Sizes(), LargeSize)
	}
	return Sizes()
}

func shapes(b *testing.B) []string {
	switch flags.shapes {
	case "all":
		return synth.Shapes()
	case "", "basic":
		return []string{"basic"}
	}
	out := strings.Split(flags.shapes, ",")
	for _, s := range out {
		if !slices.Contains(synth.Shapes(), s) && !synth.IsGangShape(s) {
			b.Fatalf("-bench.shapes: unknown shape %q (known: %s, %s, all)", s, strings.Join(synth.Shapes(), ", "), strings.Join(synth.GangShapes(), ", "))
		}
	}
	return out
}

// each runs body as BenchmarkX/shape=S/nodes=N/impl=I for every shape, size
// and implementation, with the shared fixture of the shape and size.
func each(b *testing.B, impls []preempt.Implementation, body func(b *testing.B, impl preempt.Implementation, f *Fixture)) {
	for _, shape := range shapes(b) {
		b.Run("shape="+shape, func(b *testing.B) {
			for _, nodes := range sizes(b) {
				b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
					if synth.IsGangShape(shape) {
						b.Skipf("shape %s is a gang stream: only PreemptionStream runs it", shape)
					}
					for _, impl := range impls {
						b.Run("impl="+impl.Name(), func(b *testing.B) {
							f, err := FixtureFor(shape, nodes)
							if err != nil {
								b.Fatal(err)
							}
							if err := harness.Refusal(impl, f.Scenario.Cluster, f.Scenario.Pod); err != nil {
								b.Skipf("%s: %v", impl.Name(), err)
							}
							if err := harness.GateRefusal(impl, f.Scenario.Cluster, f.Scenario.Pod, f.Req.Config); err != nil {
								b.Skipf("%s: %v", impl.Name(), err)
							}
							body(b, impl, f)
						})
					}
				})
			}
		})
	}
}

// measure times op under the knobs of stage and reports its counts.
func measure(b *testing.B, stage string, op func() Counts) {
	if knobError != nil {
		b.Fatal(knobError)
	}
	k := KnobsFor(stage)
	b.ReportAllocs()
	var c Counts
	if k.Active() {
		for b.Loop() {
			k.Apply(func() { c = op() })
		}
	} else {
		for b.Loop() {
			c = op()
		}
	}
	b.ReportMetric(float64(c.Candidates), "candidates/op")
	b.ReportMetric(float64(c.Victims), "victims/op")
	if c.NodesVisited >= 0 {
		b.ReportMetric(float64(c.NodesVisited), "nodes-visited/op")
	}
}

// measureNoCounts is measure for a stage without domain counts.
func measureNoCounts(b *testing.B, stage string, op func()) {
	if knobError != nil {
		b.Fatal(knobError)
	}
	k := KnobsFor(stage)
	b.ReportAllocs()
	if k.Active() {
		for b.Loop() {
			k.Apply(op)
		}
	} else {
		for b.Loop() {
			op()
		}
	}
}

func evaluator(b *testing.B, impl preempt.Implementation, f *Fixture) preempt.Evaluator {
	ev, err := EvaluatorFor(impl, f)
	if err != nil {
		b.Fatal(err)
	}
	return ev
}

// candidates is the dry run's candidate list and the chosen one, outside
// the timed region; it skips the benchmark when there is none.
func candidates(b *testing.B, ev preempt.Evaluator, f *Fixture) ([]preempt.Candidate, *preempt.Candidate) {
	dr, err := ev.FindCandidates(context.Background(), f.Req)
	if err != nil {
		b.Fatal(err)
	}
	if len(dr.Candidates) == 0 {
		b.Skipf("shape %s at %d nodes has no candidates", f.Shape, f.Nodes)
	}
	return dr.Candidates, ev.SelectCandidate(dr.Candidates, f.Req)
}

// Preempt is the whole PostFilter with its actuation, through a fake
// clientset that answers every call with success (built once, its record
// cleared each op): the time is the decision and its API calls, no
// fixture. Each op passes its own preemptor object (Fixture.Request).
func Preempt(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		cs := harness.NewAcceptingClientset()
		i := 0
		measure(b, "Preempt", func() Counts {
			cs.ClearActions()
			i++
			d := ev.Preempt(ctx, cs, f.Request(i))
			if d.Status == preempt.Error {
				b.Fatalf("%s: %s", d.Status, d.Message)
			}
			return Counts{Candidates: len(d.Candidates), Victims: len(d.Victims), NodesVisited: len(d.Candidates) + len(d.NodeStatuses)}
		})
	})
}

// PreemptExtender is Preempt with one extender of the preempt verb, served
// on loopback, that answers the victims it is sent (extendertest's "keep"):
// the difference with Preempt is the cost an extender adds (the JSON of
// every candidate's victims both ways, one HTTP round trip, the answer
// resolved on the nodes' pods). PreemptExtenderNodeCache is the same with
// a node-cache-capable extender (UIDs instead of pods).
func PreemptExtender(b *testing.B, impls ...preempt.Implementation) {
	preemptExtender(b, "PreemptExtender", false, impls)
}

// PreemptExtenderNodeCache: see PreemptExtender.
func PreemptExtenderNodeCache(b *testing.B, impls ...preempt.Implementation) {
	preemptExtender(b, "PreemptExtenderNodeCache", true, impls)
}

func preemptExtender(b *testing.B, stage string, nodeCache bool, impls []preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		var reqs []*preempt.Request
		for i := range f.Requests {
			r := *f.Request(i)
			r.Config.Extenders = []configv1.Extender{extendertest.Config("keep", nodeCache, false)}
			reqs = append(reqs, &r)
		}
		cs := harness.NewAcceptingClientset()
		i := 0
		measure(b, stage, func() Counts {
			cs.ClearActions()
			i++
			d := ev.Preempt(ctx, cs, reqs[i%len(reqs)])
			if d.Status == preempt.Error {
				b.Fatalf("%s: %s", d.Status, d.Message)
			}
			return Counts{Candidates: len(d.Candidates), Victims: len(d.Victims), NodesVisited: len(d.Candidates) + len(d.NodeStatuses)}
		})
	})
}

// Decide is the full decision without actuation: FindCandidates
// and SelectCandidate on a prepared evaluator, each op with its own
// preemptor object. It is the number the project quotes. Passed Floor()
// among impls, it also runs floor.Floor as impl=floor: the floor of
// the same decision, on the clusters it models (resource-only ones, the
// basic shape among them; skipped on others).
func Decide(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		if _, ok := impl.(floorImpl); ok {
			decideFloor(b, f)
			return
		}
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		i := 0
		measure(b, "Decide", func() Counts {
			i++
			req := f.Request(i)
			dr, err := ev.FindCandidates(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			return ChosenCounts(dr, ev.SelectCandidate(dr.Candidates, req))
		})
	})
}

// FloorName is the implementation name BenchmarkDecide gives the floor.
const FloorName = "floor"

// floorImpl stands for floor.Floor among Decide's implementations. It
// is not an implementation of the contract: it decides only inside
// Decide, and NewEvaluator fails.
type floorImpl struct{}

func (floorImpl) Name() string { return FloorName }
func (floorImpl) NewEvaluator(*preempt.Cluster) (preempt.Evaluator, error) {
	return nil, errors.New("floor: the floor of a decision, measured by bench.Decide, not an implementation")
}

// Floor is the floor (floor.Floor) as Decide's impl=floor.
func Floor() preempt.Implementation { return floorImpl{} }

func decideFloor(b *testing.B, f *Fixture) {
	if len(f.Req.Config.FeatureGates) > 0 {
		b.Skip("floor: feature gates set; the floor models none")
	}
	fl, err := floor.New(f.Scenario.Cluster, f.Scenario.Pod, f.Request(0).Codes, f.Scenario.Now)
	if err != nil {
		b.Skip(err)
	}
	measure(b, "Decide", func() Counts {
		cands, best, visited := fl.Decide()
		c := Counts{Candidates: len(cands), NodesVisited: visited}
		if best >= 0 {
			c.Victims = len(cands[best].Victims)
		}
		return c
	})
}

// DecideCachedPreemptor is Decide passing the same request, and so the
// same preemptor object, every op: an implementation that caches
// per-preemptor work by the object (optimized) does that work once. It
// measures the cached path, and says so. Like Decide it passes the filter
// outcome as Request.Codes: until v1.37.2 it passed Fixture.Req, whose
// Filter map cost optimized one string-keyed map lookup per node of the
// cluster per decision (65000 at 65000 nodes), which made the cached path
// slower than Decide there.
func DecideCachedPreemptor(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		req := f.Request(0)
		measure(b, "DecideCachedPreemptor", func() Counts {
			dr, err := ev.FindCandidates(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			return ChosenCounts(dr, ev.SelectCandidate(dr.Candidates, req))
		})
	})
}

// DecideCold is BenchmarkDecide with the evaluator built in the
// op: a decision on a snapshot seen for the first time.
func DecideCold(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ctx := context.Background()
		i := 0
		measure(b, "DecideCold", func() Counts {
			i++
			req := f.Request(i)
			ev, err := impl.NewEvaluator(f.Scenario.Cluster)
			if err != nil {
				b.Fatal(err)
			}
			preempt.SetFeatureGates(ev, req.Config.FeatureGates)
			dr, err := ev.FindCandidates(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			return ChosenCounts(dr, ev.SelectCandidate(dr.Candidates, req))
		})
	})
}

// NewEvaluator builds the prepared snapshot, the cold part of a
// decision. Upstream builds its framework lazily, on the first request, so
// its cold cost shows in BenchmarkDecideCold, not here.
func NewEvaluator(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		measureNoCounts(b, "NewEvaluator", func() {
			if _, err := impl.NewEvaluator(f.Scenario.Cluster); err != nil {
				b.Fatal(err)
			}
		})
	})
}

func FindCandidates(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		i := 0
		measure(b, "FindCandidates", func() Counts {
			i++
			dr, err := ev.FindCandidates(ctx, f.Request(i))
			if err != nil {
				b.Fatal(err)
			}
			return DryRunCounts(dr)
		})
	})
}

// DryRunPreemption runs the dry run over the fixture's potential
// nodes from offset 0 with the default candidate budget.
func DryRunPreemption(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		if len(f.Potential) == 0 {
			b.Skipf("shape %s at %d nodes has no potential nodes", f.Shape, f.Nodes)
		}
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		i := 0
		measure(b, "DryRunPreemption", func() Counts {
			i++
			return DryRunCounts(ev.DryRunPreemption(ctx, f.Request(i), f.Potential, 0, f.NumCandidates))
		})
	})
}

// SelectVictimsOnNode selects the victims on the first node the
// dry run visits.
func SelectVictimsOnNode(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		if len(f.Potential) == 0 {
			b.Skipf("shape %s at %d nodes has no potential nodes", f.Shape, f.Nodes)
		}
		ev := evaluator(b, impl, f)
		ctx := context.Background()
		node := f.Potential[0]
		i := 0
		measure(b, "SelectVictimsOnNode", func() Counts {
			i++
			victims, _, st := ev.SelectVictimsOnNode(ctx, f.Request(i), node)
			if st.Code == preempt.Error {
				b.Fatalf("%s: %s", node, st.Message())
			}
			c := Counts{Victims: len(victims), NodesVisited: 1}
			if st.IsSuccess() && len(victims) > 0 {
				c.Candidates = 1
			}
			return c
		})
	})
}

// SelectCandidate picks among the candidates the implementation's
// FindCandidates produced.
func SelectCandidate(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ev := evaluator(b, impl, f)
		cands, _ := candidates(b, ev, f)
		i := 0
		measure(b, "SelectCandidate", func() Counts {
			i++
			best := ev.SelectCandidate(cands, f.Request(i))
			c := Counts{Candidates: len(cands), NodesVisited: -1}
			if best != nil {
				c.Victims = len(best.Victims)
			}
			return c
		})
	})
}

// PrepareCandidate actuates the chosen candidate through a fake
// clientset that answers every call with success (built once, its record
// cleared each op).
func PrepareCandidate(b *testing.B, impls ...preempt.Implementation) {
	each(b, impls, func(b *testing.B, impl preempt.Implementation, f *Fixture) {
		ev := evaluator(b, impl, f)
		cands, best := candidates(b, ev, f)
		if best == nil {
			b.Skip("no candidate chosen")
		}
		ctx := context.Background()
		cs := harness.NewAcceptingClientset()
		i := 0
		measure(b, "PrepareCandidate", func() Counts {
			cs.ClearActions()
			i++
			if err := ev.PrepareCandidate(ctx, cs, best, f.Request(i)); err != nil {
				b.Fatal(err)
			}
			return Counts{Candidates: len(cands), Victims: len(best.Victims), NodesVisited: -1}
		})
	})
}

// suite lists the stage benchmarks in the order they run; Stages returns
// their names.
var suite = []struct {
	Name string
	Run  func(b *testing.B, impls ...preempt.Implementation)
}{
	{"Preempt", Preempt}, {"Decide", Decide}, {"DecideCachedPreemptor", DecideCachedPreemptor}, {"DecideCold", DecideCold},
	{"NewEvaluator", NewEvaluator}, {"FindCandidates", FindCandidates},
	{"DryRunPreemption", DryRunPreemption}, {"SelectVictimsOnNode", SelectVictimsOnNode},
	{"SelectCandidate", SelectCandidate}, {"PrepareCandidate", PrepareCandidate},
	{"PreemptExtender", PreemptExtender}, {"PreemptExtenderNodeCache", PreemptExtenderNodeCache},
	{"PreemptionStream", PreemptionStream},
}

// Run runs every stage of the suite for impls, each as a sub-benchmark
// named after the stage.
func Run(b *testing.B, impls ...preempt.Implementation) {
	for _, s := range suite {
		b.Run(s.Name, func(b *testing.B) { s.Run(b, impls...) })
	}
}
