package bench

import (
	"testing"
)

func TestBatchOps(t *testing.T) {
	for _, c := range []struct{ perOp, left, want int }{
		{5, 1000, 200}, // PreemptionPVs at 5 nodes
		{5, 100, 100},  // -benchtime 100x: one batch
		{1000, 3, 1},   // PreemptionPVs at 1000 nodes
		{5000, 1, 1},   // PreemptionBasic at 5000
		{100, 50, 10},  // a gang stream of 100 members
		{3, 1000, 334}, // rounded up
		{0, 10, 10},    // no preemptors: still a bounded batch
		{1, 0, 1},      // never empty
	} {
		if got := BatchOps(c.perOp, c.left); got != c.want {
			t.Errorf("BatchOps(%d, %d) = %d, want %d", c.perOp, c.left, got, c.want)
		}
	}
}

// fakeTimer records whether the clock runs.
type fakeTimer struct{ on bool }

func (f *fakeTimer) StartTimer() { f.on = true }
func (f *fakeTimer) StopTimer()  { f.on = false }

// timedBatches sets up every op untimed and runs it timed, once, each op
// with its own runner, in batches of BatchOps.
func TestTimedBatchesRunsEveryOpOnce(t *testing.T) {
	for _, c := range []struct{ n, perOp, batches int }{
		{1000, 5, 5}, {1001, 5, 6}, {3, 1000, 3}, {1, 1, 1},
	} {
		tm := &fakeTimer{on: true}
		var setups, batches, pending int
		seen := map[int]bool{}
		timedBatches(tm, c.n, c.perOp, func() int {
			if tm.on {
				t.Fatal("setup timed")
			}
			if pending == 0 {
				batches++
			}
			setups++
			pending++
			return setups
		}, func(id int) {
			if !tm.on {
				t.Fatal("op not timed")
			}
			if seen[id] {
				t.Fatalf("op %d run twice", id)
			}
			seen[id] = true
			pending--
		})
		if setups != c.n || len(seen) != c.n || batches != c.batches {
			t.Errorf("n %d, perOp %d: %d setups, %d ops run, %d batches; want %d, %[4]d, %d", c.n, c.perOp, setups, len(seen), batches, c.n, c.batches)
		}
	}
}
