package wire

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// A child holds no descriptor its parent inherited: here the write end of
// a pipe without close-on-exec, as a fuzz worker holds its pipe to the
// coordinator. Once the parent closes it, its reader sees the end at
// once, while the child runs.
func TestChildHoldsNoInheritedDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), syscall.F_SETFD, 0); errno != 0 {
		t.Fatal(errno)
	}
	c := child(t, "reference", 0)
	if c.Name() != "reference" {
		t.Fatalf("the child is %q", c.Name())
	}
	w.Close()
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("reading the pipe its writer closed: %v, want EOF (the running child holds a copy of the write end)", err)
	}
}
