/*
 * admission/trainjob.c — the TrainJob validating webhook, upstream §2.4.
 *
 * Upstream runs its plugins from a Go map, so their order is unspecified.
 * Ours is fixed so the same object always gives the same answer:
 *   1. the CRD schema and CEL rules (unless opt->no_schema); a list past
 *      its maxItems ends validation there, as it ends the API server's;
 *   2. runtimeRef: registry key, the runtime (on UPDATE its snapshot when
 *      there is one, else the live one), deprecation warnings;
 *   3. strict extras about the TrainJob itself;
 *   4. the runtime template with runtimePatches merged;
 *   5. the plugins' TrainJob checks, in the table's order (plugins/registry.c):
 *      jobset, torch (with TorchTune), mpi, xgboost, volcano.
 */
#include "policy/admission/trainjob.h"
#include "policy/core/deadline.h"
#include "policy/expand/expand.h"
#include "policy/patch/patch.h"
#include "policy/plugins/plugin.h"
#include "policy/pod/pod.h"
#include "policy/schema/schema.h"
#include "policy/store/store.h"

#include <stdio.h>
#include <string.h>

#define KEY_TR  "TrainingRuntime." TP_GROUP_TRAINER
#define KEY_CTR "ClusterTrainingRuntime." TP_GROUP_TRAINER
#define OLD_GROUP "kubeflow.org"
#define MAX_NAMESPACES_SHOWN 5

/* runtimeRef members with the CRD defaults the API server applies before any
 * webhook sees the object; offline input may lack them. */
static const char *ref_str(const cJSON *ref, const char *member, const char *dflt)
{
	const cJSON *v = tp_member(ref, member);
	if (!v || cJSON_IsNull(v))
		return dflt;
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Whether Go's GroupKind.String() of (k, g), kind "." group (the kind
 * alone without a group), is want, compared where it lies: every TrainJob
 * asks (a snprintf of it cost 1,100 instructions a review, callgrind). */
static bool key_is(const char *k, const char *g, const char *want)
{
	size_t n = strlen(k);
	if (strncmp(k, want, n))
		return false;
	if (!*g)
		return want[n] == '\0';
	return want[n] == '.' && !strcmp(want + n + 1, g);
}

/* Step 1 of §2.4: Go's GroupKind.String() must name a registered runtime. */
static int check_registry_key(const tp_options *opt, const cJSON *job, tp_result *res,
			      tp_kind *kind)
{
	const cJSON *ref = tp_get(job, "spec.runtimeRef"); /* once, not per member */
	const char *k = ref_str(ref, "kind", "ClusterTrainingRuntime");
	const char *g = ref_str(ref, "apiGroup", TP_GROUP_TRAINER);
	if (key_is(k, g, KEY_TR)) {
		*kind = TP_KIND_TRAINING_RUNTIME;
		return TP_OK;
	}
	if (key_is(k, g, KEY_CTR)) {
		*kind = TP_KIND_CLUSTER_TRAINING_RUNTIME;
		return TP_OK;
	}
	*kind = TP_KIND_UNKNOWN;
	char key[600];
	snprintf(key, sizeof(key), "%s%s%s", k, *g ? "." : "", g);
	if (tp_strict(opt) && !strcmp(g, OLD_GROUP))
		return tp_result_add(res, TP_FIELD_PLAIN, NULL, NULL,
				     "unsupported runtime: %s: use apiGroup \"%s\"", key,
				     TP_GROUP_TRAINER);
	return tp_result_add(res, TP_FIELD_PLAIN, NULL, NULL, "unsupported runtime: %s", key);
}

/* Strict: a TrainingRuntime of that name in other namespaces only. The
 * TrainJob cannot reach it; say where it is and what shares a runtime. */
