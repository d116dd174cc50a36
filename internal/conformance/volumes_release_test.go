package conformance

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/releases"
)

// The volume tables at the earlier releases (issue 32): each case is
// decided by the release's own code (its child, upstream@VERSION) and by
// the reference and optimized asked for that release; the whole outcome
// (every node's filter status, the decision with its messages, or the
// error) must be the child's. The tables' expectations are v1.37.2's;
// the releases' volume filters differ only by the switches
// preempt.SwitchMissingCSIDriver and preempt.SwitchPortworxMigrated.

// VolumeTableCase is one case of a volume table.
type VolumeTableCase struct {
	Name    string
	Cluster func() *preempt.Cluster
	Pod     func() *v1.Pod
	Now     time.Time
}

// releaseChildren are the earlier releases' children, each built (or
// found in the cache) and started once per test binary.
var releaseChildren = func() map[string]func() (preempt.Implementation, error) {
	m := map[string]func() (preempt.Implementation, error){}
	for _, r := range registry.Releases() {
		m[r.Version] = sync.OnceValues(func() (preempt.Implementation, error) {
			impl, ok, err := registry.LookupRelease(r.Name(), 0, os.Stderr)
			if err != nil || !ok {
				return nil, errors.Join(err, os.ErrNotExist)
			}
			_, err = impl.(*releases.Impl).Client()
			return impl, err
		})
	}
	return m
}()

// CheckVolumeTableAtEarlierReleases decides every case at every earlier
// release with that release's child, the reference and optimized (and
// its parallel dry run), and fails on any difference from the child.
func CheckVolumeTableAtEarlierReleases(t *testing.T, cases []VolumeTableCase) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the earlier releases with")
	}
	type outcome struct {
		Filter   preempt.FilterResult
		Decision preempt.Decision
		Err      string
	}
	decide := func(impl preempt.Implementation, tc VolumeTableCase, cfg preempt.Config) outcome {
		res, err := harness.Decide(context.Background(), impl, tc.Cluster(), tc.Pod(), cfg, 0, tc.Now)
		if err != nil {
			return outcome{Err: err.Error()}
		}
		return outcome{Filter: res.Filter, Decision: res.Decision}
	}
	impls := []preempt.Implementation{reference.Impl{}, optimized.Impl{}, optimized.Impl{Workers: 3, ParallelFrom: 1}}
	for _, r := range registry.Releases() {
		t.Run(r.Version, func(t *testing.T) {
			child, err := releaseChildren[r.Version]()
			if err != nil {
				t.Fatalf("%s: %v", r.Name(), err)
			}
			cfg := preempt.DefaultConfig()
			cfg.Release = r.Version
			for _, tc := range cases {
				t.Run(tc.Name, func(t *testing.T) {
					want := decide(child, tc, cfg)
					t.Logf("%s: err %q; filter %v; %s %q node %q victims %v", r.Name(), want.Err, want.Filter.NodeStatuses,
						want.Decision.Status, want.Decision.Message, want.Decision.NominatedNode, want.Decision.Victims)
					for i, impl := range impls {
						if diff := cmp.Diff(want, decide(impl, tc, cfg), cmpopts.EquateEmpty()); diff != "" {
							t.Errorf("impl %d, %s at %s (-%s +%s):\n%s", i, impl.Name(), r.Version, r.Name(), impl.Name(), diff)
						}
					}
					checkFilterCodesAt(t, tc, cfg)
				})
			}
		})
	}
}

func TestVolumeBindingAtEarlierReleases(t *testing.T) {
	var cases []VolumeTableCase
	for _, tc := range vbCases {
		cases = append(cases, VolumeTableCase{tc.name, tc.cluster, tc.pod, now})
	}
	CheckVolumeTableAtEarlierReleases(t, cases)
}

func TestVolumeRestrictionsZoneAtEarlierReleases(t *testing.T) {
	var cases []VolumeTableCase
	for _, tc := range volumeRZCases() {
		cases = append(cases, VolumeTableCase{tc.name, tc.cluster, tc.pod, vrzNow})
	}
	CheckVolumeTableAtEarlierReleases(t, cases)
}

// checkFilterCodesAt: optimized's FilterCodes (its fast paths) gives its
// Filter's codes under cfg's release behaviour.
func checkFilterCodesAt(t *testing.T, tc VolumeTableCase, cfg preempt.Config) {
	t.Helper()
	ctx := context.Background()
	c, pod := tc.Cluster(), tc.Pod()
	ev, err := optimized.Impl{}.NewEvaluator(c)
	if err != nil {
		t.Fatal(err)
	}
	preempt.SetFilterConfig(ev, cfg)
	fr := ev.Filter(ctx, pod)
	want := make([]preempt.Code, len(c.Nodes))
	for i, n := range c.Nodes {
		want[i] = preempt.Success
		for _, st := range fr.NodeStatuses {
			if st.Node == n.Name {
				want[i] = st.Code
			}
		}
	}
	if diff := cmp.Diff(want, ev.(preempt.CodeFilter).FilterCodes(ctx, pod, nil)); diff != "" {
		t.Errorf("optimized at %s: FilterCodes (-Filter +FilterCodes):\n%s", cfg.Release, diff)
	}
}
