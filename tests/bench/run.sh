#!/usr/bin/env bash
# tests/bench/run.sh BIN — `make bench`: trainer-webhook against a static nginx.
#
# Both servers run on loopback over TLS with the same certificate, each in its
# own temporary folder, and get the same wrk load: keep-alive HTTP/1.1 POSTs of
# real AdmissionReview bodies (the TrainJob sample and a ClusterTrainingRuntime
# review, compact as the API server sends them), round-robin over their two
# routes. nginx answers those routes with the exact bytes the webhook answers
# (taken from `BIN review`), so the two servers move the same traffic.
#
# Phases, per server (about 45 s each, two minutes in all):
#   throughput  wrk -c$BENCH_CONNS for $BENCH_SECONDS s, closed loop (as fast as it goes)
#   per route   the same, $BENCH_ROUTE_SECONDS s on one route and body at a time
#               (the TrainJob review, then the ClusterTrainingRuntime one): the
#               server's CPU time per request, compared with nginx's on the same
#               route, is the throughput target (requests per server CPU-second
#               >= 80% of nginx's), which holds whatever else the machine runs
#   paced       wrk -c8, each connection waiting 2 ms between requests: a
#               moderate load (about 3,000 requests/s); then the same with the
#               TrainJob body alone, where the p99 target is read
#   single      wrk -c1, closed loop: the latency of one request at a time
# then the webhook's VmRSS/VmHWM (the memory target is read on VmHWM).
#
# CPU pinning (BENCH_PIN): on two or more CPUs the default, "split", puts the
# servers on CPU 0 and wrk on CPU 1, so the client never steals the server's
# CPU and both servers get exactly one CPU (with worker_processes/threads
# still = online CPUs, as in production). "none" lets the scheduler share all
# CPUs between client and server. The report also gives each server's CPU use
# and requests per CPU-second, which compare the servers even when the client
# is the bottleneck.
#
# Exit status: 0 when both servers ran and every request got a 2xx (targets
# missed are reported, not failed); 1 when a server failed to start, an
# answer was wrong, or wrk saw non-2xx answers or socket errors; 2 bad usage.
#
# Knobs (environment): BENCH_SECONDS (10), BENCH_ROUTE_SECONDS (6), BENCH_CONNS (32), BENCH_THREADS (2),
# BENCH_PIN (split|none), BENCH_BODIES (compact|indented), BENCH_KEEP=1 keeps
# the temporary folder for a look.
set -euo pipefail

