package upstream

import (
	"os/exec"
	"strings"
	"testing"
)

// go.mod pins k8s.io/kubernetes at Version and replaces every staging
// module with StagingVersion, and so does the out-of-tree example's.
func TestVersionIsTheModules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to ask")
	}
	for _, dir := range []string{"..", "../examples/ownimpl"} {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Version}} {{with .Replace}}{{.Version}}{{end}}", "all")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -m all in %s: %v", dir, err)
		}
		found, staging := false, 0
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "k8s.io/kubernetes":
				found = true
				if f[1] != Version {
					t.Errorf("%s: go.mod pins k8s.io/kubernetes %s, upstream.Version is %s", dir, f[1], Version)
				}
			case len(f) == 3 && strings.HasPrefix(f[0], "k8s.io/"):
				staging++
				if f[2] != StagingVersion() {
					t.Errorf("%s: %s is replaced by %s, want %s (k8s.io/kubernetes %s)", dir, f[0], f[2], StagingVersion(), Version)
				}
			}
		}
		if !found || staging == 0 {
			t.Errorf("%s: k8s.io/kubernetes found %v, %d staging modules replaced", dir, found, staging)
		}
	}
}
