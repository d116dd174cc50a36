//go:build unix

package procgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A cancelled child's grandchild dies with it: the child (a shell) starts
// a long sleep in the background, writes its pid and waits; cancelling
// the context kills the group, the sleep included.
func TestOwnKillsTheGrandchildToo(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 300 & echo $! > "+pidFile+"; wait")
	Own(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(10 * time.Second); ; {
		b, err := os.ReadFile(pidFile)
		if s := strings.TrimSpace(string(b)); err == nil && s != "" {
			if pid, err = strconv.Atoi(s); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never wrote its grandchild's pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the cancelled child exited cleanly")
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		// The grandchild, orphaned, is reaped by init once killed.
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs after the group was killed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