static int scoping_hint(const tp_options *opt, const char *name, char *out, size_t n)
{
	out[0] = '\0';
	if (!tp_strict(opt))
		return TP_OK;
	const char *nss[MAX_NAMESPACES_SHOWN];
	size_t total = tp__namespaces_of(opt, TP_KIND_TRAINING_RUNTIME, name, nss,
					 MAX_NAMESPACES_SHOWN);
	if (total == 0)
		return TP_OK;
	size_t len = (size_t)snprintf(out, n, "; TrainingRuntime \"%s\" exists only in namespace%s ",
				      name, total > 1 ? "s" : "");
	size_t shown = total < MAX_NAMESPACES_SHOWN ? total : MAX_NAMESPACES_SHOWN;
	for (size_t i = 0; i < shown && len < n; i++)
		len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", nss[i]);
	if (total > shown && len < n)
		len += (size_t)snprintf(out + len, n - len, " and %zu more", total - shown);
	if (len < n)
		snprintf(out + len, n - len,
			 ": a TrainingRuntime is used only by TrainJobs in its own namespace; "
			 "use a ClusterTrainingRuntime to share a runtime across namespaces");
	return TP_OK;
}

/* Where a finding about the runtime reference is reported: upstream writes
 * Go's field name for a ClusterTrainingRuntime ("spec.RuntimeRef"), which the
 * kubeflow profile keeps; strict names the field as the user wrote it, as
 * the expansion does. */
static const char *ref_path(const tp_options *opt, tp_kind kind)
{
	return kind == TP_KIND_CLUSTER_TRAINING_RUNTIME && !tp_strict(opt) ? "spec.RuntimeRef"
									    : "spec.runtimeRef";
}

/* Step 2: the runtime must exist. The texts are upstream's, with the
 * Kubernetes client's NotFound error in front (ref_path: where).
 * A lookup nobody could answer decides nothing: upstream would deny with
 * the client's error in front of the same text; here it is an error answer
 * the API server may retry (tp_result_unavailable). */
static const cJSON *lookup_runtime(const tp_options *opt, const cJSON *job, tp_kind kind,
				   tp_result *res, int *rc)
{
	const cJSON *rt = NULL;
	int lrc = tp__runtime_lookup(opt, job, res, &rt);
	if (lrc == TP_OK)
		return rt;
	const char *name = ref_str(tp_get(job, "spec.runtimeRef"), "name", ""); /* for the finding */
	if (lrc != TP_ENOTFOUND) {
		*rc = lrc == TP_EUNAVAILABLE ? TP_OK : lrc; /* the error is in res */
		return NULL;
	}
	if (kind == TP_KIND_CLUSTER_TRAINING_RUNTIME) {
		*rc = tp_result_add(res, TP_FIELD_INVALID, ref_path(opt, kind),
				    tp_result_value(res, tp_get(job, "spec.runtimeRef")),
				    "clustertrainingruntimes.%s \"%s\" not found: specified "
				    "clusterTrainingRuntime must be created before the TrainJob is "
				    "created", TP_GROUP_TRAINER, name);
		return NULL;
	}
	char hint[1024];
	scoping_hint(opt, name, hint, sizeof(hint));
	*rc = tp_result_add(res, TP_FIELD_INVALID, "spec.runtimeRef",
			    tp_result_value(res, tp_get(job, "spec.runtimeRef")),
			    "trainingruntimes.%s \"%s\" not found: specified trainingRuntime must "
			    "be created before the TrainJob is created%s", TP_GROUP_TRAINER, name, hint);
	return NULL;
}

/* Step 2 on UPDATE as upstream's ValidateObjects does it since
 * kubeflow/trainer#3960: the runtime the TrainJob was built from, i.e. its
 * <trainjob>-runtime-snapshot ConfigMap, so that editing or deleting a runtime
 * never blocks resuming a TrainJob; the live runtime only when the snapshot
 * is not found (before the first reconcile). A snapshot that is there but
 * unusable is upstream's Internal error at the runtimeRef path
 * (spec.RuntimeRef for a ClusterTrainingRuntime, as upstream writes it); one
 * that could not be read is an error answer, never a verdict.
 *
 * Upstream's merged code also reads it on CREATE, where a new TrainJob (a
 * new uid) can only meet the leftover snapshot of a deleted namesake, not yet
 * garbage-collected: upstream then refuses the create with that Internal
 * error. CREATE here goes straight to the live runtime: no API call added to
 * every create, and the controller rebuilds the snapshot once the old one is
 * collected. *snapshot is the caller's to free. */
