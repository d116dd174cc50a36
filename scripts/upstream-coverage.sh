#!/usr/bin/env bash
# Prints the share of the statements of upstream's preemption code
# (the k8s.io/kubernetes go.mod pins, `go list -m k8s.io/kubernetes`)
# that the project's tests drive, per file and in all, in three tables:
# the single-pod code (preemption.go, util.go, executor.go and
# default_preemption.go, pod-group code left out: scripts/upstreamcov
# says what that is), the pod-group code (podgrouppreemption.go,
# types.go and util.go, every statement), and the storage and DRA
# plugins (dynamicresources, volumebinding, volumerestrictions,
# nodevolumelimits, volumezone: the code a pod's scheduling cycle runs up
# to PostFilter, as scripts/upstreamcov's walk finds it).
#
#   scripts/upstream-coverage.sh [go test flags and packages...]    default: ./...
#
# The profile is kept in /tmp/preemptbench-upstream.cover (or
# $UPSTREAM_COVER_PROFILE), go test's output beside it (.log).
set -euo pipefail
cd "$(dirname "$0")/.."

plugins=k8s.io/kubernetes/pkg/scheduler/framework/plugins
pkgs=k8s.io/kubernetes/pkg/scheduler/framework/preemption,$plugins/defaultpreemption
pkgs+=,$plugins/dynamicresources,$plugins/volumebinding,$plugins/volumerestrictions,$plugins/nodevolumelimits,$plugins/volumezone
profile=${UPSTREAM_COVER_PROFILE:-/tmp/preemptbench-upstream.cover}
args=("$@")
if [ ${#args[@]} = 0 ]; then args=(./...); fi
go test -coverpkg="$pkgs" -coverprofile="$profile" "${args[@]}" >"$profile.log" 2>&1 || {
  tail -n 40 "$profile.log" >&2
  echo "upstream-coverage: go test failed (log: $profile.log)" >&2
  exit 1
}
go run ./scripts/upstreamcov "$profile"
