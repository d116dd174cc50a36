package conformance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
)

// ReleaseBehaviours: each release case (releasecases.go) decided at every
// release, and at every release with each switch set alone against it,
// for an implementation that models releases (preempt.ReleaseModeller).
// The outcome follows the case's own switch only: asserted here, then
// compared with the reference. An implementation that refuses a
// configuration (an upstream adapter asked for another release, or any
// implementation that is no ReleaseModeller asked for another behaviour)
// skips it, saying so.

// releaseCase is a problem on which one switch decides the outcome.
type releaseCase struct {
	name    string
	sw      preempt.Switch
	problem func(time.Time) (*preempt.Cluster, *v1.Pod)
	// check fails t unless res is the outcome with the switch on or off.
	check func(t *testing.T, res harness.Result, on bool)
	// faults are the API calls that fail.
	faults []harness.Fault
}

func victimKeys(d preempt.Decision) []string {
	var out []string
	for _, v := range d.Victims {
		out = append(out, preempt.Key(v.Namespace, v.Name))
	}
	return out
}

func releaseCases() []releaseCase {
	return []releaseCase{
		{"OverlappingPDBs", preempt.SwitchPDBStopAtFirstViolation, OverlappingPDBs, func(t *testing.T, res harness.Result, on bool) {
			want := map[bool]string{true: "n1", false: "n2"}[on]
			if got := res.Decision.NominatedNode; got != want {
				t.Errorf("nominated %q (violations %d), want %q", got, res.Decision.NumPDBViolations, want)
			}
		}, nil},
		{"NamespaceLess", preempt.SwitchNamespaceSelectorResolved, NamespaceLess,
			fitsOrPreempts("other/a", "the NotIn selector matches no namespace without Namespace objects"), nil},
		{"ResizedInPlace", preempt.SwitchResizedPodRequests, ResizedInPlace,
			fitsOrPreempts("default/other", "v0.37 counts the resized pod 400m, v0.36 600m"), nil},
		{"NodeDeclared", preempt.SwitchNodeDeclaredFeatures, NodeDeclared, func(t *testing.T, res harness.Result, on bool) {
			if on {
				if d := res.Decision; d.Status != preempt.Unschedulable || len(d.Victims) != 0 {
					t.Errorf("%v, victims %v; want Unschedulable (n1 declares no feature)", d.Status, victimKeys(d))
				}
				return
			}
			if got := victimKeys(res.Decision); !slices.Equal(got, []string{"default/low"}) {
				t.Errorf("victims %v, want [default/low] (no NodeDeclaredFeatures filter)", got)
			}
		}, nil},
		{"PodLevelResized", preempt.SwitchPodLevelResizeRequests, PodLevelResized, func(t *testing.T, res harness.Result, on bool) {
			if on {
				if got := victimKeys(res.Decision); len(res.Feasible) != 0 || !slices.Equal(got, []string{"default/low"}) {
					t.Errorf("feasible %v, victims %v; want none feasible and default/low preempted (the resized pod counts 2 cpu)", res.Feasible, got)
				}
				return
			}
			if !slices.Equal(res.Feasible, []string{"n1"}) {
				t.Errorf("feasible %v, want [n1] (the resized pod counts its spec's 1 cpu)", res.Feasible)
			}
		}, nil},
		{"AsyncVictimFault", preempt.SwitchAsyncSkipsLastVictim, AsyncVictimFault, func(t *testing.T, res harness.Result, on bool) {
			deleted := slices.ContainsFunc(res.Decision.Actions, func(a preempt.Action) bool { return a.Verb == "delete" && a.Name == "p2" })
			if got := victimKeys(res.Decision); !slices.Equal(got, []string{"default/p1", "default/p2"}) || deleted == on {
				t.Errorf("victims %v, p2 deleted %v; want p1 and p2, p2 deleted only without the switch (actions %v)", got, deleted, res.Decision.Actions)
			}
		}, AsyncVictimFaults},
		{"MissingCSIDriver", preempt.SwitchMissingCSIDriver, MissingCSIDriver, func(t *testing.T, res harness.Result, on bool) {
			if on {
				if d := res.Decision; d.Status != preempt.Unschedulable || len(d.Victims) != 0 {
					t.Errorf("%v, victims %v; want Unschedulable (n1's CSINode lacks %s)", d.Status, victimKeys(d), CSIDriverName)
				}
				return
			}
			if got := victimKeys(res.Decision); !slices.Equal(got, []string{"default/low"}) {
				t.Errorf("victims %v, want [default/low] (no check of missing drivers)", got)
			}
		}, nil},
		{"PortworxInline", preempt.SwitchPortworxMigrated, PortworxInline, func(t *testing.T, res harness.Result, on bool) {
			if on {
				if got := victimKeys(res.Decision); len(res.Feasible) != 0 || !slices.Equal(got, []string{"default/low"}) {
					t.Errorf("feasible %v, victims %v; want none feasible and default/low preempted (both Portworx volumes count, limit 1)", res.Feasible, got)
				}
				return
			}
			if !slices.Equal(res.Feasible, []string{"n1"}) {
				t.Errorf("feasible %v, want [n1] (Portworx not migrated without the CSINode's annotation)", res.Feasible)
			}
		}, nil},
		{"OnePodFull", preempt.SwitchSuccessMessage, OnePodFull, func(t *testing.T, res harness.Result, on bool) {
			want := ""
			if on {
				want = preempt.SuccessMessage("n1", 1)
			}
			if d := res.Decision; d.Status != preempt.Success || d.Message != want {
				t.Errorf("status %v, message %q; want Success, %q", d.Status, d.Message, want)
			}
		}, nil},
	}
}