static const cJSON *resolve_runtime(const tp_options *opt, tp_operation op, const cJSON *job,
				    tp_kind kind, tp_result *res, cJSON **snapshot, int *rc)
{
	if (op != TP_OP_UPDATE)
		return lookup_runtime(opt, job, kind, res, rc);
	int src = tp__runtime_snapshot(opt, job, TP_FIELD_INTERNAL, ref_path(opt, kind), res,
				       snapshot);
	if (src == TP_OK)
		return *snapshot;
	if (src == TP_ENOTFOUND)
		return lookup_runtime(opt, job, kind, res, rc);
	*rc = src == TP_EUNAVAILABLE || src == TP_EINVAL ? TP_OK : src; /* the error is in res */
	return NULL;
}

/* Step 3: upstream warns for a deprecated ClusterTrainingRuntime; the guides
 * promise the same for a TrainingRuntime (strict). */
static int warn_deprecated(const tp_tj_ctx *ctx, tp_kind kind)
{
	const char *text;
	size_t len;
	bool planned = tp__rt_plan_deprecation(ctx->plan, kind, &text, &len);
	if (planned ? !text : !tp__runtime_is_deprecated(ctx->runtime))
		return TP_OK;
	if (kind == TP_KIND_TRAINING_RUNTIME && !tp_strict(ctx->opt))
		return TP_OK;
	/* the runtime's text, made when the store took it (pod/plan.c) */
	if (planned)
		return tp__result_warn_clean(ctx->res, text, len);
	return tp__warn_deprecated(ctx->res, "Referenced ", kind, tp_meta_name(ctx->runtime));
}

/* Strict: numNodes 0 is accepted by the schema, but the build clamps it. */
static int strict_trainer_rules(const tp_options *opt, const cJSON *trainer, tp_result *res)
{
	long long n;
	if (!tp_strict(opt) || !tp_get_int(trainer, "numNodes", &n) || n != 0)
		return TP_OK;
	return tp_result_warn(res, "spec.trainer.numNodes is 0, but the JobSet will still run one "
				   "node; set numNodes to 1 or more");
}

/* build_templates' answer when the merge error is already in res: the plugins
 * are skipped, validation is over. Positive, so no TP_E* code can mean it. */
#define MERGE_REPORTED 1

/* Step 4. Upstream drops a merge error and would then crash in the JobSet
 * plugin (§7); refusing the patches is the safe answer in both profiles.
 * The plugins only read the templates, so a runtime template that needs no
 * cleaning is read where it is, and without runtimePatches tmpl is base: no
 * copy at all for make bench's TrainJob review (53,267 -> 47,983
 * instructions, callgrind). */
static int build_templates(tp_tj_ctx *ctx)
{
	char err[512]; /* a string, not 512 zeros: the merge writes its error here */
	err[0] = '\0';
	int rc = TP_OK;
	if (!(ctx->base = tp__rt_plan_base(ctx->plan)) &&
	    !(ctx->base = tp__runtime_template_view(ctx->runtime))) {
		rc = tp__runtime_template(ctx->runtime, NULL, &ctx->owned[0], err, sizeof(err));
		ctx->base = ctx->owned[0];
	}
	const cJSON *patches = ctx->patches;
	if (rc == TP_OK && (!patches || cJSON_IsNull(patches))) {
		ctx->tmpl = ctx->base;
	} else if (rc == TP_OK) {
		rc = tp__runtime_template(ctx->runtime, ctx->job, &ctx->owned[1], err, sizeof(err));
		ctx->tmpl = ctx->owned[1];
	}
	ctx->jobs = tp_get_array(ctx->tmpl, "spec.replicatedJobs"); /* once for all */
	if (rc == TP_ENOMEM || rc == TP_OK)
		return rc;
	int arc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.runtimePatches", NULL,
				"cannot be applied to the runtime template of %s: %s",
				tp_meta_name(ctx->runtime), *err ? err : tp_strerror(rc));
	return arc ? arc : MERGE_REPORTED;
}

