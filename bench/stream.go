package bench

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// StreamSizes are the node counts of BenchmarkPreemptionStream when
// -bench.nodes is not given, for a shape without sizes of its own
// (synth.UpstreamSizes): scheduler_perf's PreemptionBasic 5000Nodes.
func StreamSizes() []int { return []int{5000} }

// StreamSizesOf are the node counts BenchmarkPreemptionStream runs shape
// at when -bench.nodes is not given: its scheduler_perf workload's sizes
// (the podgroup shapes: 2 and 1000; pvs: 5 and 1000), StreamSizes
// otherwise.
func StreamSizesOf(shape string) []int {
	if s := synth.UpstreamSizes(shape); s != nil {
		return s
	}
	return StreamSizes()
}

// StreamPreemptors is how many preemptors the stream of f sends: the
// shape's measured pods at its size (synth.Scenario.MeasurePods: 100
// for the podgroup shapes at 1000 nodes), one per node for a shape
// without any.
func StreamPreemptors(f *Fixture) int {
	if m := f.Scenario.MeasurePods; m > 0 {
		return m
	}
	return f.Nodes
}

// StreamOf is the stream of f: its first k measured pods and the cluster
// they start from (synth.Scenario.Preemptors: k copies of its preemptor,
// preemptor-0, preemptor-1, ..., on its cluster; for pvs, k pods each
// with its own claim and volume, added to the cluster), synchronous
// actuation (the stream times the decisions and their API calls, not a
// background goroutine polled for), the fixture's feature gates (the
// shape's under -bench.feature-gates), the fixture's Now, seed 1.
func StreamOf(f *Fixture, k int) harness.Stream {
	c, preemptors := f.Scenario.Preemptors(k)
	s := harness.Stream{Cluster: c, Preemptors: preemptors, Config: preempt.DefaultConfig(), Now: f.Scenario.Now, Seed: Seed}
	s.Config.Synchronous = true
	s.Config.FeatureGates = f.Req.Config.FeatureGates
	return s
}

// PreemptionStream is scheduler_perf's PreemptionBasic as a stream
// (harness.Stream): with the basic shape at 5000 nodes, 20000 pods of
// 900m at priority 0 and 5000 preemptors of 3970m at priority 9999999
// (the templates of scheduler_perf at upstream.Version; basic-v1.36 has
// v1.36's preemptor, 3000m at priority 10), each filtered, preempting and
// bound in turn on one evolving cluster. One op is the whole stream; the
// timed region holds every cycle (Filter, Preempt through an accepting
// clientset, and following the cluster: Update or a new evaluator), not
// the first evaluator nor the preemptor objects. It reports pods/s
// (preemptors per second of timed stream), and per op the preemptors
// bound, the victims and the nodes the dry runs visited.
//
// The podgroup shapes are scheduler_perf's PreemptionPodGroupDisruptionMode
// as a stream, at its sizes (StreamSizesOf: 2 and 1000 nodes) with its
// measured preemptors (StreamPreemptors: 1 and 100) under
// GenericWorkload=true: 3970m preemptors evicting a node's 10 pods of
// 300m, plain (podgroup-none), members of Single groups (podgroup-single)
// or of All groups, whose members on other nodes go too (podgroup-all).
// An implementation that refuses the cluster or the gates is skipped
// with its refusal. -bench.nodes and -bench.preemptors override sizes and
// preemptors for every shape.
//
// The pvs shape is scheduler_perf's PreemptionPVs (volumes/) as a stream,
// at its sizes (5 and 1000 nodes) with a preemptor per node, each of
// 3000m at priority 10 with a claim and an in-tree EBS volume of its own
// (StreamOf adds them to the cluster), evicting three of a node's four
// 900m pods.
//
// The gang shapes (synth.GangShapes) are scheduler_perf's
// workload_preemption tests as gang streams (harness.GangStream), at their
// sizes (2 and 100 nodes), named
// PreemptionStream/shape=S/nodes=N/gangs=G/impl=I: G preemptor gangs of
// N/G members (-bench.gangs, default synth.DefaultGangs: 1 at 2 nodes,
// 10 at 100), each placed first-fit or, not fitting, preempting as one
// (PodGroupPostFilter) and bound. They report pods/s (member pods per
// second of timed stream, as scheduler_perf's collectMetrics on the gang
// pods), and per op the members bound and the victims;
// -bench.preemptors=K sends only the first K gangs. An implementation
// without gang preemption (no preempt.PodGroupPreempter) is skipped,
// saying so.
func PreemptionStream(b *testing.B, impls ...preempt.Implementation) {
	for _, shape := range shapes(b) {
		b.Run("shape="+shape, func(b *testing.B) {
			streamSizes := StreamSizesOf(shape)
			if flags.nodes != "" {
				streamSizes = sizes(b)
			}
			for _, nodes := range streamSizes {
				b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
					if synth.IsGangShape(shape) {
						gangStreams(b, shape, nodes, impls)
						return
					}
					f, err := FixtureFor(shape, nodes)
					if err != nil {
						b.Fatal(err)
					}
					k := flags.preemptors
					if k <= 0 {
						k = StreamPreemptors(f)
					}
					s := StreamOf(f, k)
					for _, impl := range impls {
						b.Run("impl="+impl.Name(), func(b *testing.B) {
							if err := harness.Refusal(impl, s.Cluster, s.Preemptors[0]); err != nil {
								b.Skipf("%s: %v", impl.Name(), err)
							}
							if err := harness.GateRefusal(impl, s.Cluster, s.Preemptors[0], s.Config); err != nil {
								b.Skipf("%s: %v", impl.Name(), err)
							}
							measureStream(b, impl, s)
						})
					}
				})
			}
		})
	}
}