usage() { echo "usage: tests/bench/run.sh path/to/trainer-webhook" >&2; exit 2; }
[ $# -eq 1 ] || usage
[ -x "$1" ] || { echo "bench: $1 is not an executable (run make first)" >&2; exit 2; }

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
export PATH="$PATH:/usr/sbin:/sbin"

SECONDS_=${BENCH_SECONDS:-10}
ROUTE_SECONDS=${BENCH_ROUTE_SECONDS:-6}
CONNS=${BENCH_CONNS:-32}
THREADS=${BENCH_THREADS:-2}
NCPU=$(getconf _NPROCESSORS_ONLN)
PIN=${BENCH_PIN:-$([ "$NCPU" -ge 2 ] && echo split || echo none)}

RUNTIMES="$ROOT/deploy/runtimes"
TJ_FILE="$ROOT/deploy/samples/admissionreview-trainjob.json"
TJ_ROUTE=/validate-trainer-kubeflow-org-v1alpha1-trainjob
CTR_FILE="$HERE/admissionreview-clustertrainingruntime.json"
CTR_ROUTE=/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime
LUA="$HERE/admission.lua"

say() { echo "bench: $*" >&2; }
die() { echo "bench: FAILED: $*" >&2; exit 1; }

# ------------------------------------------------------------ 1. tools

need_install() {
	local missing=""
	command -v nginx >/dev/null 2>&1 || missing="$missing nginx"
	command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
	command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
	command -v curl >/dev/null 2>&1 || missing="$missing curl"
	command -v taskset >/dev/null 2>&1 || missing="$missing util-linux"
	command -v strace >/dev/null 2>&1 || missing="$missing strace"
	command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind" # decide.sh's instruction counts
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "missing:$missing (run as root, or install them)"
	local pkgs="" p
	for p in $missing; do
		if [ "$p" = nginx ]; then
			# Debian 12's nginx is the server itself (nginx-light only adds the
			# echo module); older releases may only offer nginx-light.
			if ! apt-cache policy nginx 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then
				p=nginx-light
			fi
		fi
		pkgs="$pkgs $p"
	done
	say "installing$pkgs"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# nginx's package starts a system nginx on port 80; keep it from doing so.
	local rc=/usr/sbin/policy-rc.d made=""
	if [ ! -e "$rc" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$rc" && chmod 755 "$rc" && made=1
	fi
	apt-get install -y -qq --no-install-recommends $pkgs >&2 || { [ -n "$made" ] && rm -f "$rc"; die "apt-get install$pkgs"; }
	[ -n "$made" ] && rm -f "$rc"
	command -v nginx >/dev/null && command -v wrk >/dev/null || die "nginx or wrk still missing"
}
need_install

# ------------------------------------------------------------ temp + cleanup

TMP=$(mktemp -d "${TMPDIR:-/tmp}/twbench.XXXXXX")
WH_PID=""
NG_PID=""
stop_pid() { # PID SIGNAL: signal, wait up to 5 s, then SIGKILL
	local pid=$1 sig=$2 i
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill "-$sig" "$pid" 2>/dev/null || true
	for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
cleanup() {
	stop_pid "$WH_PID" TERM
	stop_pid "$NG_PID" TERM # nginx: fast shutdown, its workers exit with it
	if [ -n "${BENCH_KEEP:-}" ]; then say "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The bodies as the API server sends them: Go's encoding/json writes one line
# without whitespace, while the files are indented for people to read
# (tests/bench/compact.c). BENCH_BODIES=indented posts the files as they are.
case "${BENCH_BODIES:-compact}" in
compact | indented) ;;
*) die "BENCH_BODIES=$BENCH_BODIES: use compact or indented" ;;
esac
if [ "${BENCH_BODIES:-compact}" = compact ]; then
	COMPACT=$(dirname "$BIN")/tests/bench/compact
	[ -x "$COMPACT" ] || die "$COMPACT is missing (make bench builds it)"
	"$COMPACT" "$TJ_FILE" "$TMP/trainjob.json" && "$COMPACT" "$CTR_FILE" "$TMP/runtime.json" ||
		die "cannot compact the bodies"
	TJ_FILE=$TMP/trainjob.json CTR_FILE=$TMP/runtime.json
fi

# A free loopback port: random, and nothing answers on it.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		case " ${USED_PORTS:-} " in *" $p "*) continue ;; esac
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			USED_PORTS="${USED_PORTS:-} $p"
			echo "$p"
			return 0
		fi
	done
	die "no free loopback port"
}

# Other work on a shared machine (builds, tests) adds scheduling delays to the
# latencies of both servers; as root, servers and wrk run at nice -10
# (BENCH_NICE=0 turns that off).
PRIO=""
if [ "$(id -u)" = 0 ] && [ "${BENCH_NICE:-1}" != 0 ]; then PRIO="nice -n -10"; fi

case "$PIN" in
split) SRV_CPUS=0; CLI_CPUS=1 ;;
none) SRV_CPUS=0-$((NCPU - 1)); CLI_CPUS=$SRV_CPUS ;;
*) die "BENCH_PIN=$PIN: use split or none" ;;
esac

# ------------------------------------------------------------ 2. certificates

CERTS="$TMP/certs"
"$BIN" certs generate --service bench --namespace bench --dns localhost --ip 127.0.0.1 \
	--out "$CERTS" >/dev/null 2>"$TMP/certs.log" || { cat "$TMP/certs.log" >&2; die "certs generate"; }
CURL=(curl -sS --max-time 5 --cacert "$CERTS/ca.crt")

