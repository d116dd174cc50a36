// Command v1.35.4 is upstream@v1.35.4: package upstream built at
// k8s.io/kubernetes v1.35.4 (this module's go.mod, build tags
// preemptbench_v1_35,preemptbench_v1_36), served over package wire's protocol (package
// upstream/serve says how, and how to build it by hand).
package main

import (
	"os"

	"github.com/preemptbench/preemptbench/upstream/serve"
)

func main() { os.Exit(serve.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
