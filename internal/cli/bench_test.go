package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/bench"
	"github.com/preemptbench/preemptbench/internal/benchcmp"
	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
)

// fakeRunner stands for the bench test binary: each run prints one result
// line whose time depends on the implementation, the size and the round
// (reference 1µs per node, upstream twice that), so the job's tables and
// verdict are known in advance.
type fakeRunner struct {
	built  string
	runs   []string // sub-benchmark of each run, in order
	args   [][]string
	failAt int    // 1-based run that fails, 0 for none
	silent string // sub-benchmark whose run prints no result
	// skip is a sub-benchmark the binary skips: without -test.v it
	// prints no result, with it the skip and its reason.
	skip string
}

var benchPattern = regexp.MustCompile(`^-test\.bench=\^Benchmark(\w+)\$/\^shape=([\w.\\-]+)\$/\^nodes=(\d+)\$(?:/\^gangs=(\d+)\$)?/\^impl=(\w+)\$$`)

func (f *fakeRunner) Build(_ context.Context, bin string) error {
	f.built = bin
	return nil
}

func (f *fakeRunner) Run(_ context.Context, bin string, args []string) ([]byte, error) {
	if bin != f.built {
		return nil, fmt.Errorf("ran %s, built %s", bin, f.built)
	}
	var m []string
	for _, a := range args {
		if m = benchPattern.FindStringSubmatch(a); m != nil {
			break
		}
	}
	if m == nil {
		return nil, fmt.Errorf("no anchored -test.bench in %q", args)
	}
	gangs := ""
	if m[4] != "" {
		gangs = "/gangs=" + m[4]
	}
	name := fmt.Sprintf("%s/shape=%s/nodes=%s%s/impl=%s", m[1], strings.ReplaceAll(m[2], `\`, ""), m[3], gangs, m[5])
	if slices.Contains(args, "-test.v") {
		name += " -test.v"
	}
	f.runs = append(f.runs, name)
	f.args = append(f.args, args)
	if len(f.runs) == f.failAt {
		return nil, errors.New("bench.test: signal: killed")
	}
	out := "goos: linux\ngoarch: amd64\npkg: github.com/preemptbench/preemptbench/bench\ncpu: Fake CPU\n"
	if name == f.silent {
		return []byte(out + "PASS\n"), nil
	}
	if name == f.skip {
		return []byte(out + "PASS\n"), nil
	}
	if name == f.skip+" -test.v" {
		// As testing prints it: each level's name, the log, the skip.
		return []byte(out + "Benchmark" + m[1] + "\nBenchmark" + f.skip + "\n    stream.go:105: " + m[5] + ": pod groups (GenericWorkload=true) is not modelled\n--- SKIP: Benchmark" + f.skip + "\nPASS\n"), nil
	}
	round := 0
	for _, r := range f.runs {
		if r == name {
			round++
		}
	}
	nodes, _ := strconv.Atoi(m[3])
	ns := 1000*nodes + 7*round
	allocs := 10 * nodes
	switch m[5] {
	case "upstream":
		ns, allocs = 2*ns+5*round, 8*nodes
	case "optimized":
		ns, allocs = ns/40+3*round, 6
	}
	cands := min(nodes, max(100, nodes/10))
	out += fmt.Sprintf("Benchmark%s-2\t%d\t%d ns/op\t%d candidates/op\t%d nodes-visited/op\t3.000 victims/op\t%d B/op\t%d allocs/op\nPASS\n",
		name, 1e9/ns, ns, cands, cands, 100*allocs, allocs)
	return []byte(out), nil
}

// fakeBench installs a fake runner and a clock that ticks a second a call.
func fakeBench(t *testing.T, f *fakeRunner) {
	t.Helper()
	oldRunner, oldClock := newBenchRunner, benchClock
	t.Cleanup(func() { newBenchRunner, benchClock = oldRunner, oldClock })
	newBenchRunner = func() (benchRunner, error) { return f, nil }
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	benchClock = func() time.Time { now = now.Add(time.Second); return now }
	t.Setenv("TMPDIR", t.TempDir())
}

// The default job (no arguments): BenchmarkDecide, shape basic, 5, 500 and
// 5000 nodes, every implementation, 6 interleaved rounds.
func TestBenchDefaultJobGolden(t *testing.T) {
	f := &fakeRunner{}
	fakeBench(t, f)
	stdout, stderr, code := runCLI(t)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var want []string
	for range 6 {
		for _, n := range []int{5, 500, 5000} {
			for _, impl := range registry.Names() {
				want = append(want, fmt.Sprintf("Decide/shape=basic/nodes=%d/impl=%s", n, impl))
			}
		}
	}
	if diff := cmp.Diff(want, f.runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	raw := regexp.MustCompile(`\S*preemptbench-bench-\d+\.txt`)
	checkGolden(t, "bench-default", fmt.Sprintf("exit: %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout, raw.ReplaceAllString(stderr, "RAW")))
}

func TestBenchRunArgs(t *testing.T) {
	r := benchRun{Stage: "SelectVictimsOnNode", Shape: "pdb", Impl: "reference", Nodes: 500, Round: 2}
	want := []string{
		"-test.run=^$", `-test.bench=^BenchmarkSelectVictimsOnNode$/^shape=pdb$/^nodes=500$/^impl=reference$`,
		"-test.count=1", "-test.benchtime=2s", "-bench.shapes=pdb", "-bench.nodes=500",
	}
	if diff := cmp.Diff(want, r.args("2s")); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

// A gang shape's runs name their gangs (default: 1 at 2 nodes, 10 at
// 100; -gangs for every size) and pass them to the binary; a gang shape
// runs in PreemptionStream alone, with gangs dividing the node counts.
func TestBenchGangShapes(t *testing.T) {
	r := benchRun{Stage: "PreemptionStream", Shape: "gang-basic", Impl: "upstream", Nodes: 100, Gangs: 10}
	want := []string{
		"-test.run=^$", `-test.bench=^BenchmarkPreemptionStream$/^shape=gang-basic$/^nodes=100$/^gangs=10$/^impl=upstream$`,
		"-test.count=1", "-test.benchtime=3x", "-bench.shapes=gang-basic", "-bench.nodes=100", "-bench.gangs=10",
	}
	if diff := cmp.Diff(want, r.args("3x")); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-shape", "gang-basic,podgroup-all", "-nodes", "2,100"}, []string{
			"PreemptionStream/shape=gang-basic/nodes=2/gangs=1/impl=upstream", "PreemptionStream/shape=gang-basic/nodes=2/gangs=1/impl=reference",
			"PreemptionStream/shape=gang-basic/nodes=100/gangs=10/impl=upstream", "PreemptionStream/shape=gang-basic/nodes=100/gangs=10/impl=reference",
			"PreemptionStream/shape=podgroup-all/nodes=2/impl=upstream", "PreemptionStream/shape=podgroup-all/nodes=2/impl=reference",
			"PreemptionStream/shape=podgroup-all/nodes=100/impl=upstream", "PreemptionStream/shape=podgroup-all/nodes=100/impl=reference",
		}},
		{[]string{"-shape", "gang-affinity", "-nodes", "100", "-gangs", "1"}, []string{
			"PreemptionStream/shape=gang-affinity/nodes=100/gangs=1/impl=upstream", "PreemptionStream/shape=gang-affinity/nodes=100/gangs=1/impl=reference",
		}},
	} {
		f := &fakeRunner{}
		fakeBench(t, f)
		stdout, stderr, code := runCLI(t, append([]string{"bench", "-bench", "PreemptionStream", "-impl", "upstream,reference", "-count", "1"}, tc.args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d; stderr:\n%s", tc.args, code, stderr)
		}
		if d := cmp.Diff(tc.want, f.runs); d != "" {
			t.Errorf("%v: runs (-want +got):\n%s", tc.args, d)
		}
		// The verdict is on the first shape at the largest size.
		last := tc.want[len(tc.want)-1]
		if strings.HasPrefix(tc.want[0], "PreemptionStream/shape=gang-basic") {
			last = tc.want[3]
		}
		if row := last[:strings.LastIndex(last, "/impl=")]; !strings.Contains(stdout, "verdict: reference is the fastest on "+row+":") {
			t.Errorf("%v: no verdict on %s:\n%s", tc.args, row, stdout)
		}
	}
	opts, err := parseBench([]string{"-bench", "PreemptionStream", "-shape", "all"}, io.Discard)
	if err != nil || !slices.Contains(opts.shapes, "gang-podgroups") {
		t.Errorf("-bench PreemptionStream -shape all: %v, %v; want the gang shapes too", opts.shapes, err)
	}
	opts, err = parseBench([]string{"-bench", "Decide,PreemptionStream", "-shape", "all"}, io.Discard)
	if err != nil || slices.Contains(opts.shapes, "gang-podgroups") {
		t.Errorf("-bench Decide,PreemptionStream -shape all: %v, %v; want no gang shape", opts.shapes, err)
	}
}

func TestBenchChoices(t *testing.T) {
	f := &fakeRunner{}
	fakeBench(t, f)
	raw := t.TempDir() + "/raw.txt"
	stdout, stderr, code := runCLI(t, "bench", "-bench", "FindCandidates,Decide", "-nodes", "50", "-impl", "upstream,reference", "-count", "6", "-o", "markdown", "-raw", raw)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	// Rounds outermost, implementations innermost, in flag order.
	wantFirst := []string{
		"FindCandidates/shape=basic/nodes=50/impl=upstream", "FindCandidates/shape=basic/nodes=50/impl=reference",
		"Decide/shape=basic/nodes=50/impl=upstream", "Decide/shape=basic/nodes=50/impl=reference",
		"FindCandidates/shape=basic/nodes=50/impl=upstream",
	}
	if diff := cmp.Diff(wantFirst, f.runs[:5]); diff != "" {
		t.Errorf("first runs (-want +got):\n%s", diff)
	}
	if len(f.runs) != 24 {
		t.Errorf("%d runs, want 24", len(f.runs))
	}
	for _, want := range []string{
		"| sec/op | upstream | reference | upstream vs reference |",
		"verdict: reference is the fastest on FindCandidates/shape=basic/nodes=50: 0.50x upstream (p=0.002)",
		"verdict: reference is the fastest on Decide/shape=basic/nodes=50: 0.50x upstream (p=0.002)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "raw results in "+raw) {
		t.Errorf("stderr does not name the raw file %s:\n%s", raw, stderr)
	}
}

// TestBenchFloor: -impl floor adds the floor to Decide only, interleaved
// with the implementations; "all" is the registry's implementations.
func TestBenchFloor(t *testing.T) {
	f := &fakeRunner{}
	fakeBench(t, f)
	_, stderr, code := runCLI(t, "bench", "-bench", "FindCandidates,Decide", "-nodes", "50", "-impl", "optimized,floor", "-count", "6")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	want := []string{
		"FindCandidates/shape=basic/nodes=50/impl=optimized",
		"Decide/shape=basic/nodes=50/impl=optimized", "Decide/shape=basic/nodes=50/impl=floor",
		"FindCandidates/shape=basic/nodes=50/impl=optimized",
	}
	if diff := cmp.Diff(want, f.runs[:4]); diff != "" {
		t.Errorf("first runs (-want +got):\n%s", diff)
	}
	if len(f.runs) != 18 {
		t.Errorf("%d runs, want 18 (6 rounds of 2 optimized runs and 1 floor run)", len(f.runs))
	}
	opts, err := parseBench([]string{"-impl", "all"}, io.Discard)
	if err != nil || slices.Contains(opts.impls, bench.FloorName) {
		t.Errorf("-impl all: %v, %v; want the registry without the floor", opts.impls, err)
	}
}

func TestBenchFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		runner  fakeRunner
		wantErr string
	}{
		{"unknown benchmark", []string{"bench", "-bench", "Decide,Nope"}, fakeRunner{}, `-bench: unknown "Nope"`},
		{"unknown implementation", []string{"bench", "-impl", "fast"}, fakeRunner{}, `-impl: unknown "fast"`},
		{"unknown shape", []string{"bench", "-shape", "round"}, fakeRunner{}, `-shape: unknown "round"`},
		{"gang shape outside the stream", []string{"bench", "-bench", "Decide", "-shape", "gang-basic"}, fakeRunner{}, "-shape gang-basic: a gang stream, which only -bench PreemptionStream runs"},
		{"gangs not dividing the nodes", []string{"bench", "-bench", "PreemptionStream", "-shape", "gang-basic", "-nodes", "100", "-gangs", "3"}, fakeRunner{}, "-gangs: shape gang-basic: 3 gangs at 100 nodes"},
		{"negative gangs", []string{"bench", "-bench", "PreemptionStream", "-gangs", "-1"}, fakeRunner{}, "-gangs: -1 is negative"},
		{"floor outside Decide", []string{"bench", "-bench", "Preempt", "-impl", "optimized,floor"}, fakeRunner{}, "-impl floor: the floor of a decision runs only in -bench Decide"},
		{"bad nodes", []string{"bench", "-nodes", "5,x"}, fakeRunner{}, `-nodes: "x" is not a positive node count`},
		{"bad count", []string{"bench", "-count", "0"}, fakeRunner{}, "-count 0: need at least 1"},
		{"bad output", []string{"bench", "-o", "csv"}, fakeRunner{}, `-o must be text or markdown, not "csv"`},
		{"arguments", []string{"bench", "extra"}, fakeRunner{}, `unexpected arguments ["extra"]`},
		{"failed run", []string{"bench", "-nodes", "5"}, fakeRunner{failAt: 3}, "signal: killed"},
		{"no result", []string{"bench", "-nodes", "5"}, fakeRunner{silent: "Decide/shape=basic/nodes=5/impl=upstream"}, "run of Decide/shape=basic/nodes=5/impl=upstream printed no result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeBench(t, &tc.runner)
			_, stderr, code := runCLI(t, tc.args...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, ExitBadInput, tc.wantErr)
			}
		})
	}
}

// An implementation the bench package skips (it refuses the shape's pod
// groups) is asked once for its reason, said, and left out of every
// round; the others are compared as usual. Every run skipped is an error.
func TestBenchSkipped(t *testing.T) {
	const skip = "PreemptionStream/shape=podgroup-all/nodes=2/impl=optimized"
	f := &fakeRunner{skip: skip}
	fakeBench(t, f)
	stdout, stderr, code := runCLI(t, "bench", "-bench", "PreemptionStream", "-shape", "podgroup-all", "-nodes", "2", "-impl", "upstream,reference,optimized", "-count", "2")
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	want := []string{
		"PreemptionStream/shape=podgroup-all/nodes=2/impl=upstream", "PreemptionStream/shape=podgroup-all/nodes=2/impl=reference", skip, skip + " -test.v",
		"PreemptionStream/shape=podgroup-all/nodes=2/impl=upstream", "PreemptionStream/shape=podgroup-all/nodes=2/impl=reference",
	}
	if d := cmp.Diff(want, f.runs); d != "" {
		t.Errorf("runs (-want +got):\n%s", d)
	}
	for _, line := range []string{
		"compare: " + skip + " skipped: optimized: pod groups (GenericWorkload=true) is not modelled\n",
		"[6/6 0:07] " + skip + ", round 2/2: skipped, as in round 1\n",
	} {
		if !strings.Contains(stderr, line) {
			t.Errorf("stderr lacks %q:\n%s", line, stderr)
		}
	}
	if !strings.Contains(stdout, "verdict: reference is the fastest on PreemptionStream/shape=podgroup-all/nodes=2") || strings.Contains(stdout, "optimized") {
		t.Errorf("stdout:\n%s", stdout)
	}

	f = &fakeRunner{skip: skip}
	fakeBench(t, f)
	if _, stderr, code := runCLI(t, "bench", "-bench", "PreemptionStream", "-shape", "podgroup-all", "-nodes", "2", "-impl", "optimized", "-count", "1"); code != ExitBadInput || !strings.Contains(stderr, "every run was skipped") {
		t.Errorf("every run skipped: exit %d, stderr:\n%s", code, stderr)
	}
}

func TestVerdictWithoutResult(t *testing.T) {
	if got, want := verdict(&benchcmp.Report{}, "Decide/shape=basic/nodes=5"), "verdict: no sec/op result for Decide/shape=basic/nodes=5"; got != want {
		t.Errorf("verdict = %q, want %q", got, want)
	}
}

// fakeK8sTree is a directory upstream@DIR takes for a kubernetes tree of
// the current release (nothing is built from it here).
func fakeK8sTree(t *testing.T, parent, name string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	minor := preempt.CurrentRelease[1:strings.LastIndex(preempt.CurrentRelease, ".")]
	if err := os.MkdirAll(filepath.Join(dir, "CHANGELOG"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module k8s.io/kubernetes\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "CHANGELOG", "CHANGELOG-"+minor+".md"), nil, 0o644)
	return dir
}

// compare bench -impl takes earlier releases and trees: each runs as a
// child, named in the results by a label without a path
// (upstream@VERSION, upstream@ + the tree's directory name), passed to
// the bench binary as -bench.impls; two trees of one name are refused.
func TestBenchTakesReleasesAndTrees(t *testing.T) {
	tree := fakeK8sTree(t, t.TempDir(), "my tree")
	opts, err := parseBench([]string{"-nodes", "5", "-impl", "upstream,upstream@" + tree + ",upstream@v1.36.3,upstream@" + preempt.CurrentRelease}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(opts.impls, ","), "upstream,upstream@my-tree,upstream@v1.36.3"; got != want {
		t.Errorf("impls %s, want %s", got, want)
	}
	var extra []string
	for _, x := range opts.extra {
		extra = append(extra, x.label+"="+x.name)
	}
	if got, want := strings.Join(extra, ","), "upstream@my-tree=upstream@"+tree+",upstream@v1.36.3=upstream@v1.36.3"; got != want {
		t.Errorf("extra %s, want %s", got, want)
	}
	args := benchRun{Stage: "Decide", Shape: "basic", Impl: "upstream@my-tree", Nodes: 5, Extra: strings.Join(extra, ",")}.args("1x")
	if !slices.Contains(args, "-bench.impls="+strings.Join(extra, ",")) || !slices.Contains(args, `-test.bench=^BenchmarkDecide$/^shape=basic$/^nodes=5$/^impl=upstream@my-tree$`) {
		t.Errorf("args %q", args)
	}
	other := fakeK8sTree(t, t.TempDir(), "my tree")
	if _, err := parseBench([]string{"-impl", "upstream@" + tree + ",upstream@" + other}, io.Discard); err == nil || !strings.Contains(err.Error(), "would both be named upstream@my-tree") {
		t.Errorf("two trees of one name: %v", err)
	}
	if _, err := parseBench([]string{"-impl", "upstream@v1.1.1"}, io.Discard); err == nil || !strings.Contains(err.Error(), `unknown "upstream@v1.1.1"`) {
		t.Errorf("an unknown release: %v", err)
	}
}
