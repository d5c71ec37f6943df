/*
 * admission/runtime_schema.c — what the API server checks of a runtime before any
 * webhook sees it: the CRD's OpenAPI schema (types, enums, minimums, list
 * sizes, required members) and its CEL rules, including the "Value is
 * immutable" transition rules on UPDATE.
 *
 * Only the runtime's own fields and the JobSet spec down to the pod
 * template's containers are walked; the pod spec below that is the API
 * server's business and too large to mirror here. Members the schema does
 * not know are ignored, as the API server prunes them, and JSON nulls count
 * as absent for the same reason.
 *
 * Messages are the API server's: type errors "<path> in body must be of
 * type <t>: \"<got>\"", CEL failures as Invalid with the rule's message.
 */
#include "policy/admission/runtime.h"
#include "policy/core/deadline.h"
#include "policy/core/index.h"

#include <stdio.h>
#include <string.h>

#define PATH_MAX_LEN 320
#define MAX_INT32 2147483647LL

static const cJSON *member(const cJSON *parent, const char *key)
{
	const cJSON *v = tp_member(parent, key);
	return cJSON_IsNull(v) ? NULL : v;
}

/* A member of the schema's type, its path built from base. */
static const cJSON *field(tp_result *res, const cJSON *parent, const char *base, const char *key,
			  tp__rt_type want)
{
	/* The path only when there is something to say: most fields are fine. */
	const cJSON *v = member(parent, key);
	if (!v || tp__rt_has_type(v, want))
		return v;
	char path[PATH_MAX_LEN];
	return tp__rt_typed(res, parent, key, tp__rt_path(path, sizeof(path), base, key), want);
}

static void required(tp_result *res, const cJSON *parent, const char *base, const char *key)
{
	char path[PATH_MAX_LEN];
	if (!member(parent, key))
		tp_result_add(res, TP_FIELD_REQUIRED, tp__rt_path(path, sizeof(path), base, key),
			      NULL, "%s", "");
}

/* A string member limited to the values listed (NULL-terminated). */
static void enum_field(tp_result *res, const cJSON *parent, const char *base, const char *key,
		       const char *const *values)
{
	const cJSON *v = field(res, parent, base, key, TP_RT_STRING);
	if (!v)
		return;
	for (size_t i = 0; values[i]; i++)
		if (!strcmp(v->valuestring, values[i]))
			return;
	/* The list only for the message: printing it on every call cost 1,750
	 * instructions a review. */
	char path[PATH_MAX_LEN], list[256] = "";
	size_t len = 0;
	for (size_t i = 0; values[i] && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s\"%s\"", i ? ", " : "",
					values[i]);
	tp_result_add(res, TP_FIELD_UNSUPPORTED, tp__rt_path(path, sizeof(path), base, key),
		      tp_result_quote(res, v->valuestring), "supported values: %s", list);
}

/* An int32 member; CEL "self >= 1" with the CRD's message when min_msg. */
static void int_field(tp_result *res, const cJSON *parent, const char *base, const char *key,
		      const char *min_msg)
{
	const cJSON *v = field(res, parent, base, key, TP_RT_INTEGER);
	long long n;
	if (!v || !tp_json_is_int(v, &n) || (n <= MAX_INT32 && n >= -MAX_INT32 - 1 &&
					       !(min_msg && n < 1)))
		return;
	char path[PATH_MAX_LEN];
	tp__rt_path(path, sizeof(path), base, key);
	if (n > MAX_INT32 || n < -MAX_INT32 - 1)
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_value(res, v),
			      "%s in body should be less than or equal to %lld", path, MAX_INT32);
	else if (min_msg && n < 1)
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_value(res, v), "%s", min_msg);
}

static void max_length(tp_result *res, const cJSON *v, const char *path, size_t max)
{
	if (cJSON_IsString(v) && strlen(v->valuestring) > max)
		tp_result_add(res, TP_FIELD_TOO_LONG, path, NULL, "may not be more than %zu bytes", max);
}

static bool item_count(tp_result *res, const cJSON *arr, const char *path, int min, int max)
{
	int n = cJSON_GetArraySize(arr);
	if (n > max) {
		tp_result_add(res, TP_FIELD_TOO_MANY, path, NULL, "must have at most %d items", max);
		return false;
	}
	if (n < min) {
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_value(res, arr),
			      "%s in body should have at least %d items", path, min);
		return false;
	}
	return true;
}

