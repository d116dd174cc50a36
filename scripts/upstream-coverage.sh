#!/usr/bin/env bash
# Prints the share of the statements of upstream's preemption code
# (the k8s.io/kubernetes go.mod pins, `go list -m k8s.io/kubernetes`)
# that the project's tests drive, per file and in all, in two tables:
# the single-pod code (preemption.go, util.go, executor.go and
# default_preemption.go, pod-group code left out: scripts/upstreamcov
# says what that is) and the pod-group code (podgrouppreemption.go,
# types.go and util.go, every statement).
#
#   scripts/upstream-coverage.sh [go test flags...]    default: ./...
#
# The profile is kept in /tmp/preemptbench-upstream.cover.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=k8s.io/kubernetes/pkg/scheduler/framework/preemption,k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption
profile=/tmp/preemptbench-upstream.cover
args=("$@")
if [ ${#args[@]} = 0 ]; then args=(./...); fi
go test -coverpkg="$pkgs" -coverprofile="$profile" "${args[@]}" >/tmp/preemptbench-upstream.cover.log 2>&1 || {
  tail -n 40 /tmp/preemptbench-upstream.cover.log >&2
  echo "upstream-coverage: go test failed (log: /tmp/preemptbench-upstream.cover.log)" >&2
  exit 1
}
go run ./scripts/upstreamcov "$profile"
