// Command compare runs preemptbench's implementations on a cluster and
// compares them. See `go run ./compare -h`.
package main

import (
	"os"

	"github.com/preemptbench/preemptbench/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
