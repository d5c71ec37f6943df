#!/bin/sh
# Runs test binaries, several at a time, and closes with one line:
#   tests: N passed, N failed, N skipped
# Exit status is non-zero when any binary fails (or crashes).
#
#   tests/run.sh [-j N] BINARY...
#
# N programs run at once: -j, else $JOBS, else make's -jN (from MAKEFLAGS),
# else the number of CPUs. Each program's output is shown in one piece when
# it ends, headed by its name and counts; the close names the programs that
# failed. The programs that took longest in the last run start first (their
# times are kept in $BUILD/tests/run-times), so that a long one does not
# start last and hold the suite up alone.
# Test binaries find ../shared through TP_SHARED (default: ../shared beside the repo).
: "${TP_SHARED:=$(cd "$(dirname "$0")/../.." && pwd)/shared}"
export TP_SHARED
export TW_BIN="${TW_BIN:-$(pwd)/${BUILD:-build}/trainer-webhook}"

# One program, in a worker of the parent below: output to $dir/out.$$, then
# shown and counted under a lock, so that programs' outputs never interleave.
if [ "$1" = --one ]; then
	dir=$2 t=$3
	out=$dir/out.$$
	t0=$(date +%s)
	if [ -n "$VALGRIND" ]; then
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
			"$t" >"$out" 2>&1 </dev/null
	else
		"$t" >"$out" 2>&1 </dev/null
	fi
	rc=$?
	sec=$(( $(date +%s) - t0 ))
	p=$(grep -o '\[  PASSED  \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	f=$(grep -o '\[  FAILED  \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	s=$(grep -o '\[  SKIPPED \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	{
		flock 9
		echo "=== $t: $p passed, $f failed, $s skipped (${sec}s)"
		cat "$out"
		[ "$rc" != 0 ] && [ "$f" = 0 ] && echo "run.sh: $t exited with status $rc" >&2
		echo "$p $f $s $rc $sec $t" >>"$dir/results"
	} 9>>"$dir/lock"
	rm -f "$out"
	exit 0
fi

jobs=${JOBS:-}
if [ "$1" = -j ]; then
	jobs=$2
	shift 2
fi
if [ -z "$jobs" ]; then
	# make -j2 test: MAKEFLAGS holds "-j2" (a bare -j: no number, the CPUs)
	jobs=$(printf ' %s\n' "$MAKEFLAGS" | sed -n 's/.* -j *\([0-9][0-9]*\).*/\1/p')
	[ -n "$jobs" ] || jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
fi
[ "$jobs" -ge 1 ] 2>/dev/null || { echo "run.sh: -j wants a number, not '$jobs'" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/tw-run.XXXXXX") || exit 2
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
: >"$dir/results"
times="${BUILD:-build}/tests/run-times"
start=$(date +%s)
# Longest first by the last run's times; programs it did not run, first of all.
[ -f "$times" ] && last=$times || last=/dev/null
printf '%s\n' "$@" |
	awk 'FILENAME == ARGV[1] { s[$2] = $1; next } { print ($0 in s ? s[$0] : 1000000), $0 }' "$last" - |
	sort -k1,1nr -k2 | cut -d' ' -f2- |
	xargs -r -n 1 -P "$jobs" sh "$0" --one "$dir"

passed=0; failed=0; skipped=0; bad=""
while read -r p f s rc sec t; do
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$rc" != 0 ] || [ "$f" != 0 ]; then
		[ "$f" = 0 ] && failed=$((failed + 1))
		bad="$bad $t"
	fi
done <"$dir/results"
ran=$(wc -l <"$dir/results")
# this run's times, and the last run's of programs not run this time
if [ -d "$(dirname "$times")" ]; then
	awk 'FILENAME == ARGV[1] { s[$6] = $5; next } NF == 2 && !($2 in s) { s[$2] = $1 }
	     END { for (t in s) print s[t], t }' "$dir/results" "$last" >"$times.new" &&
		mv "$times.new" "$times"
fi
echo "suite time: $(( $(date +%s) - start ))s, $ran programs, $jobs at a time"
[ "$ran" = $# ] || { echo "run.sh: $# programs given, $ran ran" >&2; bad="$bad (missing)"; }
[ -z "$bad" ] || echo "failed:$bad"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ -z "$bad" ] && [ "$failed" = 0 ]