/* A map of strings (labels, annotations). */
static void string_map(tp_result *res, const cJSON *parent, const char *base, const char *key)
{
	char path[PATH_MAX_LEN];
	const cJSON *m = field(res, parent, base, key, TP_RT_OBJECT);
	for (const cJSON *v = m ? m->child : NULL; v; v = v->next)
		if (!cJSON_IsString(v) && !cJSON_IsNull(v)) /* the path for a message only */
			field(res, m, tp__rt_path(path, sizeof(path), base, key), v->string,
			      TP_RT_STRING);
}

struct repeat {
	tp_result *res;
	const char *path;
	const char *key;
};

static void report_repeat(void *ctx, const cJSON *item, int i)
{
	const struct repeat *r = ctx;
	char ip[PATH_MAX_LEN];
	tp__rt_index(ip, sizeof(ip), r->path, i);
	tp_result_add(r->res, TP_FIELD_DUPLICATE, ip, tp_result_value(r->res, tp_member(item, r->key)),
		      "%s", "");
}

/* x-kubernetes-list-type: map — each key that repeats, once, at its first
 * repetition, as the API server reports them; through a hash of the keys
 * (a scan of the earlier items for each item before: 0.52 s for 10,000
 * replicated jobs). */
static void list_map_keys(tp_result *res, const cJSON *arr, const char *path, const char *key)
{
	struct repeat r = { res, path, key };
	tp__index_first_repeats(arr, key, report_repeat, &r);
}

/* ------------------------------------------------------------ mlPolicy */

static void check_env_target(tp_result *res, const cJSON *t, const char *base)
{
	char path[PATH_MAX_LEN], ip[PATH_MAX_LEN];
	required(res, t, base, "jobName");
	required(res, t, base, "containerNames");
	const cJSON *job = field(res, t, base, "jobName", TP_RT_STRING);
	tp__rt_path(path, sizeof(path), base, "jobName");
	if (job && !*job->valuestring)
		tp_result_add(res, TP_FIELD_INVALID, path, "\"\"",
			      "%s in body should be at least 1 chars long", path);
	max_length(res, job, path, 253);

	const cJSON *names = field(res, t, base, "containerNames", TP_RT_ARRAY);
	tp__rt_path(path, sizeof(path), base, "containerNames");
	if (!names || !item_count(res, names, path, 1, 8))
		return;
	int i = 0;
	bool has_node = false;
	for (const cJSON *n = names->child; n; n = n->next, i++) {
		tp__rt_index(ip, sizeof(ip), path, i);
		if (!cJSON_IsString(n)) {
			tp_result_add(res, TP_FIELD_INVALID, ip, tp_result_quote(res, tp_json_type_name(n)),
				      "%s in body must be of type string: \"%s\"", ip, tp_json_type_name(n));
			continue;
		}
		max_length(res, n, ip, 63);
		has_node = has_node || !strcmp(n->valuestring, TP_CONTAINER_NODE);
		for (const cJSON *p = names->child; p != n; p = p->next)
			if (cJSON_IsString(p) && !strcmp(p->valuestring, n->valuestring)) {
				tp_result_add(res, TP_FIELD_DUPLICATE, ip,
					      tp_result_quote(res, n->valuestring), "%s", "");
				break;
			}
	}
	if (has_node)
		tp_result_add(res, TP_FIELD_INVALID, path, NULL,
			      "containerNames must not include the main node container because "
			      "PET_* envs are always injected into it");
}

static void check_torch(const tp__rt_flavor *f, tp_result *res, const cJSON *torch)
{
	const char *base = "spec.mlPolicy.torch";
	if (f->ome && !f->guides) {
		/* OME's types: numProcPerNode *string, elasticPolicy of int32s; the
		 * values are the strict profile's business. */
		field(res, torch, base, "numProcPerNode", TP_RT_STRING);
		const char *eb = "spec.mlPolicy.torch.elasticPolicy";
		const cJSON *ep = field(res, torch, base, "elasticPolicy", TP_RT_OBJECT);
		int_field(res, ep, eb, "minNodes", NULL);
		int_field(res, ep, eb, "maxNodes", NULL);
		int_field(res, ep, eb, "maxRestarts", NULL);
		field(res, ep, eb, "metrics", TP_RT_ARRAY);
	}
	if (f->ome)
		return; /* envInjection is Kubeflow's */
	const cJSON *env = field(res, torch, base, "envInjection", TP_RT_OBJECT);
	const char *tb = "spec.mlPolicy.torch.envInjection.targets";
	const cJSON *targets = field(res, env, "spec.mlPolicy.torch.envInjection", "targets",
				     TP_RT_ARRAY);
	if (!targets || !item_count(res, targets, tb, 0, 16))
		return;
	char ip[PATH_MAX_LEN];
	int i = 0;
	for (const cJSON *t = targets->child; t; t = t->next, i++) {
		tp__rt_index(ip, sizeof(ip), tb, i);
		if (!cJSON_IsObject(t)) {
			tp_result_add(res, TP_FIELD_INVALID, ip, tp_result_quote(res, tp_json_type_name(t)),
				      "%s in body must be of type object: \"%s\"", ip, tp_json_type_name(t));
			continue;
		}
		check_env_target(res, t, ip);
	}
	list_map_keys(res, targets, tb, "jobName");
}

