//go:build unix

package e2e

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup puts cmd in a process group of its own and makes cancelling
// it kill the whole group: the child and the etcd that scheduler_perf's
// framework starts from it, which a kill of the child alone leaves
// running.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 30 * time.Second // a pipe a grandchild still holds
}
