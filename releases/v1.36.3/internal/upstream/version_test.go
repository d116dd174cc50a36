package upstream

import (
	"os/exec"
	"strings"
	"testing"
)

// This module runs k8s.io/kubernetes at Version and every staging module
// at StagingVersion: the replaces of go.mod (the requirements say the
// main module's release, which MVS takes; the replaces win).
func TestVersionIsTheModules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to ask")
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Version}} {{with .Replace}}{{.Version}}{{end}}", "all")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	found, staging := false, 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "k8s.io/kubernetes":
			found = true
			if f[2] != Version {
				t.Errorf("go.mod replaces k8s.io/kubernetes by %s, upstream.Version is %s", f[2], Version)
			}
		case len(f) == 3 && strings.HasPrefix(f[0], "k8s.io/"):
			staging++
			if f[2] != StagingVersion() {
				t.Errorf("%s is replaced by %s, want %s (k8s.io/kubernetes %s)", f[0], f[2], StagingVersion(), Version)
			}
		}
	}
	// go.mod replaces the 33 staging modules v1.36.3's go.mod lists; the
	// build's graph holds some 30 of them.
	if !found || staging < 25 {
		t.Errorf("k8s.io/kubernetes replaced: %v; %d staging modules replaced", found, staging)
	}
}
