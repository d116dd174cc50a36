package wire

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// Issue 33: a child (a release of upstream, an exec: implementation)
// runs under the parent's soft memory limit, which the command sets while
// it runs: the children held the same cluster as the parent without one,
// their heaps growing to twice what they keep. GOMEMLIMIT set by the user
// reaches the child as it is.
func TestChildInheritsTheMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name         string
		gomemlimit   string
		parent, want int64
	}{
		{"the parent's limit", "", 600 << 20, 600 << 20},
		{"no limit", "", math.MaxInt64, math.MaxInt64},
		{"GOMEMLIMIT set by the user", "300MiB", 600 << 20, 300 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reportPath := filepath.Join(t.TempDir(), "report")
			t.Setenv("PREEMPTBENCH_WIRE_REPORT", reportPath)
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(tc.parent))
			c := child(t, "memlimit", 30*time.Second)
			if name := c.Name(); name != "reference" {
				t.Fatalf("Name() = %q, want the child's Hello", name)
			}
			b, err := os.ReadFile(reportPath)
			if err != nil {
				t.Fatal(err)
			}
			got, err := strconv.ParseInt(string(b), 10, 64)
			if err != nil {
				t.Fatalf("the child's report %q: %v", b, err)
			}
			if got != tc.want {
				t.Errorf("the child ran under a memory limit of %d, want %d", got, tc.want)
			}
		})
	}
}
