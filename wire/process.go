package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/preemptbench/preemptbench/internal/procgroup"
)

// MaxLineBytes is the longest line the client reads from a child: a
// Decision or a DryRun of 65000 nodes, every one a candidate with ten
// victims, is some 50 MB of JSON. A longer line is not the protocol, and
// the child is killed before it takes the parent's memory with it.
const MaxLineBytes = 128 << 20

// grace is how long the client waits, once a child has exited or closed
// its output, for the rest of its output and its standard error: what a
// grandchild that left the child's process group holds open is not
// waited for longer.
const grace = time.Second

// process is one running child, in a process group of its own (on Unix)
// and with a temporary directory of its own (TMPDIR and GOTMPDIR), both
// gone once it is killed or exits: a child that is a script or `go run`
// leaves neither its own children nor their files behind.
type process struct {
	cmd   *exec.Cmd
	stdin *os.File
	// lines are the child's output lines; done is closed when its output
	// ends, outErr saying why (io.EOF, or a line too long).
	lines  chan []byte
	done   chan struct{}
	outErr error
	// stderr keeps the end of its standard error; stderrDone is closed
	// when that ends.
	stderr     *tail
	stderrDone chan struct{}
	// reaped is closed once the child has exited and been waited for;
	// gone once its group is killed and its temporary directory removed.
	reaped, gone chan struct{}
	// quit, closed by kill, stops the readers.
	quit     chan struct{}
	killOnce sync.Once
	tmp      string
	pipes    []*os.File // the parent's ends of stdout and stderr
}

// errLineTooLong is a child's output line longer than the limit.
type errLineTooLong struct{ limit int }

func (e errLineTooLong) Error() string {
	return fmt.Sprintf("wrote a line longer than %d bytes, the most the protocol allows (is it a %s child?)", e.limit, Protocol)
}

// inheritedMemoryLimit is the GOMEMLIMIT setting that gives a child the
// parent's soft memory limit (debug.SetMemoryLimit: the command sets one
// while it runs), or "" when the parent has none or the user set
// GOMEMLIMIT, which the child inherits as it is. A child deciding over
// the wire (a release of upstream, an exec: implementation written in
// Go) holds the same cluster as the parent and makes as much garbage:
// without the limit its collector lets its heap grow to twice what it
// keeps.
func inheritedMemoryLimit() string {
	if os.Getenv("GOMEMLIMIT") != "" {
		return ""
	}
	lim := debug.SetMemoryLimit(-1)
	if lim == math.MaxInt64 {
		return ""
	}
	return "GOMEMLIMIT=" + strconv.FormatInt(lim, 10)
}

// startProcess starts args, its output read in lines of at most maxLine
// bytes.
func startProcess(args []string, maxLine int) (p *process, err error) {
	tmp, err := os.MkdirTemp("", "preemptbench-wire-")
	if err != nil {
		return nil, fmt.Errorf("wire: a temporary directory for %s: %w", args[0], err)
	}
	var files []*os.File // every end, closed on failure
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			os.RemoveAll(tmp)
		}
	}()
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		return nil, err
	}
	// The child gets its standard input, output and error only.
	closeInheritedOnExec()
	cmd := exec.Command(args[0], args[1:]...)
	// Its own files: the parent's ends of the pipes are *os.File, so Wait
	// copies nothing and returns when the child exits, whoever else holds
	// the pipes.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "GOTMPDIR="+tmp)
	if lim := inheritedMemoryLimit(); lim != "" {
		cmd.Env = append(cmd.Env, lim)
	}
	procgroup.Set(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("wire: starting %s: %w", args[0], err)
	}
	// The child holds its ends now.
	inR.Close()
	outW.Close()
	errW.Close()
	p = &process{
		cmd: cmd, stdin: inW, tmp: tmp, pipes: []*os.File{outR, errR},
		lines: make(chan []byte, 1), done: make(chan struct{}),
		stderr: &tail{}, stderrDone: make(chan struct{}),
		reaped: make(chan struct{}), gone: make(chan struct{}), quit: make(chan struct{}),
	}
	go func() {
		p.outErr = p.readLines(outR, maxLine)
		close(p.done)
	}()
	go func() {
		_, _ = io.Copy(p.stderr, errR)
		close(p.stderrDone)
	}()
	go func() {
		_ = cmd.Wait()
		close(p.reaped)
		// What the child leaves in its group (a grandchild holding its
		// pipes, say) goes with it.
		procgroup.Kill(cmd.Process)
		p.cleanUp()
		close(p.gone)
	}()
	return p, nil
}

// readLines sends r's lines on p.lines until r ends, a line is longer
// than limit, or p is killed.
func (p *process) readLines(r io.Reader, limit int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		var line []byte
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if len(line)+len(frag) > limit {
				return errLineTooLong{limit}
			}
			line = append(line, frag...)
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if len(line) > 0 {
			select {
			case p.lines <- line:
			case <-p.quit:
				return errors.New("killed")
			}
		}
		if err != nil {
			return err
		}
	}
}

// cleanUp removes the child's temporary directory once its group is
// killed: a process killed in the middle of creating a file may still
// finish, so a removal that fails is tried again, for a while.
func (p *process) cleanUp() {
	deadline := time.Now().Add(grace)
	for os.RemoveAll(p.tmp) != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// kill kills the child and its group, and closes the parent's ends of its
// pipes; it returns at once (p.gone says when the child is gone).
func (p *process) kill() {
	p.killOnce.Do(func() {
		close(p.quit)
		procgroup.Kill(p.cmd.Process)
		_ = p.stdin.Close()
		go func() {
			// The readers' pipes, once the child is reaped: a grandchild
			// that left the group may hold them open forever.
			select {
			case <-p.reaped:
			case <-time.After(grace):
			}
			for _, f := range p.pipes {
				f.Close()
			}
		}()
	})
}

// exitError describes a child whose output ended or that exited: its exit
// status and the end of its standard error, each waited for no longer
// than grace.
func (p *process) exitError(name string) error {
	select {
	case <-p.reaped:
	case <-time.After(grace):
		return fmt.Errorf("wire: %s closed its standard output and did not exit; killed", name)
	}
	select {
	case <-p.stderrDone:
	case <-time.After(grace):
	}
	msg := fmt.Sprintf("wire: %s exited (%v)", name, p.cmd.ProcessState)
	if s := p.stderr.String(); s != "" {
		msg += ": " + s
	}
	return errors.New(msg)
}

// tail keeps the last bytes a child wrote on stderr, for the message of
// its death.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if n > 2048 {
		b = b[n-2048:]
	}
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
