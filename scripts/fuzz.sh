#!/usr/bin/env bash
# Runs every fuzz target of the module in turn, each for DURATION, or
# those whose name matches TARGETS (an extended regular expression).
#
#   scripts/fuzz.sh [DURATION] [TARGETS]   DURATION defaults to 30s; any
#                                          -fuzztime value (10s, 2m, 5000x)
#   scripts/fuzz.sh -list                  the targets, package by package
#
# Every target for DURATION takes the target count (scripts/fuzz.sh
# -list) times DURATION: choose TARGETS to fuzz one.
#
# $FUZZTIME_<Target> (FUZZTIME_FuzzPreempt=1500x) runs that target for
# its own duration instead: CI caps its slowest target so.
#
# $FUZZMINIMIZETIME (default 5s) caps the minimizing of each new
# interesting input (go test's default, 60s, is most of a run for a
# target whose input takes milliseconds, FuzzCrossRelease's child calls).
#
# Targets are the `func FuzzX` that `go test -list` finds in each package
# whose test files declare one.
# A failing input is written under the package's testdata/fuzz/FuzzX/ by go
# test; commit it to make it a regression test. Exit 0 when every target
# passed (or there is none), 1 when one failed, 2 when a package does not
# build.
set -uo pipefail
cd "$(dirname "$0")/.."

dur=${1:-30s}
want=${2:-.}
list_only=false
if [ "$dur" = -list ]; then list_only=true; fi
found=0
failed=()
for entry in $(go list -f '{{.ImportPath}}={{.Dir}}' ./...); do
  pkg=${entry%%=*}
  # go test -list links the package's test binary (seconds each, minutes
  # over the module): only packages whose test files declare a target.
  grep -qsE '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_]+ \*testing\.F\)' "${entry#*=}"/*_test.go || continue
  if ! list=$(go test -list '^Fuzz' "$pkg" 2>&1); then
    echo "$list" >&2
    echo "fuzz: $pkg does not build" >&2
    exit 2
  fi
  for target in $(printf '%s\n' "$list" | grep '^Fuzz' | grep -E -- "$want" || true); do
    if $list_only; then
      echo "$pkg $target"
      continue
    fi
    found=$((found + 1))
    own="FUZZTIME_$target"
    tdur=${!own:-$dur}
    echo "=== fuzz $pkg $target for $tdur"
    start=$SECONDS
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$tdur" -fuzzminimizetime "${FUZZMINIMIZETIME:-5s}" "$pkg"; then
      failed+=("$pkg $target")
    fi
    echo "=== fuzz $target took $((SECONDS - start))s"
  done
done
if $list_only; then exit 0; fi
if [ "$found" = 0 ]; then
  echo "fuzz: no fuzz target (func FuzzX) matches '$want'; nothing to do"
  exit 0
fi
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz: ${#failed[@]} of $found targets failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "fuzz: all $found targets passed ($dur each)"
