#!/usr/bin/env bash
# The full benchmark suite: every stage of every implementation at 5, 500,
# 5000 and 15000 nodes (shape basic), written to a file in Go benchmark
# format, then summarised with `go run ./compare stat`.
#
#   scripts/bench.sh [OUT]              OUT defaults to bench-YYYYmmdd-HHMMSS.txt
#
# Settings (environment):
#   COUNT=6        rounds; 6 is the fewest for p < 0.05 and a finite 95% range
#   BENCHTIME=1s   -test.benchtime of each benchmark (ops above it run once)
#   BENCH=.        -test.bench regular expression, e.g. 'Decide$' or
#                  '^BenchmarkDecide$/^shape=basic$/^nodes=5000$'
#   SHAPES=basic   -bench.shapes: basic, all, or a comma-separated list
#   LARGE=0        1 adds 65000 nodes (-bench.large)
#
# Implementations are interleaved: the test binary is built once and run
# COUNT times with -test.count=1, each run going through every benchmark
# and implementation, so that a noisy machine's drift spreads over all of
# them. The defaults take about 15 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-1s}
BENCH=${BENCH:-.}
SHAPES=${SHAPES:-basic}
LARGE=${LARGE:-0}
out=${1:-bench-$(date +%Y%m%d-%H%M%S).txt}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "bench: building the test binary" >&2
go test -c -o "$tmp/bench.test" ./bench

args=(-test.run='^$' -test.bench="$BENCH" -test.count=1 -test.benchtime="$BENCHTIME" -bench.shapes="$SHAPES")
if [ "$LARGE" = 1 ]; then
  args+=(-bench.large)
fi
: >"$out"
for i in $(seq 1 "$COUNT"); do
  echo "bench: round $i/$COUNT ($((SECONDS - start))s elapsed)" >&2
  (cd bench && "$tmp/bench.test" "${args[@]}") >>"$out"
done
echo "bench: $COUNT rounds in $((SECONDS - start))s; results in $out" >&2
go run ./compare stat "$out"
