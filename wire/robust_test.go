//go:build linux

package wire

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 33: a child that never says Hello costs one timeout, not one per
// call (Name, Unmodelled and NewEvaluator each started a new child and
// waited the whole timeout for it: 9 s for -exec-timeout 3s).
func TestHandshakeTimeoutIsWaitedOnce(t *testing.T) {
	cl, pod := problem(t)
	const timeout = time.Second
	c := child(t, "no-hello", timeout)
	start := time.Now()
	name := c.Name()
	un := c.Unmodelled(cl, pod)
	_, err := c.NewEvaluator(cl)
	if d := time.Since(start); d > 2*timeout+timeout/2 {
		t.Errorf("Name, Unmodelled and NewEvaluator took %v, want one timeout (%v)", d, timeout)
	}
	if !strings.HasPrefix(name, "exec:") || un != nil {
		t.Errorf("Name() = %q, Unmodelled = %v", name, un)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer within 1s (awaiting its Hello); killed") {
		t.Errorf("NewEvaluator: %v, want the handshake's timeout", err)
	}
}

// report reads what grandchild wrote: its pid and its temporary
// directory.
func report(t *testing.T, path string) (int, string) {
	t.Helper()
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile(path); err == nil && len(b) > 0 {
			break
		}
	}
	var pid int
	var dir string
	if _, err := fmt.Sscan(string(b), &pid, &dir); err != nil {
		t.Fatalf("the child's report %q: %v", b, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	return pid, dir
}

// running reports whether pid runs (a zombie does not).
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) STATE ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// Issue 33: a child that exits leaving a grandchild holding its stderr
// (here one out of its process group, which the client cannot kill) is
// reported at once, its last words included: the client waited for the
// grandchild to close the pipe (45 s, or forever).
func TestExitedChildsGrandchildHoldingStderrDoesNotBlock(t *testing.T) {
	reportPath := filepath.Join(t.TempDir(), "report")
	t.Setenv("PREEMPTBENCH_WIRE_REPORT", reportPath)
	cl, _ := problem(t)
	c := child(t, "exits-leaving-stderr", time.Minute)
	start := time.Now()
	_, err := c.NewEvaluator(cl)
	d := time.Since(start)
	report(t, reportPath)
	if err == nil || !strings.Contains(err.Error(), "exited (exit status 3): dying") {
		t.Errorf("NewEvaluator: %v, want the exit and the child's stderr", err)
	}
	if d > 10*time.Second {
		t.Errorf("NewEvaluator took %v: it waited for the grandchild", d)
	}
}

// Issue 33: a child writing a line without end is killed once the line
// passes the limit, with an error saying so: the client buffered it
// whole (a 1.5 GB line took the parent to 4.5 GB).
func TestLongLineIsRefusedNotBuffered(t *testing.T) {
	cl, _ := problem(t)
	c := child(t, "long-line", time.Minute)
	c.maxLine = 1 << 20 // the child writes 3 MiB
	_, err := c.NewEvaluator(cl)
	want := "wrote a line longer than 1048576 bytes, the most the protocol allows"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("NewEvaluator: %v, want an error saying %q", err, want)
	}
	if len(err.Error()) > 1000 {
		t.Errorf("the error is %d bytes long", len(err.Error()))
	}
}

// Issue 33: killing a child kills what it started (its process group) and
// removes its temporary files (its TMPDIR): a child run by a script or
// `go run` left both behind.
func TestKillTakesTheChildsGroupAndTemporaryDirectory(t *testing.T) {
	reportPath := filepath.Join(t.TempDir(), "report")
	t.Setenv("PREEMPTBENCH_WIRE_REPORT", reportPath)
	t.Setenv("TMPDIR", t.TempDir())
	for _, how := range []string{"Close", "timeout"} {
		t.Run(how, func(t *testing.T) {
			os.Remove(reportPath)
			cl, _ := problem(t)
			c := child(t, "spawner", 2*time.Minute)
			if _, err := c.NewEvaluator(cl); err != nil {
				t.Fatal(err)
			}
			pid, dir := report(t, reportPath)
			if !running(pid) {
				t.Fatalf("the grandchild %d is not running", pid)
			}
			if _, err := os.Stat(filepath.Join(dir, "file")); err != nil {
				t.Fatal(err)
			}
			switch how {
			case "Close":
				c.Close()
			case "timeout":
				// The same kill as a child that does not answer: here
				// one that does not read a request within the timeout.
				c.mu.Lock()
				p := c.proc
				c.timeout = time.Millisecond
				err := c.write(p, strings.Repeat("x", 8<<20), "a request", time.Now().Add(c.timeout))
				c.mu.Unlock()
				if err == nil || !strings.Contains(err.Error(), "did not read a request within 1ms; killed") {
					t.Errorf("write: %v", err)
				}
				<-p.gone
			}
			for deadline := time.Now().Add(5 * time.Second); running(pid) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if running(pid) {
				t.Errorf("the child's child %d runs after the child was killed", pid)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the child's temporary directory %s: %v, want it removed", dir, err)
			}
		})
	}
}

// Issue 33: a child's name is kept short, on a character boundary, for
// every message that names it (a 3 MB name was printed whole).
func TestLongNameIsClipped(t *testing.T) {
	c := child(t, "long-name", time.Minute)
	name := c.Name()
	if len(name) > 200 || !strings.HasPrefix(name, "üüü") || !strings.HasSuffix(name, fmt.Sprintf("... (%d bytes)", 3<<20)) {
		t.Errorf("Name() = %.300q (%d bytes)", name, len(name))
	}
}
