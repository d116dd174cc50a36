package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/preemptbench/preemptbench/internal/synth"
)

// maxScenarioNodes is the most nodes `compare scenario` writes, below
// synth.MaxNodes (what Build makes): 20000 nodes write up to about 90
// MB of YAML (heterogeneous), within what `compare decide` reads by
// default (256 MiB). The cluster is written as it is built, one object at
// a time (synth.WriteCluster), in well under 1 GB of memory at any
// size. The default benchmark suite goes up to 15000 nodes.
const maxScenarioNodes = 20000

// runScenario writes a built shape as cluster.yaml and pod.yaml.
func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scenario", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", "basic", "shape to build: "+strings.Join(synth.Shapes(), ", "))
	nodes := nodesFlag(5)
	fs.Var(&nodes, "nodes", fmt.Sprintf("number of nodes, 1 to %d", maxScenarioNodes))
	seed := seedFlag(1)
	fs.Var(&seed, "seed", "seed, a whole number from 0 to 18446744073709551615")
	dir := fs.String("dir", ".", "directory to write cluster.yaml and pod.yaml to")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "compare scenario: "+format+"\n", a...)
		return ExitBadInput
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q (the directory goes with -dir)", fs.Arg(0))
	}
	// Bounded before anything is built: -nodes 100000000 would take the
	// machine's memory.
	switch {
	case nodes < 1:
		return bad("-nodes %d: a scenario has at least 1 node", nodes)
	case nodes > maxScenarioNodes:
		return bad("-nodes %d is above the maximum of %d (the most compare decide reads by default)", nodes, maxScenarioNodes)
	}
	if err := synth.Check(*shape, int(nodes)); err != nil {
		return bad("%v", err)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return bad("-dir: %v", err)
	}
	s, err := writeScenario(*dir, *shape, int(nodes), uint64(seed))
	if err != nil {
		return bad("%v", err)
	}
	fmt.Fprintf(stdout, "wrote %s and %s (shape %s, %d nodes, seed %d; decide with -now %s)\n",
		filepath.Join(*dir, "cluster.yaml"), filepath.Join(*dir, "pod.yaml"), *shape, nodes, uint64(seed), s.Now.Format("2006-01-02T15:04:05Z07:00"))
	return ExitOK
}

// writeScenario writes dir/cluster.yaml as it builds the cluster, and
// dir/pod.yaml. Each file is written under a temporary name and renamed
// once complete: a failure leaves no half-written file behind.
func writeScenario(dir, shape string, nodes int, seed uint64) (*synth.Scenario, error) {
	var s *synth.Scenario
	err := writeFileAtomic(filepath.Join(dir, "cluster.yaml"), func(w io.Writer) error {
		var err error
		s, err = synth.WriteCluster(w, shape, nodes, seed)
		return err
	})
	if err != nil {
		return nil, err
	}
	pod, err := synth.PodYAML(s.Pod)
	if err != nil {
		return nil, err
	}
	err = writeFileAtomic(filepath.Join(dir, "pod.yaml"), func(w io.Writer) error {
		_, err := w.Write(pod)
		return err
	})
	return s, err
}

func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// nodesFlag is -nodes: a whole number, its range checked once parsed
// (flag.Int says "parse error" of 1e9 and "value out of range" of a
// number past int64).
type nodesFlag int64

func (n *nodesFlag) String() string { return strconv.FormatInt(int64(*n), 10) }

func (n *nodesFlag) Set(v string) error {
	i, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err == nil:
		*n = nodesFlag(i)
		return nil
	case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(v, "-"):
		return errors.New("a scenario has at least 1 node")
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("above the maximum of %d", maxScenarioNodes)
	}
	return fmt.Errorf("not a whole number of nodes (1 to %d)", maxScenarioNodes)
}

// seedFlag is -seed: a whole number from 0 to the largest uint64, with
// errors that say which (flag.Uint64 says "parse error" of -1).
type seedFlag uint64

func (s *seedFlag) String() string { return strconv.FormatUint(uint64(*s), 10) }

func (s *seedFlag) Set(v string) error {
	n, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err == nil:
		*s = seedFlag(n)
		return nil
	case strings.HasPrefix(v, "-"):
		return errors.New("negative; a seed is a whole number from 0 to 18446744073709551615")
	case errors.Is(err, strconv.ErrRange):
		return errors.New("above the largest seed, 18446744073709551615")
	}
	return errors.New("not a whole number; a seed is a whole number from 0 to 18446744073709551615")
}
