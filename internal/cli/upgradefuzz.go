package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"pgregory.net/rapid"
	"sigs.k8s.io/yaml"

	"github.com/preemptbench/preemptbench/internal/conformance"
	"github.com/preemptbench/preemptbench/internal/loader"
	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
)

// fuzzUpgrade is `compare upgrade -fuzztime D`: it draws problems (the
// conformance suite's generator, without extenders, API faults, a running
// preemption or behaviour switches, which files cannot say) and decides
// each with both sides' own code, as the cross-release property does
// (conformance.CheckCrossRelease): the same decision, or a difference the
// reference explains with the named switches between the sides' releases.
// On the first difference nothing explains, rapid shrinks the problem to
// the smallest it can; that one is written as files decide reads, checked
// to give the same difference from the files, and printed with both
// decisions (exit 1). Exit 0 when nothing is found in the time.
func fuzzUpgrade(fromSide, toSide upgradeSide, cfg preempt.Config, fuzztime time.Duration, outDir string, timeout time.Duration, output string, stdout, stderr io.Writer) int {
	impls, err := upgradeImpls(fromSide, toSide, timeout, stderr)
	if err == nil {
		// Built (and their children started) before the clock starts.
		for _, impl := range impls {
			if _, err = impl.NewEvaluator(&preempt.Cluster{}); err != nil {
				err = fmt.Errorf("%s: %w", impl.Name(), err)
				break
			}
		}
	}
	defer closeImpls(impls[:])
	if err != nil {
		fmt.Fprintf(stderr, "compare upgrade: %v\n", err)
		return ExitBadInput
	}
	found, tried, err := fuzzUpgradeFind(impls, fromSide, toSide, cfg, fuzztime)
	if err != nil {
		fmt.Fprintf(stderr, "compare upgrade: %v\n", err)
		return ExitBadInput
	}
	if found == nil {
		fmt.Fprintf(stdout, "upgrade %s -> %s: %d problems drawn in %v, every decision the same or explained by a named change\n", fromSide.given, toSide.given, tried, fuzztime)
		return ExitOK
	}
	if outDir == "" {
		if outDir, err = os.MkdirTemp("", "preemptbench-upgrade-"); err != nil {
			fmt.Fprintf(stderr, "compare upgrade: %v\n", err)
			return ExitBadInput
		}
	}
	files, args, err := writeUpgradeProblem(outDir, found.in)
	if err != nil {
		fmt.Fprintf(stderr, "compare upgrade: writing the problem found: %v\n", err)
		return ExitBadInput
	}
	// The files must give the difference: decide reads them as a user's.
	opts := decideOptions{clusterFiles: files.clusters, podFile: files.pod}
	opts.loadOpts = loader.Options{MaxBytes: loader.MaxInputBytes}
	c, pod, err := opts.load(io.Discard)
	if err != nil {
		fmt.Fprintf(stderr, "compare upgrade: reading back the problem found (%s): %v\n", outDir, err)
		return ExitBadInput
	}
	rcfg := found.in.Request.Config
	res, err := upgradeWith(c, pod, rcfg, found.in.Request.Offset, found.in.Request.Now, fromSide, toSide, impls)
	if err != nil {
		fmt.Fprintf(stderr, "compare upgrade: %v\n", err)
		return ExitBadInput
	}
	if output == "json" {
		b, _ := json.MarshalIndent(struct {
			UpgradeJSON
			Tried   int      `json:"tried"`
			Dir     string   `json:"dir"`
			Command []string `json:"command"`
			Finding string   `json:"finding"`
		}{res, tried, outDir, append([]string{"compare", "upgrade"}, args...), found.msg}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return ExitDiffer
	}
	fmt.Fprintf(stdout, "upgrade %s -> %s: a decision changes and no named change explains it (%d problems drawn; the smallest found: %d nodes, %d pods, %d PDBs)\n",
		fromSide.given, toSide.given, tried, len(found.in.Cluster.Nodes), len(found.in.Cluster.Pods), len(found.in.Cluster.PDBs))
	fmt.Fprintf(stdout, "  written to %s; again with:\n    compare upgrade %s -from %s -to %s\n", outDir, strings.Join(args, " "), fromSide.given, toSide.given)
	if !res.Changed || res.Explained {
		fmt.Fprintf(stdout, "  note: read back from the files, the problem no longer shows it (%s); the check's own words:\n", map[bool]string{true: "explained", false: "the same decision"}[res.Changed])
		fmt.Fprintf(stdout, "  %s\n", strings.ReplaceAll(found.msg, "\n", "\n  "))
		return ExitDiffer
	}
	for _, d := range res.Decisions {
		fmt.Fprintf(stdout, "  %s: %s\n", d.Implementation, summary(d))
	}
	if res.Note != "" {
		fmt.Fprintf(stdout, "  note: %s\n", res.Note)
	}
	return ExitDiffer
}

// upgradeFinding is a problem whose decision changes unexplained, with
// the cross-release check's message.
type upgradeFinding struct {
	in  conformance.Input
	msg string
}

// rapidOnce makes rapid usable outside `go test`: testing's flags
// registered and parsed (rapid asks testing.Short).
var rapidOnce sync.Once

// fuzzUpgradeFind runs the cross-release check on drawn problems for
// fuzztime, in rounds of rapid.Check, until one fails; rapid shrinks it.
// It returns the smallest failing problem it saw, or nil, and how many
// it drew.
func fuzzUpgradeFind(impls [2]preempt.Implementation, fromSide, toSide upgradeSide, cfg preempt.Config, fuzztime time.Duration) (*upgradeFinding, int, error) {
	rapidOnce.Do(func() {
		testing.Init()
		if !flag.Parsed() { // rapid asks testing.Short, which wants them parsed
			_ = flag.CommandLine.Parse(nil)
		}
	})
	// rapid's settings are flags of the process (a test binary's too):
	// set for this search, then put back.
	for name, v := range map[string]string{
		"rapid.nofailfile": "true",
		"rapid.checks":     "20",
		"rapid.shrinktime": "30s", // set again before each round
	} {
		f := flag.Lookup(name)
		if f == nil {
			return nil, 0, fmt.Errorf("rapid has no flag %s", name)
		}
		old := f.Value.String()
		if err := f.Value.Set(v); err != nil {
			return nil, 0, err
		}
		defer f.Value.Set(old)
	}
	deadline := time.Now().Add(fuzztime)
	tried := 0
	var last *upgradeFinding
	// Small problems first: rounds draw at most 3, 5, 8 and 16 nodes, then
	// the generator's most, and again; rapid shrinks what fails, and the
	// smallest failing problem seen is kept.
	sizes := []int{3, 5, 8, 16, conformance.MaxNodes}
	round := 0
	prop := func(rt *rapid.T) {
		s := conformance.GenSpec(sizes[round%len(sizes)]).Draw(rt, "spec")
		s.Extenders, s.Fault, s.Preempting, s.Switches = nil, 0, 0, 0
		s.Codes = false
		in := s.Build()
		in.Request.Config.FeatureGates = mergeGates(in.Request.Config.FeatureGates, cfg.FeatureGates)
		tried++
		rec := &fatalRecorder{TB: rt, fail: func(msg string) {
			if last == nil || size(in) <= size(last.in) {
				last = &upgradeFinding{in: in, msg: msg}
			}
		}}
		conformance.CheckCrossRelease(rec, in, impls[0], impls[1], fromSide.rel, toSide.rel, nil)
	}
	// Edge cases first: the suite's seeds, and one problem per pair of
	// adjacent criteria of the node pick.
	seeds := conformance.Seeds()
	picks := conformance.PickSeeds()
	for _, name := range slices.Sorted(maps.Keys(picks)) {
		seeds = append(seeds, picks[name])
	}
	for _, spec := range seeds {
		in := spec.Build()
		in.Request.Config.FeatureGates = mergeGates(in.Request.Config.FeatureGates, cfg.FeatureGates)
		tried++
		tb := &quietTB{}
		tb.run(func() { conformance.CheckCrossRelease(tb, in, impls[0], impls[1], fromSide.rel, toSide.rel, nil) })
		if tb.failed && (last == nil || size(in) < size(last.in)) {
			last = &upgradeFinding{in: in, msg: tb.log.String()}
		}
	}
	if last != nil {
		return last, tried, nil
	}
	// Once a problem fails, rounds go on at smaller sizes only, for at
	// most 20 s more (within fuzztime), keeping the smallest failure.
	var found time.Time
	for time.Now().Before(deadline) && (found.IsZero() || time.Since(found) < 20*time.Second) {
		if last != nil {
			smaller := slices.IndexFunc(sizes, func(n int) bool { return n >= len(last.in.Cluster.Nodes) })
			if smaller <= 0 {
				break // nothing smaller to draw
			}
			round %= smaller
		}
		// Shrinking stops at the deadline (a few seconds past it at most).
		if err := flag.Set("rapid.shrinktime", max(time.Until(deadline), 3*time.Second).String()); err != nil {
			return nil, tried, err
		}
		tb := &quietTB{}
		tb.run(func() { rapid.Check(tb, prop) })
		round++
		if tb.failed && last == nil {
			return nil, tried, fmt.Errorf("the check failed without a problem: %s", tb.log.String())
		}
		if tb.failed && found.IsZero() {
			found = time.Now()
		}
	}
	return last, tried, nil
}

// size orders problems for keeping the smallest: nodes, then pods and
// PDBs.
func size(in conformance.Input) int {
	return 1000*len(in.Cluster.Nodes) + len(in.Cluster.Pods) + len(in.Cluster.PDBs)
}

// mergeGates is the drawn gates with the user's on top.
func mergeGates(drawn, user map[string]bool) map[string]bool {
	if len(user) == 0 {
		return drawn
	}
	out := maps.Clone(drawn)
	if out == nil {
		out = map[string]bool{}
	}
	maps.Copy(out, user)
	return out
}

// fatalRecorder records the cross-release check's failure with fail,
// then fails the rapid test with it (which does not return).
type fatalRecorder struct {
	conformance.TB
	fail func(msg string)
}

func (r *fatalRecorder) Fatalf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	r.fail(msg)
	r.TB.Fatalf("%s", msg)
}

