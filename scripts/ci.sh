#!/usr/bin/env bash
# What CI runs (.ci/run calls this). Each step prints a header and its time
# so a failure, or a slow step, is easy to place. Needs only Go; the module
# proxy provides the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
step() { printf '\n=== %s (at %ds)\n' "$*" "$((SECONDS - start))"; }

step "go version"
go version

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet ./..."
go vet ./...

step "the release modules (releases/*/, each a module of its own: vet, tests, tidy go.mod and go.sum, verified)"
for dir in releases/*/; do
  [ -f "$dir/go.mod" ] || continue
  tags=$(sed -n 's/^\/\/ *build-tags: *//p' "$dir/go.mod")
  # tidy reads every file whatever its build tags, so it also sees the
  # main module's files for the current release (upstream's seams.go and
  # gang files, preempt's pod-group types, behind !preemptbench_v1_36),
  # whose imports this release's k8s.io/api lacks: -e reports those and still diffs go.mod and go.sum; the tagged
  # build, vet and tests then run with -mod=readonly, so go.sum is complete
  # for what the release builds.
  (cd "$dir" && go mod tidy -e -diff && go mod verify && go vet -mod=readonly -tags "$tags" ./... && go test -mod=readonly -tags "$tags" ./...)
done

step "the earlier releases' children, built once (tests in several packages use them; none then waits on a build inside its test timeout)"
impls=""
for dir in releases/*/; do
  [ -f "$dir/go.mod" ] && impls="$impls,upstream@$(basename "$dir")"
done
go run ./compare decide -cluster internal/cli/testdata/small/cluster.yaml -pod internal/cli/testdata/small/pod.yaml -impl "${impls#,}" >/dev/null

step "tests: go test -timeout 30m ./... (the README's test command)"
go test -timeout 30m ./...

# The trees are built with -trimpath (releases.Tree): the first compiles
# k8s.io/kubernetes once (minutes: the other steps' builds, without
# -trimpath, key its packages by directory), the second reuses it. The
# test step cannot run with -trimpath: kube-apiserver's test server finds
# its files from its source path (runtime.Caller).
step "kubernetes trees (upstream@DIR): v1.37.2 copied from the module cache, unchanged and with a planted change (a minute of compare upgrade -fuzztime each), and with a planted slowdown (compare bench, compare gate)"
PREEMPTBENCH_TREE_SUITE=1 go test ./internal/cli -run '^(TestUpgradeFindsAPlantedChange|TestGateCatchesAPlantedSlowdown)$' -timeout 30m -v | grep -E '^(--- |ok|FAIL|panic)|tree_test'

step "staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

step "race tests: every package (go list ./...), properties shortened by -short"
go test -race -short -timeout 30m $(go list ./...)

step "the out-of-tree example (examples/ownimpl, a module of its own)"
# Its go.mod has no replace, as a module outside this repository needs
# none; its go.work (found from its directory) maps this project's module
# to the checkout. preempttest's TestOwnimplNeedsNoReplace checks go.mod
# and go.sum are tidy.
(cd examples/ownimpl && go vet ./... && go test ./... &&
  go test -run '^$' -bench . -benchtime=1x -bench.nodes=5 ./... | grep -c 'impl=ownimpl')

step "the README's examples, as written (scripts/readme.sh)"
bash scripts/readme.sh | grep -E '^(=== skipped|readme:)'

step "fuzz targets, capped by iteration count"
# FuzzCrossRelease splits its inputs across the pairs of releases. 500
# inputs each: the libFuzzer step below fuzzes every target again, guided
# by coverage, for 20 s.
bash scripts/fuzz.sh 500x

step "libFuzzer builds (.clusterfuzzlite/build.sh as OSS-Fuzz runs it: go-118-fuzz-build, clang), each target 20 s from its committed corpus (scripts/libfuzzer.sh)"
# The first run on a machine compiles the module's graph with the
# libFuzzer build's flags (-buildmode=c-archive, -d=libfuzzer): minutes
# more; later runs find it in the build cache (docs/proving.md).
if ! bash scripts/libfuzzer.sh 20 >/tmp/preemptbench-libfuzzer.log 2>&1; then
  tail -n 120 /tmp/preemptbench-libfuzzer.log
  exit 1
fi
grep -E '^(libfuzzer:|Fuzz[A-Za-z]+ +[0-9]+ seeds)' /tmp/preemptbench-libfuzzer.log

step "benchmark smoke run (-benchtime=1x)"
go test ./bench -run '^$' -bench . -benchtime=1x -bench.preemptors=20 >/tmp/preemptbench-smoke.txt
tail -n 3 /tmp/preemptbench-smoke.txt
go run ./compare stat -row .fullname -col /impl /tmp/preemptbench-smoke.txt >/dev/null

step "speed gate: optimized at least 10x reference on basic/5000, allocation budget held"
go test ./bench -run '^TestSpeedRatioGate$' -bench.speedgate -v | grep -E 'basic/|^(--- |ok|FAIL)'

step "done in $((SECONDS - start))s"
