package releases_test

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/harness"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/internal/testobj"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// A releasePair is two adjacent releases of preempt.Releases and
// upstream's own code at each: an earlier release's module (a child), or
// the in-process upstream for upstream.Version.
type releasePair struct {
	old, new string
}

func (p releasePair) String() string { return p.old + "->" + p.new }

// releasePairs are every adjacent pair of preempt.Releases, oldest first.
func releasePairs() []releasePair {
	var out []releasePair
	for i := 1; i < len(preempt.Releases); i++ {
		out = append(out, releasePair{preempt.Releases[i-1], preempt.Releases[i]})
	}
	return out
}

// implAt is upstream's own code at version: the in-process upstream (with
// the children's list-order final tie) or the release's child.
func implAt(t testing.TB, version string) preempt.Implementation {
	t.Helper()
	if version == upstream.Version {
		return upstream.Impl{ListOrderTie: true}
	}
	return releaseAt(t, version)
}

// drop is in without pod groups when the older release predates
// spec.schedulingGroup (preempt.SchedulingGroupSince), which it would
// refuse (preempt.PodGroupGap): the generator gives most problems some,
// and the pair's check would decide too few otherwise.
func (p releasePair) drop(in conformance.Input) conformance.Input {
	if slices.Index(preempt.Releases, p.old) >= slices.Index(preempt.Releases, preempt.SchedulingGroupSince) {
		return in
	}
	return dropGroups(in)
}

// dropGroups is in without pod groups: no PodGroups, no pod in one.
func dropGroups(in conformance.Input) conformance.Input {
	c := *in.Cluster
	c.PodGroups, c.CompositePodGroups = nil, nil
	c.Pods = slices.Clone(c.Pods)
	for i, q := range c.Pods {
		if q.Spec.SchedulingGroup != nil {
			q = q.DeepCopy()
			q.Spec.SchedulingGroup = nil
			c.Pods[i] = q
		}
	}
	in.Cluster = &c
	if in.Request.Pod.Spec.SchedulingGroup != nil {
		req := *in.Request
		req.Pod = req.Pod.DeepCopy()
		req.Pod.Spec.SchedulingGroup = nil
		in.Request = &req
	}
	return in
}

// check is conformance.CheckCrossRelease on the pair.
func (p releasePair) check(t testing.TB, tb conformance.TB, in conformance.Input, switches []preempt.Switch) conformance.CrossRelease {
	return conformance.CheckCrossRelease(tb, in, implAt(t, p.old), implAt(t, p.new), p.old, p.new, switches)
}

// TestCrossRelease is the cross-release property, for every adjacent pair
// of releases: on drawn problems, upstream's own code at the older
// release (the release module) and at the newer (a module, or in
// process) give the same decision, or a difference the reference's named
// switches explain (conformance.CheckCrossRelease); then the same on
// problems with storage (conformance.GenVolumes). It needs the release
// binaries and runs with PREEMPTBENCH_RELEASE_SUITE=1; -rapid.checks
// problems per pair (1000 is the size the issue asks); -run
// 'TestCrossRelease$/v1.35.4->v1.36.3' runs one pair.
func TestCrossRelease(t *testing.T) {
	if os.Getenv(SuiteEnv) == "" {
		t.Skipf("set %s=1 to run the cross-release property (it builds the earlier releases)", SuiteEnv)
	}
	for _, p := range releasePairs() {
		t.Run(p.String(), func(t *testing.T) {
			implAt(t, p.old)
			implAt(t, p.new)
			counts := map[string]int{}
			rapid.Check(t, func(rt *rapid.T) {
				in := p.drop(conformance.Gen(conformance.MaxNodes).Draw(rt, "input"))
				r := p.check(t, rt, in, nil)
				counts[r.String()]++
			})
			t.Logf("cross-release outcomes %s: %v", p, counts)
			if counts["same"] == 0 {
				t.Errorf("no problem gave the same decision in both releases: %v", counts)
			}
			// Problems with storage (conformance.GenVolumes): the volume
			// filters' changes are switches too (MissingCSIDriver,
			// PortworxMigrated).
			volumes := map[string]int{}
			rapid.Check(t, func(rt *rapid.T) {
				in := p.drop(conformance.GenVolumes(conformance.MaxVolumeNodes).Draw(rt, "input"))
				volumes[p.check(t, rt, in, nil).String()]++
			})
			t.Logf("cross-release outcomes %s with volumes: %v", p, volumes)
		})
	}
}

