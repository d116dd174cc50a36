package conformance

import (
	"testing"

	"github.com/preemptbench/preemptbench/internal/registry"
)

// TestConformance runs the whole suite against every implementation of
// the registry: the tables with their expected values and the properties
// against the reference. Run the properties long with
//
//	go test ./internal/conformance -run 'TestConformance/upstream/properties' -rapid.checks=20000
func TestConformance(t *testing.T) {
	for _, impl := range registry.All() {
		t.Run(impl.Name(), func(t *testing.T) { Run(t, impl) })
	}
}
