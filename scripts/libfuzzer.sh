#!/usr/bin/env bash
# Proves .clusterfuzzlite/build.sh on this machine, without Docker: builds
# every native fuzz target as a libFuzzer binary the way OSS-Fuzz and
# ClusterFuzzLite do (go-118-fuzz-build, then clang -fsanitize=fuzzer),
# then fuzzes each for SECONDS from its seed corpus.
#
#   scripts/libfuzzer.sh [SECONDS] [TARGETS]   SECONDS per target, default 20;
#                                              TARGETS an extended regular
#                                              expression: which to run
#                                              (build.sh builds all), default all
#
# It installs what is missing: clang (Debian's package) and
# go-118-fuzz-build at the commit OSS-Fuzz's image builds. build.sh runs on
# a copy of the tree in $LIBFUZZER_WORK (default /tmp/preemptbench-libfuzzer),
# with a compile_native_go_fuzzer that does what OSS-Fuzz's does for a
# fuzzing build: go-118-fuzz-build -tags gofuzz -o X.a -func FuzzX DIR, then
# $CXX $CXXFLAGS $LIB_FUZZING_ENGINE X.a -o $OUT/X. Each binary starts from
# $OUT/X_seed_corpus.zip, unpacked (the committed testdata/fuzz/FuzzX/ in
# libFuzzer's form: scripts/libfuzzercorpus), and writes what it finds to a
# scratch directory. Each binary is fuzzed as soon as it is built, while
# build.sh links the others: $LIBFUZZER_JOBS binaries (default: the number
# of cores) run at once, one fewer while build.sh runs. An input that takes over
# $LIBFUZZER_TIMEOUT seconds (default 10) is a crash, as is a panic or a
# failed check; its input is left in $LIBFUZZER_WORK/crashes/.
#
# The build uses the go command's cache ($GOCACHE) like any build: the
# first one on a machine compiles the module's whole graph with the
# libFuzzer build's flags (-buildmode=c-archive, -d=libfuzzer), later ones
# only what changed.
#
# Exit 0 when every target built and ran without a crash, 1 when one
# crashed, 2 when a build failed or build.sh misses a target.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
want=${2:-.}
work=${LIBFUZZER_WORK:-/tmp/preemptbench-libfuzzer}
jobs=${LIBFUZZER_JOBS:-$(nproc)}
timeout=${LIBFUZZER_TIMEOUT:-10}
go118=github.com/AdamKorcz/go-118-fuzz-build@v0.0.0-20250520111509-a70c2aa677fa
start=$SECONDS

# build.sh lists each target: every func FuzzX(f *testing.F) of the
# module's test files but those it says it leaves out.
missing=()
for name in $(grep -rhoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . | sed 's/^func //; s/(.*//' | sort -u); do
  case $name in FuzzCrossRelease | FuzzConformance) continue ;; esac
  grep -qE "^ *compile_native_go_fuzzer [^ ]+ $name " .clusterfuzzlite/build.sh || missing+=("$name")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "libfuzzer: .clusterfuzzlite/build.sh does not build: ${missing[*]}" >&2
  exit 2
fi

if ! command -v clang >/dev/null; then
  echo "=== installing clang (Debian's package)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang >/dev/null; } || exit 2
fi
gobin=$(go env GOPATH)/bin
if ! go version -m "$gobin/go-118-fuzz-build" 2>/dev/null | grep -q "mod.*${go118#*@}"; then
  echo "=== go install $go118"
  go install "$go118" || exit 2
fi
export PATH=$work/bin:$gobin:$PATH

rm -rf "$work/src" "$work/out" "$work/corpus" "$work/found" "$work/crashes" "$work/logs"
mkdir -p "$work/bin" "$work/src/preemptbench" "$work/out" "$work/corpus" "$work/found" "$work/crashes" "$work/logs"
git ls-files -z --cached --others --exclude-standard | tar -c --null -T - | tar -x -C "$work/src/preemptbench"

