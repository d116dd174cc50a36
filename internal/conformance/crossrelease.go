package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/agreement"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
)

// CrossRelease is what CheckCrossRelease found on one problem.
type CrossRelease struct {
	// Same: both releases' upstream code gave the same decision.
	Same bool
	// Explained names the switches that explain the difference, joined
	// by "+": the smallest set (found by dropping each switch in turn) that,
	// set back to the old release's behaviour (the others at the new
	// one's), makes the reference give the old release's answer.
	Explained []string
	// Refused: an implementation did not model the problem.
	Refused bool
}

// CheckCrossRelease decides in with upstream's own code at two releases
// (oldImpl at oldRel, newImpl at newRel) and, when they differ, demands
// that the reference gives each release's decision at that release and
// that the named switches explain the difference (with every switch
// changed between them set back to oldRel's behaviour the reference gives
// oldRel's answer; then the smallest such set is named). It fails t on a
// difference the switches do not explain. switches are the switches the
// reference may use (nil: every one in preempt.Switches); a test passes
// fewer to show that each is needed.
func CheckCrossRelease(t TB, in Input, oldImpl, newImpl preempt.Implementation, oldRel, newRel string, switches []preempt.Switch) CrossRelease {
	t.Helper()
	ctx := context.Background()
	// Each release runs its own filter phase (the filter outcome is not
	// the problem's: it may change between releases), then preemption.
	type answer struct {
		Filter   preempt.FilterResult
		Decision preempt.Decision
	}
	at := func(impl preempt.Implementation, rel string, set map[preempt.Switch]bool) (answer, bool) {
		t.Helper()
		cfg := in.Request.Config
		cfg.Release, cfg.Switches = rel, set
		pod := in.Request.Pod
		if harness.Refusal(impl, in.Cluster, pod) != nil || harness.GateRefusal(impl, in.Cluster, pod, cfg) != nil {
			return answer{}, false
		}
		r, err := harness.Decide(ctx, impl, in.Cluster, pod, cfg, in.Request.Offset, in.Request.Now, in.Faults...)
		if err != nil {
			t.Fatalf("%s at %s: %v", impl.Name(), rel, err)
		}
		if agreement.TieIsRandom(impl) {
			r.Decision = untie(ctx, t, in, cfg, impl, r)
		}
		return answer{r.Filter, r.Decision}, true
	}
	oldD, ok1 := at(oldImpl, oldRel, nil)
	newD, ok2 := at(newImpl, newRel, nil)
	if !ok1 || !ok2 {
		return CrossRelease{Refused: true}
	}
	if cmp.Equal(oldD, newD) {
		return CrossRelease{Same: true}
	}
	ref := reference.Impl{}
	if d, _ := at(ref, newRel, nil); !cmp.Equal(d, newD) {
		t.Fatalf("cross-release on %v: the reference at %s does not give upstream %s's decision (-reference +upstream):\n%s", in, newRel, newRel, cmp.Diff(d, newD))
	}
	oldB, _ := preempt.ReleaseBehaviour(oldRel)
	newB, _ := preempt.ReleaseBehaviour(newRel)
	if switches == nil {
		for _, si := range preempt.Switches {
			switches = append(switches, si.Switch)
		}
	}
	back := map[preempt.Switch]bool{}
	for _, s := range switches {
		if oldB.On(s) != newB.On(s) {
			back[s] = oldB.On(s)
		}
	}
	all, _ := at(ref, newRel, back)
	if !cmp.Equal(all, oldD) {
		var names []string
		for s := range back {
			names = append(names, string(s))
		}
		t.Fatalf("cross-release on %v: %s and %s differ, and the reference's switches (%s) set back to %s do not explain it (-reference +upstream %s):\n%s",
			in, oldRel, newRel, strings.Join(names, ", "), oldRel, oldRel, cmp.Diff(all, oldD))
	}
	// The smallest set that still explains it: drop each switch that is
	// not needed, in turn.
	var names []string
	for _, s := range switches {
		v, ok := back[s]
		if !ok {
			continue
		}
		delete(back, s)
		if d, _ := at(ref, newRel, back); !cmp.Equal(d, oldD) {
			back[s] = v
			names = append(names, string(s))
		}
	}
	named := []string{strings.Join(names, "+")}
	return CrossRelease{Explained: named}
}

// String is what r found.
func (r CrossRelease) String() string {
	switch {
	case r.Refused:
		return "refused"
	case r.Same:
		return "same"
	}
	return fmt.Sprintf("explained by %s", strings.Join(r.Explained, ", "))
}

// untie is Untie, failing t when the reference fails.
func untie(ctx context.Context, t TB, in Input, cfg preempt.Config, impl preempt.Implementation, r harness.Result) preempt.Decision {
	t.Helper()
	d, err := Untie(ctx, in.Cluster, in.Request.Pod, cfg, in.Request.Offset, in.Request.Now, impl, r, in.Faults...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return d
}

// Untie is r's decision, or, when impl broke the final tie of the node
// pick at random (a tree, upstream@DIR, runs its own pick) and chose
// another of the nodes the reference at the same release ranks equal-best
// (agreement.Expected), the reference's decision: the same decision but
// for the tie, so that releases compare decisions, not draws. A node the
// reference does not rank equal-best is impl's own answer, kept.
func Untie(ctx context.Context, c *preempt.Cluster, pod *v1.Pod, cfg preempt.Config, offset int32, now time.Time, impl preempt.Implementation, r harness.Result, fs ...harness.Fault) (preempt.Decision, error) {
	ref, err := harness.Decide(ctx, reference.Impl{}, c, pod, cfg, offset, now, fs...)
	if err != nil || ref.Request == nil || cmp.Equal(ref.Decision, r.Decision) {
		return r.Decision, nil
	}
	refEv, err := reference.Impl{}.NewEvaluator(c)
	if err != nil {
		return r.Decision, fmt.Errorf("reference: %w", err)
	}
	preempt.SetFilterConfig(refEv, cfg)
	preempt.SetFilterNow(refEv, now)
	want, note, err := agreement.Expected(ctx, refEv, c, ref.Request, ref.Decision, r.Decision, impl, fs...)
	if err == nil && note != "" && cmp.Equal(want, r.Decision) {
		return ref.Decision, nil
	}
	return r.Decision, nil
}
