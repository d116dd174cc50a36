package bench

import (
	"context"
	"flag"
	"runtime"
	"slices"
	"testing"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
)

var speedGate = flag.Bool("bench.speedgate", false, "run TestSpeedRatioGate (CI does)")

// Speed gate thresholds: CI's baseline-free regression gate.
const (
	minSpeedup  = 10
	gateRounds  = 6
	gateNodes   = 5000
	decideAlloc = 3 // result lists; plus 2 per dry-run worker
	// preemptorAlloc is the per-preemptor work (its request vector,
	// PreFilter state, victim buffers) that optimized caches by the pod
	// object: every op passes a new object, so every op pays it.
	preemptorAlloc = 15
)

// TestSpeedRatioGate is the gate CI runs without a baseline: on the basic
// shape at 5000 nodes, a full decision (FindCandidates + SelectCandidate)
// by optimized must be at least 10x faster than by reference, measured as
// the ratio of medians over interleaved rounds in this one run, and must
// stay within its allocation budget. It measures time, so it runs only
// when asked (-bench.speedgate) and not under -race.
func TestSpeedRatioGate(t *testing.T) {
	if !*speedGate {
		t.Skip("timing gate: run with -bench.speedgate (scripts/ci.sh does)")
	}
	f, err := FixtureFor("basic", gateNodes)
	if err != nil {
		t.Fatal(err)
	}
	decide := func(impl preempt.Implementation) func(b *testing.B) {
		ev, err := impl.NewEvaluator(f.Scenario.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		return func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				req := f.Request(i) // its own preemptor object, as BenchmarkDecide
				dr, err := ev.FindCandidates(context.Background(), req)
				if err != nil || ev.SelectCandidate(dr.Candidates, req) == nil {
					b.Fatalf("no decision: %v", err)
				}
			}
		}
	}
	ref, opt := decide(registry.Reference()), decide(mustLookup(t, "optimized"))
	var refNs, optNs []float64
	var optAllocs int64
	for range gateRounds { // interleaved: A B A B ...
		r, o := testing.Benchmark(ref), testing.Benchmark(opt)
		refNs = append(refNs, float64(r.NsPerOp()))
		optNs = append(optNs, float64(o.NsPerOp()))
		optAllocs = max(optAllocs, o.AllocsPerOp())
	}
	ratio := median(refNs) / median(optNs)
	t.Logf("basic/%d nodes: reference %.0f ns/op, optimized %.0f ns/op (medians of %d interleaved rounds): %.1fx; optimized allocs/op %d",
		gateNodes, median(refNs), median(optNs), gateRounds, ratio, optAllocs)
	if ratio < minSpeedup {
		t.Errorf("optimized is only %.1fx faster than reference, want at least %dx", ratio, minSpeedup)
	}
	if budget := int64(decideAlloc + preemptorAlloc + 2*runtime.GOMAXPROCS(0)); optAllocs > budget {
		t.Errorf("optimized allocates %d times per decision, budget %d", optAllocs, budget)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mustLookup(t *testing.T, name string) preempt.Implementation {
	t.Helper()
	impl, err := registry.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return impl
}