static void check_mpi(const tp__rt_flavor *f, tp_result *res, const cJSON *mpi)
{
	static const char *const kubeflow_impls[] = { "OpenMPI", "", NULL };
	static const char *const ome_impls[] = { "OpenMPI", "Intel", "MPICH", NULL };
	const char *base = "spec.mlPolicy.mpi";
	char path[PATH_MAX_LEN];
	int_field(res, mpi, base, "numProcPerNode",
		  f->ome ? NULL : "NumProcPerNode in mpiPolicy must be >= 1");
	if (!f->guides)
		enum_field(res, mpi, base, "mpiImplementation", f->ome ? ome_impls : kubeflow_impls);
	else
		field(res, mpi, base, "mpiImplementation", TP_RT_STRING);
	const cJSON *ssh = field(res, mpi, base, "sshAuthMountPath", TP_RT_STRING);
	if (!f->ome)
		max_length(res, ssh, tp__rt_path(path, sizeof(path), base, "sshAuthMountPath"), 4096);
	field(res, mpi, base, "runLauncherAsNode", TP_RT_BOOLEAN);
}

/* CEL on mlPolicy: at most one framework policy. OME has no such rule. */
static void check_one_policy(const tp__rt_flavor *f, tp_result *res, const cJSON *ml)
{
	static const char *const kinds[] = { "torch", "mpi", "jax", "xgboost", "flux" };
	int n = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		n += member(ml, kinds[i]) != NULL;
	if (n > 1 && !f->ome)
		tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy", NULL,
			      "Only one of the policy can be configured");
}

static void check_ml_policy(const tp__rt_flavor *f, tp_result *res, const cJSON *spec)
{
	const char *base = "spec.mlPolicy";
	const cJSON *ml = field(res, spec, "spec", "mlPolicy", TP_RT_OBJECT);
	if (!ml)
		return;
	int_field(res, ml, base, "numNodes", NULL);
	check_one_policy(f, res, ml);
	const cJSON *torch = field(res, ml, base, "torch", TP_RT_OBJECT);
	if (torch)
		check_torch(f, res, torch);
	const cJSON *mpi = field(res, ml, base, "mpi", TP_RT_OBJECT);
	if (mpi)
		check_mpi(f, res, mpi);
	if (f->ome)
		return; /* jax, xgboost and flux are Kubeflow's */
	field(res, ml, base, "jax", TP_RT_OBJECT);
	field(res, ml, base, "xgboost", TP_RT_OBJECT);
	const cJSON *flux = field(res, ml, base, "flux", TP_RT_OBJECT);
	int_field(res, flux, "spec.mlPolicy.flux", "numProcPerNode",
		  "NumProcPerNode in fluxPolicy must be >= 1");
}

/* ------------------------------------------------------ podGroupPolicy */

static void check_pod_group_policy(const tp__rt_flavor *f, tp_result *res, const cJSON *spec)
{
	static const char *const modes[] = { "hard", "soft", NULL };
	const char *base = "spec.podGroupPolicy";
	const cJSON *pg = field(res, spec, "spec", "podGroupPolicy", TP_RT_OBJECT);
	if (!pg)
		return;
	const cJSON *co = field(res, pg, base, "coscheduling", TP_RT_OBJECT);
	int_field(res, co, "spec.podGroupPolicy.coscheduling", "scheduleTimeoutSeconds", NULL);
	if (f->ome && !f->guides)
		return; /* OME has no volcano: the member is pruned */
	const cJSON *vo = field(res, pg, base, "volcano", TP_RT_OBJECT);
	if (f->ome)
		return; /* the guides' volcano members are checked by admission/runtime_strict.c */
	const char *nb = "spec.podGroupPolicy.volcano.networkTopology";
	const cJSON *nt = field(res, vo, "spec.podGroupPolicy.volcano", "networkTopology",
				TP_RT_OBJECT);
	enum_field(res, nt, nb, "mode", modes);
	int_field(res, nt, nb, "highestTierAllowed", NULL);
}

