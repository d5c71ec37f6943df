/*
 * plugins/torch_facts.c — the Torch and TorchTune facts the validator and the
 * expansion share (see plugins/torch_facts.h), so that what admission checks and
 * what the JobSet runs are decided by the same code.
 */
#include "policy/plugins/torch_facts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/core/quantity.h"

/* ------------------------------------------------------------ resources */

const cJSON *tp_trainer_resources(const cJSON *trainer, const cJSON *runtime)
{
	const cJSON *r = tp_get_object(trainer, "resourcesPerNode");
	if (r)
		return r;
	/* The runtime's own (read from the runtime, not from a template that
	 * resourcesPerNode may have been merged into already). */
	const cJSON *jobs = tp_get_array(runtime, "spec.template.spec.replicatedJobs");
	const cJSON *job;
	cJSON_ArrayForEach(job, jobs) {
		const char *anc = tp_meta_label(tp_get(job, "template"), TP_LABEL_ANCESTOR);
		const char *name = tp_get_str(job, "name");
		if (!(name && !strcmp(name, TP_JOB_NODE)) && !(anc && !strcmp(anc, TP_ANCESTOR_TRAINER)))
			continue;
		const cJSON *c = tp_find_named(tp_get(job, "template.spec.template.spec.containers"),
					       "name", TP_CONTAINER_NODE);
		if (c)
			return tp_get_object(c, "resources");
	}
	return NULL;
}

static bool contains_gpu(const char *s)
{
	for (; *s; s++)
		if (tolower((unsigned char)s[0]) == 'g' && tolower((unsigned char)s[1]) == 'p' &&
		    tolower((unsigned char)s[2]) == 'u')
			return true;
	return false;
}

static long long ceil_of(const cJSON *v)
{
	tp_quantity q;
	int64_t n;
	if (tp_quantity_from_json(v, &q) || tp_quantity_ceil(&q, &n) || n < 0)
		return 0;
	return n;
}

long long tp_gpu_count(const cJSON *resources)
{
	static const char *const lists[] = { "requests", "limits" };
	for (int i = 0; i < 2; i++) {
		const cJSON *r;
		cJSON_ArrayForEach(r, tp_get_object(resources, lists[i]))
			if (r->string && contains_gpu(r->string))
				return ceil_of(r);
	}
	return 0;
}

long long tp_cpu_count(const cJSON *resources)
{
	const cJSON *cpu = tp_get(resources, "requests.cpu");
	if (!cpu)
		cpu = tp_get(resources, "limits.cpu");
	return cpu ? ceil_of(cpu) : 0;
}

/* ------------------------------------------------------------ numProcPerNode */

void tp_torch_nproc(const cJSON *trainer, const cJSON *torch, const cJSON *resources,
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
		long long cpu = tp_cpu_count(resources);
		snprintf(out, n, "%lld", cpu < 1 ? 1 : cpu);
	}
}

/* ------------------------------------------------------------ TorchTune */

void tp_torchtune_model(const char *runtime_name, char *out, size_t n)
{
	out[0] = '\0';
	const char *a = runtime_name ? strchr(runtime_name, '-') : NULL;
	const char *b = a ? strchr(a + 1, '-') : NULL;
	if (!b || strchr(b + 1, '-') || (size_t)(b - a) + strlen(b) + 2 > n)
		return;
	size_t k = 0;
	for (const char *p = a + 1; p < b; p++)
		out[k++] = *p == '.' ? '_' : *p;
	out[k++] = '/';
	for (const char *p = b + 1; *p; p++)
		out[k++] = (char)toupper((unsigned char)*p);
	out[k] = '\0';
}

/* An arg "key=value" whose key contains part and whose value is "true" in
 * any case. */
static bool arg_true(const char *arg, const char *part)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		return false;
	size_t klen = (size_t)(eq - arg);
	const char *hit = strstr(arg, part);
	return hit && (size_t)(hit - arg) + strlen(part) <= klen && !strcasecmp(eq + 1, "true");
}

/* LoRA: an arg naming model.lora_attn_modules; QLoRA: model.quantize_base
 * true (any case) unless model.use_dora is true too. */
static void scan_args(const cJSON *args, tp_tune_recipe *t)
{
	t->lora = t->qlora = false;
	bool dora = false;
	const cJSON *a;
	cJSON_ArrayForEach(a, args) {
		if (!cJSON_IsString(a))
			continue;
		if (strstr(a->valuestring, "model.lora_attn_modules"))
			t->lora = true;
		if (arg_true(a->valuestring, "model.quantize_base"))
			t->qlora = true;
		if (arg_true(a->valuestring, "model.use_dora"))
			dora = true;
	}
	t->qlora = t->qlora && !dora;
}

void tp_torchtune_recipe(long long nodes, const char *nproc, long long gpu, const cJSON *args,
			 tp_tune_recipe *r)
{
	bool is_auto = !strcmp(nproc, "auto");
	char *end = NULL;
	long long np = strtoll(nproc, &end, 10);
	if (!*nproc || *end)
		np = -1;
	scan_args(args, r);
	bool lora = r->lora || r->qlora;
	if (nodes == 1 && (np == 1 || gpu == 1)) {
		r->recipe = lora ? "lora_finetune_single_device" : "full_finetune_single_device";
		r->suffix = r->qlora  ? "_qlora_single_device"
			    : r->lora ? "_lora_single_device"
				      : "_full_single_device";
	} else if (nodes == 1 && lora) {
		r->recipe = "lora_finetune_distributed";
		r->suffix = r->qlora ? "_qlora" : "_lora";
	} else {
		r->recipe = "full_finetune_distributed";
		r->suffix = nodes > 1 ? "_full_multinode" : "_full";
	}
	r->distributed = nodes > 1 || np > 1 || (is_auto && gpu > 1);
}