static int validate_with_runtime(tp_tj_ctx *ctx, tp_kind kind)
{
	int rc = warn_deprecated(ctx, kind);
	if (!rc)
		rc = strict_trainer_rules(ctx->opt, ctx->trainer, ctx->res);
	if (!rc)
		rc = build_templates(ctx);
	if (!rc)
		rc = tp__plugins_check_trainjob(ctx);
	if (!rc && tp_strict(ctx->opt)) /* the Jobs and Pods it becomes (pod/trainjob.c) */
		rc = tp__pod_check_trainjob(ctx);
	cJSON_Delete(ctx->owned[1]);
	cJSON_Delete(ctx->owned[0]);
	ctx->owned[0] = ctx->owned[1] = NULL;
	ctx->tmpl = ctx->base = ctx->jobs = NULL;
	return rc == MERGE_REPORTED ? TP_OK : rc;
}

/* Step 1, the CRD's schema or the built-in one. *too_many: it refused a list
 * past its maxItems (or a map past maxProperties). The API server does so
 * before any validating webhook sees the object, and every later step builds
 * on those lists: 100,000 containers in a runtimePatch were merged into the
 * template and then given a finding each by the plugins and the Pod checks,
 * a second of CPU and past the result's 64 MiB (a 413 on the server). So
 * that refusal is the verdict: the schema's findings in the API server's
 * order, and nothing after them. */
static int schema_step(const tp_options *opt, tp_operation op, const cJSON *obj,
		       const cJSON *old_obj, tp_result *res, bool *too_many)
{
	size_t from = tp_result_error_count(res);
	bool by_crd = false; /* the CRD's schema ran: the built-in one stands aside */
	int rc = tp__schema_layer(opt, op, obj, op == TP_OP_UPDATE ? old_obj : NULL, res, &by_crd);
	if (!rc && !opt->no_schema && !by_crd)
		rc = tp__trainjob_schema(opt, op, obj, old_obj, res);
	*too_many = false;
	for (size_t i = from; !rc && !*too_many && i < tp_result_error_count(res); i++)
		*too_many = tp_result_error_at(res, i)->type == TP_FIELD_TOO_MANY;
	return rc;
}

/* Whether v, or a member or item below it, goes past a maxItems or
 * maxProperties of s or of a schema s combines (the schema's walk reports
 * the errors of an allOf's branches, and of the first anyOf or oneOf branch
 * when none passes). It reads the limits alone, a superset of where
 * schema/check.c says "Too many". */
static bool past_limits(const tp_sch *s, const cJSON *v)
{
	if (!s)
		return false;
	for (size_t i = 0; i < s->nall_of; i++)
		if (past_limits(s->all_of[i], v))
			return true;
	for (size_t i = 0; i < s->nany_of; i++)
		if (past_limits(s->any_of[i], v))
			return true;
	for (size_t i = 0; i < s->none_of; i++)
		if (past_limits(s->one_of[i], v))
			return true;
	bool list = cJSON_IsArray(v);
	long long limit = list ? s->max_items : cJSON_IsObject(v) ? s->max_props : -1;
	if (limit >= 0 && cJSON_GetArraySize(v) > limit)
		return true;
	for (const cJSON *c = v->child; c; c = c->next)
		if (past_limits(list ? s->items : tp__sch_member(s, c->string), c))
			return true;
	return false;
}

/* The mutating route asks on every TrainJob: with the TrainJob CRD loaded,
 * only one past a limit gets the schema's walk and CEL rules, which would
 * take its review of deploy/samples' TrainJob from 54,303 to 89,372
 * instructions (58,081 with this look first); the built-in schema is cheap
 * enough to run as it is. */