// quietTB is a rapid.TB outside `go test`: it keeps the log, and a
// failure stops the check (rapid has already shrunk the problem when it
// reports one).
type quietTB struct {
	log    bytes.Buffer
	failed bool
}

// run calls f, which may stop on t's failure (a panic of t).
func (t *quietTB) run(f func()) {
	defer func() {
		if r := recover(); r != nil && r != t {
			panic(r)
		}
	}()
	f()
}

func (t *quietTB) Helper()                   {}
func (t *quietTB) Name() string              { return "upgrade" }
func (t *quietTB) Logf(f string, a ...any)   { fmt.Fprintf(&t.log, f+"\n", a...) }
func (t *quietTB) Log(a ...any)              { fmt.Fprintln(&t.log, a...) }
func (t *quietTB) Skipf(string, ...any)      {}
func (t *quietTB) Skip(...any)               {}
func (t *quietTB) SkipNow()                  {}
func (t *quietTB) Errorf(f string, a ...any) { t.Logf(f, a...); t.failed = true }
func (t *quietTB) Error(a ...any)            { t.Log(a...); t.failed = true }
func (t *quietTB) Fatalf(f string, a ...any) { t.Errorf(f, a...); panic(t) }
func (t *quietTB) Fatal(a ...any)            { t.Error(a...); panic(t) }
func (t *quietTB) FailNow()                  { t.failed = true; panic(t) }
func (t *quietTB) Fail()                     { t.failed = true }
func (t *quietTB) Failed() bool              { return t.failed }

