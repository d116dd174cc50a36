package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommand: the command is upstream's kube-scheduler command, with its
// flags (--config, --kubeconfig, --feature-gates, ...); its help prints.
// (Running it is schedplugin's end-to-end tests' business: they call
// app.Setup and app.Run with the same registry option.)
func TestCommand(t *testing.T) {
	cmd := command()
	if cmd.Use != "kube-scheduler" {
		t.Errorf("command %q, want kube-scheduler", cmd.Use)
	}
	for _, f := range []string{"config", "kubeconfig", "feature-gates", "secure-port", "leader-elect", "v"} {
		if cmd.Flags().Lookup(f) == nil {
			t.Errorf("no --%s flag", f)
		}
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "--kubeconfig") {
		t.Errorf("help does not mention --kubeconfig:\n%s", out.String())
	}
}
