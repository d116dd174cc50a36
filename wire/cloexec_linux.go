package wire

import (
	"os"
	"strconv"
	"syscall"
)

// closeInheritedOnExec marks close-on-exec every descriptor above
// standard error that this process holds without the flag: those it
// inherited (Go opens its own with the flag), which every child would
// hold too. A fuzz worker's pipes to its coordinator (descriptors 3 and
// 4) are such: held by a child, they keep the coordinator from seeing the
// worker end (it reads its pipe until every copy of the write end is
// closed), for as long as the child runs.
func closeInheritedOnExec() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		syscall.CloseOnExec(fd) // a descriptor closed since the listing answers EBADF: nothing to do
	}
}
