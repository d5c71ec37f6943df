/*
 * admission/runtime_strict_ml.c — mlPolicy and podGroupPolicy as the runtime guides
 * define them (strict profile, RULES.md "MLPolicy, as the guides define it"
 * and "podGroupPolicy"). The guides document more than upstream's schema
 * accepts (torch.numProcPerNode, torch.elasticPolicy, Intel and MPICH, OME's
 * volcano members): those are checked here, types included, since the schema
 * layer does not know them.
 */
#include "policy/admission/runtime.h"

#include <stdio.h>
#include <string.h>

#define PATH_LEN 320
#define MAX_INT32 2147483647LL

/* An integer member: true with *n when it is one. Another type is reported
 * when asked to (when the schema layer does not speak for the member). */
static bool int_member(tp_result *res, const cJSON *parent, const char *key, const char *base,
		       bool report_type, long long *n)
{
	char path[PATH_LEN];
	tp__rt_path(path, sizeof(path), base, key);
	const cJSON *v = report_type ? tp__rt_typed(res, parent, key, path, TP_RT_INTEGER)
				     : tp_get(parent, key);
	return v && tp_json_is_int(v, n);
}

static void at_least(tp_result *res, const char *base, const char *key, long long n,
		     long long min, const char *hint)
{
	char path[PATH_LEN], value[32];
	if (n >= min)
		return;
	tp__rt_pathf(value, sizeof(value), "%lld", n);
	tp_result_add(res, TP_FIELD_INVALID, tp__rt_path(path, sizeof(path), base, key), value,
		      "must be greater than or equal to %lld; %s", min, hint);
}

/* ------------------------------------------------------ torch */

/* "auto", "cpu", "gpu", or an integer >= 1 given as a number or digits. */
static bool nproc_ok(const cJSON *v)
{
	long long n;
	if (tp_json_is_int(v, &n))
		return n >= 1 && n <= MAX_INT32;
	if (!cJSON_IsString(v))
		return false;
	const char *s = v->valuestring;
	if (!strcmp(s, "auto") || !strcmp(s, "cpu") || !strcmp(s, "gpu"))
		return true;
	if (!*s || strlen(s) > 10)
		return false;
	n = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		n = n * 10 + (*p - '0');
	}
	return n >= 1 && n <= MAX_INT32;
}

static void check_nproc(tp_result *res, const cJSON *torch)
{
	const cJSON *v = tp_get(torch, "numProcPerNode");
	if (!v || cJSON_IsNull(v) || nproc_ok(v))
		return;
	tp_result_add(res, TP_FIELD_UNSUPPORTED, "spec.mlPolicy.torch.numProcPerNode",
		      tp_result_value(res, v),
		      "supported values: \"auto\", \"cpu\", \"gpu\", or an integer >= 1 such as 4");
}

/* autoscaling/v2 MetricSpec: a known type and the member that type names. */
static void check_metric(tp_result *res, const cJSON *m, const char *base)
{
	static const char *const types[] = { "Resource", "Pods", "Object", "External",
					     "ContainerResource" };
	static const char *const members[] = { "resource", "pods", "object", "external",
					       "containerResource" };
	char path[PATH_LEN];
	if (!cJSON_IsObject(m)) {
		tp_result_add(res, TP_FIELD_INVALID, base, tp_result_value(res, m),
			      "must be a MetricSpec object; write {type: Resource, resource: {...}}");
		return;
	}
	const char *type = tp_get_str(m, "type");
	tp__rt_path(path, sizeof(path), base, "type");
	if (!type) {
		tp_result_add(res, TP_FIELD_REQUIRED, path, NULL,
			      "set type to Resource, Pods, Object, External or ContainerResource");
		return;
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(type, types[i]))
			continue;
		if (!tp_get_object(m, members[i]))
			tp_result_add(res, TP_FIELD_REQUIRED, tp__rt_path(path, sizeof(path), base,
									  members[i]),
				      NULL, "a metric of type %s needs its %s member", type, members[i]);
		return;
	}
	tp_result_add(res, TP_FIELD_UNSUPPORTED, path, tp_result_quote(res, type),
		      "supported values: \"Resource\", \"Pods\", \"Object\", \"External\", "
		      "\"ContainerResource\"");
}

static void check_elastic(tp_result *res, const cJSON *ml, const cJSON *ep)
{
	const char *base = "spec.mlPolicy.torch.elasticPolicy";
	long long min = 0, max = 0, restarts = 0, nodes = 0;
	bool has_min = int_member(res, ep, "minNodes", base, true, &min);
	bool has_max = int_member(res, ep, "maxNodes", base, true, &max);
	if (int_member(res, ep, "maxRestarts", base, true, &restarts))
		at_least(res, base, "maxRestarts", restarts, 0, "set maxRestarts to 0 or more");
	if (has_min)
		at_least(res, base, "minNodes", min, 1, "set minNodes to 1 or more");
	if (has_min && has_max && max < min)
		tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy.torch.elasticPolicy.maxNodes",
			      tp_result_value(res, tp_get(ep, "maxNodes")),
			      "must be greater than or equal to minNodes (%lld); raise maxNodes or "
			      "lower minNodes", min);
	if (tp_get_int(ml, "numNodes", &nodes) &&
	    ((has_min && nodes < min) || (has_max && nodes > max)))
		tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy.numNodes",
			      tp_result_value(res, tp_get(ml, "numNodes")),
			      "must lie within elasticPolicy's [minNodes, maxNodes]; change numNodes "
			      "or leave it out");
	char path[PATH_LEN];
	const cJSON *metrics = tp__rt_typed(res, ep, "metrics",
					    "spec.mlPolicy.torch.elasticPolicy.metrics", TP_RT_ARRAY);
	int i = 0;
	for (const cJSON *m = metrics ? metrics->child : NULL; m; m = m->next, i++) {
		tp__rt_pathf(path, sizeof(path), "%s.metrics[%d]", base, i);
		check_metric(res, m, path);
	}
}