static bool may_be_too_many(const tp_options *opt, const cJSON *obj)
{
	if (opt->no_schema)
		return false;
	const tp_crd_version *v = NULL;
	if (opt->crds && tp_kind_of(obj) == TP_KIND_TRAINJOB)
		v = tp__crds_find(opt->crds, TP_GROUP_TRAINER, "v1alpha1", "TrainJob");
	return v ? past_limits(v->root, obj) : true;
}

int tp_trainjob_too_many(const tp_options *opt, tp_operation op, const cJSON *obj,
			 const cJSON *old_obj, tp_result *res, bool *refused)
{
	static const tp_options defaults = { 0 };
	if (!obj || !res || !refused)
		return TP_EINVAL;
	*refused = false;
	if (!opt)
		opt = &defaults;
	if ((op != TP_OP_CREATE && op != TP_OP_UPDATE) || !may_be_too_many(opt, obj))
		return TP_OK;
	tp_result *schema = NULL;
	int rc = tp_result_new(&schema);
	if (!rc)
		rc = schema_step(opt, op, obj, old_obj, schema, refused);
	if (!rc && *refused)
		rc = tp_result_append(res, schema);
	tp_result_free(schema);
	return tp__deadline_status(rc);
}

int tp_validate_trainjob(const tp_options *opt, tp_operation op, const cJSON *obj,
			 const cJSON *old_obj, tp_result *res)
{
	static const tp_options defaults = { 0 };
	if (!obj || !res)
		return TP_EINVAL;
	if (!opt)
		opt = &defaults;
	if (op != TP_OP_CREATE && op != TP_OP_UPDATE)
		return TP_OK; /* upstream validates nothing on DELETE */
	bool too_many;
	int rc = schema_step(opt, op, obj, old_obj, res, &too_many);
	if (rc || too_many)
		return rc;
	tp_kind kind;
	if ((rc = check_registry_key(opt, obj, res, &kind)) || kind == TP_KIND_UNKNOWN)
		return rc;
	cJSON *snapshot = NULL;
	const cJSON *rt = resolve_runtime(opt, op, obj, kind, res, &snapshot, &rc);
	if (!rt)
		return rc;
	/* the TrainJob's spec read once, its members by one name each (a
	 * dotted lookup each, here and in the checks, cost 900 instructions of
	 * make bench's TrainJob review, callgrind) */
	const cJSON *spec = tp_member(obj, "spec");
	const cJSON *meta = tp_member(obj, "metadata");
	const char *name = tp__mstr(meta, "name"), *ns = tp__mstr(meta, "namespace");
	tp_tj_ctx ctx = {
		.opt = opt, .op = op, .job = obj, .old = op == TP_OP_UPDATE ? old_obj : NULL,
		.runtime = rt, .res = res, .plan = tp__rt_plan_of(rt),
		.trainer = tp__mobj(spec, "trainer"),
		.initializer = tp_member(spec, "initializer"),
		.patches = tp_member(spec, "runtimePatches"),
		.name = name ? name : "",
		.ns = ns ? ns : "",
	};
	/* a runtime the store does not hold (a snapshot, the API server's
	 * answer): its plan made for this request, read the same way */
	if (!ctx.plan && tp_strict(opt) && !(rc = tp__rt_plan_new(rt, &ctx.owned_plan)))
		ctx.plan = ctx.owned_plan;
	/* the runtime's policies as its plan found them */
	ctx.ml = ctx.plan ? tp__rt_plan_ml(ctx.plan) : tp_get_object(rt, "spec.mlPolicy");
	ctx.pgp = ctx.plan ? tp__rt_plan_pgp(ctx.plan) : tp_get_object(rt, "spec.podGroupPolicy");
	if (!rc)
		rc = validate_with_runtime(&ctx, kind);
	tp__rt_plan_free(ctx.owned_plan);
	cJSON_Delete(snapshot);
	return tp__deadline_status(rc);
}
