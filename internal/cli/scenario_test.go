package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/preemptbench/preemptbench/internal/synth"
)

// Every numeric flag of scenario is bounded before anything is built:
// exit 2, the flag, the value and the limit on stderr, nothing written.
// (-nodes 100000000 used to take the machine's memory.)
func TestScenarioBounded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-nodes", "100000000"}, "compare scenario: -nodes 100000000 is above the maximum of 20000"},
		{[]string{"-nodes", "20001"}, "compare scenario: -nodes 20001 is above the maximum of 20000"},
		{[]string{"-nodes", "0"}, "compare scenario: -nodes 0: a scenario has at least 1 node"},
		{[]string{"-nodes", "-3"}, "compare scenario: -nodes -3: a scenario has at least 1 node"},
		{[]string{"-nodes", "99999999999999999999"}, `invalid value "99999999999999999999" for flag -nodes: above the maximum of 20000`},
		{[]string{"-nodes", "-99999999999999999999"}, `invalid value "-99999999999999999999" for flag -nodes: a scenario has at least 1 node`},
		{[]string{"-nodes", "1e9"}, `invalid value "1e9" for flag -nodes: not a whole number of nodes (1 to 20000)`},
		{[]string{"-seed", "-1"}, `invalid value "-1" for flag -seed: negative; a seed is a whole number from 0 to 18446744073709551615`},
		{[]string{"-seed", "18446744073709551616"}, `invalid value "18446744073709551616" for flag -seed: above the largest seed, 18446744073709551615`},
		{[]string{"-seed", "0x10"}, `invalid value "0x10" for flag -seed: not a whole number`},
		{[]string{"-shape", "round"}, `compare scenario: unknown shape "round" (known: affinity, basic,`},
		{[]string{"-nodes", "3", "extra"}, `compare scenario: unexpected argument "extra" (the directory goes with -dir)`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			start := time.Now()
			stdout, stderr, code := runCLI(t, append([]string{"scenario", "-dir", dir}, tc.args...)...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q on stderr", code, stdout, stderr, tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v: refused after building?", d)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s written (%v)", dir, err)
			}
		})
	}
}

// The smallest scenario and the largest seed are accepted (the largest
// scenario takes seconds and under 1 GB to write, but writes 90 MB: not a
// unit test; see docs/input.md).
func TestScenarioLimits(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, "scenario", "-nodes", "1", "-seed", "18446744073709551615", "-dir", dir)
	if code != ExitOK || stderr != "" || !strings.Contains(stdout, "1 nodes, seed 18446744073709551615") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// Build has its own maximum, synth.MaxNodes, above the command's.
func TestBuildBounded(t *testing.T) {
	if maxScenarioNodes > synth.MaxNodes {
		t.Fatalf("the command writes up to %d nodes, Build makes up to %d", maxScenarioNodes, synth.MaxNodes)
	}
	_, err := synth.Build("basic", synth.MaxNodes+1, 1)
	if err == nil || !strings.Contains(err.Error(), "100001 nodes, more than the 100000") {
		t.Errorf("Build(MaxNodes+1) = %v", err)
	}
	if _, err := synth.Build("basic", -1, 1); err == nil {
		t.Errorf("Build(-1) succeeded")
	}
}

// Issue 21: the files are written as the cluster is built, and are what
// the whole cluster rendered at once was: cluster.yaml is ListYAML of
// Build, pod.yaml PodYAML of its preemptor; nothing else is left in the
// directory.
func TestScenarioWritesTheBuiltCluster(t *testing.T) {
	for _, shape := range []string{"basic", "pdb", "spread"} {
		dir := t.TempDir()
		if _, stderr, code := runCLI(t, "scenario", "-shape", shape, "-nodes", "40", "-seed", "9", "-dir", dir); code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		s := synth.MustBuild(shape, 40, 9)
		wantCluster, err := synth.ListYAML(s.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		wantPod, err := synth.PodYAML(s.Pod)
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string][]byte{"cluster.yaml": wantCluster, "pod.yaml": wantPod} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s %s: %v, %d bytes, want the %d of the built scenario", shape, name, err, len(got), len(want))
			}
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 {
			t.Errorf("%s: %d files in the directory, want cluster.yaml and pod.yaml", shape, len(entries))
		}
	}
	// A -dir that is a file: exit 2, naming it.
	file := writeFile(t, t.TempDir(), "file", "")
	if _, stderr, code := runCLI(t, "scenario", "-nodes", "3", "-dir", file); code != ExitBadInput || !strings.Contains(stderr, "compare scenario: -dir: ") {
		t.Errorf("-dir a file: exit %d, stderr %q", code, stderr)
	}
}
