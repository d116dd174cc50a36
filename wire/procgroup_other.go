//go:build !unix

package wire

import (
	"os"
	"os/exec"
)

// ownGroup does nothing where there are no process groups.
func ownGroup(cmd *exec.Cmd) {}

// killGroup kills the child only.
func killGroup(p *os.Process) { _ = p.Kill() }
