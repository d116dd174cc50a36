#!/usr/bin/env bash
# Benchmark gate: fails when the working tree is significantly slower or
# allocates more than BASE_REF.
#
#   scripts/gate.sh [BASE_REF]          BASE_REF defaults to HEAD~1
#
# The base is checked out in a temporary git worktree (removed at the end);
# the head is the working tree as it is, uncommitted changes included. Both
# bench test binaries are built once, then run interleaved (base, head,
# head, base, ...) COUNT times, and `compare gate` (built from the working tree) judges. Its exit
# code is this script's: 0 pass, 1 regression, 2 bad input (or a failure to
# build or run).
#
# Settings (environment):
#   COUNT=10       runs of each side (the gate corrects for the number of
#                  checks; ten runs keep its power for a 25% slowdown)
#   BENCHTIME=1s   -test.benchtime
#   BENCH='^BenchmarkDecide$/^shape=basic$/^nodes=(500|5000)$'
#                  -test.bench regular expression of the gated benchmarks
#   GATE_FLAGS=    extra flags of compare gate, e.g. '-max-time 10% -o markdown'
#   OUT=           directory to keep base.txt and head.txt in
#
# When the base has no bench/ directory (it predates the benchmarks), the
# head's bench/ is copied into the base worktree.
#
# Trust test: PREEMPTBENCH_SLOWDOWN and PREEMPTBENCH_EXTRA_ALLOC (see
# bench/knob.go) apply to the head's runs only, so
#   PREEMPTBENCH_SLOWDOWN=Decide=25 scripts/gate.sh HEAD
# must exit 1, and so must PREEMPTBENCH_EXTRA_ALLOC=Decide=1.
set -euo pipefail
cd "$(dirname "$0")/.."

base_ref=${1:-HEAD~1}
COUNT=${COUNT:-10}
BENCHTIME=${BENCHTIME:-1s}
BENCH=${BENCH:-'^BenchmarkDecide$/^shape=basic$/^nodes=(500|5000)$'}
GATE_FLAGS=${GATE_FLAGS:-}
OUT=${OUT:-}

if ! base_sha=$(git rev-parse --verify --quiet "$base_ref^{commit}"); then
  echo "gate: $base_ref is not a commit" >&2
  exit 2
fi
tmp=$(mktemp -d)
wt="$tmp/base"
cleanup() {
  git worktree remove --force "$wt" >/dev/null 2>&1 || true
  git worktree prune >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

fail() {
  echo "gate: $*" >&2
  exit 2
}

start=$SECONDS
echo "gate: base $base_ref ($(git rev-parse --short "$base_sha")), head: the working tree" >&2
git worktree add --detach --quiet "$wt" "$base_sha" || fail "cannot add a worktree at $base_ref"
if [ ! -d "$wt/bench" ]; then
  echo "gate: $base_ref has no bench/; using the head's" >&2
  cp -R bench "$wt/bench"
fi
echo "gate: building the base and head bench test binaries" >&2
(cd "$wt" && go test -c -o "$tmp/base.test" ./bench) || fail "cannot build the base's bench test binary"
go test -c -o "$tmp/head.test" ./bench || fail "cannot build the head's bench test binary"

args=(-test.run='^$' -test.bench="$BENCH" -test.count=1 -test.benchtime="$BENCHTIME")
run_base() {
  (cd "$wt/bench" && env -u PREEMPTBENCH_SLOWDOWN -u PREEMPTBENCH_EXTRA_ALLOC "$tmp/base.test" "${args[@]}") >>"$tmp/base.txt" ||
    fail "base run failed (see $tmp/base.txt)"
}
run_head() {
  (cd bench && "$tmp/head.test" "${args[@]}") >>"$tmp/head.txt" || fail "head run failed"
}
: >"$tmp/base.txt"
: >"$tmp/head.txt"
for i in $(seq 1 "$COUNT"); do
  echo "gate: round $i/$COUNT ($((SECONDS - start))s elapsed)" >&2
  # Alternate which side goes first, so drift favours neither.
  if [ $((i % 2)) = 1 ]; then run_base; run_head; else run_head; run_base; fi
done
if [ -n "$OUT" ]; then
  mkdir -p "$OUT"
  cp "$tmp/base.txt" "$tmp/head.txt" "$OUT/"
  echo "gate: results kept in $OUT/base.txt and $OUT/head.txt" >&2
fi
echo "gate: $COUNT rounds in $((SECONDS - start))s" >&2
code=0
# Built, not `go run`: go run reports every non-zero exit as 1, and the
# gate's 2 (bad input) must stay 2.
go build -o "$tmp/compare" ./compare
# shellcheck disable=SC2086 # GATE_FLAGS is a list of flags
"$tmp/compare" gate -base "$tmp/base.txt" -head "$tmp/head.txt" $GATE_FLAGS || code=$?
exit "$code"
