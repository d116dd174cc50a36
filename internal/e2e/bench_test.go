package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
)

var (
	implFlag   = flag.String("e2e.impl", Stock, "the preemption to run: "+Stock+" (the stock DefaultPreemption) or an implementation plugged as the PostFilter")
	configFlag = flag.String("e2e.config", ConfigFile, "the scheduler_perf configuration, in the working directory Prepare wrote")
	topicFlag  = flag.String("e2e.topic", "preemptbench", "scheduler_perf's topic (the name of its JSON results)")
)

// TestMain is scheduler_perf's own (InitTests parses the flags, its
// logging ones included).
func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// BenchmarkPerfScheduling is scheduler_perf's benchmark of the same name,
// on the configuration in the working directory, with -e2e.impl's
// preemption: `compare e2e` runs it; by hand, from a folder Prepare
// wrote, with etcd in PATH:
//
//	e2e.test -test.bench 'PerfScheduling/PreemptionBasic/500Nodes$' -test.benchtime 1x -perf-scheduling-label-filter= -e2e.impl optimized
func BenchmarkPerfScheduling(b *testing.B) {
	registry, err := Registry(*implFlag)
	if err != nil {
		b.Fatal(err)
	}
	perf.RunBenchmarkPerfScheduling(b, *configFlag, *topicFlag, registry)
}
