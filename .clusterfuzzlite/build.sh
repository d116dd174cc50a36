#!/bin/bash -eu
# Builds every native Go fuzz target of the module as a libFuzzer binary in
# $OUT, with OSS-Fuzz's compile_native_go_fuzzer (go-118-fuzz-build, then
# $CXX with $LIB_FUZZING_ENGINE), and its committed corpus as
# $OUT/<target>_seed_corpus.zip. ClusterFuzzLite runs it in the image of
# .clusterfuzzlite/Dockerfile; scripts/libfuzzer.sh runs it on this machine,
# without Docker, and fuzzes each binary for a while.
#
# It changes the tree it builds (go.mod, test files renamed): run it on a
# copy, as the image and scripts/libfuzzer.sh do.
#
# Left out: FuzzCrossRelease (releases/), whose every input goes to child
# processes, the earlier releases' builds of compare made at run time by
# `go build` in their own modules (releases/*/): a libFuzzer binary has no
# go command or module cache to build them with in ClusterFuzzLite's
# runner, and the children, not built with -d=libfuzzer, would give it no
# coverage; and examples/ownimpl's FuzzConformance (a module of its own).
cd "$SRC/preemptbench"
module=github.com/preemptbench/preemptbench

# The target's file imports go-118-fuzz-build's testing package in this
# build, so the module must require it; go.mod does not (nothing else
# imports it, and `go mod tidy` would drop it). The version is the one
# OSS-Fuzz's image builds go-118-fuzz-build at.
go get github.com/AdamKorcz/go-118-fuzz-build/testing@v0.0.0-20250520111509-a70c2aa677fa

# go-118-fuzz-build compiles the target's package and, of its test files,
# only the target's own. The package's other internal test files (fixtures
# and helpers a target's file uses) become package files, as
# go-118-fuzz-build's README says to do; an external test package's files
# stay out. What a target's file shares with them takes no type of package
# testing (conformance.FuzzT, the loader's fataler).
for dir in fuzz internal/loader internal/benchcmp; do
  for f in "$dir"/*_test.go; do
    grep -q '^package [A-Za-z0-9_]*_test$' "$f" && continue
    mv "$f" "${f%.go}_fuzz.go"
  done
done

# Seed corpora: testdata/fuzz/FuzzX/ in libFuzzer's form (see
# scripts/libfuzzercorpus). A target without a corpus of its own also
# takes that of a target reading the same inputs. (f.Add seeds are not
# seen by a libFuzzer build: its F.Add does nothing.) They are written
# before the builds, so each binary can be fuzzed as soon as it is linked
# (scripts/libfuzzer.sh does).
seed() {
  local target=$1
  shift
  go run ./scripts/libfuzzercorpus -o "$OUT/${target}_seed_corpus.zip" "$@"
}
seed FuzzPreempt fuzz/testdata/fuzz/FuzzPreempt
seed FuzzSelectVictimsOnNode fuzz/testdata/fuzz/FuzzSelectVictimsOnNode
seed FuzzPickOneNode fuzz/testdata/fuzz/FuzzPickOneNode
seed FuzzGang fuzz/testdata/fuzz/FuzzGang fuzz/testdata/fuzz/FuzzPreempt
seed FuzzOptimizedParallelDryRun fuzz/testdata/fuzz/FuzzOptimizedParallelDryRun fuzz/testdata/fuzz/FuzzPreempt
# The loader's four read YAML: each takes the YAML of all four.
yaml=(internal/loader/testdata/fuzz/{FuzzLoadCluster,FuzzLoadPod,FuzzYAMLDocument,FuzzFastPath})
seed FuzzLoadCluster "${yaml[@]}"
seed FuzzLoadPod "${yaml[@]}"
seed FuzzYAMLDocument "${yaml[@]}"
seed FuzzFastPath "${yaml[@]}"
seed FuzzResults internal/benchcmp/testdata/fuzz/FuzzResults

# compile_native_go_fuzzer IMPORT_PATH FUNCTION FUZZER_NAME
#
# The first build compiles the whole graph (some 1,060 packages, most of
# them k8s.io's) with the libFuzzer build's flags; the others find it in
# the build cache and cost mostly their link (a c-archive of 200-350 MB,
# then $CXX), so they run as two streams, one package's targets each at a
# time (go-118-fuzz-build rewrites its target's file in the package
# directory while it builds, so two targets of one package never build at
# once).
compile_native_go_fuzzer $module/fuzz FuzzPreempt FuzzPreempt
(
  compile_native_go_fuzzer $module/fuzz FuzzSelectVictimsOnNode FuzzSelectVictimsOnNode
  compile_native_go_fuzzer $module/fuzz FuzzPickOneNode FuzzPickOneNode
  compile_native_go_fuzzer $module/fuzz FuzzGang FuzzGang
  compile_native_go_fuzzer $module/fuzz FuzzOptimizedParallelDryRun FuzzOptimizedParallelDryRun
) &
differential=$!
(
  compile_native_go_fuzzer $module/internal/loader FuzzLoadCluster FuzzLoadCluster
  compile_native_go_fuzzer $module/internal/loader FuzzLoadPod FuzzLoadPod
  compile_native_go_fuzzer $module/internal/loader FuzzYAMLDocument FuzzYAMLDocument
  compile_native_go_fuzzer $module/internal/loader FuzzFastPath FuzzFastPath
  compile_native_go_fuzzer $module/internal/benchcmp FuzzResults FuzzResults
) &
parsers=$!
failed=0
wait $differential || failed=1
wait $parsers || failed=1
if [ $failed != 0 ]; then
  echo "build.sh: a target did not build" >&2
  exit 1
fi
