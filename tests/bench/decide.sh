#!/bin/sh
# make bench's cost of one decision without the network (tests/bench/decide.c):
# microseconds per request, and, when valgrind is installed, instructions per
# request counted by callgrind (the difference between 201 requests and 1, so
# start-up is left out). Instruction counts do not move with the machine's
# load: compare them across changes.
#   tests/bench/decide.sh BUILD_DIR [--crds PATH]
set -eu
build=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
dec=$build/tests/bench/decide
ctr_route=/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime
tj_route=/validate-trainer-kubeflow-org-v1alpha1-trainjob
ctr=$root/tests/bench/admissionreview-clustertrainingruntime.json
tj=$root/deploy/samples/admissionreview-trainjob.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The bodies as the API server sends them, as tests/bench/run.sh posts them.
case "${BENCH_BODIES:-compact}" in
compact | indented) ;;
*) echo "decide: BENCH_BODIES=$BENCH_BODIES: use compact or indented" >&2; exit 2 ;;
esac
if [ "${BENCH_BODIES:-compact}" = compact ]; then
	"$build/tests/bench/compact" "$ctr" "$tmp/runtime.json"
	"$build/tests/bench/compact" "$tj" "$tmp/trainjob.json"
	ctr=$tmp/runtime.json tj=$tmp/trainjob.json
fi

instructions() { # ROUTE FILE N ARGS...: callgrind's total for N requests
	route=$1 file=$2 n=$3
	shift 3
	valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$dec" "$route" "$file" "$n" \
		--runtimes "$root/deploy/runtimes" "$@" 2>"$tmp/err" >/dev/null ||
		{ cat "$tmp/err" >&2; exit 1; }
	sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$tmp/err" | tr -d ,
}

echo "decide: tw_admission_handle in a loop, no network, ${BENCH_BODIES:-compact} bodies${1:+ ($*)}"
for which in ClusterTrainingRuntime TrainJob; do
	if [ $which = TrainJob ]; then route=$tj_route file=$tj; else route=$ctr_route file=$ctr; fi
	us=$("$dec" "$route" "$file" 20000 --runtimes "$root/deploy/runtimes" "$@")
	line=$(printf '  %-30s %s' "$which review" "$us")
	if command -v valgrind >/dev/null 2>&1; then
		one=$(instructions "$route" "$file" 1 "$@")
		many=$(instructions "$route" "$file" 201 "$@")
		line="$line, $(( (many - one) / 200 )) instructions/request (callgrind)"
	fi
	echo "$line"
done
