package releases_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/preemptbench/preemptbench/releases"
)

// standInCheckout makes a stand-in checkout of the main module (its
// go.mod) in a temporary directory, the source root of the test
// ($PREEMPTBENCH_SOURCE), and returns a function writing a file into it.
func standInCheckout(t *testing.T) (write func(rel, content string)) {
	t.Helper()
	src := t.TempDir()
	write = func(rel, content string) {
		p := filepath.Join(src, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+releases.Module+"\n\ngo 1.22\n")
	t.Setenv(releases.SourceEnv, src)
	return write
}

// standInRelease makes a stand-in checkout holding release v0.0.1, a
// module whose main prints its version, or skips the test without a go
// command to build it.
func standInRelease(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the release with")
	}
	write := standInCheckout(t)
	write("releases/v0.0.1/go.mod", "module "+releases.Module+"/releases/v0.0.1\n\ngo 1.22\n")
	write("releases/v0.0.1/main.go", "package main\n\nfunc main() { println(\"v0.0.1\") }\n")
}

// Issue 33: a cached binary changed since it was built (here overwritten
// with garbage: "exec format error" on every run) is built again on the
// next use, not run forever. The release is a stand-in module, in a
// stand-in checkout ($PREEMPTBENCH_SOURCE), that builds in a second.
func TestCorruptedCachedBinaryIsRebuilt(t *testing.T) {
	standInRelease(t)
	t.Setenv(releases.CacheEnv, t.TempDir())
	r := releases.Release{Version: "v0.0.1"}

	run := func(bin string) (string, error) {
		out, err := exec.Command(bin).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	var progress bytes.Buffer
	bin, err := r.Binary(&progress)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(bin); err != nil || out != "v0.0.1" {
		t.Fatalf("the built binary: %q, %v", out, err)
	}
	if r.Built() != bin {
		t.Errorf("Built() = %q, want %q", r.Built(), bin)
	}

	if err := os.WriteFile(bin, []byte("not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := run(bin); err == nil {
		t.Fatal("the corrupted binary runs: the test shows nothing")
	}
	if got := r.Built(); got != "" {
		t.Errorf("Built() = %q for a corrupted binary, want none", got)
	}
	progress.Reset()
	again, err := r.Binary(&progress)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(again); err != nil || out != "v0.0.1" {
		t.Errorf("the next use runs %s: %q, %v; want it built again (notes: %q)", again, out, err, progress.String())
	}
	if !strings.Contains(progress.String(), "is not the one built") {
		t.Errorf("notes %q, want one saying why it is built again", progress.String())
	}
	// Intact, it is used as it is.
	progress.Reset()
	if third, err := r.Binary(&progress); err != nil || third != again || progress.Len() != 0 {
		t.Errorf("third use: %q, %v, notes %q; want %q unbuilt", third, err, progress.String(), again)
	}
}

// A build killed between its link and its rename leaves NAME.tmp-PID, a
// whole binary: the next use of the release removes it once it is older
// than an hour, and leaves a younger one (another process's build in
// flight) and other releases' files alone.
func TestStaleTemporaryBinariesAreRemoved(t *testing.T) {
	standInRelease(t)
	cache := t.TempDir()
	t.Setenv(releases.CacheEnv, cache)
	r := releases.Release{Version: "v0.0.1"}
	bin, err := r.Binary(nil)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	files := map[string]bool{ // name -> kept
		"upstream-v0.0.1-0123456789abcdef.tmp-4242":        false,
		"upstream-v0.0.1-0123456789abcdef.sha256.tmp-4242": false,
		"upstream-v0.0.1-fedcba9876543210.tmp-4343":        true, // young
		"upstream-v0.0.2-0123456789abcdef.tmp-4242":        true, // another release's
	}
	for name, kept := range files {
		p := filepath.Join(cache, name)
		if err := os.WriteFile(p, []byte("partial"), 0o755); err != nil {
			t.Fatal(err)
		}
		if !kept || name == "upstream-v0.0.2-0123456789abcdef.tmp-4242" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if again, err := r.Binary(nil); err != nil || again != bin {
		t.Fatalf("second use: %q, %v; want %q", again, err, bin)
	}
	for name, kept := range files {
		_, err := os.Stat(filepath.Join(cache, name))
		if got := err == nil; got != kept {
			t.Errorf("%s: kept %v, want %v", name, got, kept)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Errorf("the release's binary: %v", err)
	}
}
