package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/preemptbench/preemptbench/scenario"
)

// runScenario writes a built shape as cluster.yaml and pod.yaml.
func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", "basic", "shape to build")
	nodes := fs.Int("nodes", 5, fmt.Sprintf("number of nodes (at most %d)", scenario.MaxNodes))
	seed := fs.Uint64("seed", 1, "seed")
	dir := fs.String("dir", ".", "directory to write cluster.yaml and pod.yaml to")
	if err := fs.Parse(args); err != nil {
		return ExitBadInput
	}
	s, err := scenario.Build(*shape, *nodes, *seed)
	if err != nil {
		fmt.Fprintf(stderr, "compare scenario: %v\n", err)
		return ExitBadInput
	}
	cluster, err := scenario.ListYAML(s.Cluster)
	if err != nil {
		fmt.Fprintf(stderr, "compare scenario: %v\n", err)
		return ExitBadInput
	}
	pod, err := scenario.PodYAML(s.Pod)
	if err != nil {
		fmt.Fprintf(stderr, "compare scenario: %v\n", err)
		return ExitBadInput
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "compare scenario: -dir: %v\n", err)
		return ExitBadInput
	}
	for name, data := range map[string][]byte{"cluster.yaml": cluster, "pod.yaml": pod} {
		if err := os.WriteFile(filepath.Join(*dir, name), data, 0o644); err != nil {
			fmt.Fprintf(stderr, "compare scenario: %v\n", err)
			return ExitBadInput
		}
	}
	fmt.Fprintf(stdout, "wrote %s and %s (shape %s, %d nodes, seed %d; decide with -now %s)\n",
		filepath.Join(*dir, "cluster.yaml"), filepath.Join(*dir, "pod.yaml"), *shape, *nodes, *seed, s.Now.Format("2006-01-02T15:04:05Z07:00"))
	return ExitOK
}
