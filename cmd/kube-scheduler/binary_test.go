package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/preemptbench/preemptbench/internal/controlplane"
	"github.com/preemptbench/preemptbench/internal/e2etest"
)

// TestBuiltBinaryPreempts builds this command (go build), starts the
// binary against an in-process API server with a
// KubeSchedulerConfiguration naming the plugin, and checks that it
// schedules and preempts: of the scenario's full nodes, the victim low-b
// is deleted, the preemptor nominated to node a and bound there, and the
// binary's log shows the plugin built with the implementation and
// deciding the preemption. Twice: optimized under asynchronous
// preemption (v1.37.2's default), reference under synchronous
// (--feature-gates=SchedulerAsyncPreemption=false).
func TestBuiltBinaryPreempts(t *testing.T) {
	if testing.Short() {
		// It builds the whole kube-scheduler; go test ./... runs it, the
		// shortened race run (CI) does not build it again under -race.
		t.Skip("builds kube-scheduler (run without -short)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the binary: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "kube-scheduler")
	start := time.Now()
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("go build ./cmd/kube-scheduler: %v", time.Since(start).Round(time.Millisecond))

	cp := controlplane.StartT(t)
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, impl string
		flags      []string
	}{
		{"async-optimized", "optimized", nil},
		{"sync-reference", "reference", []string{"--feature-gates=SchedulerAsyncPreemption=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) { runBinary(t, bin, cp, cs, tc.name, tc.impl, tc.flags) })
	}
}

// runBinary runs the binary with the plugin deciding with impl, and
// checks the scenario's preemption and the binary's log.
func runBinary(t *testing.T, bin string, cp *controlplane.ControlPlane, cs kubernetes.Interface, tag, impl string, flags []string) {
	sched := "sched-" + tag
	config := e2etest.WriteConfig(t, cp, e2etest.Config(sched, impl))
	logFile := filepath.Join(t.TempDir(), "kube-scheduler.log")
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--config", config, "--secure-port=0", "-v=4"}, flags...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			_ = cmd.Wait()
		}
	}
	defer stop()

	s := e2etest.NewScenario(t, cs, tag, sched)
	got := s.Relative(s.Preempt(t, cs))
	want := e2etest.Outcome{Deleted: []string{"low-b"}, Nominated: []string{"a"}, Bound: "a"}
	if got.String() != want.String() {
		t.Errorf("%v, want %v", got, want)
	}
	synchronous := len(flags) > 0
	stop()
	out, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		fmt.Sprintf(`"Preemption by a preemptbench implementation" plugin="PreemptbenchPreemption" impl=%q synchronous=%t`, impl, synchronous),
		fmt.Sprintf(`"Preemption decided" logger="PostFilter.PreemptbenchPreemption" pod="e2e-%s/preemptor" plugin="PreemptbenchPreemption" impl=%q node="%s-a" victims=1`, tag, impl, tag),
	} {
		if !strings.Contains(string(out), line) {
			t.Errorf("the binary's log has no %s", line)
		}
	}
	if strings.Contains(string(out), "falls back to DefaultPreemption") {
		t.Errorf("the binary fell back to DefaultPreemption")
	}
	if t.Failed() {
		t.Logf("kube-scheduler's log:\n%s", out)
	}
}
