#!/usr/bin/env bash
# Shows that the gate can be trusted, on this repository and this machine:
#
#   1. A/A: the code against itself (HEAD, clean tree) ROUNDS times: no alarm;
#   2. a 25% slowdown injected into the Decide benchmark (the test-only knob
#      PREEMPTBENCH_SLOWDOWN, bench/knob.go): caught every time;
#   3. one extra allocation per op injected into Decide
#      (PREEMPTBENCH_EXTRA_ALLOC): caught every time.
#
#   scripts/gate-trust.sh            ROUNDS=10 A/A gates, INJECTED=5 of each injection
#
# The gated benchmarks default to optimized's Decide at 500 and 5000 nodes
# (BENCH and BENCHTIME are passed to gate.sh; COUNT is its default).
# Prints one line per gate and a summary; exits 1 if any expectation fails.
set -uo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-10}
INJECTED=${INJECTED:-5}
export BENCH=${BENCH:-'^BenchmarkDecide$/^shape=basic$/^nodes=(500|5000)$/^impl=optimized$'}
export BENCHTIME=${BENCHTIME:-300ms}
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "gate-trust: the working tree has changes; A/A needs HEAD itself" >&2
  exit 2
fi

bad=0
run() { # label expected-exit [env...]
  local label=$1 want=$2
  shift 2
  local out code
  out=$(env "$@" scripts/gate.sh HEAD 2>/dev/null)
  code=$?
  local verdict
  verdict=$(printf '%s\n' "$out" | grep -E '^(PASS|FAIL|BAD INPUT)' | tail -n 1)
  printf '%-28s exit %d (want %d)  %s\n' "$label" "$code" "$want" "$verdict"
  [ "$code" = "$want" ] || bad=$((bad + 1))
}

for i in $(seq 1 "$ROUNDS"); do
  run "A/A round $i/$ROUNDS" 0
done
for i in $(seq 1 "$INJECTED"); do
  run "slowdown 25% $i/$INJECTED" 1 PREEMPTBENCH_SLOWDOWN=Decide=25
done
for i in $(seq 1 "$INJECTED"); do
  run "extra alloc $i/$INJECTED" 1 PREEMPTBENCH_EXTRA_ALLOC=Decide=1
done
if [ "$bad" -gt 0 ]; then
  echo "gate-trust: $bad gates did not end as expected"
  exit 1
fi
echo "gate-trust: all $((ROUNDS + 2 * INJECTED)) gates ended as expected"
