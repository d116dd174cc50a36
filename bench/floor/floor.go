package floor

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/preemptbench/preemptbench/internal/podinfo"
	"github.com/preemptbench/preemptbench/preempt"
)

// Floor is the floor of a whole decision: what any implementation of the
// contract must do for one default-config decision (offset 0) on a
// resource-only cluster, written as plainly and as fast as the machine
// allows, to measure implementations against. It reads the request's
// filter codes (one per node, in the cluster's order) to list the
// potential nodes in name order; visits them until it has the default
// candidate count (free cpu, memory and pod count; lower-priority pods added back;
// the fit checked; pods put back from the most important while the
// preemptor still fits; the candidate and its victims written into the
// contract's Candidate and Victim); and picks one by upstream's five
// criteria as it goes. One goroutine, flat arrays, nothing allocated
// after New, no PDBs, no node filters: New refuses a cluster
// where any of those would matter, so on the clusters it takes its pick
// is upstream's (TestFloorPicksAsOptimized).
type Floor struct {
	s            *snapshot
	codes        []preempt.Code
	prio         int32
	cpu, mem     int64
	now          int64
	numCands     func(int32) int32
	potentialBuf []int32
	victimBuf    []int32 // one node's lower-priority pods
	outCands     []preempt.Candidate
	outVictims   []preempt.Victim
}

// New prepares the floor of deciding for pod on c with the filter
// codes of the filter phase (preempt.NodeOrder.Codes) at now. It refuses,
// naming the reason, a cluster or preemptor outside the floor's model:
// PDBs, nominated pods, host ports, (anti-)affinity, topology spread,
// node selectors, taints, unschedulable nodes, resources other than cpu
// and memory, pods not ordered by importance.
func New(c *preempt.Cluster, pod *v1.Pod, codes []preempt.Code, now time.Time) (*Floor, error) {
	if err := floorScope(c, pod); err != nil {
		return nil, fmt.Errorf("the floor does not model this cluster: %w", err)
	}
	s := prepare(c)
	if len(codes) != len(s.nodes) {
		return nil, fmt.Errorf("%d filter codes for %d nodes", len(codes), len(s.nodes))
	}
	for n, ok := range s.presorted {
		if !ok {
			return nil, fmt.Errorf("the floor does not model this cluster: the pods of node %s are not in importance order", s.names[n])
		}
	}
	most := 0
	for _, pods := range s.sortedOf {
		most = max(most, len(pods))
	}
	reqs := podinfo.IncomingPodRequests(pod)
	cfg := preempt.DefaultConfig()
	return &Floor{
		s: s, codes: codes, prio: corev1helpers.PodPriority(pod),
		cpu: reqs.Cpu().MilliValue(), mem: reqs.Memory().Value(), now: now.UnixNano(),
		numCands:     cfg.NumCandidates,
		potentialBuf: make([]int32, 0, len(s.nodes)),
		victimBuf:    make([]int32, most),
		outCands:     make([]preempt.Candidate, 0, len(s.nodes)),
		outVictims:   make([]preempt.Victim, 0, 16*len(s.nodes)),
	}, nil
}

