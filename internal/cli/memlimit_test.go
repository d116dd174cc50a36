package cli

import (
	"io"
	"runtime/debug"
	"testing"
)

// Issue 33: the soft memory limit was set in decide only; every command
// that reads input or decides (upgrade, scenario, stat, gate, plot,
// bench, version alike) now runs under it, set once in Run, but e2e
// (kube-apiserver, etcd and kube-scheduler in process, whose heap it
// measures); GOMEMLIMIT set by the user is left as it is, and the limit
// is restored when Run returns. Each command is swapped for a probe that
// reads the limit it runs under.
func TestEveryCommandRunsUnderMemoryLimit(t *testing.T) {
	saved := make(map[string]func([]string, io.Writer, io.Writer) int)
	for name, cmd := range commands {
		saved[name] = cmd
	}
	t.Cleanup(func() {
		for name, cmd := range saved {
			commands[name] = cmd
		}
	})
	var got int64
	for name := range saved {
		commands[name] = func([]string, io.Writer, io.Writer) int {
			got = debug.SetMemoryLimit(-1)
			return ExitOK
		}
	}
	before := debug.SetMemoryLimit(-1)
	for _, gomemlimit := range []string{"", "1GiB"} {
		t.Setenv("GOMEMLIMIT", gomemlimit)
		for name := range saved {
			got = 0
			if code := Run([]string{name}, io.Discard, io.Discard); code != ExitOK {
				t.Fatalf("%s: exit %d", name, code)
			}
			want := int64(memoryLimit)
			if name == "e2e" || gomemlimit != "" {
				want = before
			}
			if got != want {
				t.Errorf("GOMEMLIMIT=%q: %s ran under a memory limit of %d, want %d", gomemlimit, name, got, want)
			}
			if after := debug.SetMemoryLimit(-1); after != before {
				t.Errorf("GOMEMLIMIT=%q: after %s the limit is %d, want %d as before", gomemlimit, name, after, before)
			}
		}
	}
	if _, ok := saved["upgrade"]; !ok || before == memoryLimit {
		t.Fatalf("no upgrade command, or the test's own limit (%d) is the one tested", before)
	}
}
