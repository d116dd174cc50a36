// Package registry lists the implementations of the preempt contract that
// live in this module, once. The benchmarks, the command's -impl flag, the
// conformance and fuzz tests, CI and the comparison tables' baselines all
// read it. Adding an in-tree implementation is one package plus one line in
// All.
//
// Earlier upstream releases run out of process, each from a module of its
// own (package releases): Releases lists them, from preempt.ReleaseTable,
// and LookupRelease names them upstream@VERSION.
package registry

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/preemptbench/preemptbench/optimized"
	"github.com/preemptbench/preemptbench/preempt"
	"github.com/preemptbench/preemptbench/reference"
	"github.com/preemptbench/preemptbench/releases"
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

// releaseList are the upstream releases run from modules of their own,
// releases/VERSION, oldest first: preempt.ReleaseTable's rows before the
// current release's (docs/releases.md, "Adding a release").
var releaseList = func() []releases.Release {
	var out []releases.Release
	for _, r := range preempt.ReleaseTable {
		if r.Version != upstream.Version {
			out = append(out, releases.Release{Version: r.Version, Tags: r.Tags, UnknownGates: r.UnknownGates})
		}
	}
	return out
}()

// Releases returns the upstream releases run from modules of their own,
// oldest first (the in-process upstream, upstream.Version, is not one).
func Releases() []releases.Release {
	return append([]releases.Release(nil), releaseList...)
}

// ReleaseNames are the names LookupRelease knows: upstream@VERSION for
// every release of Releases, then for upstream.Version (the in-process
// upstream).
func ReleaseNames() []string {
	var out []string
	for _, r := range releaseList {
		out = append(out, r.Name())
	}
	return append(out, "upstream@"+upstream.Version)
}

// LookupRelease returns the implementation called name if it is
// upstream@VERSION: a release of Releases, built on first use with notes
// on progress and run as a child that may take timeout per call; or, for
// upstream.Version, the in-process upstream; or upstream@DIR, a
// kubernetes source tree (Tree). ok is false when name is none of these;
// err says why a tree cannot be used (not a kubernetes tree, a version
// older than every release). A tree answers as its base release, the
// newest at or below its version: when that is not the tree's own
// version, a note on progress says so.
func LookupRelease(name string, timeout time.Duration, progress io.Writer) (_ preempt.Implementation, ok bool, _ error) {
	v, ok := strings.CutPrefix(name, "upstream@")
	if !ok {
		return nil, false, nil
	}
	if v == upstream.Version {
		return upstream.Impl{}, true, nil
	}
	for _, r := range releaseList {
		if r.Version == v {
			return releases.New(r, timeout, progress), true, nil
		}
	}
	if !releases.TreeRef(v) {
		return nil, false, nil
	}
	r, err := Tree(v, progress)
	if err != nil {
		return nil, true, err
	}
	return releases.New(r, timeout, progress), true, nil
}

// Tree is the release that builds the kubernetes source tree at dir
// (upstream@DIR): its base release's row of preempt.ReleaseTable, the
// newest at or below the tree's version, with the tree. A note on
// progress (nil: none) says when the base is not the tree's own version.
func Tree(dir string, progress io.Writer) (releases.Release, error) {
	t, err := releases.OpenTree(dir)
	if err != nil {
		return releases.Release{}, err
	}
	base, err := t.Base(preempt.Releases)
	if err != nil {
		return releases.Release{}, err
	}
	r := releases.Release{Version: base, Tree: &t}
	for _, row := range preempt.ReleaseTable {
		if row.Version == base {
			r.Tags, r.UnknownGates = row.Tags, row.UnknownGates
		}
	}
	if base != t.Version && progress != nil {
		fmt.Fprintf(progress, "upstream@%s: the tree is %s (%s); it is built and answers as %s, the newest release at or below it (its build tags, behaviour switches and feature gates)\n", t.Given, t.Version, t.Found, base)
	}
	if progress != nil {
		changes, err := t.RestatedChanges(base)
		if err != nil {
			fmt.Fprintf(progress, "upstream@%s: note: cannot compare the functions the adapter restates with %s's: %v\n", t.Given, base, err)
		}
		for _, c := range changes {
			fmt.Fprintf(progress, "upstream@%s: note: %s\n", t.Given, c)
		}
	}
	return r, nil
}
