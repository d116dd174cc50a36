package benchcmp

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// peakHeap runs f and returns the most heap in use, sampled every
// millisecond, above what was in use before.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base {
				peak = max(peak, ms.HeapAlloc-base)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	return peak
}

// writeResults writes n result lines of 40 benchmarks with three units,
// about 100 bytes a line.
func writeResults(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "goos: linux\ngoarch: amd64\npkg: p\n")
	for i := range n {
		b := i % 40
		fmt.Fprintf(w, "BenchmarkDecide/shape=basic/nodes=%d/impl=impl%d-2\t%8d\t%12.1f ns/op\t%8d B/op\t%6d allocs/op\n", 5<<(b%10), b/10, 1000+i%977, 1e6*float64(b+1)+float64(i%101), 4096*(b+1), 10*(b+1))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Issue 21: stat and gate read their files as they go, keeping only the
// values (24 bytes a line of three units); holding the results took some
// 2.5 KB a line (2.5 GB to gate two files of a million lines).
func TestStreamingMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 x 20 MB")
	}
	const lines = 200_000
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base.txt"), filepath.Join(dir, "head.txt")
	writeResults(t, base, lines)
	writeResults(t, head, lines)
	// The values alone, in slices grown by appending: about 2 x 24 bytes
	// a line; held results would be 100 times that.
	const limit = 80 << 20
	var rep *Report
	peak := peakHeap(func() {
		fs, err := OpenFiles([]string{base})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err = Stat(fs, DefaultStatOptions()); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("stat of %d lines: %d MB of heap at most", lines, peak>>20)
	if peak > limit || len(rep.Tables) != 3 || rep.Tables[0].Rows[0].Cells[0].N != lines/40 {
		t.Errorf("stat of %d lines: %d MB of heap at most (limit %d MB), %d tables", lines, peak>>20, limit>>20, len(rep.Tables))
	}
	var g *GateResult
	peak = peakHeap(func() {
		bf, err := OpenFiles([]string{base})
		if err != nil {
			t.Fatal(err)
		}
		hf, err := OpenFiles([]string{head})
		if err != nil {
			t.Fatal(err)
		}
		g = Gate(base, bf, head, hf, DefaultGateOptions())
	})
	t.Logf("gate of 2 x %d lines: %d MB of heap at most", lines, peak>>20)
	if peak > 2*limit || g.Outcome() != Pass || len(g.Checks) != 120 {
		t.Errorf("gate of 2 x %d lines: %d MB of heap at most (limit %d MB), exit %d, %d checks, problems %q", lines, peak>>20, 2*limit>>20, g.Outcome(), len(g.Checks), g.Problems)
	}
}
