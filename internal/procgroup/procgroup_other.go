//go:build !unix

package procgroup

import (
	"os"
	"os/exec"
	"time"
)

// Set leaves cmd as it is (no process groups here).
func Set(cmd *exec.Cmd) {}

// Own leaves cmd in this process's group (no process groups here): a
// cancellation kills the child only.
func Own(cmd *exec.Cmd) { cmd.WaitDelay = 30 * time.Second }

// Kill kills p only.
func Kill(p *os.Process) { _ = p.Kill() }
