/*
 * plugin.h — a framework or scheduler plugin, upstream's runtime framework
 * (pkg/runtime/framework) in C: one struct of optional phases per plugin,
 * one fixed table (registry.c), and the runners the runtime validator, the
 * TrainJob validator and the expansion call.
 *
 * Adding a framework is one file (plugins/<name>.c defining tp__plugin_<name>)
 * and one line in registry.c's PLUGINS list. Upstream keeps its plugins in a Go map, so its
 * order is unspecified; the table's order is the one order every answer and
 * every JobSet here comes in.
 */
#ifndef TP_PLUGIN_H
#define TP_PLUGIN_H

#include "policy/runtime/runtime.h"

/* A runtime as the strict profile's plugin checks see it. */
typedef struct tp_rt_ctx {
	const tp__rt_flavor *f;
	tp_result *res;
	const cJSON *ml; /* spec.mlPolicy, or NULL */
	const cJSON *pg; /* spec.podGroupPolicy, or NULL */
} tp_rt_ctx;

/* ------------------------------------------------ the parts of the Pods
 * The strict profile's look ahead at a TrainJob's Pods (pod/trainjob.c)
 * checks each replicated job of the runtime's template with the TrainJob's
 * settings written in, not the whole JobSet, whose build costs more than
 * the review. A plugin whose expansion adds containers, volumes or mounts
 * that kube-apiserver or Pod Security could refuse writes the same parts
 * into the check's copy of each job, with the functions its expansion
 * writes them with, so that check and JobSet cannot drift apart
 * (test_pod_parts holds them to the expansion). */

#define TP_POD_ORIGINS 4

/* Where a finding in a part comes from: one in the container named
 * container at a path inside it that starts with rel, or (container NULL)
 * one whose rendered value is value; field is the TrainJob field that put
 * it there, hint (or NULL: the finding's own) what to write instead. */
typedef struct tp_pod_origin {
	const char *container;
	const char *rel;
	char value[320];
	const char *field;
	const char *hint;
} tp_pod_origin;

/* What the parts of every job read alike, looked up once per TrainJob at
 * its first use (the caller clears looked, named and flux_read). */
typedef struct tp_pod_parts_cache {
	bool looked, named, flux_read;
	const cJSON *trainer_node;
	const char *tj_name;
	char name_buf[320];
	/* Flux's view image from the trainer's env, and whether the TrainJob's
	 * env names it (plugins/flux.c) */
	const char *flux_view_image;
	bool flux_image_from_trainjob;
} tp_pod_parts_cache;

typedef struct tp_pod_parts {
	const tp_tj_ctx *ctx;
	const cJSON *ml;      /* the runtime's spec.mlPolicy, or NULL */
	tp_pod_parts_cache *cache; /* the caller's, for all the jobs of one TrainJob */
	const cJSON *job;     /* the replicated job of ctx->tmpl being checked */
	const char *job_name; /* its name, or NULL */
	/* The job's template as the JobSet will hold it: NULL until something
	 * is written (tp__parts_pod_spec makes it); the caller's. */
	cJSON *copy;
	/* copy refers to the runtime's template where the trainer's settings
	 * wrote nothing (pod/trainjob.c): made whole before more is written */
	bool shallow;
	tp_pod_origin origins[TP_POD_ORIGINS];
	size_t norigins;
	/* A container a plugin added and that sets no securityContext of its
	 * own, and what Pod Security's denial should say of it (or NULL). */
	const char *psa_container;
	const char *psa_note;
} tp_pod_parts;

/* The Pod spec of pp's copy (template.spec.template.spec, made when absent),
 * the copy made at the first call: NULL when memory ran out. */
cJSON *tp__parts_pod_spec(tp_pod_parts *pp);
/* The name the expansion gives the TrainJob's objects after: its
 * metadata.name; for a manifest with generateName alone, that and the five
 * characters the API server adds. */
const char *tp__parts_tj_name(tp_pod_parts *pp);
/* The node container of the first trainer job of ctx->tmpl, or NULL:
 * where the expansion reads the trainer's settings (before the TrainJob's
 * env, which plugins read after it). */
const cJSON *tp__parts_trainer_node(tp_pod_parts *pp);
/* The next origin slot (zeroed), or NULL when all are taken. */
tp_pod_origin *tp__parts_origin(tp_pod_parts *pp);

/* Every phase is optional; each returns TP_OK or a TP_E* code (errors for
 * the user go into the result, not the return code). */
typedef struct tp_plugin {
	const char *name;
	/* Runtime checks (strict profile): the guides' rules for the plugin's
	 * member of spec.mlPolicy, then of spec.podGroupPolicy. */
	int (*check_ml_policy)(const tp_rt_ctx *rc);
	int (*check_pod_group_policy)(const tp_rt_ctx *rc);
	/* TrainJob checks: upstream's CustomValidation. */
	int (*check_trainjob)(tp_tj_ctx *ctx);
	/* The expansion (docs/kubeflow-upstream.md §5.2). */
	int (*enforce_ml_policy)(tp_expansion *x);
	int (*enforce_pod_group_policy)(tp_expansion *x);
	int (*pre_build)(tp_expansion *x);
	int (*build)(tp_expansion *x);
	/* The parts of one replicated job's Pod (strict profile, see above). */
	int (*pod_parts)(tp_pod_parts *pp);
} tp_plugin;

/* The table, NULL-terminated (registry.c). */
extern const tp_plugin *const tp__plugins[];

/* Each runs one phase (or, for the expansion, every phase in order) over
 * the table. */
int tp__plugins_check_ml_policy(const tp_rt_ctx *rc);
int tp__plugins_check_pod_group_policy(const tp_rt_ctx *rc);
int tp__plugins_check_trainjob(tp_tj_ctx *ctx);
int tp__plugins_pod_parts(tp_pod_parts *pp);
int tp__plugins_expand(tp_expansion *x);

/* ------------------------------------------------ plugins/jobset.c
 * for the plugins that name the JobSet's Pods (mpi.c's hostfile). */

/* The DNS name of pod pod_idx of Job replica_idx of a pod set:
 * "<tj>-<job>-<replica>-<pod>.<subdomain>", subdomain = the template's
 * network.subdomain or the TrainJob's name (plugins/jobset.c). */
int tp__x_endpoint(const tp_expansion *x, const tp_podset *ps, long long replica_idx,
		  long long pod_idx, tp_buf *out);
/* Jobs (replicas) a pod set's replicated job runs, at least 1. */
long long tp__x_replicas(const tp_podset *ps);

#endif /* TP_PLUGIN_H */
