package fuzz

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/preemptbench/preemptbench/upstream"
)

// TestUpstreamAgreesWithReference is the differential property: on every
// generated cluster, k8s.io/kubernetes' own DefaultPreemption and the
// reference make the same decision. Run it long with
// `go test ./fuzz -run Upstream -rapid.checks=20000`.
func TestUpstreamAgreesWithReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		CheckAgainstReference(t, Gen(64).Draw(t, "input"), upstream.Impl{})
	})
}
