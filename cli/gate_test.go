package cli

import "testing"

func TestGateGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		// A 30% slowdown and one allocation more regress; the noise and the
		// improvement do not; 5 and 15000 nodes are listed, not compared.
		{"gate-regression", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt"}, ExitRegression},
		{"gate-regression-markdown", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-o", "markdown"}, ExitRegression},
		// The allocation is within 1% and the slowdown within 50%.
		{"gate-thresholds", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-max-time", "50%", "-max-bytes", "1%", "-max-allocs", "1"}, ExitPass},
		{"gate-noise", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/noise.txt"}, ExitPass},
		{"gate-few-samples", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/few.txt"}, ExitBadInput},
		{"gate-nothing-in-common", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/other.txt"}, ExitBadInput},
		{"gate-missing-file", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/missing.txt"}, ExitBadInput},
		{"gate-no-head", []string{"gate", "-base", "testdata/bench/base.txt"}, ExitBadInput},
		{"gate-bad-threshold", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-max-time", "-5%"}, ExitBadInput},
		{"gate-bad-alpha", []string{"gate", "-base", "testdata/bench/base.txt", "-head", "testdata/bench/head.txt", "-alpha", "2"}, ExitBadInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, stderr, code := runCLI(t, tc.args...); code != tc.want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			golden(t, tc.name, tc.args...)
		})
	}
}
