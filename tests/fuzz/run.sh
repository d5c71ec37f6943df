#!/bin/sh
# Runs libFuzzer targets, each for FUZZ_SECONDS (default 60), on a seed corpus
# made at run time (nothing copied is kept in the tree):
#   - every *.yaml, *.yml, *.json under ../shared/fixtures (when present),
#     deploy/runtimes and deploy/samples;
#   - for fuzz_jsonpatch, pairs of those JSON files joined by a NUL byte;
#   - for fuzz_server, each of them behind some request headers;
#   - tests/fuzz/regressions/ (inputs that once crashed).
# Usage: tests/fuzz/run.sh BUILD_DIR TARGET...   (make fuzz calls it)
# FUZZ_CORPUS=DIR keeps each target's corpus in DIR/TARGET across runs (else a
# temporary folder); FUZZ_ARGS adds libFuzzer flags. Crash, leak and timeout
# inputs land in BUILD_DIR/artifacts/. Exit status non-zero when any target fails.
set -u
build=$1
shift
seconds=${FUZZ_SECONDS:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${TP_SHARED:-$root/../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$build/artifacts"

# Seeds common to every target.
seeds=$tmp/seeds
mkdir -p "$seeds"
n=0
for dir in "$shared/fixtures" "$root/deploy/runtimes" "$root/deploy/samples" \
	   "$here/regressions"; do
	[ -d "$dir" ] || continue
	for f in $(find "$dir" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \
		   -o -name '*.bin' \) | sort); do
		n=$((n + 1))
		cp "$f" "$seeds/$n-$(basename "$f")"
	done
done

# JSON pairs for fuzz_jsonpatch: each JSON seed with the next one, and with itself.
pairs=$tmp/pairs
mkdir -p "$pairs"
prev=
for f in "$seeds"/*.json; do
	[ -f "$f" ] || continue
	b=$(basename "$f")
	{ cat "$f"; printf '\0'; cat "$f"; } >"$pairs/same-$b"
	[ -n "$prev" ] && { cat "$prev"; printf '\0'; cat "$f"; } >"$pairs/next-$b"
	prev=$f
done

# Requests for fuzz_server: each seed behind the four header bytes that
# fuzz_server.c reads: on each of the eight routes as sent; on the validating
# TrainJob route with a 16 KiB arena under each budget, and with a 40 us
# ?timeout=; on the mutating TrainJob route behind an API server with the
# built-in CRDs; on /expand as YAML with a 16 KiB arena and no room for more.
requests=$tmp/requests
mkdir -p "$requests"
for f in "$seeds"/*; do
	b=$(basename "$f")
	i=0
	for h in '\010' '\011' '\012' '\013' '\014' '\015' '\016' '\017' \
		 '\012\004\000' '\012\004\001' '\012\004\002' '\012\000\000\005' \
		 '\275' '\007\004\001'; do
		i=$((i + 1))
		# shellcheck disable=SC2059
		{ printf "$h\000\000\000" | head -c 4; cat "$f"; } >"$requests/$i-$b"
	done
done

status=0
for t in "$@"; do
	bin=$build/fuzz/$t
	if [ -n "${FUZZ_CORPUS:-}" ]; then
		corpus=$FUZZ_CORPUS/$t
	else
		corpus=$tmp/corpus-$t
	fi
	mkdir -p "$corpus"
	extra=$seeds
	[ "$t" = fuzz_jsonpatch ] && extra="$pairs $seeds"
	[ "$t" = fuzz_server ] && extra="$requests $seeds"
	echo "== $t: ${seconds}s"
	# shellcheck disable=SC2086
	"$bin" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" \
		-dict="$here/k8s.dict" -artifact_prefix="$build/artifacts/$t-" \
		-print_final_stats=1 ${FUZZ_ARGS:-} "$corpus" $extra >"$tmp/$t.log" 2>&1
	rc=$?
	grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::new_units_added|stat::peak_rss_mb)' "$tmp/$t.log"
	grep -E '^#[0-9]+[[:space:]]+DONE' "$tmp/$t.log" | tail -1
	if [ "$rc" != 0 ]; then
		echo "fuzz: $t FAILED (exit $rc); its log:" >&2
		grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD)' "$tmp/$t.log" | tail -80 >&2
		status=1
	fi
done
exit $status
