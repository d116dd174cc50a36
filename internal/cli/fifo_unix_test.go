//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// decide skips a cluster directory's named pipe with a note, and says it
// waits on a named pipe given as the pod.
func TestDecideNamedPipes(t *testing.T) {
	dir := t.TempDir()
	clusterDir := filepath.Join(dir, "cluster")
	if err := os.Mkdir(clusterDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, clusterDir, "c.yaml", list(okNode))
	fifo := filepath.Join(clusterDir, "pods.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	podFIFO := filepath.Join(dir, "pod.yaml")
	if err := syscall.Mkfifo(podFIFO, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(podFIFO, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write([]byte(okPod))
		w.Close()
	}()
	_, stderr, code := runCLI(t, "decide", "-cluster", clusterDir, "-pod", podFIFO, "-now", testNow)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"compare decide: note: skipped 1 file of " + clusterDir + " that is not a regular file (a directory is read for its files): " + fifo + " (a named pipe (FIFO))\n",
		"compare decide: note: " + podFIFO + " is a named pipe (FIFO): waiting for input\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}
