package loader

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal: its controlling side, and its
// terminal's path.
func openPTY(t *testing.T) (*os.File, string) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	return m, "/dev/pts/" + strconv.Itoa(int(n))
}

// A terminal given as an input is said to be waited on, then read to its
// end (Ctrl-D).
func TestLoadTerminalWaits(t *testing.T) {
	m, tty := openPTY(t)
	defer m.Close()
	told := make(chan string, 1)
	go func() {
		<-told
		// Typed: the document, then Ctrl-D at the start of a line.
		m.Write([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n\x04"))
	}()
	c, _, err := LoadPathsWith([]string{tty}, Options{Notify: func(n string) {
		if n != tty+" is a terminal: waiting for input (end it with Ctrl-D)" {
			t.Errorf("note %q", n)
		}
		told <- n
	}})
	if err != nil || len(c.Nodes) != 1 {
		t.Errorf("%v: want the node typed", err)
	}
}

// Standard input on a terminal is said to be waited on too.
func TestLoadStdinTerminalWaits(t *testing.T) {
	m, tty := openPTY(t)
	defer m.Close()
	in, err := os.Open(tty)
	if err != nil {
		t.Skip(err)
	}
	defer in.Close()
	told := make(chan string, 1)
	go func() {
		<-told
		m.Write([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n\x04"))
	}()
	c, _, err := LoadPathsWith([]string{"-"}, Options{Stdin: in, Notify: func(n string) {
		if n != "standard input is a terminal: waiting for input (end it with Ctrl-D)" {
			t.Errorf("note %q", n)
		}
		told <- n
	}})
	if err != nil || len(c.Nodes) != 1 {
		t.Errorf("%v: want the node typed", err)
	}
}
