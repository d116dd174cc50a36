package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Prepare copies a suite and the shared templates from the module, and a
// plugged run names its scheduler configuration in every test case.
func TestPrepare(t *testing.T) {
	_, perfDir := moduleDirs(t)
	dir := t.TempDir()
	work, err := Prepare(filepath.Join(dir, "stock"), perfDir, "default_preemption", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ConfigFile, "templates/pod-high-priority.yaml", "../templates/pod-low-priority.yaml"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("stock run: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "default_preemption_test.go")); err == nil {
		t.Error("the suite's test file was copied")
	}
	cfg := []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
	work, err = Prepare(filepath.Join(dir, "plugged"), perfDir, "workload_preemption", cfg)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(work, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var cases []map[string]any
	if err := yaml.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no test cases")
	}
	for _, tc := range cases {
		p, _ := tc["schedulerConfigPath"].(string)
		if got, err := os.ReadFile(p); err != nil || string(got) != string(cfg) {
			t.Errorf("test case %v: schedulerConfigPath %q: %v %q", tc["name"], p, err, got)
		}
		if tc["workloadTemplate"] == nil || tc["workloads"] == nil {
			t.Errorf("test case %v lost its workloads", tc["name"])
		}
	}
	if _, err := Prepare(dir, perfDir, "no_such_suite", nil); err == nil || !strings.Contains(err.Error(), "unknown scheduler_perf suite") {
		t.Errorf("unknown suite: %v", err)
	}
}

// moduleDirs are the module's root and the scheduler_perf folder of the
// kubernetes module it requires.
func moduleDirs(t *testing.T) (root, perfDir string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	perfDir, err = SchedulerPerfDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, perfDir
}
