// Package registry lists the implementations of the preempt contract that
// live in this module, once. The benchmarks, the command's -impl flag, the
// conformance and fuzz tests, CI and the comparison tables' baselines all
// read it. Adding an in-tree implementation is one package plus one line in
// All.
package registry

import (
	"fmt"
	"strings"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/upstream"
)

// entries are the implementations in the column order of the comparison
// tables, the reference (the oracle) first. Baseline marks the columns the
// tables compare the others with.
var entries = []struct {
	impl     preempt.Implementation
	baseline bool
}{
	{reference.Impl{}, true},
	{upstream.Impl{}, true},
	{optimized.Impl{}, false},
}

// All returns the in-tree implementations, in table column order.
func All() []preempt.Implementation {
	var out []preempt.Implementation
	for _, e := range entries {
		out = append(out, e.impl)
	}
	return out
}

// Baselines names the implementations the comparison tables and the gate
// compare every other with, in order: the oracle and upstream itself.
func Baselines() []string {
	var out []string
	for _, e := range entries {
		if e.baseline {
			out = append(out, e.impl.Name())
		}
	}
	return out
}

// Reference is the oracle every other implementation is compared with.
func Reference() preempt.Implementation { return reference.Impl{} }

// Names returns the names of All, in order.
func Names() []string {
	var names []string
	for _, impl := range All() {
		names = append(names, impl.Name())
	}
	return names
}

// Lookup returns the implementation called name.
func Lookup(name string) (preempt.Implementation, error) {
	for _, impl := range All() {
		if impl.Name() == name {
			return impl, nil
		}
	}
	return nil, fmt.Errorf("unknown implementation %q (have %s)", name, strings.Join(Names(), ", "))
}

// Others returns every implementation but the reference.
func Others() []preempt.Implementation {
	var out []preempt.Implementation
	for _, impl := range All() {
		if impl.Name() != Reference().Name() {
			out = append(out, impl)
		}
	}
	return out
}
