package optimized_test

import (
	"context"
	"testing"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

func BenchmarkTmpDecide(b *testing.B) {
	c, req := basicRequest(b, 5000)
	for _, impl := range []preempt.Implementation{reference.Impl{}, optimized.Impl{Workers: 1}, optimized.Impl{}, upstream.Impl{}} {
		b.Run(impl.Name(), func(b *testing.B) {
			ev, _ := impl.NewEvaluator(c)
			b.ReportAllocs()
			for b.Loop() {
				dr, _ := ev.FindCandidates(context.Background(), req)
				ev.SelectCandidate(dr.Candidates, req)
			}
		})
	}
}
