// Command kube-scheduler is upstream's kube-scheduler (k8s.io/kubernetes
// v1.37.2, cmd/kube-scheduler: its flags, its configuration, its
// serving) with the preemptbench PostFilter plugin registered
// (schedplugin.Name), as kubernetes-sigs/scheduler-plugins builds its
// own. A KubeSchedulerConfiguration enables the plugin in place of
// DefaultPreemption; see docs/real-scheduler.md.
//
//	go build ./cmd/kube-scheduler
//	./kube-scheduler --config config.yaml --kubeconfig kubeconfig
package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/preemptbench/preemptbench/schedplugin"
)

func main() {
	os.Exit(cli.Run(command()))
}

// command is upstream's command with the plugin in its registry.
func command() *cobra.Command {
	return app.NewSchedulerCommand(app.WithPlugin(schedplugin.Name, schedplugin.New))
}