// problemFiles are the files a problem is written as.
type problemFiles struct {
	clusters []string
	pod      string
}

// writeUpgradeProblem writes in as files decide and upgrade read: the
// cluster (cluster.yaml, and namespaces.yaml when it has Namespaces), the
// preemptor (pod.yaml) and, when DefaultPreemption's arguments are not
// // and returns the files and the flags that give the rest of the request
// (DefaultPreemption's arguments, offset, time, gates, synchronous
// preemption).
func writeUpgradeProblem(dir string, in conformance.Input) (problemFiles, []string, error) {
	var files problemFiles
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return files, nil, err
	}
	write := func(name string, b []byte) (string, error) {
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, b, 0o644)
	}
	cb, err := synth.ListYAML(in.Cluster)
	if err != nil {
		return files, nil, err
	}
	p, err := write("cluster.yaml", cb)
	if err != nil {
		return files, nil, err
	}
	files.clusters = append(files.clusters, p)
	args := []string{"-cluster", p}
	list := v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	if len(in.Cluster.Namespaces) > 0 {
		for _, ns := range in.Cluster.Namespaces {
			ns := ns.DeepCopy()
			ns.APIVersion, ns.Kind = "v1", "Namespace"
			raw, err := json.Marshal(ns)
			if err != nil {
				return files, nil, err
			}
			list.Items = append(list.Items, runtime.RawExtension{Raw: raw})
		}
		b, err := yaml.Marshal(list)
		if err != nil {
			return files, nil, err
		}
		if p, err = write("namespaces.yaml", b); err != nil {
			return files, nil, err
		}
		files.clusters = append(files.clusters, p)
		args = append(args, "-cluster", p)
	}
	pb, err := synth.PodYAML(in.Request.Pod)
	if err != nil {
		return files, nil, err
	}
	if files.pod, err = write("pod.yaml", pb); err != nil {
		return files, nil, err
	}
	args = append(args, "-pod", files.pod)
	cfg := in.Request.Config
	def := preempt.DefaultConfig()
	if cfg.MinCandidateNodesPercentage != def.MinCandidateNodesPercentage {
		args = append(args, "-min-candidate-nodes-percentage", fmt.Sprint(cfg.MinCandidateNodesPercentage))
	}
	if cfg.MinCandidateNodesAbsolute != def.MinCandidateNodesAbsolute {
		args = append(args, "-min-candidate-nodes-absolute", fmt.Sprint(cfg.MinCandidateNodesAbsolute))
	}
	args = append(args, "-offset", fmt.Sprint(in.Request.Offset), "-now", in.Request.Now.UTC().Format(time.RFC3339))
	if len(cfg.FeatureGates) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(cfg.FeatureGates)) {
			kv = append(kv, fmt.Sprintf("%s=%t", k, cfg.FeatureGates[k]))
		}
		args = append(args, "-feature-gates", strings.Join(kv, ","))
	}
	if cfg.Synchronous {
		args = append(args, "-async=false")
	}
	return files, args, nil
}
