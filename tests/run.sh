#!/bin/sh
# Runs test binaries, several at a time, and closes with a table of every
# program's wall and CPU time, longest first, then one line:
#   tests: N passed, N failed, N skipped
# Exit status is non-zero when any binary fails (or crashes).
#
#   tests/run.sh [-j N] BINARY...
#
# N programs that keep a CPU busy run at once: -j, else $JOBS, else make's
# -jN (from MAKEFLAGS), else the number of CPUs. Programs that mostly wait
# (servers starting, timers, a podman or qemu child: they kept a CPU under a
# quarter busy in the last run, the machine's load counted) run beside them,
# N*WAIT_FACTOR (3) at once,
# so that their waiting does not hold a CPU slot. Each program's output is
# shown in one piece when it ends, headed by its name, counts and times; the
# close names the programs that failed. The programs that took longest in
# the last run start first (wall and CPU milliseconds kept in
# $BUILD/tests/run-times; a fresh tree starts from tests/run-times, the
# figures of a reference run), so that a long one does not start last and
# hold the suite up alone; a program in neither, a new test, starts first.
# Test binaries find ../shared through TP_SHARED (default: ../shared beside the repo).
: "${TP_SHARED:=$(cd "$(dirname "$0")/../.." && pwd)/shared}"
export TP_SHARED
export TW_BIN="${TW_BIN:-$(pwd)/${BUILD:-build}/trainer-webhook}"

sec() { awk -v m="$1" 'BEGIN { printf "%.1f", m / 1000 }'; }

