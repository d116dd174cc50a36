package cli

import (
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// The placements -placer names: how the members of a -pod-group gang are
// placed once the potential victims are gone (upstream's
// podGroupSchedulingFunc).
const (
	// placerFirstFit is the contract's preempt.FirstFit, which every
	// implementation runs.
	placerFirstFit = "firstfit"
	// placerScheduler is kube-scheduler's own pod-group scheduling, run
	// by the upstream adapter only (upstream.Impl.SchedulerPlacement).
	placerScheduler = "scheduler"
)

// checkPlacer checks -placer against the flags it depends on: scheduler
// takes -pod-group and -impl upstream alone (no other implementation
// runs kube-scheduler's placement, so none can be compared with it).
func checkPlacer(placer, implName, podGroupFile string) error {
	switch {
	case placer != placerFirstFit && placer != placerScheduler:
		return badf("-placer must be %s or %s, not %q", placerFirstFit, placerScheduler, placer)
	case placer == placerFirstFit:
		return nil
	case podGroupFile == "":
		return badf("-placer %s places a gang's members: it needs -pod-group", placerScheduler)
	case implName != "upstream":
		return badf("-placer %s runs kube-scheduler itself, in the upstream adapter only: it needs -impl upstream (alone), not %q", placerScheduler, implName)
	}
	return nil
}

// withPlacer returns impls with placer applied: under scheduler, the
// upstream adapter running kube-scheduler's placement.
func withPlacer(impls []preempt.Implementation, placer string) []preempt.Implementation {
	if placer != placerScheduler {
		return impls
	}
	out := make([]preempt.Implementation, len(impls))
	for i, impl := range impls {
		if u, ok := impl.(upstream.Impl); ok {
			u.SchedulerPlacement = true
			impl = u
		}
		out[i] = impl
	}
	return out
}
