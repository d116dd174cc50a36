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
# scratch directory. $LIBFUZZER_JOBS binaries (default: the number of
# cores) run at once, each on one core. An input that takes over
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
SHIM
chmod +x "$work/bin/compile_native_go_fuzzer"

# DWARF is left out of the links (-ldflags=-w): it takes a quarter off
# each target's link (16-33 s to 13-24 s here, 2026-11-27), and a Go panic
# still prints its stack, from the binary's own tables. LIBFUZZER_DWARF=1
# keeps it, as OSS-Fuzz's build does.
if [ -z "${LIBFUZZER_DWARF:-}" ]; then
  export GOFLAGS="${GOFLAGS:+$GOFLAGS }-ldflags=-w"
fi
echo "=== .clusterfuzzlite/build.sh (SRC=$work/src, OUT=$work/out, GOCACHE=$(go env GOCACHE), GOFLAGS=${GOFLAGS:-})"
if ! SRC=$work/src OUT=$work/out CXX=clang++ CXXFLAGS= LIB_FUZZING_ENGINE=-fsanitize=fuzzer SANITIZER=address \
  bash -eu "$work/src/preemptbench/.clusterfuzzlite/build.sh" 2>&1 | tee "$work/build.log"; then
  echo "libfuzzer: build.sh failed (log: $work/build.log)" >&2
  exit 2
fi
build_secs=$((SECONDS - start))
echo "libfuzzer: build.sh took ${build_secs}s"

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

names=()
for bin in "$work"/out/*; do
  [ -x "$bin" ] && [ -f "$bin" ] || continue
  name=$(basename "$bin")
  printf '%s\n' "$name" | grep -qE -- "$want" && names+=("$name")
done
echo "=== fuzzing ${#names[@]} targets for ${secs}s each, $jobs at a time"
run_start=$SECONDS
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
  echo "--- $name"
  fuzz "$name" &
  running=$((running + 1))
done
wait

failed=()
for name in "${names[@]}"; do
  cat "$work/logs/$name.row"
  if grep -q CRASH "$work/logs/$name.row"; then
    failed+=("$name")
    tail -n 40 "$work/logs/$name.log"
  fi
done
echo "libfuzzer: build ${build_secs}s, fuzzing $((SECONDS - run_start))s, total $((SECONDS - start))s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "libfuzzer: ${#failed[@]} targets crashed: ${failed[*]} (inputs in $work/crashes/)"
  exit 1
fi
echo "libfuzzer: ${#names[@]} targets ran ${secs}s each without a crash"
