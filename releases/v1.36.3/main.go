// Command v1.36.3 is upstream@v1.36.3: package upstream built at
// k8s.io/kubernetes v1.36.3 (this module's go.mod, build tag
// preemptbench_v1_36), served over package wire's protocol (package
// upstream/serve says how, and how to build it by hand).
package main

import (
	"os"

	"github.com/preemptbench/preemptbench/upstream/serve"
)

func main() { os.Exit(serve.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