func floorScope(c *preempt.Cluster, pod *v1.Pod) error {
	if len(c.PDBs) > 0 {
		return errors.New("it has PDBs")
	}
	if len(c.PodGroups) > 0 || len(c.CompositePodGroups) > 0 {
		return errors.New("it has pod groups")
	}
	for _, n := range c.Nodes {
		if len(n.Spec.Taints) > 0 || n.Spec.Unschedulable {
			return fmt.Errorf("node %s is tainted or unschedulable", n.Name)
		}
	}
	plain := func(p *v1.Pod) error {
		if p.Spec.Affinity != nil || len(p.Spec.TopologySpreadConstraints) > 0 || len(p.Spec.NodeSelector) > 0 || len(p.Spec.ResourceClaims) > 0 {
			return fmt.Errorf("pod %s/%s has affinity, spread, a node selector or claims", p.Namespace, p.Name)
		}
		for _, ct := range append(append([]v1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			for _, port := range ct.Ports {
				if port.HostPort > 0 {
					return fmt.Errorf("pod %s/%s has a host port", p.Namespace, p.Name)
				}
			}
		}
		if p.Status.NominatedNodeName != "" {
			return fmt.Errorf("pod %s/%s is nominated", p.Namespace, p.Name)
		}
		if u := preempt.VolumeGaps(p); u != nil {
			return fmt.Errorf("pod %s/%s has volumes the volume filters check", p.Namespace, p.Name)
		}
		return nil
	}
	for _, p := range c.Pods {
		if err := plain(p); err != nil {
			return err
		}
	}
	if err := plain(pod); err != nil {
		return err
	}
	if pod.Spec.NodeName != "" || pod.Spec.SchedulingGroup != nil {
		return fmt.Errorf("preemptor %s/%s names a node or a pod group", pod.Namespace, pod.Name)
	}
	for r := range podinfo.IncomingPodRequests(pod) {
		if r != v1.ResourceCPU && r != v1.ResourceMemory {
			return fmt.Errorf("preemptor %s/%s requests %s", pod.Namespace, pod.Name, r)
		}
	}
	return nil
}

// Decide makes one decision: the candidates (in visit order, their victims
// in importance order), the index of the chosen one (-1 for none) and the
// number of nodes visited. The lists are the floor's buffers, valid until
// the next call.
func (f *Floor) Decide() (cands []preempt.Candidate, best, visited int) {
	s := f.s
	potentialNodes := f.potentialBuf[:0]
	for n, i := range s.clusterIdx {
		if f.codes[i] == preempt.Unschedulable {
			potentialNodes = append(potentialNodes, int32(n))
		}
	}
	want := int(f.numCands(int32(len(potentialNodes))))
	outVictims, outCands := f.outVictims[:0], f.outCands[:0]
	best = -1
	var bestScore [4]int64
	potential := f.victimBuf
	for _, n := range potentialNodes {
		if len(outCands) == want { // every candidate is non-violating: no PDBs
			break
		}
		visited++
		base := int(n) * s.dims
		freeCPU := s.alloc[base+dimCPU] - s.requested[base+dimCPU]
		freeMem := s.alloc[base+dimMemory] - s.requested[base+dimMemory]
		pods, allowed := int64(len(s.boundOf[n])), s.allowedPods[n]
		k := 0
		for _, p := range s.sortedOf[n] {
			if s.priority[p] < f.prio {
				potential[k] = p
				k++
				freeCPU += s.req[int(p)*s.dims+dimCPU]
				freeMem += s.req[int(p)*s.dims+dimMemory]
				pods--
			}
		}
		if k == 0 || f.cpu > freeCPU || f.mem > freeMem || pods+1 > allowed {
			continue
		}
		first := len(outVictims)
		highest, sum, earliest := int32(math.MinInt32), int64(0), int64(math.MaxInt64)
		for _, p := range potential[:k] {
			c, m := s.req[int(p)*s.dims+dimCPU], s.req[int(p)*s.dims+dimMemory]
			if f.cpu <= freeCPU-c && f.mem <= freeMem-m && pods+2 <= allowed {
				freeCPU, freeMem, pods = freeCPU-c, freeMem-m, pods+1
				continue
			}
			outVictims = append(outVictims, s.victim[p])
			start := f.now
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
		// No PDBs: the first criterion ties; then the other four, each
		// as a score where larger is better.
		score := [4]int64{-int64(highest), -sum, -int64(len(outVictims) - first), earliest}
		if best < 0 || score[0] > bestScore[0] || (score[0] == bestScore[0] && (score[1] > bestScore[1] ||
			(score[1] == bestScore[1] && (score[2] > bestScore[2] || (score[2] == bestScore[2] && score[3] > bestScore[3]))))) {
			best, bestScore = len(outCands)-1, score
		}
	}
	f.outVictims, f.outCands = outVictims, outCands
	return outCands, best, visited
}

// Resource dimensions of the floor's flat arrays.
const (
	dimCPU = iota
	dimMemory
	dims
)

// snapshot is the cluster as flat arrays, nodes in name order: what the
// floor reads, built once by prepare (not timed by the benchmarks, as an
// implementation's evaluator is built outside the timer).
type snapshot struct {
	nodes      []*v1.Node // in name order
	names      []string
	clusterIdx []int32 // node n's position in the cluster's Nodes (its code's index)
	dims       int

	alloc       []int64 // node*dims
	allowedPods []int64
	requested   []int64 // node*dims, the bound pods' sum

	// boundOf[n] lists node n's bound pods in cluster order, sortedOf[n]
	// the same by importance, valid when presorted[n] (every one of them
	// has a start time, so the order does not depend on the clock).
	boundOf   [][]int32
	sortedOf  [][]int32
	presorted []bool

	priority   []int32
	req        []int64 // pod*dims
	victim     []preempt.Victim
	startNanos []int64 // valid when hasStart
	hasStart   []bool
}

func prepare(c *preempt.Cluster) *snapshot {
	s := &snapshot{dims: dims, clusterIdx: make([]int32, len(c.Nodes))}
	for i := range s.clusterIdx {
		s.clusterIdx[i] = int32(i)
	}
	sort.Slice(s.clusterIdx, func(i, j int) bool { return c.Nodes[s.clusterIdx[i]].Name < c.Nodes[s.clusterIdx[j]].Name })
	index := make(map[string]int32, len(c.Nodes))
	s.alloc, s.requested = make([]int64, len(c.Nodes)*dims), make([]int64, len(c.Nodes)*dims)
	for n, ci := range s.clusterIdx {
		node := c.Nodes[ci]
		s.nodes, s.names = append(s.nodes, node), append(s.names, node.Name)
		index[node.Name] = int32(n)
		s.alloc[n*dims+dimCPU] = node.Status.Allocatable.Cpu().MilliValue()
		s.alloc[n*dims+dimMemory] = node.Status.Allocatable.Memory().Value()
		s.allowedPods = append(s.allowedPods, node.Status.Allocatable.Pods().Value())
	}
	s.boundOf = make([][]int32, len(c.Nodes))
	for i, p := range c.Pods {
		reqs := podinfo.PlacedPodRequests(p)
		start, has := int64(0), p.Status.StartTime != nil
		if has {
			start = p.Status.StartTime.UnixNano()
		}
		s.priority = append(s.priority, corev1helpers.PodPriority(p))
		s.req = append(s.req, reqs.Cpu().MilliValue(), reqs.Memory().Value())
		s.victim = append(s.victim, preempt.VictimOf(p))
		s.startNanos, s.hasStart = append(s.startNanos, start), append(s.hasStart, has)
		if n, ok := index[p.Spec.NodeName]; ok && p.Spec.NodeName != "" {
			s.boundOf[n] = append(s.boundOf[n], int32(i))
		}
	}
	s.sortedOf, s.presorted = make([][]int32, len(c.Nodes)), make([]bool, len(c.Nodes))
	for n, bound := range s.boundOf {
		for _, p := range bound {
			s.requested[n*dims+dimCPU] += s.req[int(p)*dims+dimCPU]
			s.requested[n*dims+dimMemory] += s.req[int(p)*dims+dimMemory]
		}
		s.presorted[n] = !slices.ContainsFunc(bound, func(p int32) bool { return !s.hasStart[p] })
		sorted := slices.Clone(bound)
		pods := c.Pods
		slices.SortFunc(sorted, func(a, b int32) int {
			if s.priority[a] != s.priority[b] {
				return cmp.Compare(s.priority[b], s.priority[a])
			}
			if s.startNanos[a] != s.startNanos[b] {
				return cmp.Compare(s.startNanos[a], s.startNanos[b])
			}
			pa, pb := pods[a], pods[b]
			return cmp.Or(cmp.Compare(pa.Namespace, pb.Namespace), cmp.Compare(pa.Name, pb.Name), cmp.Compare(pa.UID, pb.UID))
		})
		s.sortedOf[n] = sorted
	}
	return s
}
