//go:build unix

package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO that never ends is read through the limit, and refused.
func TestLoadEndlessFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		line := []byte("# an endless comment line\n")
		for {
			if _, err := w.Write(line); err != nil {
				return // the reader stopped: EPIPE
			}
		}
	}()
	start := time.Now()
	_, _, err := LoadPathsWith([]string{fifo}, Options{MaxBytes: 1 << 16})
	if err == nil || !strings.Contains(err.Error(), fifo+": larger than 65536 bytes") {
		t.Errorf("error %v, want the FIFO and the limit named", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the writer was never stopped")
	}
}
