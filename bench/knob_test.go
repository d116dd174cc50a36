package bench

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
)

func TestParseKnob(t *testing.T) {
	for _, tc := range []struct {
		in        string
		wantStage string
		wantN     int
		wantErr   bool
	}{
		{"", "", 0, false},
		{"SelectVictimsOnNode=25", "SelectVictimsOnNode", 25, false},
		{"Decide=25%", "Decide", 25, false},
		{"all=1", "all", 1, false},
		{"Decide", "", 0, true},
		{"=5", "", 0, true},
		{"Decide=-1", "", 0, true},
		{"Decide=x", "", 0, true},
	} {
		stage, n, err := ParseKnob(tc.in)
		if stage != tc.wantStage || n != tc.wantN || (err != nil) != tc.wantErr {
			t.Errorf("ParseKnob(%q) = %q, %d, %v; want %q, %d, error %v", tc.in, stage, n, err, tc.wantStage, tc.wantN, tc.wantErr)
		}
	}
}

func TestKnobsFor(t *testing.T) {
	defer func(s string, p int, a string, n int) {
		SlowdownStage, SlowdownPercent, ExtraAllocStage, ExtraAllocs = s, p, a, n
	}(SlowdownStage, SlowdownPercent, ExtraAllocStage, ExtraAllocs)
	SlowdownStage, SlowdownPercent, ExtraAllocStage, ExtraAllocs = "Decide", 25, "all", 2
	if got, want := KnobsFor("Decide"), (Knobs{SlowdownPercent: 25, ExtraAllocs: 2}); got != want {
		t.Errorf("KnobsFor(Decide) = %+v, want %+v", got, want)
	}
	if got, want := KnobsFor("FindCandidates"), (Knobs{ExtraAllocs: 2}); got != want {
		t.Errorf("KnobsFor(FindCandidates) = %+v, want %+v", got, want)
	}
	if (Knobs{}).Active() {
		t.Error("zero knobs are active")
	}
}

func TestKnobsApply(t *testing.T) {
	if allocs := testing.AllocsPerRun(100, func() { Knobs{ExtraAllocs: 1}.Apply(func() {}) }); allocs != 1 {
		t.Errorf("ExtraAllocs 1: %v allocations per op, want 1", allocs)
	}
	if allocs := testing.AllocsPerRun(100, func() { Knobs{}.Apply(func() {}) }); allocs != 0 {
		t.Errorf("no knobs: %v allocations per op, want 0", allocs)
	}
	start := time.Now()
	Knobs{SlowdownPercent: 100}.Apply(func() { Spin(5 * time.Millisecond) })
	if d := time.Since(start); d < 10*time.Millisecond {
		t.Errorf("100%% slowdown of a 5ms op took %v, want at least 10ms", d)
	}
}

// Stages must name exactly the benchmarks of bench_test.go, in order, so
// that compare bench -bench accepts every one.
func TestStagesAreTheBenchmarks(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "bench_test.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range f.Decls {
		if name, ok := strings.CutPrefix(funcName(d), "Benchmark"); ok {
			got = append(got, name)
		}
	}
	if diff := cmp.Diff(Stages(), got); diff != "" {
		t.Errorf("Stages vs bench_test.go (-Stages +benchmarks):\n%s", diff)
	}
}

func TestFixture(t *testing.T) {
	f, err := FixtureFor("basic", 5)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := FixtureFor("basic", 5); again != f {
		t.Error("FixtureFor built the fixture twice")
	}
	if diff := cmp.Diff([]string{"node-0", "node-1", "node-2", "node-3", "node-4"}, f.Potential); diff != "" {
		t.Errorf("potential nodes (-want +got):\n%s", diff)
	}
	if f.NumCandidates != 5 || f.Req.Offset != 0 || !f.Req.Now.Equal(f.Scenario.Now) || !cmp.Equal(f.Req.Config, preempt.DefaultConfig()) {
		t.Errorf("fixture request %+v, %d candidates", f.Req, f.NumCandidates)
	}
	if _, err := FixtureFor("round", 5); err == nil {
		t.Error("FixtureFor(round) succeeded")
	}

	ev, err := EvaluatorFor(registry.Reference(), f)
	if err != nil {
		t.Fatal(err)
	}
	dr, err := ev.FindCandidates(context.Background(), f.Req)
	if err != nil {
		t.Fatal(err)
	}
	best := ev.SelectCandidate(dr.Candidates, f.Req)
	small := ActuationCluster(f.Scenario.Cluster, best)
	var got, want []string
	for _, p := range small.Pods {
		got = append(got, p.Name)
	}
	for _, v := range best.Victims {
		want = append(want, v.Name)
	}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("actuation cluster pods (-victims +pods):\n%s", diff)
	}
	if c := ChosenCounts(dr, best); c != (Counts{Candidates: 5, Victims: 4, NodesVisited: 5}) {
		t.Errorf("counts %+v", c)
	}
}

var cmpSorted = cmp.Transformer("sorted", func(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
})

func funcName(d ast.Decl) string {
	if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
		return fd.Name.Name
	}
	return ""
}
