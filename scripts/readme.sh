#!/usr/bin/env bash
# Runs the README's examples as written: every ```sh block, in order, as
# one bash script each (set -e: a command that fails fails the run), from
# the repository's root, after building bin/compare. A block whose first
# line is a comment saying "not run" (commands for your own cluster, or a
# job of many minutes) is skipped and named. Exit 0 when every block ran.
#
#   scripts/readme.sh [README]
set -euo pipefail
cd "$(dirname "$0")/.."
readme=${1:-README.md}
go build -o bin/compare ./compare
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '
  /^```sh$/ { n++; file = sprintf("%s/block-%03d.sh", dir, n); inblock = 1; printf "" > file; next }
  /^```/ && inblock { inblock = 0; close(file); next }
  inblock { print >> file }
' "$readme"
ran=0
for f in "$work"/block-*.sh; do
  [ -e "$f" ] || continue
  first=$(head -n 1 "$f")
  if [[ $first == \#*"not run"* ]]; then
    echo "=== skipped $(basename "$f"): ${first#\# }"
    continue
  fi
  echo "=== $(basename "$f")"
  sed 's/^/    /' "$f"
  if ! bash -euo pipefail "$f" >"$work/out" 2>&1; then
    cat "$work/out"
    echo "readme: $(basename "$f") of $readme failed" >&2
    exit 1
  fi
  ran=$((ran + 1))
done
echo "readme: $ran blocks ran"
