#!/usr/bin/env bash
# tests/bench/ab.sh BIN_A BIN_B [ROUNDS] — compare two builds of trainer-webhook.
#
# For judging a server change on a noisy (shared) machine: both binaries serve
# at once (same certificate, same runtimes, CPU 0), and wrk (CPU 1) loads them
# in turns, A B A B ..., ROUNDS times (default 3) for BENCH_SECONDS (default 5)
# each, with the same AdmissionReview mix as run.sh. Prints, per turn, req/s and
# server CPU microseconds per request (utime+stime of the process / requests),
# then the medians. CPU per request is the steadier figure: it does not depend
# on how much CPU other work on the machine left to the server.
# Needs wrk (run.sh installs it). Loopback only; everything is removed on exit.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tests/bench/ab.sh BIN_A BIN_B [ROUNDS]" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
A=$(abs "$1") B=$(abs "$2")
ROUNDS=${3:-3}
SECS=${BENCH_SECONDS:-5}
CONNS=${BENCH_CONNS:-32}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/twab.XXXXXX")
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$A" certs generate --service bench --namespace bench --dns localhost --ip 127.0.0.1 \
	--out "$TMP/certs" >/dev/null 2>&1
port() { local p; while :; do p=$((20000 + RANDOM % 40000));
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }; done; }
start() { # BIN DIR -> sets SPORT and SPID
	mkdir -p "$2"
	SPORT=$(port)
	(cd "$2" && exec taskset -c 0 "$1" serve --listen "127.0.0.1:$SPORT" \
		--metrics-listen "127.0.0.1:$(port)" --tls-cert "$TMP/certs/tls.crt" \
		--tls-key "$TMP/certs/tls.key" --runtimes "$ROOT/deploy/runtimes" --log-level warn \
		--shutdown-grace 1) >"$2/log" 2>&1 &
	SPID=$!
	PIDS+=("$SPID")
	for _ in $(seq 100); do
		curl -s -o /dev/null --cacert "$TMP/certs/ca.crt" "https://127.0.0.1:$SPORT/readyz" && return 0
		sleep 0.1
	done
	cat "$2/log" >&2
	exit 1
}
start "$A" "$TMP/a"; PA=$SPORT; IA=$SPID
start "$B" "$TMP/b"; PB=$SPORT; IB=$SPID
ticks() { awk '{ sub(/^.*\) /, ""); split($0, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)
one() { # PORT PID -> "rps us_per_req"
	local t0 t1 out
	t0=$(ticks "$2")
	out=$(taskset -c 1 wrk -t2 -c"$CONNS" -d"${SECS}s" -s "$HERE/admission.lua" "https://127.0.0.1:$1" -- \
		/validate-trainer-kubeflow-org-v1alpha1-trainjob "$ROOT/deploy/samples/admissionreview-trainjob.json" \
		/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime \
		"$HERE/admissionreview-clustertrainingruntime.json" | grep '^BENCH')
	t1=$(ticks "$2")
	echo "$out" | awk -v t=$((t1 - t0)) -v hz="$HZ" '{
		for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		if (v["connect"] + v["read"] + v["write"] + v["status"] + v["timeout"] > 0) print "errors: " $0 > "/dev/stderr"
		printf "%d %.1f\n", v["rps"], 1e6 * t / hz / v["requests"] }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
one "$PA" "$IA" >/dev/null; one "$PB" "$IB" >/dev/null # warm-up
: >"$TMP/ra"; : >"$TMP/rb"
printf '%-6s %10s %12s %10s %12s\n' round "A req/s" "A us/req" "B req/s" "B us/req"
for r in $(seq "$ROUNDS"); do
	ra=$(one "$PA" "$IA"); rb=$(one "$PB" "$IB")
	echo "$ra" >>"$TMP/ra"; echo "$rb" >>"$TMP/rb"
	printf '%-6s %10s %12s %10s %12s\n' "$r" $ra $rb
done
printf '%-6s %10s %12s %10s %12s\n' median "$(cut -d' ' -f1 "$TMP/ra" | median)" \
	"$(cut -d' ' -f2 "$TMP/ra" | median)" "$(cut -d' ' -f1 "$TMP/rb" | median)" \
	"$(cut -d' ' -f2 "$TMP/rb" | median)"
echo "A: $1"; echo "B: $2"; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
