// Package e2e runs upstream's own scheduler_perf (k8s.io/kubernetes'
// test/integration/scheduler_perf, at the release the module pins) on its
// preemption workloads, with the stock scheduler or with an implementation
// plugged into it as its PostFilter: what `compare e2e` measures.
//
// scheduler_perf is test code: it runs inside a Go benchmark
// (bench_test.go, BenchmarkPerfScheduling), which `compare e2e` builds
// once and runs once per implementation and round. Each run gets a
// working directory Prepare writes: the suite's performance-config.yaml
// and templates, copied from the module, with a KubeSchedulerConfiguration
// naming the plugin when the implementation is not the stock
// DefaultPreemption. scheduler_perf starts its kube-apiserver in process
// and an etcd from PATH (framework.StartEtcd): the etcd command
// (internal/e2e/etcd) is etcd's own main built from the module graph.
package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Suites are the scheduler_perf folders of preemption workloads, each with
// the topic its own benchmark uses.
var Suites = map[string]string{
	"default_preemption":  "default_preemption",
	"workload_preemption": "workloadpreemption",
}

// Stock names the stock scheduler: DefaultPreemption as upstream ships it.
const Stock = "default"

// ConfigFile is the name of the suite's configuration in its folder.
const ConfigFile = "performance-config.yaml"

// SchedulerPerfDir is the scheduler_perf folder of the k8s.io/kubernetes
// module the module at root requires (from `go list -m`).
func SchedulerPerfDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go list -m k8s.io/kubernetes: %v: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("go list -m k8s.io/kubernetes: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "test", "integration", "scheduler_perf")
	if _, err := os.Stat(filepath.Join(dir, "default_preemption", ConfigFile)); err != nil {
		return "", fmt.Errorf("scheduler_perf in the module cache: %v", err)
	}
	return dir, nil
}

// Prepare writes into dir what one run of suite needs: its folder and the
// shared templates, copied from perfDir (SchedulerPerfDir), and, when
// schedulerConfig is not empty, that KubeSchedulerConfiguration as
// scheduler-config.yaml, named by every test case of the configuration
// (schedulerConfigPath). It returns the suite's folder, the working
// directory of the run (template paths are relative to it).
func Prepare(dir, perfDir, suite string, schedulerConfig []byte) (string, error) {
	if _, ok := Suites[suite]; !ok {
		return "", fmt.Errorf("unknown scheduler_perf suite %q (known: default_preemption, workload_preemption)", suite)
	}
	for _, sub := range []string{"templates", suite} {
		if err := copyTree(filepath.Join(perfDir, sub), filepath.Join(dir, sub)); err != nil {
			return "", err
		}
	}
	work := filepath.Join(dir, suite)
	if len(schedulerConfig) == 0 {
		return work, nil
	}
	if err := os.WriteFile(filepath.Join(work, "scheduler-config.yaml"), schedulerConfig, 0o644); err != nil {
		return "", err
	}
	cfgPath := filepath.Join(work, ConfigFile)
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return "", err
	}
	var cases []map[string]any
	if err := yaml.Unmarshal(data, &cases); err != nil {
		return "", fmt.Errorf("%s: %v", cfgPath, err)
	}
	for _, tc := range cases {
		if p, ok := tc["schedulerConfigPath"]; ok {
			return "", fmt.Errorf("%s: test case %v has a scheduler configuration of its own (%v): not plugged", cfgPath, tc["name"], p)
		}
		tc["schedulerConfigPath"] = filepath.Join(work, "scheduler-config.yaml")
	}
	out, err := yaml.Marshal(cases)
	if err != nil {
		return "", err
	}
	return work, os.WriteFile(cfgPath, out, 0o644)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}
