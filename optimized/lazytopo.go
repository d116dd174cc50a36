package optimized

import v1 "k8s.io/api/core/v1"

// The topology plugins' PreFilter (newTopology) reads every bound pod;
// their Filter runs only on a node that passes every filter before them
// (fits: NodePorts, NodeResourcesFit, then them). FilterCodes reports a
// code per node, the first failing filter's, so it makes their state
// only when a node gets that far: a member of a gang that fits nowhere
// by its requests (the gang streams' first-fit attempt) never pays for
// it. Neither PreFilter can refuse the pod outright, so the codes are
// those of the full decision.

// filterDecision is ev.decision(pod, 0) with the topology state not made
// yet (topoPending) unless the cached decision already has it.
func (ev *evaluator) filterDecision(pod *v1.Pod) *decision {
	if ev.dec == nil || ev.decPod != pod || (ev.dec.dra.readsClock() && !ev.dec.clock.Equal(ev.filterNow)) {
		d := newPlainDecision(ev.s, pod, 0, ev.filterNow, ev.b)
		d.topoPending = true
		ev.dec, ev.decPod = d, pod
	}
	ev.dec.now = 0
	return ev.dec
}

// completeTopology makes d's topology state when it is pending.
func (d *decision) completeTopology() {
	if d.topoPending {
		d.topo = newTopology(d.s, d.pod, d.b)
		d.topoPending = false
	}
}
