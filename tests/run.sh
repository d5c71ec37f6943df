#!/bin/sh
# Runs test binaries, shows their output, and closes with one line:
#   tests: N passed, N failed, N skipped
# Exit status is non-zero when any binary fails (or crashes).
# Test binaries find ../shared through TP_SHARED (default: ../shared beside the repo).
: "${TP_SHARED:=$(cd "$(dirname "$0")/../.." && pwd)/shared}"
export TP_SHARED
export TW_BIN="${TW_BIN:-$(pwd)/${BUILD:-build}/trainer-webhook}"
passed=0; failed=0; skipped=0; bad=0
start=$(date +%s)
for t in "$@"; do
	out=$(mktemp)
	if [ -n "$VALGRIND" ]; then
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
			"$t" >"$out" 2>&1
	else
		"$t" >"$out" 2>&1
	fi
	rc=$?
	cat "$out"
	p=$(grep -o '\[  PASSED  \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	f=$(grep -o '\[  FAILED  \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	s=$(grep -o '\[  SKIPPED \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	rm -f "$out"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$rc" != 0 ]; then
		bad=$((bad + 1))
		[ "$f" = 0 ] && failed=$((failed + 1)) && echo "run.sh: $t exited with status $rc" >&2
	fi
done
echo "suite time: $(( $(date +%s) - start ))s"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$bad" = 0 ] && [ "$failed" = 0 ]