# OSS-Fuzz's compile_native_go_fuzzer (infra/base-images/base-builder),
# its fuzzing build: find the file of func FUNCTION(f *testing.F) in the
# package, go-118-fuzz-build, link.
cat >"$work/bin/compile_native_go_fuzzer" <<'SHIM'
#!/bin/bash -eu
path=$1 function=$2 fuzzer=$3
dir=$(go list -tags gofuzz -f '{{.Dir}}' "$path")
if ! grep -s "func $function" "$dir"/*.go | grep -q 'testing\.F'; then
  echo "Could not find the function: func ${function}(f *testing.F)" >&2
  exit 1
fi
t0=$SECONDS
go-118-fuzz-build -tags gofuzz -o "$fuzzer.a" -func "$function" "$dir"
t1=$SECONDS
$CXX $CXXFLAGS $LIB_FUZZING_ENGINE "$fuzzer.a" -o "$OUT/$fuzzer"
rm -f "$fuzzer.a"
echo "built $fuzzer: go-118-fuzz-build $((t1 - t0))s, $CXX $((SECONDS - t1))s"
# Not OSS-Fuzz's: tells scripts/libfuzzer.sh the binary is whole, so it
# can fuzz it while the others build.
if [ -n "${LIBFUZZER_BUILT:-}" ]; then echo "$fuzzer" >>"$LIBFUZZER_BUILT"; fi
SHIM
chmod +x "$work/bin/compile_native_go_fuzzer"

# DWARF is left out of the links (-ldflags=-w): it takes a quarter off
# each target's link (16-33 s to 13-24 s here, 2026-11-27), and a Go panic
# still prints its stack, from the binary's own tables. LIBFUZZER_DWARF=1
# keeps it, as OSS-Fuzz's build does.
if [ -z "${LIBFUZZER_DWARF:-}" ]; then
  export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-w"
fi
# fuzz NAME: one binary for $secs from its seeds; its summary row in
# $work/logs/NAME.row.
fuzz() {
  local name=$1 bin=$work/out/$1 corpus=$work/corpus/$1 found=$work/found/$1 log=$work/logs/$1.log
  mkdir -p "$corpus" "$found"
  if [ -f "$work/out/${name}_seed_corpus.zip" ]; then
    unzip -q -o "$work/out/${name}_seed_corpus.zip" -d "$corpus"
  fi
  local seeds t0=$SECONDS rc result execs
  seeds=$(find "$corpus" -type f | wc -l)
  # New inputs go to $found (the first directory); the seeds are read only.
  "$bin" -max_total_time="$secs" -timeout="$timeout" -print_final_stats=1 \
    -artifact_prefix="$work/crashes/$name-" "$found" "$corpus" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  result=ok
  if [ "$rc" != 0 ]; then
    result="CRASH (exit $rc; log $log)"
  fi
  printf '%-28s %4s seeds %8s execs %4ss  %s\n' "$name" "$seeds" "${execs:-?}" "$((SECONDS - t0))" "$result" >"$work/logs/$name.row"
  return "$rc"
}

# build.sh runs in the background and each binary is fuzzed as soon as
# its link is done (the shim appends its name to $LIBFUZZER_BUILT;
# build.sh writes the seed zips before it builds): the fuzzing of the
# first targets overlaps the links of the others. While build.sh runs,
# $jobs - 1 binaries (at least one) fuzz at once, so the build keeps a
# core; then $jobs. Each still fuzzes $secs of wall time.
echo "=== .clusterfuzzlite/build.sh (SRC=$work/src, OUT=$work/out, GOCACHE=$(go env GOCACHE), GOFLAGS=${GOFLAGS:-}), each target fuzzed ${secs}s once built"
export LIBFUZZER_BUILT=$work/built.list
: >"$LIBFUZZER_BUILT"
rm -f "$work/build.rc"
(
  SRC=$work/src OUT=$work/out CXX=clang++ CXXFLAGS= LIB_FUZZING_ENGINE=-fsanitize=fuzzer SANITIZER=address \
    bash -eu "$work/src/preemptbench/.clusterfuzzlite/build.sh" >"$work/build.log" 2>&1
  echo $? >"$work/build.rc"
) &
build_pid=$!
names=()
pids=()
taken=0
build_secs=
while :; do
  if [ -z "$build_secs" ] && [ -f "$work/build.rc" ]; then
    build_secs=$((SECONDS - start))
    grep -E '^built ' "$work/build.log"
    echo "libfuzzer: build.sh took ${build_secs}s"
  fi
  limit=$jobs
  if [ -z "$build_secs" ] && [ "$jobs" -gt 1 ]; then
    limit=$((jobs - 1))
  fi
  live=()
  for pid in ${pids[@]+"${pids[@]}"}; do
    kill -0 "$pid" 2>/dev/null && live+=("$pid")
  done
  pids=(${live[@]+"${live[@]}"})
  mapfile -t built <"$LIBFUZZER_BUILT"
  while [ "$taken" -lt "${#built[@]}" ] && [ "${#pids[@]}" -lt "$limit" ]; do
    name=${built[$taken]}
    taken=$((taken + 1))
    printf '%s\n' "$name" | grep -qE -- "$want" || continue
    echo "--- $name (at $((SECONDS - start))s)"
    names+=("$name")
    fuzz "$name" &
    pids+=($!)
  done
  if [ -n "$build_secs" ] && [ "$taken" -ge "${#built[@]}" ]; then
    break
  fi
  sleep 1
done
wait
wait "$build_pid" 2>/dev/null
if [ "$(cat "$work/build.rc")" != 0 ]; then
  tail -n 40 "$work/build.log"
  echo "libfuzzer: build.sh failed (log: $work/build.log)" >&2
  exit 2
fi

failed=()
for name in "${names[@]}"; do
  cat "$work/logs/$name.row"
  if grep -q CRASH "$work/logs/$name.row"; then
    failed+=("$name")
    tail -n 40 "$work/logs/$name.log"
  fi
done
echo "libfuzzer: build ${build_secs}s, the last fuzzing done $((SECONDS - start - build_secs))s after it, total $((SECONDS - start))s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "libfuzzer: ${#failed[@]} targets crashed: ${failed[*]} (inputs in $work/crashes/)"
  exit 1
fi
echo "libfuzzer: ${#names[@]} targets ran ${secs}s each without a crash"
