package benchcmp

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// FuzzResults feeds any bytes as a results file (and, split in two, as
// base and head) through Read, Stat with every output, and Gate: an error
// or an answer, never a panic or a hang.
func FuzzResults(f *testing.F) {
	for _, seed := range []string{
		"goos: linux\ngoarch: amd64\npkg: p\nBenchmarkDecide/shape=basic/nodes=5/impl=reference-2 10 100 ns/op 5 B/op 1 allocs/op\nBenchmarkDecide/shape=basic/nodes=5/impl=optimized-2 10 10 ns/op 0 B/op 0 allocs/op\n",
		"BenchmarkX-8 1 NaN ns/op\n",
		"BenchmarkX-8 1 +Inf ns/op\nBenchmarkX-8 1 -Inf ns/op\n",
		"goarch: amd64\nBenchmarkX-2 10 5 ns/op\ngoarch: arm64\nBenchmarkX-8 10 7 ns/op\n",
		"BenchmarkX 10 5 ns/op 3 candidates/op\nBenchmarkX 10 5 ns/op 4 candidates/op\n",
		"not a benchmark line\nBenchmark\nBenchmarkX 1e400 5 ns/op\n",
		"pkg: a\nBenchmarkY/impl=upstream 6 1 sec/op\npkg: b\nBenchmarkY/impl=upstream 6 2 sec/op\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := Read(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			return
		}
		opts := DefaultStatOptions()
		opts.Baselines = []string{"reference", "upstream"}
		if rep, err := Stat(rs, opts); err == nil {
			for _, w := range []func(io.Writer) error{rep.WriteText, rep.WriteMarkdown, rep.WriteCSV, rep.WriteJSON} {
				if err := w(io.Discard); err != nil {
					t.Fatalf("writing a report: %v", err)
				}
			}
		}
		half := len(data) / 2
		if i := bytes.IndexByte(data[half:], '\n'); i >= 0 {
			half += i + 1
		}
		base, err1 := Read(bytes.NewReader(data[:half]), "base.txt")
		head, err2 := Read(bytes.NewReader(data[half:]), "head.txt")
		if err1 != nil || err2 != nil {
			return
		}
		g := Gate("base.txt", base, "head.txt", head, DefaultGateOptions())
		var out strings.Builder
		if err := g.WriteText(&out); err != nil {
			t.Fatalf("writing the gate: %v", err)
		}
		if code := g.ExitCode(); code != GatePass && code != GateRegression && code != GateBadInput {
			t.Fatalf("exit code %d", code)
		}
	})
}
