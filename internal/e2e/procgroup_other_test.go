//go:build !unix

package e2e

import "os/exec"

// ownGroup leaves cmd as it is: without process groups, cancelling it
// kills the child only.
func ownGroup(cmd *exec.Cmd) {}