/* ------------------------------------------------------------ template */

static bool object_item(tp_result *res, const cJSON *it, const char *path)
{
	if (cJSON_IsObject(it))
		return true;
	tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, tp_json_type_name(it)),
		      "%s in body must be of type object: \"%s\"", path, tp_json_type_name(it));
	return false;
}

static void check_depends_on(tp_result *res, const cJSON *job, const char *base)
{
	static const char *const statuses[] = { "Ready", "Complete", NULL };
	char path[PATH_MAX_LEN], ip[PATH_MAX_LEN];
	tp__rt_path(path, sizeof(path), base, "dependsOn");
	const cJSON *deps = tp__rt_typed(res, job, "dependsOn", path, TP_RT_ARRAY);
	if (!deps || !item_count(res, deps, path, 0, 5))
		return;
	int i = 0;
	for (const cJSON *d = deps->child; d; d = d->next, i++) {
		tp__rt_index(ip, sizeof(ip), path, i);
		if (!object_item(res, d, ip))
			continue;
		required(res, d, ip, "name");
		required(res, d, ip, "status");
		field(res, d, ip, "name", TP_RT_STRING);
		enum_field(res, d, ip, "status", statuses);
	}
	list_map_keys(res, deps, path, "name");
}

/* replicatedJobs[i].template: JobTemplateSpec down to the containers. */
static void check_job_template(tp_result *res, const cJSON *job, const char *base)
{
	char p[PATH_MAX_LEN], sp[PATH_MAX_LEN], tp[PATH_MAX_LEN], pp[PATH_MAX_LEN];
	tp__rt_path(p, sizeof(p), base, "template");
	const cJSON *tmpl = tp__rt_typed(res, job, "template", p, TP_RT_OBJECT);
	const cJSON *meta = field(res, tmpl, p, "metadata", TP_RT_OBJECT);
	string_map(res, meta, tp__rt_path(sp, sizeof(sp), p, "metadata"), "labels");
	string_map(res, meta, sp, "annotations");
	tp__rt_path(sp, sizeof(sp), p, "spec");
	const cJSON *jspec = tp__rt_typed(res, tmpl, "spec", sp, TP_RT_OBJECT);
	if (!jspec)
		return;
	required(res, jspec, sp, "template");
	tp__rt_path(tp, sizeof(tp), sp, "template");
	const cJSON *pod = tp__rt_typed(res, jspec, "template", tp, TP_RT_OBJECT);
	tp__rt_path(pp, sizeof(pp), tp, "spec");
	const cJSON *pspec = tp__rt_typed(res, pod, "spec", pp, TP_RT_OBJECT);
	if (!pspec)
		return;
	required(res, pspec, pp, "containers");
	char cp[PATH_MAX_LEN], ip[PATH_MAX_LEN];
	tp__rt_path(cp, sizeof(cp), pp, "containers");
	const cJSON *cs = tp__rt_typed(res, pspec, "containers", cp, TP_RT_ARRAY);
	int i = 0;
	for (const cJSON *c = cs ? cs->child : NULL; c; c = c->next, i++) {
		tp__rt_index(ip, sizeof(ip), cp, i);
		if (!object_item(res, c, ip))
			continue;
		required(res, c, ip, "name");
		field(res, c, ip, "name", TP_RT_STRING);
	}
	field(res, pspec, pp, "initContainers", TP_RT_ARRAY);
}

static void check_replicated_jobs(tp_result *res, const cJSON *js)
{
	const char *path = "spec.template.spec.replicatedJobs";
	const cJSON *jobs = tp__rt_typed(res, js, "replicatedJobs", path, TP_RT_ARRAY);
	char ip[PATH_MAX_LEN];
	int i = 0;
	/* A deadline that passes stops the walk; the caller's answer is then
	 * TP_ETIMEDOUT, whatever was found so far. */
	for (const cJSON *job = jobs ? jobs->child : NULL; job && !tp__tick(1);
	     job = job->next, i++) {
		tp__rt_index(ip, sizeof(ip), path, i);
		if (!object_item(res, job, ip))
			continue;
		required(res, job, ip, "name");
		required(res, job, ip, "template");
		field(res, job, ip, "name", TP_RT_STRING);
		field(res, job, ip, "groupName", TP_RT_STRING);
		int_field(res, job, ip, "replicas", NULL);
		check_depends_on(res, job, ip);
		check_job_template(res, job, ip);
	}
	list_map_keys(res, jobs, path, "name");
}

