package upstream

import (
	"context"
	"math"
	"slices"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// CandidatesToVictimsMap is the plugin's, recording the candidates' order
// for OrderedScoreFuncs.
func (p *plugin) CandidatesToVictimsMap(c []preemption.Candidate) map[string]*extenderv1.Victims {
	p.mu.Lock()
	p.order = p.order[:0]
	for _, cand := range c {
		p.order = append(p.order, cand.Name())
	}
	// With extenders configured, Preempt's callExtenders maps the dry
	// run's candidates (the first call) and rebuilds them from a map of
	// victims, whether or not an extender answered; SelectCandidate maps
	// those (the second call): their list order is then the contract's,
	// node names (extender.Call), not the map's. A SelectCandidate called
	// on its own maps its list once, in its order.
	p.victimsMaps++
	if len(p.cfg.Extenders) > 0 && p.victimsMaps > 1 {
		slices.Sort(p.order)
	}
	p.mu.Unlock()
	return p.DefaultPreemption.CandidatesToVictimsMap(c)
}

// OrderedScoreFuncs is the plugin's (nil: pickOneNodeForPreemption's five
// criteria, then a map-order pick) unless the evaluator breaks the final
// tie in list order (Impl.ListOrderTie): then the same five criteria,
// restated from pickOneNodeForPreemption, and a sixth, the candidate's
// place in the list (first best).
func (p *plugin) OrderedScoreFuncs(ctx context.Context, m map[string]*extenderv1.Victims) []func(string) int64 {
	if !p.listOrderTie {
		return p.DefaultPreemption.OrderedScoreFuncs(ctx, m)
	}
	p.mu.Lock()
	place := make(map[string]int64, len(p.order))
	for i, node := range p.order {
		if _, ok := place[node]; !ok {
			place[node] = int64(i)
		}
	}
	p.mu.Unlock()
	return []func(string) int64{
		func(node string) int64 { return -m[node].NumPDBViolations },
		func(node string) int64 { return -int64(corev1helpers.PodPriority(m[node].Pods[0])) },
		func(node string) int64 {
			var sum int64
			for _, pod := range m[node].Pods {
				sum += int64(corev1helpers.PodPriority(pod)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(node string) int64 { return -int64(len(m[node].Pods)) },
		func(node string) int64 {
			if t := util.GetEarliestPodStartTime(m[node]); t != nil {
				return t.UnixNano()
			}
			return math.MinInt64
		},
		func(node string) int64 { return -place[node] },
	}
}
