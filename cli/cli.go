// Package cli is the logic of the compare command; main only calls Run.
package cli

import (
	"fmt"
	"io"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitDiffer   = 1 // implementations disagree (decide -impl all)
	ExitBadInput = 2
)

const usage = `usage: compare <command> [flags]

commands:
  decide  -cluster FILE -pod FILE [-impl NAME|all] [-offset N] [-now RFC3339] [-o json|text]
          run the filter phase and preemption on a cluster and print the decision
  scenario -shape NAME -nodes N [-seed S] [-dir DIR]
          write a built cluster (shapes: basic, heterogeneous, hostports, mixed,
          nominated, pdb, ties) as DIR/cluster.yaml and DIR/pod.yaml
`

// Run executes the command line args and returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitBadInput
	}
	switch args[0] {
	case "decide":
		return runDecide(args[1:], stdout, stderr)
	case "scenario":
		return runScenario(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "compare: unknown command %q\n%s", args[0], usage)
		return ExitBadInput
	}
}