// FuzzCrossRelease is the same check on fuzzed problems (preempttest's
// decoder), each input on one adjacent pair of releases (picked by a hash
// of the input), so that the fuzzing time and a run's -fuzztime are
// split across the pairs rather than multiplied; `go test` runs the
// seeds, which fall on every pair.
//
// The releases are built, and their children started, before f.Fuzz:
// under -fuzz a worker that spends more than 10 seconds on one input
// panics ("deadlocked!", internal/fuzz's RunFuzzWorker), and a build
// takes minutes, a child's start a second or more on a loaded machine.
//
// Run it with a short -fuzzminimizetime:
//
//	PREEMPTBENCH_RELEASE_SUITE=1 go test ./releases -run '^$' -fuzz '^FuzzCrossRelease$' -fuzztime 60s -fuzzminimizetime 3s
//
// An input takes some 10 ms (calls to the child), so minimizing each new
// interesting input runs to the default limit, 60 s, during which the
// exec count stands still (it looked like a hang: a minute of a worker
// and its child exchanging requests, nothing reported).
func FuzzCrossRelease(f *testing.F) {
	for _, s := range conformance.Seeds() {
		f.Add(conformance.Encode(s))
	}
	pairs := releasePairs()
	for _, r := range registry.Releases() {
		if _, err := releaseAt(f, r.Version).NewEvaluator(&preempt.Cluster{}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Without pod groups, as before the decoder read them: their new
		// coverage made every input "interesting" and each a minimisation
		// of the child's calls; TestCrossRelease (rapid) draws them.
		s := conformance.Decode(data)
		s.Groups, s.Composites, s.GenericWorkload, s.Composite = nil, nil, false, false
		in := s.Build()
		h := fnv.New32a()
		h.Write(data)
		pairs[h.Sum32()%uint32(len(pairs))].check(t, t, in, nil)
	})
}

// failRecorder is a conformance.TB that records a failure instead of
// stopping the test.
type failRecorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *failRecorder) Fatalf(format string, a ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, a...)
	panic(r)
}
func (r *failRecorder) Helper() {}

func checkRecorded(t *testing.T, run func(tb conformance.TB) conformance.CrossRelease) (conformance.CrossRelease, *failRecorder) {
	rec := &failRecorder{TB: t}
	var res conformance.CrossRelease
	func() {
		defer func() {
			if r := recover(); r != nil && r != rec {
				panic(r)
			}
		}()
		res = run(rec)
	}()
	return res, rec
}

