/*
 * plugins/volcano.c — podGroupPolicy.volcano: every pod carries the
 * `scheduling.k8s.io/group-name: <tj>` annotation, and a Volcano PodGroup
 * `<tj>` (scheduling.volcano.sh/v1beta1) holds minMember, minResources, the
 * queue named by the JobSet's `scheduling.volcano.sh/queue-name` annotation,
 * the priorityClassName of the last Job that sets one, and the policy's
 * networkTopology.
 */
#include "policy/plugins/plugin.h"

#include <string.h>

#define PATH_LEN 320

/* ------------------------------------------------------ runtime checks */

static void check_name(tp_result *res, const cJSON *parent, const char *key, const char *base)
{
	char path[PATH_LEN];
	tp__rt_path(path, sizeof(path), base, key);
	const cJSON *v = tp__rt_typed(res, parent, key, path, TP_RT_STRING);
	const char *msg = v ? tp__check_dns1123_subdomain(v->valuestring) : NULL;
	if (msg)
		tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, v->valuestring),
			      "%s; use a lower-case name such as \"default\"", msg);
}

/* OME's guides document volcano's minMember, queue and priorityClassName. */
static void check_ome_volcano(tp_result *res, const cJSON *vo)
{
	const char *base = "spec.podGroupPolicy.volcano";
	long long n;
	if (tp__rt_int(res, vo, "minMember", base, true, &n))
		tp__rt_at_least(res, base, "minMember", n, 1, "set minMember to 1 or more");
	check_name(res, vo, "queue", base);
	check_name(res, vo, "priorityClassName", base);
}

static int check_pod_group_policy(const tp_rt_ctx *rc)
{
	const cJSON *vo = tp_get(rc->pg, "volcano");
	if (rc->f->ome && cJSON_IsObject(vo))
		check_ome_volcano(rc->res, vo);
	return TP_OK;
}

/* ------------------------------------------------------ TrainJob checks */

#define VOLCANO_QUEUE "scheduling.volcano.sh/queue-name"
#define PRIORITY_PATH "spec.templateSpec.priorityClassName"
#define STRICT_HINT                                                                        \
	"; create the PriorityClass first, or name an existing one (kubectl get "          \
	"priorityclasses)"

/* Each replicated job's priorityClassName (the template with the
 * TrainJob's patches) must name a PriorityClass, as the scheduler will look
 * for it. The two built-in classes need none, and upstream stops looking at
 * the first of them. A lookup nobody could answer decides nothing. */
static int check_priority_classes(tp_tj_ctx *ctx)
{
	const cJSON *rj;
	cJSON_ArrayForEach(rj, tp_get_array(ctx->tmpl, "spec.replicatedJobs")) {
		const char *pc = tp_get_str(tp__tj_pod_spec(rj), "priorityClassName");
		if (!pc)
			continue;
		if (!strcmp(pc, "system-cluster-critical") || !strcmp(pc, "system-node-critical"))
			return TP_OK;
		const cJSON *obj;
		char why[256];
		int rc = tp_lookup_get(ctx->opt, TP_KIND_PRIORITY_CLASS, NULL, pc, &obj, why,
				       sizeof(why));
		if (rc == TP_EUNAVAILABLE)
			rc = tp_result_lookup_failed(ctx->res, PRIORITY_PATH, TP_KIND_PRIORITY_CLASS,
						     pc, why);
		else if (rc == TP_ENOTFOUND)
			rc = tp_result_add(ctx->res, TP_FIELD_INVALID, PRIORITY_PATH,
					   tp_result_quote(ctx->res, pc),
					   "PriorityClass \"%s\" doesn't exist: "
					   "priorityclasses.scheduling.k8s.io \"%s\" not found%s",
					   pc, pc, tp_strict(ctx->opt) ? STRICT_HINT : "");
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int check_trainjob(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->pgp, "volcano"))
		return TP_OK;
	const cJSON *ann = tp_get_object(ctx->tmpl, "metadata.annotations");
	const cJSON *q = ann ? cJSON_GetObjectItemCaseSensitive(ann, VOLCANO_QUEUE) : NULL;
	if (cJSON_IsString(q) && !*q->valuestring) {
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID,
				       "spec.annotations[" VOLCANO_QUEUE "]", "\"\"",
				       "Volcano queue name must not be empty");
		if (rc)
			return rc;
	}
	return check_priority_classes(ctx);
}

/* ------------------------------------------------------ the expansion */

static const cJSON *policy(const tp_expansion *x)
{
	return tp_get_object(x->pod_group, "volcano");
}

static int enforce_pod_group_policy(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	return tp__x_pod_metadata(x, "annotations", TP_ANNOT_VOLCANO_GROUP, x->name);
}

static const char *priority_class(const tp_expansion *x)
{
	const char *last = NULL;
	for (size_t i = 0; i < x->npodsets; i++) {
		const char *p = tp_get_str(x->podsets[i].pod_spec, "priorityClassName");
		if (p && *p)
			last = p;
	}
	return last;
}

static int fill_spec(tp_expansion *x, cJSON *spec, long long members, cJSON *resources)
{
	const cJSON *annotations = tp_get_object(x->tmpl, "metadata.annotations");
	/* Annotation keys hold dots: looked up as one member, not a path. */
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(annotations, TP_ANNOT_VOLCANO_QUEUE);
	const char *queue = cJSON_IsString(q) ? q->valuestring : NULL;
	const char *prio = priority_class(x);
	const cJSON *topo = tp_get_object(policy(x), "networkTopology");
	/* Go's volcano PodGroupSpec order. */
	if (!cJSON_AddNumberToObject(spec, "minMember", (double)members) ||
	    (queue && !cJSON_AddStringToObject(spec, "queue", queue)) ||
	    (prio && !cJSON_AddStringToObject(spec, "priorityClassName", prio))) {
		cJSON_Delete(resources);
		return TP_ENOMEM;
	}
	/* always, an empty list too: upstream sets the map it summed */
	int rc = tp__x_set(spec, "minResources", resources);
	if (rc == TP_OK && topo)
		rc = tp__x_set(spec, "networkTopology", cJSON_Duplicate(topo, 1));
	return rc;
}

static int build(tp_expansion *x)
{
	if (!policy(x))
		return TP_OK;
	long long members = 0;
	cJSON *resources = NULL;
	int rc = tp__x_total_resources(x, &members, &resources);
	if (rc)
		return rc;
	cJSON *pg = tp__x_companion(x, "scheduling.volcano.sh/v1beta1", "PodGroup", x->name);
	cJSON *spec = pg ? cJSON_AddObjectToObject(pg, "spec") : NULL;
	if (!spec) {
		cJSON_Delete(resources);
		return TP_ENOMEM;
	}
	return fill_spec(x, spec, members, resources);
}

const tp_plugin tp__plugin_volcano = {
	.name = "volcano",
	.check_pod_group_policy = check_pod_group_policy,
	.check_trainjob = check_trainjob,
	.enforce_pod_group_policy = enforce_pod_group_policy,
	.build = build,
};
