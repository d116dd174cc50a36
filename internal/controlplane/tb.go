package controlplane

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"k8s.io/kubernetes/test/utils/ktesting"
)

// processTB is a ktesting.TB outside the testing package, for
// StartTestServer: logs go to logf, cleanups run at Stop (last in, first
// out), Fatal and FailNow end the calling goroutine (runtime.Goexit, as
// testing does) and run turns that into an error.
type processTB struct {
	name string
	logf func(format string, args ...any)

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	fatal    []string
}

var _ ktesting.TB = (*processTB)(nil)

func newProcessTB(name string, logf func(string, ...any)) *processTB {
	return &processTB{name: name, logf: logf}
}

// run calls fn in a goroutine of its own and returns its error, or the
// failure it reported through Fatal/FailNow.
func (tb *processTB) run(fn func() error) error {
	var err error
	finished := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		err = fn()
		finished = true
	}()
	<-done
	if !finished {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		return errors.New(strings.Join(append([]string{"failed"}, tb.fatal...), ": "))
	}
	return err
}

// runCleanups runs the registered cleanups, last first; a cleanup that
// calls FailNow only ends itself.
func (tb *processTB) runCleanups() {
	for {
		tb.mu.Lock()
		n := len(tb.cleanups)
		if n == 0 {
			tb.mu.Unlock()
			return
		}
		f := tb.cleanups[n-1]
		tb.cleanups = tb.cleanups[:n-1]
		tb.mu.Unlock()
		_ = tb.run(func() error { f(); return nil })
	}
}

func (tb *processTB) Attr(key, value string) {}

func (tb *processTB) Chdir(dir string) {
	old, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.Chdir(old) })
}

func (tb *processTB) Cleanup(f func()) {
	tb.mu.Lock()
	tb.cleanups = append(tb.cleanups, f)
	tb.mu.Unlock()
}

func (tb *processTB) Error(args ...any) {
	tb.Log(args...)
	tb.Fail()
}

func (tb *processTB) Errorf(format string, args ...any) {
	tb.Logf(format, args...)
	tb.Fail()
}

func (tb *processTB) Fail() {
	tb.mu.Lock()
	tb.failed = true
	tb.mu.Unlock()
}

func (tb *processTB) FailNow() {
	tb.Fail()
	runtime.Goexit()
}

func (tb *processTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *processTB) Fatal(args ...any) {
	tb.record(fmt.Sprint(args...))
	tb.FailNow()
}

func (tb *processTB) Fatalf(format string, args ...any) {
	tb.record(fmt.Sprintf(format, args...))
	tb.FailNow()
}

func (tb *processTB) record(msg string) {
	tb.Log(msg)
	tb.mu.Lock()
	tb.fatal = append(tb.fatal, msg)
	tb.mu.Unlock()
}

func (tb *processTB) Helper() {}

func (tb *processTB) Log(args ...any) {
	if tb.logf != nil {
		tb.logf("%s", strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	}
}

func (tb *processTB) Logf(format string, args ...any) {
	if tb.logf != nil {
		tb.logf(format, args...)
	}
}

func (tb *processTB) Name() string { return tb.name }

func (tb *processTB) Setenv(key, value string) {
	old, had := os.LookupEnv(key)
	if err := os.Setenv(key, value); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if had {
			_ = os.Setenv(key, old)
		} else {
			_ = os.Unsetenv(key)
		}
	})
}

func (tb *processTB) Skip(args ...any) { tb.Fatal(append([]any{"skipped: "}, args...)...) }

func (tb *processTB) Skipf(format string, args ...any) { tb.Fatalf("skipped: "+format, args...) }

func (tb *processTB) SkipNow() { tb.Fatal("skipped") }

func (tb *processTB) Skipped() bool { return false }

func (tb *processTB) TempDir() string {
	dir, err := os.MkdirTemp("", "preemptbench-"+tb.name)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
