#!/bin/sh
# Runs the tests of upstream/testdata/overlay inside k8s.io/kubernetes
# v1.37.2's pkg/scheduler. They reproduce findings that only the
# scheduler's own unexported code shows (docs/upstream-findings.md). The
# module cache stays as it is: the module is copied to a temporary
# directory, the tests are added to the copy, and go test runs with a
# temporary go.mod that replaces k8s.io/kubernetes by the copy (go test
# -overlay refuses files under GOMODCACHE). Extra arguments go to go test.
set -eu
cd "$(dirname "$0")/.."
src=$(go list -m -f '{{.Dir}}' k8s.io/kubernetes)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cp -r "$src" "$tmp/kubernetes"
chmod -R u+w "$tmp/kubernetes"
cp upstream/testdata/overlay/*_test.go "$tmp/kubernetes/pkg/scheduler/"
cp go.mod "$tmp/go.mod"
cp go.sum "$tmp/go.sum"
printf '\nreplace k8s.io/kubernetes => %s/kubernetes\n' "$tmp" >>"$tmp/go.mod"
go test -modfile "$tmp/go.mod" -run 'TestPreemptbench' "$@" k8s.io/kubernetes/pkg/scheduler