static void check_policies(tp_result *res, const cJSON *js)
{
	static const char *const orders[] = { "AnyOrder", "InOrder", NULL };
	static const char *const operators[] = { "All", "Any", NULL };
	static const char *const strategies[] = { "Recreate", "BlockingRecreate", "InPlaceRestart",
						  NULL };
	static const char *const actions[] = { "FailJobSet", "RestartJobSet",
					       "RestartJobSetAndIgnoreMaxRestarts", "RestartJob",
					       "RestartJobAndIgnoreMaxRestarts", NULL };
	const char *base = "spec.template.spec";
	const cJSON *sp = field(res, js, base, "startupPolicy", TP_RT_OBJECT);
	if (sp) {
		required(res, sp, "spec.template.spec.startupPolicy", "startupPolicyOrder");
		enum_field(res, sp, "spec.template.spec.startupPolicy", "startupPolicyOrder", orders);
	}
	const cJSON *su = field(res, js, base, "successPolicy", TP_RT_OBJECT);
	if (su) {
		required(res, su, "spec.template.spec.successPolicy", "operator");
		enum_field(res, su, "spec.template.spec.successPolicy", "operator", operators);
		field(res, su, "spec.template.spec.successPolicy", "targetReplicatedJobs", TP_RT_ARRAY);
	}
	const char *fb = "spec.template.spec.failurePolicy";
	const cJSON *fp = field(res, js, base, "failurePolicy", TP_RT_OBJECT);
	int_field(res, fp, fb, "maxRestarts", NULL);
	enum_field(res, fp, fb, "restartStrategy", strategies);
	const cJSON *rules = field(res, fp, fb, "rules", TP_RT_ARRAY);
	char ip[PATH_MAX_LEN];
	int i = 0;
	for (const cJSON *r = rules ? rules->child : NULL; r; r = r->next, i++) {
		tp__rt_pathf(ip, sizeof(ip), "%s.rules[%d]", fb, i);
		if (!object_item(res, r, ip))
			continue;
		required(res, r, ip, "action");
		enum_field(res, r, ip, "action", actions);
		field(res, r, ip, "name", TP_RT_STRING);
	}
	const cJSON *net = field(res, js, base, "network", TP_RT_OBJECT);
	field(res, net, "spec.template.spec.network", "enableDNSHostnames", TP_RT_BOOLEAN);
	field(res, net, "spec.template.spec.network", "publishNotReadyAddresses", TP_RT_BOOLEAN);
	field(res, net, "spec.template.spec.network", "subdomain", TP_RT_STRING);
	field(res, js, base, "suspend", TP_RT_BOOLEAN);
	field(res, js, base, "managedBy", TP_RT_STRING);
	const cJSON *co = field(res, js, base, "coordinator", TP_RT_OBJECT);
	if (co)
		required(res, co, "spec.template.spec.coordinator", "replicatedJob");
}

/* volumeClaimPolicies: sizes, and the CEL rule against namespaced templates. */
static void check_volume_claim_policies(tp_result *res, const cJSON *js)
{
	const char *path = "spec.template.spec.volumeClaimPolicies";
	const cJSON *vcps = tp__rt_typed(res, js, "volumeClaimPolicies", path, TP_RT_ARRAY);
	if (!vcps || !item_count(res, vcps, path, 0, 50))
		return;
	char ip[PATH_MAX_LEN], tp[PATH_MAX_LEN];
	int i = 0;
	for (const cJSON *p = vcps->child; p; p = p->next, i++) {
		tp__rt_index(ip, sizeof(ip), path, i);
		if (!object_item(res, p, ip))
			continue;
		const cJSON *ts = tp__rt_typed(res, p, "templates", tp__rt_path(tp, sizeof(tp), ip,
							       "templates"), TP_RT_ARRAY);
		if (!ts || !item_count(res, ts, tp, 0, 50))
			continue;
		bool namespaced = false;
		for (const cJSON *t = ts->child; t; t = t->next) {
			const char *ns = tp_get_str(t, "metadata.namespace");
			namespaced = namespaced || (ns && *ns);
		}
		if (namespaced)
			tp_result_add(res, TP_FIELD_INVALID, ip, NULL,
				      "namespace cannot be set for VolumeClaimPolicies templates");
	}
}

