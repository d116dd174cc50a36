package benchcmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"
)

// fuzzSeeds are small results files: several units, GOMAXPROCS suffixes,
// mixed configurations, unit metadata, non-finite values, syntax errors.
var fuzzSeeds = []string{
	"goos: linux\ngoarch: amd64\npkg: p\ncpu: Xeon\n" +
		strings.Repeat("BenchmarkDecide/shape=basic/nodes=5/impl=reference-2\t100\t1000 ns/op\t5.000 candidates/op\t64 B/op\t2 allocs/op\n", 6) +
		strings.Repeat("BenchmarkDecide/shape=basic/nodes=5/impl=upstream-2\t100\t900 ns/op\t5.000 candidates/op\t64 B/op\t2 allocs/op\n", 6),
	"goos: linux\ngoarch: amd64\nBenchmarkX-2 1 10 ns/op\ngoarch: arm64\nBenchmarkX-8 1 30 ns/op\nBenchmarkX 1 20 ns/op\n",
	"pkg: a\nBenchmarkX 1 1 ns/op\npkg: b\nBenchmarkX 1 2 ns/op\npkg:\nBenchmarkX 1 3 ns/op\n",
	"commit: a\nBenchmarkX/impl=reference 1 10 ns/op 1 allocs/op\ncommit: b\nBenchmarkX/impl=reference 1 20 ns/op 1 allocs/op\n",
	"BenchmarkX 1 NaN ns/op\nBenchmarkX 1 +Inf ns/op\nBenchmarkX 1 -Inf B/op\n",
	"Unit ns/op assume=exact\nUnit B/op better=higher\nBenchmarkX 1 5 ns/op 3 B/op\nBenchmarkX 1 5 ns/op 4 B/op\n",
	"BenchmarkX 1 0 ns/op\nBenchmarkX 1 0 ns/op\nBenchmarkX 1 -5 ns/op\nBenchmarkX 1 1e300 ns/op 1e-300 B/op\n",
	"BenchmarkX\nBenchmarkX ten 1 ns/op\nBenchmarkX 1\nBenchmarkX 1 1\nBenchmark 1 1 ns/op\nBenchmarkX-  1 1 ns/op\nBenchmarkX/a=1-x 1 1 ns/op\n",
	"BenchmarkX/gomaxprocs=4 1 1 ns/op\nBenchmarkX/impl=/nodes= 1 1 x/op\nBenchmarkX/impl=a/impl=b 1 2 sec/op\n",
	"",
	// The seeds of the first version of this target (one input).
	"goos: linux\ngoarch: amd64\npkg: p\nBenchmarkDecide/shape=basic/nodes=5/impl=reference-2 10 100 ns/op 5 B/op 1 allocs/op\nBenchmarkDecide/shape=basic/nodes=5/impl=optimized-2 10 10 ns/op 0 B/op 0 allocs/op\n",
	"BenchmarkX-8 1 NaN ns/op\n",
	"BenchmarkX-8 1 +Inf ns/op\nBenchmarkX-8 1 -Inf ns/op\n",
	"goarch: amd64\nBenchmarkX-2 10 5 ns/op\ngoarch: arm64\nBenchmarkX-8 10 7 ns/op\n",
	"BenchmarkX 10 5 ns/op 3 candidates/op\nBenchmarkX 10 5 ns/op 4 candidates/op\n",
	"not a benchmark line\nBenchmark\nBenchmarkX 1e400 5 ns/op\n",
	"pkg: a\nBenchmarkY/impl=upstream 6 1 sec/op\npkg: b\nBenchmarkY/impl=upstream 6 2 sec/op\n",
	// Issue 21: times of 0 and below, zeros among other times, a unit of
	// one side only, one sample.
	strings.Repeat("BenchmarkZ-2 1 0 ns/op 0 B/op 0 allocs/op\n", 6),
	strings.Repeat("BenchmarkZ-2 1 100 ns/op\n", 6),
	strings.Repeat("BenchmarkZ-2 1 -102.5 ns/op\n", 6),
	strings.Repeat("BenchmarkZ-2 1 102.5 ns/op 64 B/op 1 allocs/op\n", 6),
	strings.Repeat("BenchmarkZ-2 1 100 ns/op\nBenchmarkZ-2 1 0 ns/op\n", 3),
	"BenchmarkZ-2 1 100 ns/op -1 B/op -2 allocs/op\n",
	"BenchmarkZ-2 1 100 ns/op 1 allocs/op\n",
	strings.Repeat("BenchmarkZ-2 1 100 ns/op 3 x/op\n", 6) + strings.Repeat("BenchmarkZ-2 1 100 x/op\n", 3),
	strings.Repeat("BenchmarkZ-2 1 0 ns/x\nBenchmarkZ-2 1 1 ns/x\n", 3),
}

// FuzzResults feeds arbitrary bytes as a base and a head results file
// through Read, Stat (several projections, every output) and Gate (every
// output): never a panic, never a hang (an input taking over fuzzTimeout
// crashes the worker, and the fuzzer keeps it), and the outputs hold: JSON
// always encodes, an error or warning never names a Go type.
func FuzzResults(f *testing.F) {
	for i, base := range fuzzSeeds {
		f.Add([]byte(base), []byte(fuzzSeeds[(i+1)%len(fuzzSeeds)]))
		f.Add([]byte(base), []byte(base))
	}
	// One file split in two, as base and head.
	all := strings.Join(fuzzSeeds, "")
	f.Add([]byte(all[:len(all)/2]), []byte(all[len(all)/2:]))
	f.Fuzz(func(t *testing.T, base, head []byte) {
		// Bounded memory and time: the inputs of a real gate are larger,
		// but nothing in the code paths depends on size beyond this.
		if len(base)+len(head) > 64<<10 {
			t.Skip()
		}
		// Never a hang: a run that does not end is a crash of the
		// worker, whose input the fuzzer keeps.
		done := make(chan struct{})
		timer := time.AfterFunc(fuzzTimeout, func() {
			select {
			case <-done:
			default:
				panic(fmt.Sprintf("FuzzResults: no result after %v on base %q, head %q", fuzzTimeout, base, head))
			}
		})
		defer timer.Stop()
		fuzzResults(t, base, head)
		close(done)
	})
}

