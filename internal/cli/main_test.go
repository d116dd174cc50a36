package cli

import (
	"os"
	"testing"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/wire"
)

// With PREEMPTBENCH_CLI_CHILD set, the test binary is a child serving an
// implementation over package wire's protocol (TestDecideExecImplementation).
func TestMain(m *testing.M) {
	if os.Getenv("PREEMPTBENCH_CLI_CHILD") == "optimized" {
		os.Exit(wire.Main(optimized.Impl{}))
	}
	os.Exit(m.Run())
}
