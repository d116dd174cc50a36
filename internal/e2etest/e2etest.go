// Package e2etest holds what the end-to-end tests of the plugin and of
// the built kube-scheduler share: a kube-scheduler run in process against
// the in-process control plane, a KubeSchedulerConfiguration naming the
// plugin, and a preemption scenario read back from the API server.
package e2etest

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
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/configz"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/preemptbench/preemptbench/internal/controlplane"
	"github.com/preemptbench/preemptbench/schedplugin"
)

// FlushAfter is how long the schedulers tests run leave a pod in the
// unschedulable pool before the queue's flush (which runs every 30s)
// moves it out: 5 minutes in kube-scheduler by default. v1.37.2's
// asynchronous preemption can leave a preemptor there after its victims
// are gone (kubernetes/kubernetes#141694), stock as under the plugin;
// with 10s it is rescued within a test's 60s wait, and a test can count
// such rescues (the queue's metric of pods moved for UnschedulableTimeout).
const FlushAfter = "10s"

// RejectLabel marks the nodes a test filter may reject (the scenario's
// node a carries it).
const RejectLabel = "preemptbench.test/reject"

// RunScheduler runs kube-scheduler v1.37.2 in this process as its command
// does (app.Setup, then app.Run), with the flags --config (whose
// clientConnection.kubeconfig names the control plane's kubeconfig: with
// --config, upstream ignores --kubeconfig), --secure-port=0 (no
// serving) and --pod-max-in-unschedulable-pods-duration=10s (FlushAfter),
// the plugin registered as cmd/kube-scheduler registers it, plus extra
// plugins. It stops at the end of the test.
func RunScheduler(t *testing.T, cp *controlplane.ControlPlane, configYAML string, extra ...app.Option) {
	t.Helper()
	RunSchedulerFlags(t, cp, configYAML, nil, extra...)
}

