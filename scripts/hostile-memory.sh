#!/usr/bin/env bash
# hostile-memory.sh [DIR]: the full-size check of decide's memory (issue
# 33): writes the awkward inputs of scripts/hostile to DIR (a temporary
# directory by default; some 1.4 GB), runs `compare decide` on each with
# every implementation, one at a time, and prints peak RSS and wall time.
# It fails when any run takes more than 1 GB or 60 s, or ends otherwise
# than with a decision or a clear refusal (exit 0 or 2; a panic fails).
# TestDecideMemoryBoundedByDecodedSize (internal/cli) is its scaled-down
# form in `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-$(mktemp -d)}
go build -o "$dir/compare" ./compare
go run ./scripts/hostile "$dir"
fail=0
printf '%-22s %-10s %4s %9s %8s\n' input impl exit "peak MiB" "wall s"
for f in "$dir"/*.json "$dir"/*.yaml; do
	[ "$(basename "$f")" = pod.yaml ] && continue
	for impl in reference optimized upstream; do
		set +e
		/usr/bin/time -f '%M %e' -o "$dir/time" timeout 120 "$dir/compare" decide -cluster "$f" -pod "$dir/pod.yaml" -impl "$impl" \
			-offset 0 -now 2026-01-01T00:00:00Z >"$dir/out" 2>"$dir/err"
		code=$?
		set -e
		read -r kb wall < <(tail -n 1 "$dir/time") || { kb=0; wall=0; }
		printf '%-22s %-10s %4s %9d %8s\n' "$(basename "$f")" "$impl" "$code" $((kb / 1024)) "$wall"
		if [ "$code" != 0 ] && [ "$code" != 2 ] || grep -q '^panic\|goroutine [0-9]* \[' "$dir/err" ||
			[ "$kb" -gt 976562 ] || awk -v w="$wall" 'BEGIN { exit !(w > 60) }'; then
			echo "  FAIL: $(head -c 300 "$dir/err")"
			fail=1
		fi
	done
done
exit $fail
