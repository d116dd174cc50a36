package cli

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/preempt"
)

var smallDecide = []string{"decide", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-now", testNow}

// TestDecideFeatureGatesBadInput: -feature-gates is parsed as
// kube-scheduler parses --feature-gates, with its messages, exit 2.
func TestDecideFeatureGatesBadInput(t *testing.T) {
	for _, tc := range []struct{ gates, want string }{
		{"NoSuchGate=true", "-feature-gates: unrecognized feature gate: NoSuchGate"},
		{"GenericWorkload=maybe", `-feature-gates: invalid value of GenericWorkload=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"GenericWorkload", "-feature-gates: missing bool value for GenericWorkload"},
		{"InPlacePodVerticalScaling=false", "-feature-gates: cannot set feature gate InPlacePodVerticalScaling to false, feature is locked to true"},
		{"PodLevelResources=false", "depends on features that are disabled: [PodLevelResources]"},
	} {
		stdout, stderr, code := runCLI(t, append(slices.Clone(smallDecide), "-feature-gates", tc.gates)...)
		if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("-feature-gates %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.gates, code, stdout, stderr, tc.want)
		}
	}
	_, stderr, code := runCLI(t, append(slices.Clone(smallDecide), "-feature-gates", "SchedulerAsyncPreemption=false", "-async")...)
	if code != ExitBadInput || !strings.Contains(stderr, "-feature-gates SchedulerAsyncPreemption=false contradicts -async=true") {
		t.Errorf("contradicting -async: exit %d, stderr %q", code, stderr)
	}
}

// TestDecideFeatureGatesDefaults: gates set to their defaults change
// nothing, for every implementation; SchedulerAsyncPreemption=false is
// -async=false.
func TestDecideFeatureGatesDefaults(t *testing.T) {
	for _, tc := range []struct {
		gates string
		same  []string // the flags giving the same decision without gates
	}{
		{"GenericWorkload=false,PodLevelResources=true,SchedulerAsyncPreemption=true", nil},
		{"SchedulerAsyncPreemption=false", []string{"-async=false"}},
	} {
		want, _, code := runCLI(t, append(append(slices.Clone(smallDecide), "-impl", "all"), tc.same...)...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d", tc.same, code)
		}
		got, stderr, code := runCLI(t, append(slices.Clone(smallDecide), "-impl", "all", "-feature-gates", tc.gates)...)
		if code != ExitOK || got != want {
			t.Errorf("-feature-gates %s: exit %d, stderr %q; output\n%s\nwant (%q)\n%s", tc.gates, code, stderr, got, tc.same, want)
		}
	}
}

// TestDecideGenericWorkload: v1.37.2's GenericWorkload changes
// GetVictimsOnNode only for pods in pod groups; without any, upstream with
// the gate on decides as with it off, and reference and optimized, which
// model it for single pods, agree.
func TestDecideGenericWorkload(t *testing.T) {
	want, _, code := runCLI(t, append(slices.Clone(smallDecide), "-impl", "all")...)
	if code != ExitOK {
		t.Fatalf("without gates: exit %d", code)
	}
	got, stderr, code := runCLI(t, append(slices.Clone(smallDecide), "-impl", "all", "-feature-gates", "GenericWorkload=true")...)
	if code != ExitOK || got != want {
		t.Errorf("GenericWorkload=true: exit %d, stderr %q; output\n%s\nwant\n%s", code, stderr, got, want)
	}
}

// TestDecideRefusesUnmodelledGates: reference and optimized refuse a gate
// they do not model, naming it and its value; upstream answers.
func TestDecideRefusesUnmodelledGates(t *testing.T) {
	off := "PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false,PodLevelResourcesFixDefaulting=false,PodLevelResourcesFixKubeletQOSClass=false"
	stdout, stderr, code := runCLI(t, append(slices.Clone(smallDecide), "-impl", "reference", "-feature-gates", off)...)
	want := "reference: feature gate InPlacePodLevelResourcesVerticalScaling is not modelled: the configuration sets InPlacePodLevelResourcesVerticalScaling=false (" + preempt.CurrentRelease + "'s default is true)"
	if code != ExitBadInput || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("-impl reference: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, want)
	}
	stdout, stderr, code = runCLI(t, append(slices.Clone(smallDecide), "-impl", "all", "-feature-gates", off)...)
	if code != ExitOK || !strings.Contains(stdout, `"implementation": "upstream"`) || strings.Contains(stdout, `"implementation": "reference"`) {
		t.Errorf("-impl all: exit %d, stderr %q, stdout\n%s\nwant upstream's decision alone", code, stderr, stdout)
	}
	for _, name := range []string{"reference", "optimized"} {
		if !strings.Contains(stderr, "note: "+name+": feature gate InPlacePodLevelResourcesVerticalScaling is not modelled") {
			t.Errorf("-impl all: stderr lacks %s's refusal:\n%s", name, stderr)
		}
	}
}

// TestBenchFeatureGates: compare bench checks -feature-gates and passes it
// to the bench binary as -bench.feature-gates.
func TestBenchFeatureGates(t *testing.T) {
	r := benchRun{Stage: "Decide", Shape: "basic", Impl: "upstream", Nodes: 5, FeatureGates: "GenericWorkload=true"}
	if args := r.args("1s"); args[len(args)-1] != "-bench.feature-gates=GenericWorkload=true" {
		t.Errorf("args %q lack -bench.feature-gates", args)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "-feature-gates", "NoSuchGate=true"}, "-feature-gates: unrecognized feature gate: NoSuchGate"},
		{[]string{"bench", "-impl", "upstream,optimized", "-feature-gates", "DRANodeAllocatableResources=true,DynamicResourceAllocation=true"},
			"-impl optimized: feature gate DRANodeAllocatableResources is not modelled"},
	} {
		fakeBench(t, &fakeRunner{})
		_, stderr, code := runCLI(t, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// Issue 33: -feature-gates given twice merges as kube-scheduler's
// --feature-gates does (later keys override, the others are kept, the
// dependencies checked on the whole); the second used to replace the
// first. decide, upgrade and bench take the same flag.
func TestFeatureGatesRepeatedMerge(t *testing.T) {
	opts, err := parseDecide([]string{"-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml",
		"-feature-gates", "GenericWorkload=true,SchedulerAsyncPreemption=false",
		"-feature-gates", "SchedulerAsyncPreemption=true,PodLevelResources=true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"GenericWorkload": true, "SchedulerAsyncPreemption": true, "PodLevelResources": true}
	if diff := cmp.Diff(want, opts.cfg.FeatureGates); diff != "" {
		t.Errorf("gates (-want +got):\n%s", diff)
	}
	// A gate and the gate it depends on, in two flags: valid together.
	_, err = parseDecide([]string{"-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml",
		"-feature-gates", "PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false",
		"-feature-gates", "PodLevelResourcesFixDefaulting=false,PodLevelResourcesFixKubeletQOSClass=false"}, io.Discard)
	if err != nil {
		t.Errorf("dependent gates in two flags: %v", err)
	}
	bo, err := parseBench([]string{"-impl", "reference", "-feature-gates", "GenericWorkload=true", "-feature-gates", "PodLevelResources=true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := preempt.ParseFeatureGates(bo.featureGates); err != nil || !cmp.Equal(got, map[string]bool{"GenericWorkload": true, "PodLevelResources": true}) {
		t.Errorf("bench -feature-gates twice: %q (%v, %v)", bo.featureGates, got, err)
	}
}

// Issue 33: upgrade's -feature-gates error names the flag once ("compare
// upgrade: -feature-gates: -feature-gates: ..." before).
func TestUpgradeFeatureGatesErrorNamesTheFlagOnce(t *testing.T) {
	_, stderr, code := runCLI(t, "upgrade", "-cluster", "testdata/small/cluster.yaml", "-pod", "testdata/small/pod.yaml", "-feature-gates", "NoSuchGate=true")
	want := "compare upgrade: -feature-gates: unrecognized feature gate: NoSuchGate\n"
	if code != ExitBadInput || stderr != want {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitBadInput, want)
	}
}

// Issue 33: an earlier release's error is named once, by the command
// ("upstream@v1.36.3: upstream@v1.36.3: ..." before: the release named
// itself in its errors too).
func TestReleaseErrorNamesTheReleaseOnce(t *testing.T) {
	t.Setenv("PREEMPTBENCH_CACHE", t.TempDir())
	t.Setenv("PATH", t.TempDir()) // no go command to build it with
	_, stderr, code := runCLI(t, append(slices.Clone(smallDecide), "-impl", "upstream@v1.36.3")...)
	want := "compare decide: upstream@v1.36.3: built on first use, it needs the Go toolchain (go on $PATH)"
	if code != ExitBadInput || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "upstream@v1.36.3") != 1 {
		t.Errorf("exit %d, stderr %q; want %d and %q, the release named once", code, stderr, ExitBadInput, want)
	}
}
