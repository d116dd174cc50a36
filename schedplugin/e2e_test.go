package schedplugin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/configz"
	"k8s.io/component-base/metrics/testutil"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/preemptbench/preemptbench/internal/controlplane"
	"github.com/preemptbench/preemptbench/schedplugin"
)

func TestMain(m *testing.M) { controlplane.Main(m) }

// scheduler runs kube-scheduler v1.37.2 in this process as its command
// does (app.Setup, then app.Run), with the flags --config (whose
// clientConnection.kubeconfig names the control plane's kubeconfig: with
// --config, upstream ignores --kubeconfig) and --secure-port=0 (no
// serving), the plugin registered
// as cmd/kube-scheduler registers it, plus extra plugins. It stops at the
// end of the test.
func scheduler(t *testing.T, cp *controlplane.ControlPlane, configYAML string, extra ...app.Option) {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.yaml")
	configYAML = strings.Replace(configYAML, "KUBECONFIG", kubeconfig, 1)
	if err := os.WriteFile(config, []byte(configYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse([]string{"--config", config, "--secure-port=0"}); err != nil {
		t.Fatal(err)
	}
	if err := opts.ComponentGlobalsRegistry.Set(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	registry := append([]app.Option{app.WithPlugin(schedplugin.Name, schedplugin.New)}, extra...)
	cc, sched, err := app.Setup(ctx, opts, registry...)
	if err != nil {
		cancel()
		t.Fatalf("kube-scheduler setup: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := app.Run(ctx, cc, sched); err != nil && ctx.Err() == nil {
			t.Errorf("kube-scheduler: %v", err)
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		// app.Run registers the configuration under a process-wide
		// name: the next scheduler of this process registers it again.
		configz.Delete("componentconfig")
	})
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		t.Fatalf("kube-scheduler handlers: %v", err)
	}
}

// configFor is a KubeSchedulerConfiguration (KUBECONFIG standing for the
// kubeconfig's path) with one profile, schedulerName name: stock (DefaultPreemption) when impl is "", else the plugin with
// impl in place of DefaultPreemption; extraFilters are enabled too.
func configFor(name, impl string, extraFilters ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: KUBECONFIG
leaderElection:
  leaderElect: false
profiles:
- schedulerName: %s
`, name)
	if impl == "" && len(extraFilters) == 0 {
		return b.String()
	}
	b.WriteString("  plugins:\n")
	if impl != "" {
		fmt.Fprintf(&b, "    multiPoint:\n      enabled:\n      - name: %s\n      disabled:\n      - name: DefaultPreemption\n", schedplugin.Name)
	}
	if len(extraFilters) > 0 {
		b.WriteString("    filter:\n      enabled:\n")
		for _, f := range extraFilters {
			fmt.Fprintf(&b, "      - name: %s\n", f)
		}
	}
	if impl != "" {
		fmt.Fprintf(&b, "  pluginConfig:\n  - name: %s\n    args:\n      impl: %s\n", schedplugin.Name, impl)
	}
	return b.String()
}

// node is a node with cpu milli-cores, 110 pods.
func node(name string, cpu int64, labels map[string]string) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("16Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status:     v1.NodeStatus{Capacity: rl, Allocatable: rl},
	}
}

// pod is a pod of scheduler sched asking for cpu milli-cores, at
// priority prio, bound to nodeName when not "".
func pod(ns, name, sched, nodeName string, prio int32, cpu int64) *v1.Pod {
	zero := int64(0)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.PodSpec{
			SchedulerName:                 sched,
			NodeName:                      nodeName,
			Priority:                      &prio,
			TerminationGracePeriodSeconds: &zero,
			Containers: []v1.Container{{Name: "c", Image: "pause", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(cpu, resource.DecimalSI)},
			}}},
		},
	}
}

// outcome is what a preemption scenario ends with, read from the API
// server: the pods deleted, the nodes the preemptor was nominated to (in
// the order its updates showed them), and the node it was bound to.
type outcome struct {
	Deleted   []string
	Nominated []string
	Bound     string
}

func (o outcome) String() string {
	return fmt.Sprintf("deleted %v, nominated %v, bound to %q", o.Deleted, o.Nominated, o.Bound)
}

// scenario is the cluster of a preemption test: three nodes of 2 cpu,
// full, and a preemptor of priority 100 asking for 1.5 cpu.
//
//	a: low-a (prio 10, 0.5 cpu), low-b (prio 5, 1.5 cpu): removing low-b
//	   is enough (low-a is reprieved)
//	b: mid-a, mid-b (prio 20, 1 cpu each): both must go
//	c: high (prio 200, 2 cpu): no victim
//
// DefaultPreemption picks a (its highest victim priority, 5, is the
// lowest): low-b deleted, the preemptor nominated to a and bound there.
// Node a carries the label preemptbench.test/reject=true (see
// rejectLabel).
type scenario struct {
	ns, sched string
	nodes     []string
}

func newScenario(t *testing.T, cs kubernetes.Interface, tag, sched string) *scenario {
	t.Helper()
	ctx := context.Background()
	s := &scenario{ns: "e2e-" + tag, sched: sched}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b, c := tag+"-a", tag+"-b", tag+"-c"
	s.nodes = []string{a, b, c}
	for _, n := range []*v1.Node{node(a, 2000, map[string]string{rejectLabel: "true"}), node(b, 2000, nil), node(c, 2000, nil)} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { s.cleanup(t, cs) })
	for _, p := range []*v1.Pod{
		pod(s.ns, "low-a", sched, a, 10, 500),
		pod(s.ns, "low-b", sched, a, 5, 1500),
		pod(s.ns, "mid-a", sched, b, 20, 1000),
		pod(s.ns, "mid-b", sched, b, 20, 1000),
		pod(s.ns, "high", sched, c, 200, 2000),
	} {
		if _, err := cs.CoreV1().Pods(s.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// cleanup deletes the scenario's pods (no garbage collector runs) and
// nodes, so that the next test's scheduler does not see them.
func (s *scenario) cleanup(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	zero := int64(0)
	if err := cs.CoreV1().Pods(s.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting pods: %v", err)
	}
	for _, n := range s.nodes {
		if err := cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", n, err)
		}
	}
}

// relative is o with the scenario's node names as their roles: a, b, c.
func (s *scenario) relative(o outcome) outcome {
	role := func(n string) string {
		for i, m := range s.nodes {
			if m == n {
				return string(rune('a' + i))
			}
		}
		return n
	}
	out := outcome{Deleted: o.Deleted, Bound: role(o.Bound)}
	for _, n := range o.Nominated {
		out.Nominated = append(out.Nominated, role(n))
	}
	return out
}

// preempt creates the preemptor and watches the namespace until it is
// bound (or timeout): the outcome.
func (s *scenario) preempt(t *testing.T, cs kubernetes.Interface) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := cs.CoreV1().Pods(s.ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cs.CoreV1().Pods(s.ns).Create(ctx, pod(s.ns, "preemptor", s.sched, "", 100, 1500), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var o outcome
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("the preemptor was not bound within 60s: %v", o)
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch closed: %v", o)
			}
			p, isPod := ev.Object.(*v1.Pod)
			if !isPod {
				continue
			}
			switch {
			case ev.Type == watch.Deleted:
				o.Deleted = append(o.Deleted, p.Name)
			case p.Name == "preemptor":
				if n := p.Status.NominatedNodeName; n != "" && (len(o.Nominated) == 0 || o.Nominated[len(o.Nominated)-1] != n) {
					o.Nominated = append(o.Nominated, n)
				}
				if p.Spec.NodeName != "" {
					o.Bound = p.Spec.NodeName
					sort.Strings(o.Deleted)
					return o
				}
			}
		}
	}
}

// rejectLabel marks the nodes the test filter rejectFilter rejects.
const rejectLabel = "preemptbench.test/reject"

// rejectFilter is a Filter plugin no implementation models: it finds
// nodes labelled rejectLabel Unschedulable, whatever runs on them.
type rejectFilter struct{}

const rejectFilterName = "PreemptbenchTestRejectLabel"

func (rejectFilter) Name() string { return rejectFilterName }

func (rejectFilter) Filter(_ context.Context, _ fwk.CycleState, _ *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	if ni.Node().Labels[rejectLabel] == "true" {
		return fwk.NewStatus(fwk.Unschedulable, "node is labelled "+rejectLabel)
	}
	return nil
}

func newRejectFilter(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
	return rejectFilter{}, nil
}

func value(t *testing.T, get func() (float64, error)) float64 {
	t.Helper()
	v, err := get()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func fallbacks(t *testing.T, impl, reason string) float64 {
	return value(t, func() (float64, error) {
		return testutil.GetCounterMetricValue(schedplugin.Fallbacks.WithLabelValues(impl, reason))
	})
}

func decisions(t *testing.T, impl, result string) float64 {
	return value(t, func() (float64, error) {
		return testutil.GetCounterMetricValue(schedplugin.Decisions.WithLabelValues(impl, result))
	})
}

func attempts(t *testing.T) float64 {
	return value(t, func() (float64, error) { return testutil.GetCounterMetricValue(metrics.PreemptionAttempts) })
}

// TestPreemptionAgreement runs one preemption scenario under stock
// kube-scheduler (DefaultPreemption) and under the plugin with each
// implementation, each against the shared in-process API server: the
// victims deleted, the node nominated and the node bound are the same,
// and the expected ones (node a, low-b). Under the plugin the
// implementation decided (a Success decision, no fallback).
func TestPreemptionAgreement(t *testing.T) {
	cp := controlplane.Shared(t)
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	var stock outcome
	for _, impl := range []string{"", "optimized", "reference", "upstream"} {
		name := impl
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			sched := "sched-" + name
			scheduler(t, cp, configFor(sched, impl))
			s := newScenario(t, cs, "agree-"+name, sched)
			var succ0, fb0 float64
			if impl != "" {
				succ0 = decisions(t, impl, "Success")
				fb0 = totalFallbacks(t, impl)
			}
			got := s.relative(s.preempt(t, cs))
			t.Logf("%s: %v (%v)", name, got, time.Since(start).Round(time.Millisecond))
			want := outcome{Deleted: []string{"low-b"}, Nominated: []string{"a"}, Bound: "a"}
			if got.String() != want.String() {
				t.Errorf("%s: %v, want %v", name, got, want)
			}
			if impl == "" {
				stock = got
				return
			}
			if got.String() != stock.String() {
				t.Errorf("%s: %v, stock DefaultPreemption: %v", impl, got, stock)
			}
			if d := decisions(t, impl, "Success") - succ0; d != 1 {
				t.Errorf("%s decided %v preemptions, want 1", impl, d)
			}
			if d := totalFallbacks(t, impl) - fb0; d != 0 {
				t.Errorf("%s fell back %v times, want 0", impl, d)
			}
		})
	}
}

func totalFallbacks(t *testing.T, impl string) float64 {
	var sum float64
	for _, r := range []schedplugin.Reason{schedplugin.ReasonFilterPlugin, schedplugin.ReasonExtenders, schedplugin.ReasonPodGroup,
		schedplugin.ReasonGate, schedplugin.ReasonUnmodelled, schedplugin.ReasonFilterStatus, schedplugin.ReasonInvalid, schedplugin.ReasonError} {
		sum += fallbacks(t, impl, string(r))
	}
	return sum
}

// TestFallbackUnmodelledFilter: a profile with a filter plugin the
// implementations do not model (rejectFilter, which rejects node a)
// makes every cycle of the plugged optimized fall back to
// DefaultPreemption, counted under unmodelled_filter_plugin once per
// preemption attempt; DefaultPreemption's dry run runs the filter, so
// it preempts on node b (mid-a and mid-b), where optimized alone would
// have chosen a.
func TestFallbackUnmodelledFilter(t *testing.T) {
	cp := controlplane.Shared(t)
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	sched := "sched-fallback"
	scheduler(t, cp, configFor(sched, "optimized", rejectFilterName), app.WithPlugin(rejectFilterName, newRejectFilter))
	s := newScenario(t, cs, "fallback", sched)
	fb0 := fallbacks(t, "optimized", string(schedplugin.ReasonFilterPlugin))
	dec0 := decisions(t, "optimized", "Success")
	att0 := attempts(t)
	got := s.relative(s.preempt(t, cs))
	want := outcome{Deleted: []string{"mid-a", "mid-b"}, Nominated: []string{"b"}, Bound: "b"}
	if got.String() != want.String() {
		t.Errorf("%v, want %v", got, want)
	}
	fb := fallbacks(t, "optimized", string(schedplugin.ReasonFilterPlugin)) - fb0
	att := attempts(t) - att0
	if fb < 1 || fb != att {
		t.Errorf("fallbacks counted: %v, preemption attempts: %v; want as many, at least 1", fb, att)
	}
	if d := decisions(t, "optimized", "Success") - dec0; d != 0 {
		t.Errorf("optimized decided %v cycles, want none", d)
	}
	t.Logf("%v; %v fallbacks", got, fb)
}
