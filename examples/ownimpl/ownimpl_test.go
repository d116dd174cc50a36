package ownimpl_test

import (
	"testing"

	"example.com/ownimpl"
	"github.com/preemptbench/preemptbench/bench"
	"github.com/preemptbench/preemptbench/preempttest"
	"github.com/preemptbench/preemptbench/reference"
)

// The whole conformance suite: upstream's ported tables and the stage
// tests with their expected values, and the properties against the
// reference.
func TestConformance(t *testing.T) { preempttest.Run(t, ownimpl.Impl{}) }

// The fuzz helper: `go test -fuzz FuzzConformance` explores; plain
// `go test` runs the seeds.
func FuzzConformance(f *testing.F) { preempttest.Fuzz(f, ownimpl.Impl{}) }

// Every stage benchmark, beside the reference, under the project's names:
// BenchmarkPreemption/Decide/shape=basic/nodes=500/impl=ownimpl.
func BenchmarkPreemption(b *testing.B) { bench.Run(b, ownimpl.Impl{}, reference.Impl{}) }

// One stage under exactly the project's name: BenchmarkDecide/shape=.../impl=ownimpl.
func BenchmarkDecide(b *testing.B) { bench.Decide(b, ownimpl.Impl{}) }
