package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/synth"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/upstream"
)

// A crash is a bug, not bad input: Run recovers it and exits 3 with a line
// to report.
func TestCrashExitsThree(t *testing.T) {
	commands["crash"] = func([]string, io.Writer, io.Writer) int { panic("boom") }
	defer delete(commands, "crash")
	_, stderr, code := runCLI(t, "crash")
	if code != ExitBug || !strings.Contains(stderr, "compare: internal error, please report it") || !strings.Contains(stderr, "boom") {
		t.Errorf("exit %d, stderr %q; want 3 and a report line", code, stderr)
	}
}

// NaN and infinite samples are refused with the file and line, and NaN
// options too: before, one NaN sample ran the U test forever (out of
// memory) and +Inf in head was dropped, so an infinitely slow head passed.
func TestNonFiniteInputsRefused(t *testing.T) {
	dir := t.TempDir()
	six := strings.Repeat("BenchmarkX/impl=reference 1 100 ns/op\n", 6)
	base := writeFile(t, dir, "base.txt", six)
	for _, tc := range []struct {
		name, head string
		args       []string
		want       string
	}{
		{"NaN sample", strings.Repeat("BenchmarkX/impl=reference 1 100 ns/op\n", 5) + "BenchmarkX/impl=reference 1 NaN ns/op\n", nil, "head.txt:6: BenchmarkX/impl=reference: NaN ns/op is not a finite number"},
		{"+Inf samples", strings.Repeat("BenchmarkX/impl=reference 1 +Inf ns/op\n", 6), nil, "head.txt:1: BenchmarkX/impl=reference: +Inf ns/op is not a finite number"},
		{"alpha NaN", six, []string{"-alpha", "NaN"}, "-alpha NaN is not in (0, 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := writeFile(t, dir, "head.txt", tc.head)
			_, stderr, code := runCLI(t, append([]string{"gate", "-base", base, "-head", head}, tc.args...)...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("gate: exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if tc.args == nil {
				_, stderr, code = runCLI(t, "stat", head)
				if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
					t.Errorf("stat: exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
				}
			}
		})
	}
}

// -h and -help print a command's usage and exit 0, as `compare -h` does;
// an unknown flag is bad input.
func TestHelpExitsZero(t *testing.T) {
	for _, cmd := range []string{"decide", "bench", "stat", "gate", "plot", "scenario"} {
		for _, h := range []string{"-h", "-help"} {
			var out, errb strings.Builder
			if code := Run([]string{cmd, h}, &out, &errb); code != ExitOK {
				t.Errorf("compare %s %s: exit %d, want 0; stderr:\n%s", cmd, h, code, errb.String())
			}
			if !strings.Contains(out.String()+errb.String(), "-") {
				t.Errorf("compare %s %s printed no usage", cmd, h)
			}
		}
		var out, errb strings.Builder
		if code := Run([]string{cmd, "-no-such-flag"}, &out, &errb); code != ExitBadInput {
			t.Errorf("compare %s -no-such-flag: exit %d, want %d", cmd, code, ExitBadInput)
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errb strings.Builder
	if code := Run([]string{"version"}, &out, &errb); code != ExitOK || !strings.Contains(out.String(), "k8s.io/kubernetes "+upstream.Version) {
		t.Errorf("compare version: exit %d, output %q", code, out.String())
	}
}

// The help names the current release where it says which release the
// command models (usage, decide's -feature-gates, upgrade's -to), and no
// mention of a release in it disagrees with preempt.ReleaseTable
// (preempt.TestCurrentReleaseWrittenOnce checks the sources).
func TestHelpNamesTheTablesReleases(t *testing.T) {
	help := map[string]string{}
	for _, cmd := range []string{"", "decide", "bench", "stat", "gate", "plot", "scenario", "upgrade", "e2e", "version"} {
		args := []string{"-h"}
		if cmd == "version" {
			args = []string{"version"}
		} else if cmd != "" {
			args = []string{cmd, "-h"}
		}
		var out, errb strings.Builder
		Run(args, &out, &errb)
		help[cmd] = out.String() + errb.String()
		for _, m := range preempt.StaleReleaseMentions(help[cmd]) {
			t.Errorf("compare %s: the help mentions %s", strings.Join(args, " "), m)
		}
	}
	for _, want := range []struct{ cmd, text string }{
		{"", "\n          " + preempt.CurrentRelease + " would"},
		{"", "[-to " + preempt.CurrentRelease + "]"},
		{"decide", preempt.CurrentRelease + "'s defaults"},
		{"upgrade", `(default "` + preempt.CurrentRelease + `")`},
		{"version", "k8s.io/kubernetes " + preempt.CurrentRelease},
	} {
		if !strings.Contains(help[want.cmd], want.text) {
			t.Errorf("compare %s -h does not say %q:\n%s", want.cmd, want.text, help[want.cmd])
		}
	}
}

// bench -plot refuses a name that is not .svg before running anything.
func TestBenchPlotNameCheckedFirst(t *testing.T) {
	_, stderr, code := runCLI(t, "bench", "-plot", "x.png", "-nodes", "5", "-count", "1")
	if code != ExitBadInput || !strings.Contains(stderr, "-plot x.png: the plot is SVG") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// The usage lists every shape `compare scenario` builds, from
// synth.Shapes, not from a copy that falls behind (issue 29).
func TestUsageListsEveryShape(t *testing.T) {
	stdout, _, code := runCLI(t, "-h")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	_, section, ok := strings.Cut(stdout, "shapes:\n")
	if !ok {
		t.Fatalf("usage has no shapes:\n%s", stdout)
	}
	section, _, _ = strings.Cut(section, "\n  upgrade")
	listed := strings.Fields(strings.ReplaceAll(section, ",", " "))
	if diff := cmp.Diff(synth.Shapes(), listed); diff != "" {
		t.Errorf("shapes in the usage (-synth.Shapes +usage):\n%s", diff)
	}
}

// compare e2e keeps the measured metrics of scheduler_perf's result line,
// in the project's naming.
func TestE2EResult(t *testing.T) {
	out := []byte("goos: linux\nBenchmarkPerfScheduling/PreemptionBasic/500Nodes-2  \t       1\t         3.5 SchedulingDuration/Duration\t 132.4 heap_memory_usage/Average\t  57.25 SchedulingThroughput/Average\t 60 SchedulingThroughput/Perc50\t 4.1 scheduler_scheduling_attempt_duration_ms/Perc50\t 9.5 scheduler_scheduling_attempt_duration_ms/Perc99\nPASS\n")
	r := e2eRun{suite: "default_preemption", testCase: "PreemptionBasic", workload: "500Nodes"}
	got, err := e2eResult(out, r, "optimized")
	if err != nil {
		t.Fatal(err)
	}
	want := "BenchmarkE2E/workload=PreemptionBasic/run=500Nodes/impl=optimized 1 3.5 scheduling-s 57.25 pods/s 4.1 attempt-p50-ms 9.5 attempt-p99-ms\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if _, err := e2eResult(out, e2eRun{testCase: "PreemptionAsync", workload: "500Nodes"}, "default"); err == nil {
		t.Error("a run with no result line gave no error")
	}
}
