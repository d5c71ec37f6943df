/*
 * plugins/torch.c — mlPolicy.torch: torchrun's PET_* environment on the
 * trainer's `node` container and on the runtime's envInjection targets,
 * the rendezvous port, and the pod count (kubeflow-upstream.md §5.2).
 *
 * numProcPerNode is the TrainJob's, else the runtime's guides-era
 * mlPolicy.torch.numProcPerNode, else "auto". "auto" without a GPU (and the
 * guides' "cpu") becomes the node's CPU count rounded up, at least 1, since
 * torchrun would count the host's CPUs instead of the container's share;
 * with a GPU "auto" stays for torchrun to resolve.
 */
#include "policy/expand/expand.h"
#include "policy/plugins/torch_facts.h"

#include <stdio.h>
#include <string.h>

#define PORT_TEXT "29500"


/* PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK; then the master's address
 * and port unless TorchTune takes the rendezvous into its own command. */
static int pet_env(tp_expansion *x, cJSON *c, long long nodes, const char *nproc, bool master)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%lld", nodes);
	int rc;
	if ((rc = tp_x_env(c, "PET_NNODES", buf)) || (rc = tp_x_env(c, "PET_NPROC_PER_NODE", nproc)) ||
	    (rc = tp_x_env_field(c, "PET_NODE_RANK", TP_ENV_COMPLETION_INDEX)))
		return rc;
	if (!master)
		return TP_OK;
	char addr[600];
	if ((rc = tp_x_master_addr(x, 0, addr, sizeof(addr))))
		return tp_x_fail(x, "metadata.name", NULL, "is too long for a master address");
	if ((rc = tp_x_env(c, "PET_MASTER_ADDR", addr)))
		return rc;
	return tp_x_env(c, "PET_MASTER_PORT", PORT_TEXT);
}

/* Side containers the runtime names get the same rendezvous settings. */
static int env_injection(tp_expansion *x, const cJSON *torch, long long nodes, const char *nproc)
{
	const cJSON *t;
	cJSON_ArrayForEach(t, tp_get_array(torch, "envInjection.targets")) {
		tp_podset *ps = tp_x_podset_by_name(x, tp_get_str(t, "jobName"));
		const cJSON *names = ps ? tp_get_array(t, "containerNames") : NULL;
		const cJSON *name;
		cJSON_ArrayForEach(name, names) {
			cJSON *c = tp_x_any_container(ps, name->valuestring);
			int rc = c ? pet_env(x, c, nodes, nproc, true) : TP_OK;
			if (rc)
				return rc;
		}
	}
	return TP_OK;
}

static int enforce_ml_policy(tp_expansion *x)
{
	const cJSON *torch = tp_get_object(x->ml, "torch");
	if (!torch)
		return TP_OK;
	tp_podset *ps = tp_x_podset_by_ancestor(x, TP_ANCESTOR_TRAINER);
	long long nodes = ps ? ps->count : 1;
	if (tp_x_trainjob_num_nodes(x, &nodes) && ps)
		ps->count = nodes;
	const cJSON *resources = tp_x_resources_per_node(x);
	long long gpu = tp_gpu_count(resources);
	char nproc[64];
	tp_torch_nproc(x->trainer, torch, resources, gpu, nproc, sizeof(nproc));

	cJSON *node = x->trainer && ps ? tp_x_container(ps, TP_CONTAINER_NODE) : NULL;
	if (node) {
		bool tune = tp_torchtune_is_command(tp_get(x->trainer, "command"));
		int rc;
		if ((rc = pet_env(x, node, nodes, nproc, !tune)) ||
		    (tune && (rc = tp_torchtune_command(x, node, nodes, nproc, gpu))) ||
		    (rc = tp_x_port(node, TP_CONTAINER_PORT)))
			return rc;
	}
	return env_injection(x, torch, nodes, nproc);
}

const tp_plugin tp_plugin_torch = {
	.name = "torch",
	.enforce_ml_policy = enforce_ml_policy,
};