# ------------------------------------------------------------ 3. servers

WH_PORT=$(free_port)
WH_MPORT=$(free_port)
NG_PORT=$(free_port)

mkdir -p "$TMP/webhook" "$TMP/nginx"
(cd "$TMP/webhook" && exec $PRIO taskset -c "$SRV_CPUS" "$BIN" serve --listen "127.0.0.1:$WH_PORT" \
	--metrics-listen "127.0.0.1:$WH_MPORT" --tls-cert "$CERTS/tls.crt" --tls-key "$CERTS/tls.key" \
	--runtimes "$RUNTIMES" --log-level warn --shutdown-grace 2 ${BENCH_SERVE_ARGS:-}) \
	>"$TMP/webhook/log" 2>&1 &
WH_PID=$!

# What the webhook answers on each route: nginx sends the same bytes.
"$BIN" review --runtimes "$RUNTIMES" ${BENCH_SERVE_ARGS:-} --path "$TJ_ROUTE" "$TJ_FILE" >"$TMP/answer1" ||
	die "review of $TJ_FILE is not an allow"
"$BIN" review --runtimes "$RUNTIMES" ${BENCH_SERVE_ARGS:-} --path "$CTR_ROUTE" "$CTR_FILE" >"$TMP/answer2" ||
	die "review of $CTR_FILE is not an allow"
nginx_text() { # a file's bytes as the inside of an nginx '...' string
	grep -q "[\$']" "$1" && die "$1 has \$ or ' (cannot go in nginx's return)"
	sed 's/\\/\\\\/g' "$1" | awk 'BEGIN { ORS = "" } { print $0 "\\n" }'
}
A1=$(nginx_text "$TMP/answer1")
A2=$(nginx_text "$TMP/answer2")
A1=$A1 A2=$A2 DIR="$TMP/nginx" PORT=$NG_PORT WORKERS=$NCPU CERT="$CERTS/tls.crt" KEY="$CERTS/tls.key" \
R1=$TJ_ROUTE R2=$CTR_ROUTE awk '
	function sub_all(s, name, val,    i, out) {
		out = ""
		while ((i = index(s, name)) > 0) { out = out substr(s, 1, i - 1) val; s = substr(s, i + length(name)) }
		return out s
	}
	{
		s = $0
		s = sub_all(s, "@DIR@", ENVIRON["DIR"]); s = sub_all(s, "@PORT@", ENVIRON["PORT"])
		s = sub_all(s, "@WORKERS@", ENVIRON["WORKERS"]); s = sub_all(s, "@CERT@", ENVIRON["CERT"])
		s = sub_all(s, "@KEY@", ENVIRON["KEY"]); s = sub_all(s, "@ROUTE1@", ENVIRON["R1"])
		s = sub_all(s, "@ROUTE2@", ENVIRON["R2"]); s = sub_all(s, "@ANSWER1@", ENVIRON["A1"])
		s = sub_all(s, "@ANSWER2@", ENVIRON["A2"])
		print s
	}' "$HERE/nginx.conf.in" >"$TMP/nginx/nginx.conf"
