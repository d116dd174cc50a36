package optimized

import (
	"flag"
	"math"
	"testing"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/scenario"
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
	sc := scenario.MustBuild("basic", *floorNodes, 1)
	s, err := Prepare(sc.Cluster)
	if err != nil {
		b.Fatal(err)
	}
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
				outVictims = append(outVictims, preempt.Victim{Namespace: s.podNS[p], Name: s.podName[p], Priority: s.priority[p]})
			}
			outCands = append(outCands, preempt.Candidate{Node: s.names[n], Victims: outVictims[first:len(outVictims):len(outVictims)]})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(visits), "ns/visit")
	b.ReportMetric(float64(visits), "nodes-visited/op")
	if len(outVictims) != 3*visits || len(outCands) != visits {
		b.Fatalf("%d victims for %d visits, want 3 a node", len(outVictims), visits)
	}
}

// BenchmarkDecideFloor is the floor of a whole decision, what Decide
// times, per visited node: BenchmarkVisitFloor's visits plus the two
// other things every decision does. First, read the request's filter
// codes (one per node of the cluster, in its order) to list the potential
// nodes in name order. Second, pick one candidate by upstream's five
// criteria (fewest PDB violations, lowest highest-priority victim,
// smallest priority sum, fewest victims, latest start of the
// highest-priority victims), here computed as each candidate is written.
// The pod-count fit, which NodeResourcesFit checks, is checked too. One
// goroutine, flat arrays, nothing allocated, no PDBs, no node filters.
// Compare its ns/visit with BenchmarkDecide's time per op divided by its
// nodes-visited/op.
func BenchmarkDecideFloor(b *testing.B) {
	sc := scenario.MustBuild("basic", *floorNodes, 1)
	s, err := Prepare(sc.Cluster)
	if err != nil {
		b.Fatal(err)
	}
	fr := s.NewEvaluator(1).Filter(b.Context(), sc.Pod)
	codes := preempt.NewNodeOrder(sc.Cluster).Codes(fr, nil)
	prio := corev1helpers.PodPriority(sc.Pod)
	reqs := podinfo.IncomingPodRequests(sc.Pod)
	cpu, mem := reqs.Cpu().MilliValue(), reqs.Memory().Value()
	now := sc.Now.UnixNano()
	potentialNodes := make([]int32, 0, len(s.nodes))
	var visits int
	outCands := make([]preempt.Candidate, 0, len(s.nodes))
	outVictims := make([]preempt.Victim, 0, len(s.nodes)*8)
	var potential [16]int32
	var best int
	b.ResetTimer()
	for b.Loop() {
		potentialNodes = potentialNodes[:0]
		for n, i := range s.clusterIdx {
			if codes[i] == preempt.Unschedulable {
				potentialNodes = append(potentialNodes, int32(n))
			}
		}
		visits = int(preempt.DefaultConfig().NumCandidates(int32(len(potentialNodes))))
		outVictims = outVictims[:0]
		outCands = outCands[:0]
		best = -1
		var bestScore [4]int64
		for _, n := range potentialNodes[:visits] {
			base := int(n) * s.dims
			freeCPU := s.alloc[base+dimCPU] - s.requested[base+dimCPU]
			freeMem := s.alloc[base+dimMemory] - s.requested[base+dimMemory]
			pods, allowed := int64(len(s.boundOf[n])), s.allowedPods[n]
			k := 0
			for _, p := range s.sortedOf[n] {
				if s.priority[p] < prio {
					potential[k] = p
					k++
					freeCPU += s.req[int(p)*s.dims+dimCPU]
					freeMem += s.req[int(p)*s.dims+dimMemory]
					pods--
				}
			}
			if k == 0 || cpu > freeCPU || mem > freeMem || pods+1 > allowed {
				continue
			}
			first := len(outVictims)
			highest, sum, earliest := int32(math.MinInt32), int64(0), int64(math.MaxInt64)
			for _, p := range potential[:k] {
				c, m := s.req[int(p)*s.dims+dimCPU], s.req[int(p)*s.dims+dimMemory]
				if cpu <= freeCPU-c && mem <= freeMem-m && pods+2 <= allowed {
					freeCPU, freeMem, pods = freeCPU-c, freeMem-m, pods+1
					continue
				}
				outVictims = append(outVictims, preempt.Victim{Namespace: s.podNS[p], Name: s.podName[p], Priority: s.priority[p]})
				start := now
				if s.hasStart[p] {
					start = s.startNanos[p]
				}
				switch pr := s.priority[p]; {
				case pr > highest:
					highest, earliest = pr, start
				case pr == highest:
					earliest = min(earliest, start)
				}
				sum += int64(s.priority[p]) + math.MaxInt32 + 1
			}
			outCands = append(outCands, preempt.Candidate{Node: s.names[n], Victims: outVictims[first:len(outVictims):len(outVictims)]})
			// No PDBs: the first criterion ties; then the other four,
			// each as a score where larger is better.
			score := [4]int64{-int64(highest), -sum, -int64(len(outVictims) - first), earliest}
			if best < 0 || score[0] > bestScore[0] || (score[0] == bestScore[0] && (score[1] > bestScore[1] ||
				(score[1] == bestScore[1] && (score[2] > bestScore[2] || (score[2] == bestScore[2] && score[3] > bestScore[3]))))) {
				best, bestScore = len(outCands)-1, score
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(visits), "ns/visit")
	b.ReportMetric(float64(visits), "nodes-visited/op")
	if len(outVictims) != 3*visits || len(outCands) != visits || best < 0 {
		b.Fatalf("%d victims for %d visits (want 3 a node), best %d", len(outVictims), visits, best)
	}
}
