package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Issue 33: the preemptor's file is bounded by what the API server
// stores (loader.MaxPodBytes), so that a pod with a huge annotation is
// refused having read little of it: one of 250 MB took 2.0 GB. Here 32
// MiB of annotation, refused within a few MiB.
func TestDecideHugePodMemoryIsBounded(t *testing.T) {
	pod, err := os.ReadFile("testdata/small/pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Replace(string(pod), "uid: preemptor}", "uid: preemptor, annotations: {big: "+strings.Repeat("x", 32<<20)+"}}", 1)
	if len(huge) == len(pod) {
		t.Fatal("no metadata to annotate")
	}
	path := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(path, []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	huge = ""
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, stderr, code := runCLI(t, "decide", "-cluster", "testdata/small/cluster.yaml", "-pod", path, "-impl", "reference", "-now", testNow)
	runtime.ReadMemStats(&after)
	if code != ExitBadInput || !strings.Contains(stderr, "more than any Pod the API server stores") {
		t.Errorf("exit %d, stderr %.300q; want 2 and the pod's size refused", code, stderr)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 24<<20 {
		t.Errorf("allocated %d MiB on a pod of 32 MiB, want at most 24", n>>20)
	}
}

// Issue 33: a -cluster whose one object has a huge field (a 250 MB
// annotation took 2 GB) is refused from its bytes with exit 2, naming
// the file, the item and the object, having allocated little more than
// the file.
func TestDecideHugeClusterObjectRefused(t *testing.T) {
	cluster := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","pods":"110"}}},` +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","namespace":"ns","annotations":{"big":"` + strings.Repeat("x", 20<<20) + `"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]}}]}`
	path := filepath.Join(t.TempDir(), "cluster.json")
	if err := os.WriteFile(path, []byte(cluster), 0o644); err != nil {
		t.Fatal(err)
	}
	cluster = ""
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, stderr, code := runCLI(t, "decide", "-cluster", path, "-pod", "testdata/small/pod.yaml", "-impl", "reference", "-now", testNow)
	runtime.ReadMemStats(&after)
	if code != ExitBadInput || !strings.Contains(stderr, path+":1: item 1: pod ns/big is ") || !strings.Contains(stderr, "the limit on one object") {
		t.Errorf("exit %d, stderr %.300q; want 2 and pod ns/big refused", code, stderr)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
		t.Errorf("allocated %d MiB on a cluster of 20 MiB, want at most 32", n>>20)
	}
}

// The same refusal on -pod-group's file, read as -cluster's files are.
func TestDecidePodGroupHugeObjectRefused(t *testing.T) {
	gang := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"g","namespace":"default"},"spec":{"schedulingPolicy":{"gang":{"minCount":1}}}},` +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"m","namespace":"default","annotations":{"big":"` + strings.Repeat("x", 17<<20) + `"}},"spec":{"schedulingGroup":{"podGroupName":"g"},"containers":[{"name":"c","image":"i"}]}}]}`
	path := filepath.Join(t.TempDir(), "gang.json")
	if err := os.WriteFile(path, []byte(gang), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "decide", "-cluster", "testdata/podgroup/cluster.yaml", "-pod-group", path, "-feature-gates", "GenericWorkload=true", "-impl", "reference", "-now", testNow)
	if code != ExitBadInput || !strings.Contains(stderr, path+":1: item 1: pod default/m is ") {
		t.Errorf("exit %d, stderr %.300q; want 2 and pod default/m refused", code, stderr)
	}
}