// Each switch is needed: on a problem where its change matters, the
// cross-release check names it, and without it (the reference may use
// every other switch) the check fails: every switch has a case.
func TestEachSwitchIsNeeded(t *testing.T) {
	base := testobj.Epoch.Add(time.Hour)
	type problem func(time.Time) (*preempt.Cluster, *v1.Pod)
	cases := []struct {
		sw      preempt.Switch
		problem problem
		explain string
		faults  []harness.Fault
	}{
		{preempt.SwitchPDBStopAtFirstViolation, conformance.OverlappingPDBs, "PDBStopAtFirstViolation+SuccessMessage", nil},
		{preempt.SwitchNamespaceSelectorResolved, conformance.NamespaceLess, "NamespaceSelectorResolved+SuccessMessage", nil},
		{preempt.SwitchSuccessMessage, conformance.OnePodFull, "SuccessMessage", nil},
		{preempt.SwitchResizedPodRequests, conformance.ResizedInPlace, "ResizedPodRequests+SuccessMessage", nil},
		{preempt.SwitchNodeDeclaredFeatures, conformance.NodeDeclared, "NodeDeclaredFeatures", nil},
		{preempt.SwitchPodLevelResizeRequests, conformance.PodLevelResized, "PodLevelResizeRequests", nil},
		{preempt.SwitchAsyncSkipsLastVictim, conformance.AsyncVictimFault, "AsyncSkipsLastVictim", conformance.AsyncVictimFaults},
		{preempt.SwitchPortworxMigrated, conformance.PortworxInline, "PortworxMigrated", nil},
		{preempt.SwitchMissingCSIDriver, conformance.MissingCSIDriver, "SuccessMessage+MissingCSIDriver", nil},
	}
	for _, si := range preempt.Switches {
		if !slices.ContainsFunc(cases, func(tc struct {
			sw      preempt.Switch
			problem problem
			explain string
			faults  []harness.Fault
		}) bool {
			return tc.sw == si.Switch
		}) {
			t.Errorf("switch %s has no case", si.Switch)
		}
	}
	for _, tc := range cases {
		t.Run(string(tc.sw), func(t *testing.T) {
			c, p := tc.problem(base)
			in := conformance.Input{Cluster: c, Request: &preempt.Request{Pod: p, Config: preempt.DefaultConfig(), Now: base}, Faults: tc.faults}
			if err := in.Cluster.Validate(); err != nil {
				t.Fatal(err)
			}
			pair := pairOf(t, tc.sw)
			res, rec := checkRecorded(t, func(tb conformance.TB) conformance.CrossRelease {
				return pair.check(t, tb, in, nil)
			})
			if rec.failed || res.Same || res.String() != "explained by "+tc.explain {
				t.Fatalf("with every switch: %v (failed %v: %s), want explained by %s", res, rec.failed, rec.msg, tc.explain)
			}
			var without []preempt.Switch
			for _, si := range preempt.Switches {
				if si.Switch != tc.sw {
					without = append(without, si.Switch)
				}
			}
			_, rec = checkRecorded(t, func(tb conformance.TB) conformance.CrossRelease {
				return pair.check(t, tb, in, without)
			})
			if !rec.failed {
				t.Errorf("without %s the cross-release check passes; want it to fail", tc.sw)
			}
			t.Logf("%s, with every switch: %v; without %s: %s", pair, res, tc.sw, firstLine(rec.msg))
		})
	}
}

// pairOf is the pair of releases across which s changed: the release
// before its Since, and Since.
func pairOf(t *testing.T, s preempt.Switch) releasePair {
	t.Helper()
	si, _ := preempt.SwitchInfoOf(s)
	at := slices.Index(preempt.Releases, si.Since)
	if at < 1 {
		t.Fatalf("switch %s: since %q, not a release after the first", s, si.Since)
	}
	return releasePair{preempt.Releases[at-1], si.Since}
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// TestUnknownGates checks Release.UnknownGates against the feature gates
// of both releases' pkg/features (from the module cache, when it holds
// v1.36.3's sources).
func TestUnknownGates(t *testing.T) {
	gates := func(version string) map[string]bool {
		out, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			t.Skipf("go env: %v", err)
		}
		b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+version, "pkg", "features", "kube_features.go"))
		if err != nil {
			t.Skipf("k8s.io/kubernetes@%s is not in the module cache: %v", version, err)
		}
		m := map[string]bool{}
		for _, sub := range regexp.MustCompile(`(?m)^\s+[A-Z][A-Za-z0-9]+ featuregate\.Feature = "([A-Za-z0-9]+)"`).FindAllStringSubmatch(string(b), -1) {
			m[sub[1]] = true
		}
		return m
	}
	for _, r := range registry.Releases() {
		old, cur := gates(r.Version), gates(upstream.Version)
		var want []string
		for g := range cur {
			if !old[g] {
				want = append(want, g)
			}
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(r.UnknownGates))
		if !slices.Equal(got, want) {
			t.Errorf("%s: UnknownGates %v, want %v", r.Name(), got, want)
		}
	}
}