(cd "$TMP/nginx" && exec $PRIO taskset -c "$SRV_CPUS" nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" \
	-c "$TMP/nginx/nginx.conf") >"$TMP/nginx/log" 2>&1 &
NG_PID=$!

wait_up() { # NAME PID URL
	local i
	for i in $(seq 100); do
		kill -0 "$2" 2>/dev/null || return 1
		"${CURL[@]}" -o /dev/null "$3" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_up webhook "$WH_PID" "https://127.0.0.1:$WH_PORT/readyz" ||
	{ cat "$TMP/webhook/log" >&2; die "trainer-webhook did not start (log above)"; }
wait_up nginx "$NG_PID" "https://127.0.0.1:$NG_PORT/" ||
	{ cat "$TMP/nginx/log" "$TMP/nginx/error.log" >&2 2>/dev/null; die "nginx did not start (log above)"; }

# Both servers answer both routes 200 with the same bytes.
check_answer() { # PORT ROUTE FILE WANT NAME
	local code
	code=$("${CURL[@]}" -o "$TMP/got" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$3" "https://127.0.0.1:$1$2") || die "$5: $2 did not answer"
	[ "$code" = 200 ] || die "$5: $2 answered HTTP $code: $(head -c 300 "$TMP/got")"
	cmp -s "$TMP/got" "$4" || die "$5: $2 answered other bytes than \`review\`: $(head -c 300 "$TMP/got")"
}
check_answer "$WH_PORT" "$TJ_ROUTE" "$TJ_FILE" "$TMP/answer1" trainer-webhook
check_answer "$WH_PORT" "$CTR_ROUTE" "$CTR_FILE" "$TMP/answer2" trainer-webhook
check_answer "$NG_PORT" "$TJ_ROUTE" "$TJ_FILE" "$TMP/answer1" nginx
check_answer "$NG_PORT" "$CTR_ROUTE" "$CTR_FILE" "$TMP/answer2" nginx
TLS_WH=$(openssl s_client -connect "127.0.0.1:$WH_PORT" -CAfile "$CERTS/ca.crt" </dev/null 2>/dev/null |
	sed -n 's/^New, \(.*\)$/\1/p' | head -1)
TLS_NG=$(openssl s_client -connect "127.0.0.1:$NG_PORT" -CAfile "$CERTS/ca.crt" </dev/null 2>/dev/null |
	sed -n 's/^New, \(.*\)$/\1/p' | head -1)

# ------------------------------------------------------------ 4. load

# CPU time (clock ticks) of a process and its children that are threads or
# nginx workers: utime+stime of PID and of every process whose parent is PID.
cpu_ticks() {
	local total=0 p
	# one sed a process of the server's, not one a process of the machine's
	# (slow on a machine busy with others' work)
	for p in "$1" $(pgrep -P "$1"); do
		# fields after the ") ": 2 ppid ... 12 utime 13 stime (1-based after the comm)
		read -r -a st < <(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
		[ "${#st[@]}" -gt 13 ] || continue
		total=$((total + st[11] + st[12]))
	done
	echo "$total"
}

field() { sed -n "s/^BENCH.* $1=\([0-9.]*\).*/\1/p" "$2"; }

# run NAME PORT PHASE WRK-ARGS...: one wrk run; checks errors. The bodies:
# $PAIRS (ROUTE FILE...; default both routes, round-robin).
run_wrk() {
	local name=$1 port=$2 phase=$3
	shift 3
	local out="$TMP/$name-$phase.txt"
	local TIMEFORMAT='%U %S' rc=0
	{ time $PRIO taskset -c "$CLI_CPUS" wrk "$@" --latency -s "$LUA" "https://127.0.0.1:$port" -- \
		${LUA_PRE:-} ${PAIRS:-"$TJ_ROUTE" "$TJ_FILE" "$CTR_ROUTE" "$CTR_FILE"} >"$out" 2>&1 || rc=$?; } \
		2>"$out.time"
	[ "$rc" = 0 ] || { cat "$out" >&2; die "wrk failed against $name"; }
	WRK_CPU=$(awk '{ printf "%.2f", $1 + $2 }' "$out.time")
	grep -q '^BENCH ' "$out" || { cat "$out" >&2; die "wrk printed no figures against $name"; }
	local k errs=0
	for k in connect read write status timeout; do errs=$((errs + $(field $k "$out"))); done
	if [ "$errs" -gt 0 ] || [ "$(field requests "$out")" -eq 0 ]; then
		cat "$out" >&2
		die "$name $phase: $errs errors (non-2xx or socket) or no requests"
	fi
}

TICK=$(getconf CLK_TCK)
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
WH_RSS0=$(awk '/^VmRSS/ {print $2}' "/proc/$WH_PID/status")
declare -A CPU_S CLI_S OTHER_S ROUTE_CPU
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
load() { # NAME PORT PID
	local name=$1 port=$2 pid=$3 t0 t1
	say "$name: warm-up 2 s, then -c$CONNS for ${SECONDS_} s, paced -c8, -c1, new connections -c8"
	run_wrk "$name" "$port" warmup -t"$THREADS" -c"$CONNS" -d2s
	t0=$(cpu_ticks "$pid")
	b0=$(busy_ticks)
	run_wrk "$name" "$port" throughput -t"$THREADS" -c"$CONNS" -d"${SECONDS_}s"
	b1=$(busy_ticks)
	t1=$(cpu_ticks "$pid")
	CPU_S[$name]=$(awk -v t=$((t1 - t0)) -v hz="$TICK" 'BEGIN { printf "%.2f", t / hz }')
	CLI_S[$name]=$WRK_CPU
	# What else ran on the machine meanwhile (other builds or tests): all busy
	# CPU time minus the server's and wrk's. Large values make figures noisy.
	OTHER_S[$name]=$(awk -v b=$((b1 - b0)) -v hz="$TICK" -v s="${CPU_S[$name]}" -v w="$WRK_CPU" \
		'BEGIN { o = b / hz - s - w; printf "%.2f", (o < 0 ? 0 : o) }')
	# each route alone: the server's CPU per request on it
	local r
	for r in trainjob runtime; do
		if [ $r = trainjob ]; then PAIRS="$TJ_ROUTE $TJ_FILE"; else PAIRS="$CTR_ROUTE $CTR_FILE"; fi
		t0=$(cpu_ticks "$pid")
		PAIRS=$PAIRS run_wrk "$name" "$port" "route-$r" -t"$THREADS" -c"$CONNS" -d"${ROUTE_SECONDS}s"
		t1=$(cpu_ticks "$pid")
		ROUTE_CPU[$name-$r]=$(awk -v t=$((t1 - t0)) -v hz="$TICK" 'BEGIN { printf "%.2f", t / hz }')
	done
	LUA_PRE=delay=2 run_wrk "$name" "$port" paced -t2 -c8 -d5s
	LUA_PRE=delay=2 PAIRS="$TJ_ROUTE $TJ_FILE" run_wrk "$name" "$port" paced-trainjob -t2 -c8 -d5s
	run_wrk "$name" "$port" single -t1 -c1 -d4s
	# a new TLS connection per request: the handshake rate
	LUA_PRE=close run_wrk "$name" "$port" handshakes -t2 -c8 -d4s
}
load trainer-webhook "$WH_PORT" "$WH_PID"
load nginx "$NG_PORT" "$NG_PID"

# System calls per keep-alive request: strace -c on every thread of the
# server (nginx: its workers) while wrk -c8 runs 3 s. strace slows the
# server; the count per request is what it measures, not speed.
declare -A SC
syscalls() { # NAME PORT PID...
	local name=$1 port=$2 args="" p
	shift 2
	for p in "$@"; do args="$args -p $p"; done
	strace -c -f -o "$TMP/$name-strace.txt" $args 2>/dev/null &
	local sp=$!
	sleep 0.5
	run_wrk "$name" "$port" syscalls -t1 -c8 -d3s
	kill -INT "$sp" 2>/dev/null; wait "$sp" 2>/dev/null || true
	SC[$name]=$(awk -v r="$(field requests "$TMP/$name-syscalls.txt")" \
		'/ total$/ { printf "%.1f", $4 / r }' "$TMP/$name-strace.txt")
}
syscalls trainer-webhook "$WH_PORT" "$WH_PID"
syscalls nginx "$NG_PORT" $(pgrep -P "$NG_PID" || echo "$NG_PID")

# ------------------------------------------------------------ 5. memory

kill -0 "$WH_PID" 2>/dev/null || die "trainer-webhook died under load"
WH_RSS=$(awk '/^VmRSS/ {print $2}' "/proc/$WH_PID/status")
WH_HWM=$(awk '/^VmHWM/ {print $2}' "/proc/$WH_PID/status")
NG_RSS=0
for f in /proc/[0-9]*/status; do
	pid=${f#/proc/}; pid=${pid%/status}
	pp=$(awk '/^PPid/ {print $2}' "$f" 2>/dev/null) || continue
	if [ "$pid" = "$NG_PID" ] || [ "$pp" = "$NG_PID" ]; then
		NG_RSS=$((NG_RSS + $(awk '/^VmRSS/ {print $2}' "$f" 2>/dev/null || echo 0)))
	fi
done

# ------------------------------------------------------------ 6. report

W=$TMP/trainer-webhook N=$TMP/nginx
ms() { awk -v u="$1" 'BEGIN { printf "%.3f", u / 1000 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
verdict() { if awk -v a="$1" -v b="$2" "BEGIN { exit !(a $3 b) }"; then echo met; else echo missed; fi; }

WR=$(field rps "$W-throughput.txt") NR=$(field rps "$N-throughput.txt")
RATIO=$(awk -v a="$WR" -v b="$NR" 'BEGIN { printf "%.1f", 100 * a / b }')
WE=$(awk -v r="$(field requests "$W-throughput.txt")" -v c="${CPU_S[trainer-webhook]}" 'BEGIN { printf "%.0f", (c > 0 ? r / c : 0) }')
NE=$(awk -v r="$(field requests "$N-throughput.txt")" -v c="${CPU_S[nginx]}" 'BEGIN { printf "%.0f", (c > 0 ? r / c : 0) }')
EFF=$(awk -v a="$WE" -v b="$NE" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
WP99=$(field p99_us "$W-paced-trainjob.txt")
# requests per server CPU-second on one route: NAME ROUTE
per_cpu_s() {
	awk -v r="$(field requests "$TMP/$1-route-$2.txt")" -v c="${ROUTE_CPU[$1-$2]}" \
		'BEGIN { printf "%.0f", (c > 0 ? r / c : 0) }'
}
WE_TJ=$(per_cpu_s trainer-webhook trainjob) NE_TJ=$(per_cpu_s nginx trainjob)
WE_RT=$(per_cpu_s trainer-webhook runtime) NE_RT=$(per_cpu_s nginx runtime)
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }'; }
EFF_TJ=$(pct "$WE_TJ" "$NE_TJ") EFF_RT=$(pct "$WE_RT" "$NE_RT")
WH=$(field rps "$W-handshakes.txt") NH=$(field rps "$N-handshakes.txt")
HRATIO=$(awk -v a="$WH" -v b="$NH" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
SRV_NCPU=$([ "$PIN" = split ] && echo 1 || echo "$NCPU")
util() { awk -v c="$1" -v d="$SECONDS_" -v n="$SRV_NCPU" 'BEGIN { printf "%.0f", 100 * c / d / n }'; }

# Other work above 10% of the machine's CPU time during either throughput run
# makes the comparison unreliable: say so (a figure, not a failure).
NOISE=$(awk -v a="${OTHER_S[trainer-webhook]}" -v b="${OTHER_S[nginx]}" -v d="$SECONDS_" -v n="$NCPU" \
	'BEGIN { m = a > b ? a : b; if (m > 0.1 * d * n)
		printf "  NOISY: other processes used up to %.1f of %d CPU-seconds during a throughput run;\n" \
		       "         the figures below are unreliable: run again on a quiet machine.\n", m, d * n }')

row() { # NAME PHASE
	local f="$TMP/$1-$2.txt"
	printf '  %-16s %-14s %9s %9s %9s %9s %9s\n' "$1" "$2" "$(field rps "$f")" \
		"$(ms "$(field p50_us "$f")")" "$(ms "$(field p90_us "$f")")" \
		"$(ms "$(field p99_us "$f")")" "$(ms "$(field max_us "$f")")"
}

cat <<EOF

trainer-webhook benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $NCPU CPUs, load average at start $LOADAVG)
  pinning: $PIN: servers on CPU $SRV_CPUS, wrk on CPU $CLI_CPUS; priority: ${PRIO:-normal}
  load: wrk keep-alive HTTP/1.1 over TLS, POST AdmissionReview round-robin
        $TJ_ROUTE ($(wc -c <"$TJ_FILE") B -> $(wc -c <"$TMP/answer1") B)
        $CTR_ROUTE ($(wc -c <"$CTR_FILE") B -> $(wc -c <"$TMP/answer2") B)
  TLS:  trainer-webhook ${TLS_WH:-?}; nginx ${TLS_NG:-?}
  throughput: -t$THREADS -c$CONNS ${SECONDS_}s; paced: -t2 -c8, 2 ms between requests per connection, 5s; single: -t1 -c1 4s
  handshakes: -t2 -c8 4s, "Connection: close" (a full TLS handshake per request, no resumption)

                   phase             req/s   p50 ms    p90 ms    p99 ms    max ms
$(row trainer-webhook throughput)
$(row nginx throughput)
$(row trainer-webhook route-trainjob)
$(row nginx route-trainjob)
$(row trainer-webhook route-runtime)
$(row nginx route-runtime)
$(row trainer-webhook paced)
$(row nginx paced)
$(row trainer-webhook paced-trainjob)
$(row nginx paced-trainjob)
$(row trainer-webhook single)
$(row nginx single)
$(row trainer-webhook handshakes)
$(row nginx handshakes)

  CPU seconds in the ${SECONDS_} s throughput run (server / wrk / everything else on the machine):
    trainer-webhook ${CPU_S[trainer-webhook]} ($(util "${CPU_S[trainer-webhook]}")% of $SRV_NCPU CPU) / ${CLI_S[trainer-webhook]} / ${OTHER_S[trainer-webhook]}
    nginx           ${CPU_S[nginx]} ($(util "${CPU_S[nginx]}")% of $SRV_NCPU CPU) / ${CLI_S[nginx]} / ${OTHER_S[nginx]}
  requests per server CPU-second: trainer-webhook $WE, nginx $NE ($EFF%)
  requests per server CPU-second, one route at a time (-c$CONNS ${ROUTE_SECONDS}s; server CPU seconds in brackets):
    TrainJob review                trainer-webhook $WE_TJ (${ROUTE_CPU[trainer-webhook-trainjob]}), nginx $NE_TJ (${ROUTE_CPU[nginx-trainjob]}): $EFF_TJ%
    ClusterTrainingRuntime review  trainer-webhook $WE_RT (${ROUTE_CPU[trainer-webhook-runtime]}), nginx $NE_RT (${ROUTE_CPU[nginx-runtime]}): $EFF_RT%
  trainer-webhook memory: VmRSS $(mib "$WH_RSS0") MiB idle, $(mib "$WH_RSS") MiB after load, VmHWM $(mib "$WH_HWM") MiB (nginx, all processes: VmRSS $(mib "$NG_RSS") MiB)

$NOISE
  throughput  $WR / $NR req/s = $RATIO% of nginx (both routes; the client may be the limit)
  CPU, TrainJob review   $WE_TJ / $NE_TJ requests per server CPU-second = $EFF_TJ% of nginx   (target >= 80%)  $(verdict "$EFF_TJ" 80 '>=')
  CPU, runtime review    $WE_RT / $NE_RT requests per server CPU-second = $EFF_RT% of nginx   (target >= 80%)  $(verdict "$EFF_RT" 80 '>=')
  handshakes  $WH / $NH new connections/s = $HRATIO% of nginx   (target >= 80%)  $(verdict "$HRATIO" 80 '>=')
  latency     p99 $(ms "$WP99") ms at the paced load, TrainJob review   (target < 1 ms)        $(verdict "$WP99" 1000 '<')
  memory      VmHWM $(mib "$WH_HWM") MiB               (target < 16 MiB)      $(verdict "$WH_HWM" 16384 '<')
  syscalls    ${SC[trainer-webhook]:-?} per keep-alive request (nginx ${SC[nginx]:-?})   (target <= 3)  $(verdict "${SC[trainer-webhook]:-99}" 3.05 '<')
EOF
