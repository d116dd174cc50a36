package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Knobs that fake a regression without touching any implementation, for
// the trust test of the gate (scripts/gate.sh must fail when they are set
// on the head side only):
//
//	PREEMPTBENCH_SLOWDOWN=STAGE=PCT    e.g. SelectVictimsOnNode=25
//	PREEMPTBENCH_EXTRA_ALLOC=STAGE=N   e.g. SelectVictimsOnNode=1
//
// STAGE is a benchmark name without "Benchmark" (Decide, FindCandidates,
// SelectVictimsOnNode, ...) or "all". The benchmark loop then times each op
// and busy-spins for PCT% of that time after it, or makes N extra 64-byte
// heap allocations per op. The knobs act on the benchmark of that name: a
// stage called inside another (SelectVictimsOnNode inside Decide) is not
// slowed there, since that would need a hook in the implementation.
var (
	SlowdownPercent int
	SlowdownStage   string
	ExtraAllocs     int
	ExtraAllocStage string
)

// knobError is the error of parsing the knobs from the environment, if any;
// the benchmarks fail on it rather than run unslowed.
var knobError error

func init() {
	var err1, err2 error
	SlowdownStage, SlowdownPercent, err1 = ParseKnob(os.Getenv("PREEMPTBENCH_SLOWDOWN"))
	ExtraAllocStage, ExtraAllocs, err2 = ParseKnob(os.Getenv("PREEMPTBENCH_EXTRA_ALLOC"))
	if err1 != nil {
		knobError = fmt.Errorf("PREEMPTBENCH_SLOWDOWN: %w", err1)
	} else if err2 != nil {
		knobError = fmt.Errorf("PREEMPTBENCH_EXTRA_ALLOC: %w", err2)
	}
}

// ParseKnob parses "STAGE=N" (N >= 0); "" is no knob.
func ParseKnob(s string) (stage string, n int, err error) {
	if s == "" {
		return "", 0, nil
	}
	stage, num, ok := strings.Cut(s, "=")
	if !ok || stage == "" {
		return "", 0, fmt.Errorf("%q is not STAGE=N", s)
	}
	n, err = strconv.Atoi(strings.TrimSuffix(num, "%"))
	if err != nil || n < 0 {
		return "", 0, fmt.Errorf("%q: N must be a non-negative integer", s)
	}
	return stage, n, nil
}

func knobApplies(knobStage, stage string) bool {
	return knobStage == "all" || knobStage == stage
}

// Knobs are the knobs of one stage.
type Knobs struct {
	SlowdownPercent int
	ExtraAllocs     int
}

// KnobsFor returns the knobs in effect for stage.
func KnobsFor(stage string) Knobs {
	var k Knobs
	if knobApplies(SlowdownStage, stage) {
		k.SlowdownPercent = SlowdownPercent
	}
	if knobApplies(ExtraAllocStage, stage) {
		k.ExtraAllocs = ExtraAllocs
	}
	return k
}

// Active reports whether k changes anything.
func (k Knobs) Active() bool { return k.SlowdownPercent > 0 || k.ExtraAllocs > 0 }

// sink keeps the extra allocations on the heap (a pointer to the first
// byte: one allocation each, the array).
var sink atomic.Pointer[byte]

// Apply runs op once with k's slowdown and extra allocations.
func (k Knobs) Apply(op func()) {
	if k.SlowdownPercent > 0 {
		start := time.Now()
		op()
		Spin(time.Since(start) * time.Duration(k.SlowdownPercent) / 100)
	} else {
		op()
	}
	for range k.ExtraAllocs {
		b := make([]byte, 64)
		sink.Store(&b[0])
	}
}

// Spin busy-waits for d: a slower implementation burns CPU, it does not
// sleep.
func Spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}