/* CEL on the JobSet spec: InOrder startup and dependsOn exclude each other. */
static void check_startup_vs_depends(tp_result *res, const cJSON *js)
{
	const char *order = tp_get_str(js, "startupPolicy.startupPolicyOrder");
	if (!order || strcmp(order, "InOrder"))
		return;
	const cJSON *jobs = tp_get_array(js, "replicatedJobs");
	for (const cJSON *job = jobs ? jobs->child : NULL; job; job = job->next)
		if (member(job, "dependsOn")) {
			tp_result_add(res, TP_FIELD_INVALID, "spec.template.spec", NULL,
				      "StartupPolicy and DependsOn APIs are mutually exclusive");
			return;
		}
}

static void check_template(const tp__rt_flavor *f, tp_result *res, const cJSON *spec)
{
	const cJSON *tmpl = field(res, spec, "spec", "template", TP_RT_OBJECT);
	if (!tmpl)
		return;
	if (!tmpl->child && !f->ome)
		tp_result_add(res, TP_FIELD_INVALID, "spec.template", tp_result_value(res, tmpl),
			      "spec.template in body should have at least 1 properties");
	const cJSON *meta = field(res, tmpl, "spec.template", "metadata", TP_RT_OBJECT);
	string_map(res, meta, "spec.template.metadata", "labels");
	string_map(res, meta, "spec.template.metadata", "annotations");
	const cJSON *js = field(res, tmpl, "spec.template", "spec", TP_RT_OBJECT);
	if (!js)
		return;
	check_replicated_jobs(res, js);
	check_policies(res, js);
	check_volume_claim_policies(res, js);
	if (!f->ome)
		check_startup_vs_depends(res, js);
}

/* ------------------------------------------------------------ UPDATE */

/* CEL "self == oldSelf": a transition rule, so it holds only when the
 * field is there in both the old and the new object. */
static void immutable(tp_result *res, const cJSON *now, const cJSON *old, const char *path)
{
	if (now && old && !cJSON_IsNull(now) && !cJSON_IsNull(old) && !tp_json_equal(now, old))
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, tp_json_type_name(now)),
			      "Value is immutable");
}

static void check_immutable(tp_result *res, const cJSON *obj, const cJSON *old_obj)
{
	static const char *const fields[] = { "failurePolicy", "network", "startupPolicy",
					      "successPolicy", "volumeClaimPolicies" };
	const cJSON *js = tp_get_object(obj, "spec.template.spec");
	const cJSON *old = tp_get_object(old_obj, "spec.template.spec");
	if (!js || !old)
		return;
	char path[PATH_MAX_LEN];
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		immutable(res, member(js, fields[i]), member(old, fields[i]),
			  tp__rt_path(path, sizeof(path), "spec.template.spec", fields[i]));
	/* replicatedJobs is a list-map: an item's old self is the one of its
	 * name, found through an index of the old jobs (one that could not be
	 * made scans: the same answers) */
	const cJSON *jobs = tp_get_array(js, "replicatedJobs");
	tp_index old_jobs;
	tp__index_items(&old_jobs, tp_get_array(old, "replicatedJobs"), "name");
	int i = 0;
	for (const cJSON *job = jobs ? jobs->child : NULL; job; job = job->next, i++) {
		const char *name = tp_get_str(job, "name");
		const cJSON *prev = name ? tp__index_named(&old_jobs, name) : NULL;
		tp__rt_pathf(path, sizeof(path), "spec.template.spec.replicatedJobs[%d].dependsOn", i);
		immutable(res, member(job, "dependsOn"), member(prev, "dependsOn"), path);
	}
	tp__index_free(&old_jobs);
}

/* ------------------------------------------------------------ entry */

int tp__runtime_schema(const tp__rt_flavor *f, tp_operation op, const cJSON *obj,
		       const cJSON *old_obj, tp_result *res)
{
	string_map(res, tp_get_object(obj, "metadata"), "metadata", "labels");
	const cJSON *spec = field(res, obj, "", "spec", TP_RT_OBJECT);
	if (spec) {
		if (!spec->child && !f->ome)
			tp_result_add(res, TP_FIELD_INVALID, "spec", tp_result_value(res, spec),
				      "spec in body should have at least 1 properties");
		check_ml_policy(f, res, spec);
		check_pod_group_policy(f, res, spec);
		check_template(f, res, spec);
	}
	if (op == TP_OP_UPDATE && !f->ome)
		check_immutable(res, obj, old_obj);
	return TP_OK;
}
