package fuzz

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/preemptbench/preemptbench/internal/conformance"
)

// TestWriteCorpus rewrites testdata/fuzz/FuzzX/ for every fuzz target: the
// seeds, and problems drawn by the rapid generator within the decoder's
// domain (at most 16 nodes and 7 pods on a node). It runs only with
// PREEMPTBENCH_WRITE_CORPUS=1; `go test` then replays the files as
// regression inputs of each target.
func TestWriteCorpus(t *testing.T) {
	if os.Getenv("PREEMPTBENCH_WRITE_CORPUS") != "1" {
		t.Skip("writes testdata/fuzz: set PREEMPTBENCH_WRITE_CORPUS=1")
	}
	inputs := [][]byte{}
	for _, s := range conformance.Seeds() {
		inputs = append(inputs, conformance.Encode(s))
	}
	gen := conformance.GenSpec(16)
	for i := range 40 {
		s := gen.Example(i)
		for n := range s.Nodes {
			s.Nodes[n].Bound = s.Nodes[n].Bound[:min(len(s.Nodes[n].Bound), 7)]
		}
		if diff := conformance.Decode(conformance.Encode(s)); len(diff.Nodes) != len(s.Nodes) {
			t.Fatalf("example %d does not round-trip", i)
		}
		inputs = append(inputs, conformance.Encode(s))
	}
	for _, target := range []string{"FuzzPreempt", "FuzzSelectVictimsOnNode", "FuzzPickOneNode"} {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, in := range inputs {
			name := fmt.Sprintf("%x", sha256.Sum256(in))[:16]
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
