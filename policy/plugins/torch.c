/*
 * plugins/torch.c — mlPolicy.torch, every phase: the guides' runtime rules
 * (strict profile), upstream's TrainJob checks (envInjection targets,
 * reserved PET_* envs; TorchTune's in torchtune.c), and the expansion:
 * torchrun's PET_* environment on the trainer's `node` container and on the
 * runtime's envInjection targets, the rendezvous port, and the pod count
 * (docs/kubeflow-upstream.md §5.2).
 * numProcPerNode's resolution is in torch_nproc.c, below both this file and
 * torchtune.c.
 */
#include "policy/plugins/torch.h"

#include <stdio.h>
#include <string.h>

#define PATH_LEN 320
#define MAX_INT32 2147483647LL

/* ------------------------------------------------------ runtime checks */

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
	bool has_min = tp__rt_int(res, ep, "minNodes", base, true, &min);
	bool has_max = tp__rt_int(res, ep, "maxNodes", base, true, &max);
	if (tp__rt_int(res, ep, "maxRestarts", base, true, &restarts))
		tp__rt_at_least(res, base, "maxRestarts", restarts, 0, "set maxRestarts to 0 or more");
	if (has_min)
		tp__rt_at_least(res, base, "minNodes", min, 1, "set minNodes to 1 or more");
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

static int check_ml_policy(const tp_rt_ctx *rc)
{
	const cJSON *torch = tp_get_object(rc->ml, "torch");
	if (torch)
		check_torch(rc->res, rc->ml, torch);
	return TP_OK;
}

/* ------------------------------------------------------ TrainJob checks
 * (upstream plugins/torch/torch.go Validate; TorchTune's in torchtune.c) */

static const char *const pet_reserved[] = {
	"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT",
};

/* A target container is looked for among containers, then initContainers,
 * of the first job of its jobName (one table for all the targets). */
static int check_target(tp_tj_ctx *ctx, const tp__job_containers *jc, const cJSON *target)
{
	const char *job = tp_get_str(target, "jobName");
	job = job ? job : "";
	const cJSON *names = tp_get_array(target, "containerNames");
	for (const cJSON *n = names ? names->child : NULL; n; n = n->next) {
		const char *c = cJSON_IsString(n) ? n->valuestring : "";
		if (tp__job_containers_get(jc, job, c))
			continue;
		/* upstream shows the target as the bad value */
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.runtimeRef",
				       tp_result_value(ctx->res, target),
				       "envInjection target podSet \"%s\" container \"%s\" not found in "
				       "runtime template", job, c);
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int check_targets(tp_tj_ctx *ctx)
{
	const cJSON *targets =
		tp_get_array(ctx->ml, "torch.envInjection.targets");
	if (!targets || !targets->child)
		return TP_OK;
	tp__job_containers jc;
	int rc = tp__job_containers_init(&jc, tp_get_array(ctx->tmpl, "spec.replicatedJobs"));
	for (const cJSON *t = targets->child; t && !rc; t = t->next)
		rc = check_target(ctx, &jc, t);
	tp__job_containers_free(&jc);
	return rc;
}

static int check_trainjob(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->ml, "torch"))
		return TP_OK;
	int rc = check_targets(ctx);
	if (!rc)
		rc = tp__tj_reserved_envs(ctx, pet_reserved,
					  sizeof(pet_reserved) / sizeof(pet_reserved[0]));
	if (!rc && tp__torchtune_is_command(tp_get_array(ctx->trainer, "command")))
		rc = tp__torchtune_check(ctx);
	return rc;
}

/* ------------------------------------------------------ the expansion */

#define PORT_TEXT "29500"

/* PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK; then the master's address
 * and port unless TorchTune takes the rendezvous into its own command. */
static int pet_env(tp_expansion *x, cJSON *c, long long nodes, const char *nproc, bool master)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%lld", nodes);
	int rc;
	if ((rc = tp__x_env(c, "PET_NNODES", buf)) || (rc = tp__x_env(c, "PET_NPROC_PER_NODE", nproc)) ||
	    (rc = tp__x_env_field(c, "PET_NODE_RANK", TP_ENV_COMPLETION_INDEX)))
		return rc;
	if (!master)
		return TP_OK;
	char addr[600];
	if ((rc = tp__x_master_addr(x, 0, addr, sizeof(addr))))
		return tp__x_fail(x, "metadata.name", NULL, "is too long for a master address");
	if ((rc = tp__x_env(c, "PET_MASTER_ADDR", addr)))
		return rc;
	return tp__x_env(c, "PET_MASTER_PORT", PORT_TEXT);
}

/* Side containers the runtime names get the same rendezvous settings,
 * found through one table of the template's containers. A target that is
 * not there stops the build, as upstream's EnforceMLPolicy returns an error
 * (its validator refuses such TrainJobs first). */
static int inject(tp_expansion *x, const tp__job_containers *jc, const cJSON *targets,
		  long long nodes, const char *nproc)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, targets) {
		const char *job = tp_get_str(t, "jobName");
		const cJSON *name;
		cJSON_ArrayForEach(name, tp_get_array(t, "containerNames")) {
			cJSON *c = tp__job_containers_get(jc, job, name->valuestring);
			if (!c) {
				char d[600];
				snprintf(d, sizeof(d), "envInjection target podSet \"%s\" container \"%s\" "
					 "not found in runtime template", job ? job : "", name->valuestring);
				return tp__x_fail(x, "spec.runtimeRef", NULL, d);
			}
			int rc = pet_env(x, c, nodes, nproc, true);
			if (rc)
				return rc;
		}
	}
	return TP_OK;
}

static int env_injection(tp_expansion *x, const cJSON *torch, long long nodes, const char *nproc)
{
	const cJSON *targets = tp_get_array(torch, "envInjection.targets");
	if (!targets || !targets->child)
		return TP_OK;
	tp__job_containers jc;
	int rc = tp__job_containers_init(&jc, tp_get_array(x->tmpl, "spec.replicatedJobs"));
	if (!rc)
		rc = inject(x, &jc, targets, nodes, nproc);
	tp__job_containers_free(&jc);
	return rc;
}

static int enforce_ml_policy(tp_expansion *x)
{
	const cJSON *torch = tp_get_object(x->ml, "torch");
	if (!torch)
		return TP_OK;
	tp_podset *ps = tp__x_podset_by_ancestor(x, TP_ANCESTOR_TRAINER);
	long long nodes = ps ? ps->count : 1;
	if (tp__x_trainjob_num_nodes(x, &nodes) && ps)
		ps->count = nodes;
	const cJSON *resources = tp__x_resources_per_node(x);
	long long gpu = tp__gpu_count(resources);
	char nproc[64];
	tp__torch_nproc(x->trainer, torch, resources, gpu, nproc, sizeof(nproc));

	cJSON *node = x->trainer && ps ? tp__x_container(ps, TP_CONTAINER_NODE) : NULL;
	if (node) {
		bool tune = tp__torchtune_is_command(tp_get(x->trainer, "command"));
		int rc;
		if ((rc = pet_env(x, node, nodes, nproc, !tune)) ||
		    (tune && (rc = tp__torchtune_command(x, node, nodes, nproc, gpu))) ||
		    (rc = tp__x_port(node, TP_CONTAINER_PORT)))
			return rc;
	}
	return env_injection(x, torch, nodes, nproc);
}

const tp_plugin tp__plugin_torch = {
	.name = "torch",
	.check_ml_policy = check_ml_policy,
	.check_trainjob = check_trainjob,
	.enforce_ml_policy = enforce_ml_policy,
};
