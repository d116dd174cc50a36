package ownimpl_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/preemptbench/preemptbench/preempttest"
	"github.com/preemptbench/preemptbench/wire"
)

// The whole suite against ownimpl served by its own child process
// (cmd/ownimpl-wire), as an implementation of another module or release
// is compared.
func TestConformanceOverTheWire(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ownimpl-wire")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/ownimpl-wire").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := wire.Command(0, bin)
	defer c.Close()
	if c.Name() != "ownimpl" {
		t.Fatalf("the child says it is %q", c.Name())
	}
	preempttest.Run(t, c)
}
