package preempt_test

import (
	"os/exec"
	"testing"
)

// The build for a module pinned at v1.36 (tag preemptbench_v1_36) must
// compile preempt and wire with the stand-in pod-group types: no code
// outside podgroup_types.go's build constraint may read a pod-group
// field. (The full check, a module pinned at k8s.io/kubernetes v1.36.3
// with a replace directive to this one, builds the same packages with
// `go build -tags preemptbench_v1_36 ./...`.)
func TestPodGroupStandInsBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	out, err := exec.Command("go", "build", "-tags", "preemptbench_v1_36", "github.com/preemptbench/preemptbench/preempt", "github.com/preemptbench/preemptbench/wire").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags preemptbench_v1_36: %v\n%s", err, out)
	}
}
