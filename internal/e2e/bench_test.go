package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/component-base/metrics/testutil"
	perf "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"

	"github.com/preemptbench/preemptbench/schedplugin"
	"github.com/preemptbench/preemptbench/upstream"
)

var (
	implFlag   = flag.String("e2e.impl", Stock, "the preemption to run: "+Stock+" (the stock DefaultPreemption) or an implementation plugged as the PostFilter")
	configFlag = flag.String("e2e.config", ConfigFile, "the scheduler_perf configuration, in the working directory Prepare wrote")
	topicFlag  = flag.String("e2e.topic", "preemptbench", "scheduler_perf's topic (the name of its JSON results)")
	recordFlag = flag.String("e2e.record", "", "append each workload's Record (its preemptions and end state, read from its API server) to this file")
)

// TestMain is scheduler_perf's own (InitTests parses the flags, its
// logging ones included).
func TestMain(m *testing.M) {
	if err := perf.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	// The upstream implementation's one metrics recorder runs for the
	// process: started before any workload, so that scheduler_perf's
	// per-workload leak check does not count it.
	upstream.StartShared()
	os.Exit(m.Run())
}

// BenchmarkPerfScheduling is scheduler_perf's benchmark of the same name,
// on the configuration in the working directory, with -e2e.impl's
// preemption: `compare e2e` runs it; by hand, from a folder Prepare
// wrote, with etcd in PATH:
//
//	e2e.test -test.bench 'PerfScheduling/PreemptionBasic/500Nodes$' -test.benchtime 1x -perf-scheduling-label-filter= -e2e.impl optimized
//
// With -e2e.record, each workload's Record is appended to the file
// (TestSchedulerPerfAgreement).
func BenchmarkPerfScheduling(b *testing.B) {
	registry, err := Registry(*implFlag)
	if err != nil {
		b.Fatal(err)
	}
	var opts []perf.SchedulerPerfOption
	if *recordFlag != "" {
		opts = append(opts, perf.WithPrepareFn(record))
	}
	perf.RunBenchmarkPerfScheduling(b, *configFlag, *topicFlag, registry, opts...)
}

// record is scheduler_perf's prepare hook: it runs once the workload's
// API server and scheduler are up, and records the workload until its
// end (a cleanup of the workload's benchmark, which runs before
// scheduler_perf's own cleanups stop the scheduler and the server).
func record(tCtx ktesting.TContext) error {
	r, err := StartRecorder(tCtx.Client())
	if err != nil {
		return err
	}
	tb := tCtx.TB()
	before := pluginCounts(tb.Errorf)
	tb.Cleanup(func() {
		rec, err := r.Finish(tCtx, tb.Name(), 30*time.Second)
		if err != nil {
			tb.Errorf("recording %s: %v", tb.Name(), err)
			return
		}
		rec.Failed = tb.Failed()
		if *implFlag != Stock {
			rec.Plugin = map[string]float64{}
			for k, v := range pluginCounts(tb.Errorf) {
				if d := v - before[k]; d != 0 {
					rec.Plugin[k] = d
				}
			}
		}
		if err := WriteRecord(*recordFlag, rec); err != nil {
			tb.Errorf("recording %s: %v", tb.Name(), err)
		}
	})
	return nil
}

// pluginCounts are the plugin's decisions and fallbacks in this process.
func pluginCounts(errorf func(string, ...any)) map[string]float64 {
	out := map[string]float64{}
	counters := map[string][]string{
		"decided ":     {"Success", "Unschedulable", "Error"},
		"fallback to ": {string(schedplugin.ReasonFilterPlugin), string(schedplugin.ReasonExtenders), string(schedplugin.ReasonPodGroup), string(schedplugin.ReasonGate), string(schedplugin.ReasonUnmodelled), string(schedplugin.ReasonFilterStatus), string(schedplugin.ReasonInvalid), string(schedplugin.ReasonDisagreement), string(schedplugin.ReasonError)},
	}
	for prefix, labels := range counters {
		vec := schedplugin.Decisions
		if prefix != "decided " {
			vec = schedplugin.Fallbacks
		}
		for _, l := range labels {
			v, err := testutil.GetCounterMetricValue(vec.WithLabelValues(*implFlag, l))
			if err != nil {
				errorf("plugin metric %s%s: %v", prefix, l, err)
				continue
			}
			out[prefix+l] = v
		}
	}
	return out
}
