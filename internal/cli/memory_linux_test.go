package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 33: what decide takes is bounded by what the cluster's objects take
// decoded (-max-decoded-bytes), not by their bytes of text, of which an
// object takes 1 to 30 times as much (a pod's empty tolerations, 3 bytes
// of text each, take some 90 decoded: 15 MB of them took 414 MiB, and
// 200,000 tiny pods, 38 MB of JSON, took 1.5 GB with reference and 3.5 GB
// with upstream). Here, scaled down: 6 MB of tolerations, 170 MiB decoded,
// under a bound of 32 MiB, refused naming the pod that takes the objects
// over it, in a child whose peak of memory is measured. The full-size
// check, every input of scripts/hostile with every implementation under 1
// GB, is scripts/hostile-memory.sh.
func TestDecideMemoryBoundedByDecodedSize(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 6 MB and decodes some 40 MiB")
	}
	dir := t.TempDir()
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}`)
	tolerations := strings.TrimSuffix(strings.Repeat("{},", 100_000), ",")
	for i := range 20 {
		fmt.Fprintf(&b, `,{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"default"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}],"tolerations":[%s]}}`, i, tolerations)
	}
	b.WriteString("]}\n")
	cluster := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(cluster, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, impl := range []string{"reference", "optimized", "upstream"} {
		t.Run(impl, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "decide", "-cluster", cluster, "-pod", "testdata/small/pod.yaml", "-impl", impl, "-now", testNow, "-max-decoded-bytes", fmt.Sprint(32<<20))
			hwm := filepath.Join(dir, "status-"+impl)
			cmd.Env = append(os.Environ(), "PREEMPTBENCH_CLI_CHILD=cli", "PREEMPTBENCH_CLI_HWM="+hwm, "GOMEMLIMIT=", "GOGC=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != ExitBadInput {
				t.Fatalf("err %v, stderr %.300q; want exit %d", err, stderr.String(), ExitBadInput)
			}
			if want := ": item 4: pod default/p3: the cluster's objects take 33 MiB once decoded with it, more than 32 MiB"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr %.400q; want %q", stderr.String(), want)
			}
			// The child's own code and the runtime take some 60 MiB; the
			// file 6 MB, read whole; the objects at most 32 MiB and the
			// batches being decoded, and their garbage (the collector's
			// target while loading is 60%).
			status, err := os.ReadFile(hwm)
			if err != nil {
				t.Fatal(err)
			}
			var kib int64
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					fmt.Sscan(v, &kib)
				}
			}
			if kib == 0 {
				t.Fatalf("no VmHWM in the child's /proc/self/status: %.300q", status)
			}
			t.Logf("peak RSS %d MiB", kib>>10)
			if kib<<10 > 224<<20 {
				t.Errorf("peak RSS %d MiB, want at most 224 (decoding every pod takes some 330)", kib>>10)
			}
		})
	}
}
