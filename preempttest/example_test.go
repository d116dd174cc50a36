package preempttest_test

import (
	"testing"

	"github.com/preemptbench/preemptbench/preempttest"
	"github.com/preemptbench/preemptbench/reference"
)

// An implementation's module runs the whole suite with one test function
// and fuzzes with one fuzz target, in any _test.go file; reference.Impl
// stands here for the implementation under test.
func Example() {
	_ = func(t *testing.T) { preempttest.Run(t, reference.Impl{}) }
	_ = func(f *testing.F) { preempttest.Fuzz(f, reference.Impl{}) }
}

// The tables alone, for a quick check while developing: `go test -run
// TestTables`.
func ExampleRunTables() {
	_ = func(t *testing.T) { preempttest.RunTables(t, reference.Impl{}) }
}
