/*
 * plugins/pod_parts.c — what the plugins' pod_parts phase shares
 * (plugin.h): the check's copy of a replicated job, made when a plugin
 * first writes into it, and the origins of the findings in the parts.
 */
#include "policy/plugins/plugin.h"

#include <stdio.h>
#include <string.h>

cJSON *tp__parts_pod_spec(tp_pod_parts *pp)
{
	if (pp->copy && pp->shallow) { /* to be written: made whole */
		cJSON *whole = cJSON_Duplicate(pp->copy, 1);
		if (!whole)
			return NULL;
		tp__x_drop(pp->copy);
		pp->copy = whole;
		pp->shallow = false;
	}
	if (!pp->copy) {
		const cJSON *tmpl = tp_member(pp->job, "template");
		pp->copy = tmpl ? cJSON_Duplicate(tmpl, 1) : cJSON_CreateObject();
		if (!pp->copy)
			return NULL;
	}
	/* as the expansion's pod sets: somewhere to write, always */
	cJSON *t = tp__x_object(pp->copy, "spec");
	t = t ? tp__x_object(t, "template") : NULL;
	return t ? tp__x_object(t, "spec") : NULL;
}

const char *tp__parts_tj_name(tp_pod_parts *pp)
{
	tp_pod_parts_cache *c = pp->cache;
	if (c->named)
		return c->tj_name;
	c->named = true;
	c->tj_name = pp->ctx->name;
	if (*c->tj_name)
		return c->tj_name;
	const char *gen = tp_get_str(pp->ctx->job, "metadata.generateName");
	snprintf(c->name_buf, sizeof(c->name_buf), "%sxxxxx", gen ? gen : "trainjob");
	return c->tj_name = c->name_buf;
}

const cJSON *tp__parts_trainer_node(tp_pod_parts *pp)
{
	tp_pod_parts_cache *c = pp->cache;
	if (c->looked)
		return c->trainer_node;
	c->looked = true;
	/* member by member: no dotted path to split for each job */
	const cJSON *jobs = tp_member(tp_member(pp->ctx->tmpl, "spec"), "replicatedJobs");
	for (const cJSON *j = cJSON_IsArray(jobs) ? jobs->child : NULL; j; j = j->next) {
		const cJSON *tmpl = tp_member(j, "template");
		const cJSON *step = tp_member(tp_member(tp_member(tmpl, "metadata"), "labels"),
					      TP_LABEL_ANCESTOR);
		if (!cJSON_IsString(step) || strcmp(step->valuestring, TP_ANCESTOR_TRAINER))
			continue;
		const cJSON *pod = tp_member(tp_member(tp_member(tmpl, "spec"), "template"), "spec");
		return c->trainer_node = tp_find_named(tp_member(pod, "containers"), "name",
						       TP_CONTAINER_NODE);
	}
	return NULL;
}

tp_pod_origin *tp__parts_origin(tp_pod_parts *pp)
{
	if (pp->norigins == TP_POD_ORIGINS)
		return NULL;
	tp_pod_origin *o = &pp->origins[pp->norigins++];
	memset(o, 0, sizeof(*o));
	return o;
}
