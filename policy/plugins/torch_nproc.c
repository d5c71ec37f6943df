/*
 * plugins/torch_nproc.c — numProcPerNode as torchrun gets it, shared by the
 * torch expansion (torch.c) and TorchTune's rules and command (torchtune.c).
 *
 * numProcPerNode is the TrainJob's, else the runtime's guides-era
 * mlPolicy.torch.numProcPerNode, else "auto". "auto" without a GPU (and the
 * guides' "cpu") becomes the node's CPU count rounded up, at least 1, since
 * torchrun would count the host's CPUs instead of the container's share;
 * with a GPU "auto" stays for torchrun to resolve.
 */
#include "policy/plugins/torch.h"

#include <stdio.h>
#include <string.h>

void tp__torch_nproc(const cJSON *trainer, const cJSON *torch, const cJSON *resources,
		    long long gpu, char *out, size_t n)
{
	const cJSON *v = tp_get(trainer, "numProcPerNode");
	if (!v || cJSON_IsNull(v))
		v = tp_get(torch, "numProcPerNode");
	long long i;
	if (tp_json_is_int(v, &i))
		snprintf(out, n, "%lld", i);
	else if (cJSON_IsString(v))
		snprintf(out, n, "%s", v->valuestring);
	else
		snprintf(out, n, "auto");
	if ((!strcmp(out, "auto") && gpu == 0) || !strcmp(out, "cpu")) {
		long long cpu = tp__cpu_count(resources);
		snprintf(out, n, "%lld", cpu < 1 ? 1 : cpu);
	}
}
