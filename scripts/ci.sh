#!/usr/bin/env bash
# What CI runs. Each step prints a header so a failure is easy to place.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

step "go version"
go version

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet ./..."
go vet ./...

step "tests (the README's test command)"
go test ./...

step "race tests on the core packages"
go test -race ./preempt/... ./reference/... ./scenario/... ./cli/...