# One program, in a worker of the parent below: output to $dir/out.$$, then
# shown and counted under a lock, so that programs' outputs never interleave.
if [ "$1" = --one ]; then
	dir=$2 t=$3
	out=$dir/out.$$
	[ -e "$dir/stop" ] && exit 0 # interrupted: start nothing more
	t0=$(date +%s%N)
	# in the background, with its pid in pid.$$: a program started by a
	# background worker ignores SIGINT, so an interrupt is passed on by pid
	if [ -n "$VALGRIND" ]; then
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
			"$t" >"$out" 2>&1 </dev/null &
	else
		"$t" >"$out" 2>&1 </dev/null &
	fi
	echo $! >"$dir/pid.$$"
	wait $!
	rc=$?
	rm -f "$dir/pid.$$" 2>/dev/null
	[ -d "$dir" ] && [ ! -e "$dir/stop" ] || exit 0 # interrupted: nothing to count
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	# this worker's children's CPU (fields 16 and 17 of stat, in ticks): the
	# program's, with every child of its own it waited for (servers, valgrind)
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%d", ($14 + $15) * 1000 / hz }' \
		"/proc/$$/stat")
	# how busy it kept a CPU, in percent, as if the machine had been its
	# own: on a machine loaded L times its CPUs, its CPU time took about L
	# times as long and its waiting as long as it would, so its wall time
	# alone would have been about wall - CPU * (L - 1)
	busy=$(awk -v c="$cpu" -v w="$ms" -v n="$(nproc 2>/dev/null || echo 1)" \
		'{ l = $1 > n ? $1 / n : 1; w0 = w - c * (l - 1); if (w0 < c) w0 = c
		   printf "%d", (w0 > 0 ? 100 * c / w0 : 100) }' /proc/loadavg)
	p=$(grep -o '\[  PASSED  \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	f=$(grep -o '\[  FAILED  \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	s=$(grep -o '\[  SKIPPED \] [0-9]* test' "$out" | awk '{s+=$4} END {print s+0}')
	{
		flock 9
		echo "=== $t: $p passed, $f failed, $s skipped ($(sec "$ms") s, CPU $(sec "$cpu") s)"
		cat "$out"
		[ "$rc" != 0 ] && [ "$f" = 0 ] && echo "run.sh: $t exited with status $rc" >&2
		echo "$p $f $s $rc $ms $cpu $busy $t" >>"$dir/results"
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
# Both pools run in the background (below), where SIGINT is ignored: an
# interrupt stops the programs running (by pid) and starts no more.
trap 'touch "$dir/stop"; cat "$dir"/pid.* 2>/dev/null | xargs -r kill -TERM 2>/dev/null; exit 130' INT TERM
: >"$dir/results"
times="${BUILD:-build}/tests/run-times"
start=$(date +%s%N)
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
# The last run's times, else the reference run's; lines "WALL_MS CPU_MS
# BUSY_PERCENT tests/.../test_x" (a program is named from tests/ on, whatever
# the build folder). Programs in neither: first of all, with the busy ones.
last=/dev/null
for f in "$times" "$(dirname "$0")/run-times"; do
	[ -f "$f" ] && { last=$f; break; }
done
printf '%s\n' "$@" | awk -v dir="$dir" '
	function key(t) { sub(/^.*\/tests\//, "tests/", t); return t }
	FILENAME == ARGV[1] { w[$4] = $1; b[$4] = $3; next }
	{
		k = key($0)
		wait = (k in w) && b[k] < 25 && w[k] >= 2000 # under 2 s: busy, whatever its ratio
		print ((k in w) ? w[k] : 1e9), $0 > (dir (wait ? "/waiting" : "/busy"))
	}' "$last" -
: >>"$dir/busy"
: >>"$dir/waiting"
# longest first in each pool; both pools at once
sort -k1,1nr -k2 "$dir/busy" | cut -d' ' -f2- | xargs -r -n 1 -P "$jobs" sh "$0" --one "$dir" &
sort -k1,1nr -k2 "$dir/waiting" | cut -d' ' -f2- |
	xargs -r -n 1 -P "$((jobs * ${WAIT_FACTOR:-3}))" sh "$0" --one "$dir" &
wait

passed=0; failed=0; skipped=0; bad=""
while read -r p f s rc ms cpu busy t; do
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$rc" != 0 ] || [ "$f" != 0 ]; then
		[ "$f" = 0 ] && failed=$((failed + 1))
		bad="$bad $t"
	fi
done <"$dir/results"
ran=$(wc -l <"$dir/results")
# this run's times, and the last run's of programs not run this time
if [ -d "$(dirname "$times")" ]; then
	awk 'function key(t) { sub(/^.*\/tests\//, "tests/", t); return t }
	     FILENAME == ARGV[1] { k = key($8); w[k] = $5; c[k] = $6; b[k] = $7; next }
	     NF == 4 && !($4 in w) { w[$4] = $1; c[$4] = $2; b[$4] = $3 }
	     END { for (k in w) print w[k], c[k], b[k], k }' "$dir/results" "$last" |
		sort -k1,1nr -k4 >"$times.new" && mv "$times.new" "$times"
fi
# every program's times, longest first, and the sums
echo "times (wall s, CPU s, busy %: CPU over wall on a machine of its own; program), longest first:"
sort -k5,5nr -k8 "$dir/results" | awk '{ printf "  %7.1f %7.1f %4d%%  %s\n", $5 / 1000, $6 / 1000, $7, $8 }'
wall=$(( ($(date +%s%N) - start) / 1000000 ))
awk -v wall="$wall" -v n="$ran" -v j="$jobs" -v wf="${WAIT_FACTOR:-3}" -v l0="$load0" \
	-v l1="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" \
	'{ w += $5; c += $6 } END {
		printf "suite time: %.1f s wall, %.1f CPU-s (the programs'"'"' sum; %.1f s of their walls), %d programs, %d busy at a time (%d more that wait)\n", wall / 1000, c / 1000, w / 1000, n, j, j * wf
		printf "load average: %s at the start, %s at the end\n", l0, l1 }' "$dir/results"
[ "$ran" = $# ] || { echo "run.sh: $# programs given, $ran ran" >&2; bad="$bad (missing)"; }
[ -z "$bad" ] || echo "failed:$bad"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ -z "$bad" ] && [ "$failed" = 0 ]