// fitsOrPreempts: with the switch on the preemptor fits n1; off, it
// fits nowhere and preempts victim alone.
func fitsOrPreempts(victim, why string) func(t *testing.T, res harness.Result, on bool) {
	return func(t *testing.T, res harness.Result, on bool) {
		if on {
			if !slices.Equal(res.Feasible, []string{"n1"}) {
				t.Errorf("feasible %v, want [n1] (%s)", res.Feasible, why)
			}
			return
		}
		if got := victimKeys(res.Decision); len(res.Feasible) != 0 || !slices.Equal(got, []string{victim}) {
			t.Errorf("feasible %v, victims %v; want none feasible and %s preempted (%s)", res.Feasible, got, victim, why)
		}
	}
}

// releaseConfigs are the configurations each case runs with: every
// release, then every release with each switch set against it.
func releaseConfigs() []preempt.Config {
	var out []preempt.Config
	for _, r := range preempt.Releases {
		cfg := preempt.DefaultConfig()
		cfg.Release = r
		out = append(out, cfg)
		b, _ := preempt.ReleaseBehaviour(r)
		for _, si := range preempt.Switches {
			c := cfg
			c.Switches = map[preempt.Switch]bool{si.Switch: !b.On(si.Switch)}
			out = append(out, c)
		}
	}
	return out
}

func configName(cfg preempt.Config) string {
	name := cfg.ReleaseName()
	for s, on := range cfg.Switches {
		if on {
			name += "+" + string(s)
		} else {
			name += "-" + string(s)
		}
	}
	return name
}

func testReleaseBehaviours(t *testing.T, impl preempt.Implementation) {
	now := testobj.Epoch.Add(time.Hour)
	cases := releaseCases()
	for _, si := range preempt.Switches {
		if !slices.ContainsFunc(cases, func(tc releaseCase) bool { return tc.sw == si.Switch }) {
			t.Errorf("switch %s has no case", si.Switch)
		}
	}
	for _, tc := range cases {
		for _, cfg := range releaseConfigs() {
			t.Run(tc.name+"/"+configName(cfg), func(t *testing.T) {
				c, pod := tc.problem(now)
				res, err := harness.Decide(context.Background(), impl, c, pod, cfg, 0, now, tc.faults...)
				var u *preempt.Unmodelled
				if errors.As(err, &u) {
					t.Skipf("%s refuses: %v", impl.Name(), err)
				}
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, res, cfg.Behaviour().On(tc.sw))
				if res.Request != nil {
					in := Input{Cluster: c, Request: res.Request, Faults: tc.faults}
					in.Request.Config = cfg
					CheckAgainstReference(t, in, impl)
				}
			})
		}
	}
}