static void check_torch(tp_result *res, const cJSON *ml, const cJSON *torch)
{
	check_nproc(res, torch);
	const cJSON *ep = tp__rt_typed(res, torch, "elasticPolicy",
				       "spec.mlPolicy.torch.elasticPolicy", TP_RT_OBJECT);
	if (ep)
		check_elastic(res, ml, ep);
}

/* ------------------------------------------------------ mpi */

static void check_mpi(const tp__rt_flavor *f, tp_result *res, const cJSON *mpi)
{
	static const char *const impls[] = { "OpenMPI", "Intel", "MPICH", NULL };
	const char *base = "spec.mlPolicy.mpi";
	long long n;
	/* for the trainer group the CRD's CEL rule says it, with its own words */
	if ((f->ome || !f->schema) && int_member(res, mpi, "numProcPerNode", base, !f->schema, &n)) {
		if (f->ome)
			at_least(res, base, "numProcPerNode", n, 1, "set numProcPerNode to 1 or more");
		else if (n < 1)
			tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy.mpi.numProcPerNode",
				      "\"integer\"", "NumProcPerNode in mpiPolicy must be >= 1");
	}
	const char *impl = tp_get_str(mpi, "mpiImplementation");
	if (impl && (*impl || f->ome)) {
		bool known = false;
		for (size_t i = 0; impls[i]; i++)
			known = known || !strcmp(impl, impls[i]);
		if (!known)
			tp_result_add(res, TP_FIELD_UNSUPPORTED, "spec.mlPolicy.mpi.mpiImplementation",
				      tp_result_quote(res, impl),
				      "supported values: \"OpenMPI\", \"Intel\", \"MPICH\"");
		else if (strcmp(impl, "OpenMPI"))
			tp_result_warn(res, "mlPolicy.mpi.mpiImplementation %s: the controller builds "
				       "OpenMPI hostfiles only", impl);
	}
	const char *ssh = tp_get_str(mpi, "sshAuthMountPath");
	if (ssh && ssh[0] != '/')
		tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy.mpi.sshAuthMountPath",
			      tp_result_quote(res, ssh),
			      "must be an absolute path; write it from the root, e.g. \"/root/.ssh\"");
	if (!f->schema)
		tp__rt_typed(res, mpi, "runLauncherAsNode", "spec.mlPolicy.mpi.runLauncherAsNode",
			     TP_RT_BOOLEAN);
}

/* ------------------------------------------------------ entry points */

int tp__runtime_strict_ml(const tp__rt_flavor *f, tp_result *res, const cJSON *ml)
{
	static const char *const kinds[] = { "torch", "mpi", "jax", "xgboost", "flux" };
	long long n;
	if (int_member(res, ml, "numNodes", "spec.mlPolicy", !f->schema, &n))
		at_least(res, "spec.mlPolicy", "numNodes", n, 1,
			 "set numNodes to 1 or more, or leave it out");
	/* the trainer group's CEL rule says this itself when the schema layer ran */
	if (f->ome || !f->schema) {
		int count = 0;
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			const cJSON *v = tp_get(ml, kinds[i]);
			count += v && !cJSON_IsNull(v);
		}
		if (count > 1)
			tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy", "\"object\"",
				      "Only one of the policy can be configured; keep a single one "
				      "of torch, mpi, jax, xgboost, flux");
	}
	const cJSON *torch = tp_get_object(ml, "torch");
	if (torch)
		check_torch(res, ml, torch);
	const cJSON *mpi = tp_get_object(ml, "mpi");
	if (mpi)
		check_mpi(f, res, mpi);
	return TP_OK;
}

static void check_name(tp_result *res, const cJSON *parent, const char *key, const char *base)
{
	char path[PATH_LEN];
	tp__rt_path(path, sizeof(path), base, key);
	const cJSON *v = tp__rt_typed(res, parent, key, path, TP_RT_STRING);
	const char *msg = v ? tp_check_dns1123_subdomain(v->valuestring) : NULL;
	if (msg)
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, v->valuestring),
			      "%s; use a lower-case name such as \"default\"", msg);
}

/* OME's guides document volcano's minMember, queue and priorityClassName. */
static void check_ome_volcano(tp_result *res, const cJSON *vo)
{
	const char *base = "spec.podGroupPolicy.volcano";
	long long n;
	if (int_member(res, vo, "minMember", base, true, &n))
		at_least(res, base, "minMember", n, 1, "set minMember to 1 or more");
	check_name(res, vo, "queue", base);
	check_name(res, vo, "priorityClassName", base);
}

int tp__runtime_strict_pod_group(const tp__rt_flavor *f, tp_result *res, const cJSON *pg)
{
	const char *base = "spec.podGroupPolicy.coscheduling";
	const cJSON *co = tp_get(pg, "coscheduling"), *vo = tp_get(pg, "volcano");
	if (co && !cJSON_IsNull(co) && vo && !cJSON_IsNull(vo))
		tp_result_add(res, TP_FIELD_INVALID, "spec.podGroupPolicy", "\"object\"",
			      "only one of coscheduling and volcano may be set; keep one of them");
	long long n;
	if (int_member(res, co, "scheduleTimeoutSeconds", base, !f->schema, &n))
		at_least(res, base, "scheduleTimeoutSeconds", n, 1,
			 "set scheduleTimeoutSeconds to 1 or more (default 60)");
	if (f->ome && cJSON_IsObject(vo))
		check_ome_volcano(res, vo);
	return TP_OK;
}