func measureStream(b *testing.B, impl preempt.Implementation, s harness.Stream) {
	if knobError != nil {
		b.Fatal(knobError)
	}
	k := KnobsFor("PreemptionStream")
	ctx := context.Background()
	b.ReportAllocs()
	var res harness.StreamResult
	timedBatches(b, b.N, len(s.Preemptors), func() *harness.StreamRunner {
		c := *s.Cluster
		c.Pods = slices.Clone(s.Cluster.Pods)
		r, err := harness.NewStreamRunner(impl, &c, s)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}, func(r *harness.StreamRunner) {
		run := func() {
			for _, p := range s.Preemptors {
				if err := r.Next(ctx, p); err != nil {
					b.Fatal(err)
				}
			}
		}
		if k.Active() {
			k.Apply(run)
		} else {
			run()
		}
		res = r.Result
	})
	b.ReportMetric(float64(len(s.Preemptors)*b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(res.Bound), "bound/op")
	b.ReportMetric(float64(res.Victims), "victims/op")
	b.ReportMetric(float64(res.Visited), "nodes-visited/op")
}

// GangStreamFor is the gang stream of a gang shape at nodes with gangs
// preemptor gangs (0: synth.DefaultGangs): its cluster and gangs,
// synchronous actuation, the shape's gates under -bench.feature-gates,
// the scenario's Now.
func GangStreamFor(shape string, nodes, gangs int) (harness.GangStream, error) {
	sc, err := synth.BuildGangs(shape, nodes, gangs, Seed)
	if err != nil {
		return harness.GangStream{}, err
	}
	given, err := FeatureGates()
	if err != nil {
		return harness.GangStream{}, err
	}
	s := harness.GangStream{Cluster: sc.Cluster, Config: preempt.DefaultConfig(), Now: sc.Now}
	s.Config.Synchronous = true
	s.Config.FeatureGates = maps.Clone(sc.FeatureGates)
	maps.Copy(s.Config.FeatureGates, given)
	for _, g := range sc.Gangs {
		s.Gangs = append(s.Gangs, harness.Gang{PodGroup: g.PodGroup, Members: g.Members})
	}
	return s, nil
}

// StreamGangs is the number of preemptor gangs of a gang shape's stream
// at nodes: -bench.gangs, or synth.DefaultGangs.
func StreamGangs(nodes int) int {
	if flags.gangs > 0 {
		return flags.gangs
	}
	return synth.DefaultGangs(nodes)
}

func gangStreams(b *testing.B, shape string, nodes int, impls []preempt.Implementation) {
	gangs := StreamGangs(nodes)
	b.Run(fmt.Sprintf("gangs=%d", gangs), func(b *testing.B) {
		s, err := GangStreamFor(shape, nodes, gangs)
		if err != nil {
			b.Fatal(err)
		}
		if k := flags.preemptors; k > 0 && k < len(s.Gangs) {
			s.Gangs = s.Gangs[:k]
		}
		for _, impl := range impls {
			b.Run("impl="+impl.Name(), func(b *testing.B) {
				if err := harness.GangRefusal(impl, s.Cluster, s.Gangs, s.Config); err != nil {
					b.Skipf("%s: %v", impl.Name(), err)
				}
				measureGangStream(b, impl, s)
			})
		}
	})
}

func measureGangStream(b *testing.B, impl preempt.Implementation, s harness.GangStream) {
	if knobError != nil {
		b.Fatal(knobError)
	}
	k := KnobsFor("PreemptionStream")
	ctx := context.Background()
	b.ReportAllocs()
	members := 0
	for _, g := range s.Gangs {
		members += len(g.Members)
	}
	var res harness.GangStreamResult
	timedBatches(b, b.N, members, func() *harness.GangStreamRunner {
		c := *s.Cluster
		c.Pods = slices.Clone(s.Cluster.Pods)
		r, err := harness.NewGangStreamRunner(impl, &c, s)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}, func(r *harness.GangStreamRunner) {
		run := func() {
			for _, g := range s.Gangs {
				if err := r.Next(ctx, g); err != nil {
					b.Fatal(err)
				}
			}
		}
		if k.Active() {
			k.Apply(run)
		} else {
			run()
		}
		res = r.Result
	})
	b.ReportMetric(float64(members*b.N)/b.Elapsed().Seconds(), "pods/s")
	b.ReportMetric(float64(res.Bound), "bound/op")
	b.ReportMetric(float64(res.Victims), "victims/op")
}

// Streams are timed in batches (timedBatches): each batch's ops are set
// up untimed, one forced collection clears the setups' garbage, and the
// batch's ops then run timed back to back. A batch holds as many ops as
// make at least BatchPreemptors preemptors, so a stream of few
// preemptors (5 at PreemptionPVs' 5 nodes) is not charged a forced
// collection, and the cold caches it leaves, every few pods: a
// scheduler pays that once per collection, not once per stream.
const (
	// BatchPreemptors is the fewest preemptors a batch sends.
	BatchPreemptors = 1000
	// batchSetupBytes ends a batch early once its setups have allocated
	// this much (large clusters: one op a batch).
	batchSetupBytes = 256 << 20
)

// BatchOps is how many ops of perOp preemptors a batch holds, at most
// left: enough for BatchPreemptors preemptors.
func BatchOps(perOp, left int) int {
	return max(1, min(left, (BatchPreemptors+perOp-1)/max(perOp, 1)))
}

// timer is what timedBatches needs of a *testing.B.
type timer interface {
	StartTimer()
	StopTimer()
}

// timedBatches runs n ops (b.N): setup makes an op's runner (untimed),
// run times it.
func timedBatches[R any](b timer, n, perOp int, setup func() R, run func(R)) {
	var runners []R
	var ms runtime.MemStats
	for done := 0; done < n; {
		b.StopTimer()
		runners = runners[:0]
		runtime.ReadMemStats(&ms)
		start := ms.TotalAlloc
		for k := BatchOps(perOp, n-done); len(runners) < k; {
			runners = append(runners, setup())
			if runtime.ReadMemStats(&ms); ms.TotalAlloc-start > batchSetupBytes {
				break
			}
		}
		runtime.GC()
		b.StartTimer()
		for i, r := range runners {
			run(r)
			var zero R
			runners[i] = zero // its garbage is the timed ops' own
		}
		done += len(runners)
	}
}
