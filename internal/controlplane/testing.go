package controlplane

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// StartT starts a control plane for a test (or benchmark) and stops it at
// its end; a failure to start fails t. The start time is logged.
func StartT(t testing.TB) *ControlPlane {
	t.Helper()
	cp, err := Start(Options{})
	if err != nil {
		t.Fatalf("control plane: %v", err)
	}
	t.Logf("control plane started in %v", cp.StartDuration)
	t.Cleanup(cp.Stop)
	return cp
}

// shared is the package's control plane for Main and Shared.
var shared struct {
	sync.Mutex
	cp      *ControlPlane
	err     error
	started bool
}

// Main is a test package's TestMain with one control plane shared by its
// tests: it runs m, started lazily by the first test that calls Shared,
// and stops it after the last test.
//
//	func TestMain(m *testing.M) { controlplane.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	shared.Lock()
	if shared.cp != nil {
		shared.cp.Stop()
	}
	shared.Unlock()
	os.Exit(code)
}

// Shared is the package's control plane (see Main), started on first use.
// The objects tests
// create stay for the next tests: each should use namespaces of its own
// (and nodes named apart, nodes being cluster-wide).
func Shared(t testing.TB) *ControlPlane {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if !shared.started {
		shared.started = true
		shared.cp, shared.err = Start(Options{})
		if shared.err == nil {
			fmt.Fprintf(os.Stderr, "controlplane: kube-apiserver and etcd started in %v\n", shared.cp.StartDuration)
		}
	}
	if shared.err != nil {
		t.Fatalf("control plane: %v", shared.err)
	}
	return shared.cp
}
