package cli

import (
	"strings"
	"testing"
)

func TestScenarioBounded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scenario", "-nodes", "100000000", "-dir", t.TempDir()}, "100000000 nodes, more than the 100000 a scenario may have"},
		{[]string{"scenario", "-nodes", "-3", "-dir", t.TempDir()}, "negative node count -3"},
		{[]string{"scenario", "-shape", "round", "-dir", t.TempDir()}, `unknown shape "round"`},
	} {
		stdout, stderr, code := runCLI(t, tc.args...)
		if code != ExitBadInput || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and %q on stderr", tc.args, code, stderr, stdout, tc.want)
		}
	}
}