// RunSchedulerFlags is RunScheduler with more of kube-scheduler's flags.
func RunSchedulerFlags(t *testing.T, cp *controlplane.ControlPlane, configYAML string, flags []string, extra ...app.Option) {
	t.Helper()
	config := WriteConfig(t, cp, configYAML)
	opts := options.NewOptions()
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(append([]string{"--config", config, "--secure-port=0", "--pod-max-in-unschedulable-pods-duration=" + FlushAfter}, flags...)); err != nil {
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

// WriteConfig writes configYAML, KUBECONFIG replaced by the path of a
// kubeconfig of cp, in a temporary directory of t: the --config file.
func WriteConfig(t *testing.T, cp *controlplane.ControlPlane, configYAML string) string {
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
	return config
}

// Config is a KubeSchedulerConfiguration (KUBECONFIG standing for the
// kubeconfig's path) with one profile, schedulerName name: stock (DefaultPreemption) when impl is "", else the plugin with
// impl in place of DefaultPreemption; extraFilters are enabled too.
func Config(name, impl string, extraFilters ...string) string {
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

// Node is a node with cpu milli-cores, 110 pods.
func Node(name string, cpu int64, labels map[string]string) *v1.Node {
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

// Pod is a pod of scheduler sched asking for cpu milli-cores, at
// priority prio, bound to nodeName when not "".
func Pod(ns, name, sched, nodeName string, prio int32, cpu int64) *v1.Pod {
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

// Outcome is what a preemption Scenario ends with, read from the API
// server: the pods deleted, the nodes the preemptor was nominated to (in
// the order its updates showed them), and the node it was bound to.
type Outcome struct {
	Deleted   []string
	Nominated []string
	Bound     string
}

func (o Outcome) String() string {
	return fmt.Sprintf("deleted %v, nominated %v, bound to %q", o.Deleted, o.Nominated, o.Bound)
}

// Scenario is the cluster of a preemption test: three nodes of 2 cpu,
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
// RejectLabel).
type Scenario struct {
	NS, Sched string
	Nodes     []string
}

func NewScenario(t *testing.T, cs kubernetes.Interface, tag, sched string) *Scenario {
	t.Helper()
	s := Empty(t, cs, tag, sched)
	a, b, c := tag+"-a", tag+"-b", tag+"-c"
	s.AddNode(t, cs, Node(a, 2000, map[string]string{RejectLabel: "true"}))
	s.AddNode(t, cs, Node(b, 2000, nil))
	s.AddNode(t, cs, Node(c, 2000, nil))
	s.AddPod(t, cs, Pod(s.NS, "low-a", sched, a, 10, 500))
	s.AddPod(t, cs, Pod(s.NS, "low-b", sched, a, 5, 1500))
	s.AddPod(t, cs, Pod(s.NS, "mid-a", sched, b, 20, 1000))
	s.AddPod(t, cs, Pod(s.NS, "mid-b", sched, b, 20, 1000))
	s.AddPod(t, cs, Pod(s.NS, "high", sched, c, 200, 2000))
	return s
}

// Empty is a scenario without nodes or pods: its namespace, e2e-TAG
// (e2e-TAG-2, -3, ... when a test runs again in the same process, as
// with -count: no namespace controller runs to delete the last one's),
// and the cleanup of what it will hold at the end of t.
func Empty(t *testing.T, cs kubernetes.Interface, tag, sched string) *Scenario {
	t.Helper()
	s := &Scenario{NS: "e2e-" + tag, Sched: sched}
	for k := 2; ; k++ {
		_, err := cs.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.NS}}, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if !apierrors.IsAlreadyExists(err) || k > 100 {
			t.Fatal(err)
		}
		s.NS = fmt.Sprintf("e2e-%s-%d", tag, k)
	}
	t.Cleanup(func() { s.Cleanup(t, cs) })
	return s
}

// AddNode creates n, one of the scenario's nodes (Nodes, in order).
func (s *Scenario) AddNode(t *testing.T, cs kubernetes.Interface, n *v1.Node) {
	t.Helper()
	if _, err := cs.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Nodes = append(s.Nodes, n.Name)
}

// AddPod creates p.
func (s *Scenario) AddPod(t *testing.T, cs kubernetes.Interface, p *v1.Pod) {
	t.Helper()
	if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Cleanup deletes the Scenario's pods (no garbage collector runs) and
// nodes, so that the next test's scheduler does not see them.
func (s *Scenario) Cleanup(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	zero := int64(0)
	if err := cs.CoreV1().Pods(s.NS).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Errorf("deleting pods: %v", err)
	}
	for _, n := range s.Nodes {
		if err := cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", n, err)
		}
	}
}

// Relative is o with the Scenario's node names as their roles: a, b, c.
func (s *Scenario) Relative(o Outcome) Outcome {
	role := func(n string) string {
		for i, m := range s.Nodes {
			if m == n {
				return string(rune('a' + i))
			}
		}
		return n
	}
	out := Outcome{Deleted: o.Deleted, Bound: role(o.Bound)}
	for _, n := range o.Nominated {
		out.Nominated = append(out.Nominated, role(n))
	}
	return out
}

// Preempt creates the scenario's preemptor (priority 100, 1.5 cpu) and
// watches the namespace until it is bound (or fails after 60 s).
func (s *Scenario) Preempt(t *testing.T, cs kubernetes.Interface) Outcome {
	t.Helper()
	return s.PreemptPod(t, cs, Pod(s.NS, "preemptor", s.Sched, "", 100, 1500))
}

// PreemptPod creates preemptor (in the scenario's namespace) and watches
// the namespace until it is bound: the pods deleted meanwhile, the nodes
// it was nominated to, the node it was bound to.
func (s *Scenario) PreemptPod(t *testing.T, cs kubernetes.Interface, preemptor *v1.Pod) Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := cs.CoreV1().Pods(s.NS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := cs.CoreV1().Pods(s.NS).Create(ctx, preemptor, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var o Outcome
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
			case p.Name == preemptor.Name:
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
