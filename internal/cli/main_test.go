package cli

import (
	"os"
	"testing"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/wire"
)

// With PREEMPTBENCH_CLI_CHILD set, the test binary is a child serving an
// implementation over package wire's protocol (TestDecideExecImplementation),
// or the command itself (cli, whose memory TestDecideMemoryBoundedByDecodedSize
// measures).
func TestMain(m *testing.M) {
	switch os.Getenv("PREEMPTBENCH_CLI_CHILD") {
	case "optimized":
		os.Exit(wire.Main(optimized.Impl{}))
	case "cli":
		code := Run(os.Args[1:], os.Stdout, os.Stderr)
		if path := os.Getenv("PREEMPTBENCH_CLI_HWM"); path != "" {
			// The child's own peak (Linux's VmHWM): its rusage's
			// Maxrss also counts the parent's memory when it forked.
			status, _ := os.ReadFile("/proc/self/status")
			_ = os.WriteFile(path, status, 0o644)
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}
