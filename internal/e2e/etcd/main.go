// Command etcd is etcd's own main (go.etcd.io/etcd/server/v3/etcdmain),
// built from the module graph: the etcd binary scheduler_perf's
// integration framework starts from PATH (framework.StartEtcd), with no
// download. compare e2e builds it and puts it first in the benchmark's
// PATH.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
