#!/bin/sh
# Every answer the binary gives on the shipped inputs, saved one file per
# question, so that a change meant to make decisions cheaper can be shown to
# leave every answer byte for byte the same:
#
#   tests/bench/answers.sh BIN OUTDIR     (before and after the change)
#   diff -r OUTDIR.before OUTDIR.after
#
# The questions: `review` of every AdmissionReview kept in the repository and
# in ../shared/fixtures on its own route and on every other route
# (validating and mutating, TrainJob, runtimes, JobSet, /expand); `review` of
# every object of every fixture file, wrapped into a CREATE and an UPDATE
# AdmissionReview of its kind, as is and twice broken (an unknown field in
# every object, every scalar of the wrong type) so that the schema layer's
# findings and their field paths are compared too; `validate` of every
# fixture file and `expand` of every TrainJob in them. Each with both
# profiles. Each output file holds the command's stdout, stderr and exit
# status. Needs jq and yq (the jq wrapper that reads YAML).
set -eu
bin=$1 out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=$(cd "${TP_SHARED:-$root/../shared}" && pwd)
now=2026-01-02T03:04:05Z
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

routes="/validate-trainer-kubeflow-org-v1alpha1-trainjob
/mutate-trainer-kubeflow-org-v1alpha1-trainjob
/validate-trainer-kubeflow-org-v1alpha1-trainingruntime
/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime
/validate-ome-io-v1beta1-trainingruntime
/validate-ome-io-v1beta1-clustertrainingruntime
/mutate-jobset-x-k8s-io-v1alpha2-jobset
/expand"

# The runtimes the TrainJobs refer to: the shipped ones and upstream's.
rts="--runtimes $root/deploy/runtimes --runtimes $shared/fixtures/upstream/runtimes"

run() { # NAME CMD...: CMD's stdout, stderr and status into $out/NAME
	_name=$1
	shift
	rc=0
	"$@" >"$tmp/o" 2>"$tmp/e" || rc=$?
	# the inputs made here are named by where they are: not compared
	{ cat "$tmp/o"; echo "--- stderr"; cat "$tmp/e"; echo "--- exit $rc"; } |
		sed "s|$tmp/|TMP/|g" >"$out/$_name"
}

slug() { echo "$1" | sed "s|^$root/||; s|^$shared/||; s|[/ ]|_|g"; }

review_all_routes() { # FILE NAME: FILE reviewed on its own route and every other
	for p in strict kubeflow; do
		run "$2.$p.own" "$bin" review --profile "$p" $rts --now "$now" "$1"
	done
	for r in $routes; do
		run "$2.strict$(echo "$r" | tr / _)" "$bin" review $rts --now "$now" --path "$r" "$1"
	done
	run "$2.strict.warn" "$bin" review --strict-action warn $rts --now "$now" "$1"
}

# 1. The AdmissionReviews kept as files.
for f in "$shared"/fixtures/admissionreview/*.request.json "$root"/deploy/samples/*.json \
	"$root"/tests/bench/admissionreview-*.json; do
	review_all_routes "$f" "ar.$(slug "$f")"
done

# 2. Every object of every fixture file but the CRDs, wrapped into
# AdmissionReviews: made by one jq program per file.
files=$(find "$shared/fixtures/upstream" "$root/deploy/runtimes" -name '*.yaml' | sort)
# shellcheck disable=SC2016
wrap='def resource: {TrainJob: "trainjobs", TrainingRuntime: "trainingruntimes",
	ClusterTrainingRuntime: "clustertrainingruntimes", JobSet: "jobsets"}[.] // (ascii_downcase + "s");
def review($obj; $old; $op): (.apiVersion // "v1") as $api
	| ($api | if test("/") then split("/") else ["", .] end) as [$g, $v]
	| { kind: "AdmissionReview", apiVersion: "admission.k8s.io/v1",
	    request: { uid: "00000000-0000-0000-0000-000000000001",
		kind: {group: $g, version: $v, kind: .kind},
		resource: {group: $g, version: $v, resource: (.kind | resource)},
		name: (.metadata.name // ""), namespace: (.metadata.namespace // "default"),
		operation: $op, userInfo: {username: "alice@example.com"},
		object: $obj, oldObject: $old, dryRun: false } };
# an unknown field in every object; every scalar of spec of the wrong type
def unknown: walk(if type == "object" then . + {"zzUnknownField": 1} else . end);
def types: .spec |= walk(if type == "string" then 7 elif type == "number" then "x"
	elif type == "boolean" then "y" else . end);
[inputs] | to_entries[] | .key as $i | .value
| select(type == "object" and (.kind | type) == "string" and .kind != "CustomResourceDefinition")
| . as $d
| ("\($i).asis.CREATE", review($d; null; "CREATE")),
  ("\($i).asis.UPDATE", review($d; $d; "UPDATE")),
  ("\($i).unknown.CREATE", review($d | unknown; null; "CREATE")),
  ("\($i).types.CREATE", review($d | types; null; "CREATE")),
  ("\($i).types.UPDATE", review($d | types; $d; "UPDATE"))'
for f in $files; do
	yq -c '.' "$f" 2>/dev/null | jq -nc "$wrap" >"$tmp/ars" || continue
	while IFS= read -r label && IFS= read -r ar; do
		name="obj.$(slug "$f").$(echo "$label" | tr -d '"')"
		printf '%s\n' "$ar" >"$tmp/ar.json"
		case $name in
		*.asis.CREATE) review_all_routes "$tmp/ar.json" "$name" ;;
		*.asis.UPDATE | *.types.CREATE)
			for p in strict kubeflow; do
				run "$name.$p" "$bin" review --profile "$p" $rts --now "$now" "$tmp/ar.json"
			done ;;
		*) run "$name.strict" "$bin" review $rts --now "$now" "$tmp/ar.json" ;;
		esac
	done <"$tmp/ars"
done

# 3. validate over every fixture file, expand over every TrainJob.
for f in $files; do
	for p in strict kubeflow; do
		run "validate.$(slug "$f").$p" "$bin" validate --profile "$p" $rts -o json "$f"
		if grep -q '^kind: TrainJob' "$f"; then
			run "expand.$(slug "$f").$p" "$bin" expand --profile "$p" $rts --now "$now" "$f"
			run "expand.$(slug "$f").$p.json" "$bin" expand --profile "$p" $rts --now "$now" -o json "$f"
		fi
	done
done
echo "answers: $(ls "$out" | wc -l) answers in $out"
