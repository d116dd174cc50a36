#!/usr/bin/env bash
# Runs the examples of README.md and of every page of docs/ as written:
# every ```sh block, page by page and in order within a page, as one bash
# script each (set -e: a command that fails fails the run), from the
# repository's root, after building bin/compare. A block whose first line
# is a comment saying "not run" (commands for your own cluster, or a job
# of many minutes) is skipped and named. Exit 0 when every block ran.
#
#   scripts/readme.sh [PAGE...]     (default: README.md docs/*.md)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  set -- README.md docs/*.md
fi
go build -o bin/compare ./compare
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ran=0
for page in "$@"; do
  rm -f "$work"/block-*.sh
  awk -v dir="$work" '
    /^```sh$/ { n++; file = sprintf("%s/block-%03d.sh", dir, n); inblock = 1; printf "" > file; next }
    /^```/ && inblock { inblock = 0; close(file); next }
    inblock { print >> file }
  ' "$page"
  for f in "$work"/block-*.sh; do
    [ -e "$f" ] || continue
    name="$page $(basename "$f" .sh)"
    first=$(head -n 1 "$f")
    if [[ $first == \#*"not run"* ]]; then
      echo "=== skipped $name: ${first#\# }"
      continue
    fi
    echo "=== $name"
    sed 's/^/    /' "$f"
    if ! bash -euo pipefail "$f" >"$work/out" 2>&1; then
      cat "$work/out"
      echo "readme: $name failed" >&2
      exit 1
    fi
    ran=$((ran + 1))
  done
done
echo "readme: $ran blocks ran"
