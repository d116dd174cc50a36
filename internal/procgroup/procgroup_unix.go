//go:build unix

package procgroup

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Set puts cmd's child in a process group of its own, which it leads:
// Kill(cmd.Process) then kills what it started too.
func Set(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// Own is Set for a command made with exec.CommandContext, and makes the
// cancellation of its context kill the whole group.
func Own(cmd *exec.Cmd) {
	Set(cmd)
	cmd.Cancel = func() error {
		Kill(cmd.Process)
		return nil
	}
	// A grandchild killed with the group closes its pipes too; this
	// bounds the wait should one have left the group.
	cmd.WaitDelay = 30 * time.Second
}

// Kill kills the group p leads: p, and whatever it started that did not
// leave the group, even once p has exited.
func Kill(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	_ = p.Kill() // its group is gone if it failed to set it: the child at least
}
