package bench

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/preemptbench/preemptbench/internal/registry"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/releases"
)

var extraImpls = flag.String("bench.impls", "", "more implementations, `LABEL=upstream@VERSION|upstream@DIR,...`: an earlier release or a kubernetes tree, run as a child process and named LABEL in the results (compare bench -impl passes them)")

// impls are the registry's implementations and -bench.impls.
var impls = sync.OnceValues(func() ([]preempt.Implementation, error) {
	out := registry.All()
	if *extraImpls == "" {
		return out, nil
	}
	for _, kv := range strings.Split(*extraImpls, ",") {
		label, name, ok := strings.Cut(kv, "=")
		if !ok || label == "" || strings.Contains(label, "/") {
			return nil, fmt.Errorf("-bench.impls: %q is not LABEL=NAME (a label without /)", kv)
		}
		impl, ok, err := registry.LookupRelease(name, 0, os.Stderr)
		if err == nil && !ok {
			err = fmt.Errorf("not an upstream release or tree")
		}
		if err != nil {
			return nil, fmt.Errorf("-bench.impls %s: %w", name, err)
		}
		if r, ok := impl.(*releases.Impl); ok {
			impl = r.Labelled(label)
		} else if impl.Name() != label {
			return nil, fmt.Errorf("-bench.impls %s: %s is in process, named %s", kv, name, impl.Name())
		}
		out = append(out, impl)
	}
	return out, nil
})

func all(b *testing.B) []preempt.Implementation {
	out, err := impls()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// One benchmark per stage, every implementation of the registry:
// BenchmarkStage/shape=S/nodes=N/impl=I.

func BenchmarkPreempt(b *testing.B)                  { Preempt(b, all(b)...) }
func BenchmarkDecide(b *testing.B)                   { Decide(b, append(all(b), Floor())...) }
func BenchmarkDecideCachedPreemptor(b *testing.B)    { DecideCachedPreemptor(b, all(b)...) }
func BenchmarkDecideCold(b *testing.B)               { DecideCold(b, all(b)...) }
func BenchmarkNewEvaluator(b *testing.B)             { NewEvaluator(b, all(b)...) }
func BenchmarkFindCandidates(b *testing.B)           { FindCandidates(b, all(b)...) }
func BenchmarkDryRunPreemption(b *testing.B)         { DryRunPreemption(b, all(b)...) }
func BenchmarkSelectVictimsOnNode(b *testing.B)      { SelectVictimsOnNode(b, all(b)...) }
func BenchmarkSelectCandidate(b *testing.B)          { SelectCandidate(b, all(b)...) }
func BenchmarkPrepareCandidate(b *testing.B)         { PrepareCandidate(b, all(b)...) }
func BenchmarkPreemptExtender(b *testing.B)          { PreemptExtender(b, all(b)...) }
func BenchmarkPreemptExtenderNodeCache(b *testing.B) { PreemptExtenderNodeCache(b, all(b)...) }
func BenchmarkPreemptionStream(b *testing.B)         { PreemptionStream(b, all(b)...) }