// fuzzTimeout is how long one input may take: far more than any takes
// (milliseconds), little enough to report a hang.
const fuzzTimeout = 10 * time.Second

// goPackages are the packages whose types a message could leak
// ("bufio.Scanner: token too long", "*strconv.NumError").
var goPackages = []string{"bufio.", "strconv.", "fs.", "os.", "benchfmt.", "benchproc.", "benchmath.", "json.", "reflect.", "runtime."}

func checkMessage(t *testing.T, what, msg string) {
	t.Helper()
	if namesGoType(msg) {
		t.Errorf("%s names a Go type: %q", what, msg)
	}
}

// namesGoType: msg holds a package of goPackages at a word start followed
// by an exported name.
func namesGoType(msg string) bool {
	for _, p := range goPackages {
		for rest := msg; ; {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			start := i == 0 || !isWordByte(rest[i-1])
			rest = rest[i+len(p):]
			if start && rest != "" && 'A' <= rest[0] && rest[0] <= 'Z' {
				return true
			}
		}
	}
	return false
}

func TestNamesGoType(t *testing.T) {
	for msg, want := range map[string]bool{
		"f:1: bufio.Scanner: token too long": true,
		"*strconv.NumError":                  true,
		"x: json.Marshal failed":             true,
		"f:1: a line is longer than 65536":   false,
		"pkg github.com/x/os.Thing":          false, // not at a word start
		"config.json. Done":                  false,
		"strconv.parse":                      false,
	} {
		if got := namesGoType(msg); got != want {
			t.Errorf("namesGoType(%q) = %v, want %v", msg, got, want)
		}
	}
}

// isWordByte: c continues a word or a path (a package path's last
// element is not a package name in a message).
func isWordByte(c byte) bool {
	return c == '_' || c == '/' || c == '.' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func fuzzResults(t *testing.T, base, head []byte) {
	b, errB := Read(bytes.NewReader(base), "base")
	h, errH := Read(bytes.NewReader(head), "head")
	for _, err := range []error{errB, errH} {
		if err != nil {
			checkMessage(t, "Read error", err.Error())
		}
	}
	if errB != nil || errH != nil {
		return
	}
	for _, w := range append(b.Warnings, h.Warnings...) {
		checkMessage(t, "warning", w)
	}
	both := &Results{Records: append(append([]*benchfmt.Result(nil), b.Records...), h.Records...), Warnings: append(b.Warnings, h.Warnings...)}
	def := DefaultStatOptions()
	pooled := def
	pooled.Table, pooled.Row, pooled.Col = "", ".name", ".file"
	byProcs := def
	byProcs.Col, byProcs.Ignore, byProcs.Baselines = "/gomaxprocs", ".file", []string{"1", "2"}
	for _, opts := range []StatOptions{def, pooled, byProcs} {
		rep, err := Stat(both, opts)
		if err != nil {
			t.Fatalf("Stat(%+v): %v", opts, err)
		}
		for _, m := range append(rep.Mixed, rep.Notes()...) {
			checkMessage(t, "stat message", m)
		}
		for _, write := range []func(io.Writer) error{rep.WriteText, rep.WriteMarkdown, rep.WriteCSV} {
			if err := write(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
		var js bytes.Buffer
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatalf("WriteJSON: %v", err)
		}
		if !json.Valid(js.Bytes()) {
			t.Fatalf("WriteJSON wrote invalid JSON:\n%s", js.String())
		}
	}
	g := Gate("base", b, "head", h, DefaultGateOptions())
	for _, m := range append(append([]string(nil), g.Problems...), g.Warnings...) {
		checkMessage(t, "gate message", m)
	}
	if code := g.Outcome(); code != Pass && code != Regressed && code != Unusable {
		t.Fatalf("exit code %d", code)
	}
	if g.Outcome() != Unusable {
		// A verdict compares what it claims: something, every unit of
		// both sides, enough samples, possible values.
		if len(g.Checks) == 0 {
			t.Fatalf("exit %d comparing nothing", g.Outcome())
		}
		if len(g.Unpaired) > 0 {
			t.Fatalf("exit %d with units not compared: %q", g.Outcome(), g.Unpaired)
		}
		opts := DefaultGateOptions()
		for _, c := range g.Checks {
			if c.Base.N < opts.MinSamples || c.Head.N < opts.MinSamples {
				t.Fatalf("exit %d with %s %s on %d+%d samples", g.Outcome(), c.Benchmark, c.Unit, c.Base.N, c.Head.N)
			}
			for _, v := range append(slices.Clone(c.Base.Values), c.Head.Values...) {
				if c.Unit == "sec/op" && !(v > 0) || v < 0 {
					t.Fatalf("exit %d with %s %s value %v", g.Outcome(), c.Benchmark, c.Unit, v)
				}
			}
		}
	}
	for _, write := range []func(io.Writer) error{g.WriteText, g.WriteMarkdown} {
		if err := write(io.Discard); err != nil {
			t.Fatal(err)
		}
	}
}
