package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare e2e -raw in a directory that does not exist ran every workload
// (minutes) and then failed writing the results, losing them; so did
// -cpuprofile naming a file, and bench's -raw and -plot. Each is checked
// before the run now.
func TestOutputPathsCheckedBeforeTheRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"e2e", "-raw", "/nonexistent/dir/x.txt"}, "-raw /nonexistent/dir/x.txt: its directory"},
		{[]string{"e2e", "-raw", t.TempDir()}, "a directory, want a file"},
		{[]string{"e2e", "-cpuprofile", file}, "is not a directory"},
		{[]string{"e2e", "-cpuprofile", filepath.Join(file, "sub")}, "is not a directory"},
		{[]string{"bench", "-raw", "/nonexistent/x.txt"}, "-raw /nonexistent/x.txt: its directory"},
		{[]string{"bench", "-plot", "/nonexistent/x.svg"}, "-plot /nonexistent/x.svg: its directory"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != ExitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %.300q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if err := checkOutputDir("-cpuprofile", filepath.Join(t.TempDir(), "a", "b")); err != nil {
		t.Errorf("a directory to make under one that exists: %v", err)
	}
}
