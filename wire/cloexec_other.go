//go:build !linux

package wire

// closeInheritedOnExec does nothing where the process's descriptors are
// not listed in /proc/self/fd.
func closeInheritedOnExec() {}
