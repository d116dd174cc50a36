package floor

import (
	"flag"
	"testing"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
)

var floorNodes = flag.Int("floor.nodes", 65000, "nodes of BenchmarkVisitFloor's basic cluster")

// BenchmarkVisitFloor measures the floor of a dry run's visit: what any
// implementation of the contract must do per visited node of the basic
// shape, on the densest layout there is (flat int64 vectors, pods presorted
// by importance, one goroutine, nothing allocated): read the node's free
// cpu and memory, add back its lower-priority pods, check the preemptor
// fits, put pods back from the most important while it still fits, and
// write the candidate out (its node and victims into preallocated
// arrays of the contract's Candidate and Victim). No PDBs, no node
// filters, no allocation, no scheduling of workers. It visits the nodes a default-config decision at -floor.nodes
// visits (10%, offset 0) and reports ns/visit; compare with
// BenchmarkDecide's time divided by its nodes-visited/op.
func BenchmarkVisitFloor(b *testing.B) {
	sc := synth.MustBuild("basic", *floorNodes, 1)
	s := prepare(sc.Cluster)
	prio := corev1helpers.PodPriority(sc.Pod)
	reqs := podinfo.IncomingPodRequests(sc.Pod)
	cpu, mem := reqs.Cpu().MilliValue(), reqs.Memory().Value()
	visits := int(preempt.DefaultConfig().NumCandidates(int32(len(s.nodes))))
	outCands := make([]preempt.Candidate, visits)
	outVictims := make([]preempt.Victim, 0, visits*8)
	var potential [16]int32
	b.ResetTimer()
	for b.Loop() {
		outVictims = outVictims[:0]
		outCands = outCands[:0]
		for i := range visits {
			n := int32(i)
			base := int(n) * s.dims
			freeCPU := s.alloc[base+dimCPU] - s.requested[base+dimCPU]
			freeMem := s.alloc[base+dimMemory] - s.requested[base+dimMemory]
			k := 0
			for _, p := range s.sortedOf[n] {
				if s.priority[p] < prio {
					potential[k] = p
					k++
					freeCPU += s.req[int(p)*s.dims+dimCPU]
					freeMem += s.req[int(p)*s.dims+dimMemory]
				}
			}
			if k == 0 || cpu > freeCPU || mem > freeMem {
				continue
			}
			first := len(outVictims)
			for _, p := range potential[:k] {
				c, m := s.req[int(p)*s.dims+dimCPU], s.req[int(p)*s.dims+dimMemory]
				if cpu <= freeCPU-c && mem <= freeMem-m {
					freeCPU, freeMem = freeCPU-c, freeMem-m
					continue
				}
				outVictims = append(outVictims, s.victim[p])
			}
			outCands = append(outCands, preempt.Candidate{Node: s.names[n], Victims: outVictims[first:len(outVictims):len(outVictims)]})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(visits), "ns/visit")
	b.ReportMetric(float64(visits), "nodes-visited/op")
	if len(outVictims) < visits || len(outCands) != visits {
		b.Fatalf("%d candidates and %d victims for %d visits, want a candidate a node", len(outCands), len(outVictims), visits)
	}
}

// BenchmarkDecideFloor is Floor (the floor of a whole decision, what
// Decide times) on the basic shape at -floor.nodes, per visited node:
// BenchmarkVisitFloor's visits plus listing the potential nodes from the
// request's codes and picking one candidate by the five criteria. The
// bench package runs the same floor as impl=floor of BenchmarkDecide, so
// that `compare bench -bench Decide -impl optimized,floor` interleaves
// them. Compare its ns/visit with BenchmarkDecide's time per op divided
// by its nodes-visited/op.
func BenchmarkDecideFloor(b *testing.B) {
	sc := synth.MustBuild("basic", *floorNodes, 1)
	s, err := optimized.Prepare(sc.Cluster)
	if err != nil {
		b.Fatal(err)
	}
	fr := s.NewEvaluator(1).Filter(b.Context(), sc.Pod)
	codes := preempt.NewNodeOrder(sc.Cluster).Codes(fr, nil)
	f, err := New(sc.Cluster, sc.Pod, codes, sc.Now)
	if err != nil {
		b.Fatal(err)
	}
	var cands []preempt.Candidate
	best := -1
	b.ResetTimer()
	for b.Loop() {
		cands, best, _ = f.Decide()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(cands)), "ns/visit")
	b.ReportMetric(float64(len(cands)), "nodes-visited/op")
	if best < 0 {
		b.Fatalf("no candidate among %d", len(cands))
	}
}
