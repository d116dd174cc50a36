//go:build unix

package loader

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/preemptbench/preemptbench/preempt"
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
	if d := time.Since(start); d > 5*raceScale*time.Second {
		t.Errorf("took %v", d)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the writer was never stopped")
	}
}

// A directory's named pipes, sockets and devices are skipped, with a note naming
// them, never waited on; a directory of nothing else is an error.
func TestLoadDirectorySkipsSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(nodeDoc), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pods.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(dir, "s.yaml")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("listen: %v", err)
	}
	defer l.Close()
	dev := filepath.Join(dir, "null.yml")
	if err := os.Symlink("/dev/null", dev); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var c *preempt.Cluster
	var notes []string
	go func() {
		defer close(done)
		c, notes, err = LoadPaths([]string{dir})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("waited on the named pipe")
	}
	want := "skipped 3 files of " + dir + " that are not regular files (a directory is read for its files): " + dev + " (a character device), " + fifo + " (a named pipe (FIFO)), " + sock + " (a socket)"
	if err != nil || len(c.Nodes) != 1 || !reflect.DeepEqual(notes, []string{want}) {
		t.Errorf("%v, notes %q; want one node and %q", err, notes, want)
	}
	if err := os.Remove(filepath.Join(dir, "cluster.yaml")); err != nil {
		t.Fatal(err)
	}
	_, _, err = LoadPaths([]string{dir})
	if want := dir + ": no regular .json, .yaml or .yml file in the directory (skipped " + dev + " (a character device), " + fifo + " (a named pipe (FIFO)), " + sock + " (a socket))"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// A named pipe given as an input is read, once it is said to be waited
// on.
func TestLoadFIFONamedWaits(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	told := make(chan string, 1)
	go func() {
		note := <-told
		if note != fifo+" is a named pipe (FIFO): waiting for input" {
			t.Errorf("note %q", note)
		}
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		w.Write([]byte(nodeDoc))
		w.Close()
	}()
	c, _, err := LoadPathsWith([]string{fifo}, Options{Notify: func(n string) { told <- n }})
	if err != nil || len(c.Nodes) != 1 {
		t.Errorf("%v: want the node written to the pipe", err)
	}
}
