/*
 * runtime/runtime.h — what a plugin is handed and writes with, below the
 * plugins (policy/plugins/) and the three that run them (pod/, expand/,
 * admission/), as upstream's pkg/runtime sits below pkg/runtime/framework:
 * the TrainJob's context (tp_tj_ctx, upstream's runtime Info as its
 * validation sees it), the runtime's field checks (fields.c), the
 * expansion's info (tp_expansion, tp_podset) with the job and pod builders
 * (build.c, requests.c), and the helpers every plugin shares (common.c).
 * Private to policy/.
 *
 * The expansion works on one tree: the runtime's JobSet template with the
 * TrainJob's runtimePatches merged (x->tmpl). Upstream keeps PodSets beside
 * the template and copies them back in its Build phase with upsert semantics;
 * writing into the template directly with the same upserts gives the same
 * JobSet with one copy fewer. A tp_podset therefore points into the tree.
 *
 * Before any plugin runs, expand/check.c has verified the JSON type of every
 * field the expansion reads, in the TrainJob, the runtime and the merged
 * template, so plugins may use tp_get_* and the helpers below without
 * re-checking types.
 */
#ifndef TP_RUNTIME_H
#define TP_RUNTIME_H

#include "policy/core/hash.h"
#include "policy/core/internal.h"
#include "policy/core/quantity.h"

#define TP_ENV_COMPLETION_INDEX "metadata.annotations['batch.kubernetes.io/job-completion-index']"
#define TP_LABEL_COSCHEDULING   "scheduling.x-k8s.io/pod-group"
#define TP_ANNOT_VOLCANO_GROUP  "scheduling.k8s.io/group-name"
#define TP_ANNOT_VOLCANO_QUEUE  "scheduling.volcano.sh/queue-name"

/* ------------------------------------------------------------ a TrainJob
 * (upstream's runtime Info as the TrainJob checks see it) */

/* One TrainJob admission, as the plugins see it (upstream's runtime Info). */
typedef struct tp_tj_ctx {
	const tp_options *opt;
	tp_operation op;
	const cJSON *job;     /* the TrainJob */
	const cJSON *old;     /* the old TrainJob on UPDATE, else NULL */
	const cJSON *runtime; /* the referenced runtime, from the store */
	/* runtime.spec.mlPolicy and runtime.spec.podGroupPolicy, looked up
	 * once for the plugins' check_trainjob (admission/trainjob.c fills
	 * them); NULL where the runtime has no such object */
	const cJSON *ml;
	const cJSON *pgp;
	const cJSON *trainer; /* the TrainJob's spec.trainer, looked up once the
			       * same way; NULL when it is no object */
	/* the TrainJob's spec.initializer and spec.runtimePatches as written
	 * (any type; NULL: absent), looked up once the same way */
	const cJSON *initializer;
	const cJSON *patches;
	/* the TrainJob's metadata.name and metadata.namespace ("" when it has
	 * none), looked up once the same way */
	const char *name;
	const char *ns;
	const cJSON *tmpl;    /* runtime.spec.template with runtimePatches merged; the
			       * same tree as base when there are none */
	const cJSON *base;    /* runtime.spec.template without the patches: the
			       * runtime's own tree when it needs no copy */
	const cJSON *jobs;    /* tmpl's spec.replicatedJobs list, or NULL */
	cJSON *owned[2];      /* the copies behind tmpl and base, freed after */
	/* what depends on the runtime alone (pod/plan.c): the store's, or
	 * owned_plan made for this request */
	const struct tp_rt_plan *plan;
	struct tp_rt_plan *owned_plan;
	tp_result *res;
} tp_tj_ctx;

/* ------------------------------------------------------------ a runtime's fields
 * (fields.c): the checks the runtime validators and the plugins' runtime
 * rules share. */

/* Which field set a runtime is judged against. */
typedef struct tp__rt_flavor {
	bool ome;    /* ome.io/v1beta1: OME's types, no CEL of Kubeflow's CRD */
	bool guides; /* strict profile: the guides' fields (torch.numProcPerNode, elasticPolicy,
		      * Intel/MPICH, OME volcano) are accepted here and checked by admission/runtime_strict.c */
	bool schema; /* the schema layer runs: admission/runtime_strict.c need not repeat its checks */
} tp__rt_flavor;

/* JSON types as the OpenAPI schema names them. */
typedef enum tp__rt_type {
	TP_RT_OBJECT,
	TP_RT_ARRAY,
	TP_RT_STRING,
	TP_RT_INTEGER,
	TP_RT_BOOLEAN,
} tp__rt_type;

/* Is v of type want? (tp__rt_typed's test, for a caller that builds the
 * path only when the answer is no.) */
static inline bool tp__rt_has_type(const cJSON *v, tp__rt_type want)
{
	switch (want) {
	case TP_RT_OBJECT: return cJSON_IsObject(v);
	case TP_RT_ARRAY: return cJSON_IsArray(v);
	case TP_RT_STRING: return cJSON_IsString(v);
	case TP_RT_INTEGER: return tp_json_is_int(v, NULL);
	case TP_RT_BOOLEAN: return cJSON_IsBool(v);
	}
	return false;
}

/* parent[key] when present and of type want; NULL when absent or null (the
 * API server prunes nulls). A value of another type adds the API server's
 * "<path> in body must be of type <want>" error and gives NULL. */
const cJSON *tp__rt_typed(tp_result *res, const cJSON *parent, const char *key,
			  const char *path, tp__rt_type want);

/* "<base>.<key>" into buf (truncated to n). Returns buf. */
const char *tp__rt_path(char *buf, size_t n, const char *base, const char *key);
/* A printf-built path into buf; a path too long for buf is cut short, which
 * only ever shortens a message. Returns buf. */
const char *tp__rt_pathf(char *buf, size_t n, const char *fmt, ...) TP_PRINTF(3, 4);
/* base + "[i]" into buf (buf may be base itself). */
const char *tp__rt_index(char *buf, size_t n, const char *base, int i);

/* An integer member parent.key: true with *n when it is one; another type is
 * reported ("<base>.<key> in body must be of type integer") when asked to,
 * i.e. when the schema layer does not speak for the member. */
bool tp__rt_int(tp_result *res, const cJSON *parent, const char *key, const char *base,
		bool report_type, long long *n);
/* Invalid at <base>.<key> unless n >= min: "must be greater than or equal to
 * <min>; <hint>". */
void tp__rt_at_least(tp_result *res, const char *base, const char *key, long long n,
		     long long min, const char *hint);

/* ------------------------------------------------------------ what plugins share
 * (common.c) */

/* trainer.numNodes, default 1 (upstream's rules read it so). */
long long tp__tj_num_nodes(const tp_tj_ctx *ctx);
/* The replicated job named name in a JobSet template, or NULL. */
const cJSON *tp__tj_job(const cJSON *tmpl, const char *name);
/* The pod spec of a replicated job (template.spec.template.spec), or NULL. */
const cJSON *tp__tj_pod_spec(const cJSON *rjob);
/* Invalid at spec.trainer.env when trainer.env names any of reserved[]:
 * "must not have reserved envs, invalid envs configured: [A B]" (sorted). */
int tp__tj_reserved_envs(tp_tj_ctx *ctx, const char *const *reserved, size_t n);
/* The containers and init containers of a JobSet template's replicated
 * jobs (jobs: its spec.replicatedJobs) by job name and container name, for
 * the lookups a list of targets makes (torch's envInjection): filed once,
 * instead of a scan of the jobs and of a job's containers per target. The
 * answers are the scans': the first job of a name, in it the first
 * container of a name, else the first init container of that name. */
typedef struct tp__job_containers {
	struct tp__jc_entry *entries;
	size_t n;
	tp_htab tab;
} tp__job_containers;

/* TP_OK or TP_ENOMEM; *t is usable (finding nothing) and must be freed
 * either way. */
int tp__job_containers_init(tp__job_containers *t, const cJSON *jobs);
cJSON *tp__job_containers_get(const tp__job_containers *t, const char *job, const char *name);
void tp__job_containers_free(tp__job_containers *t);

/* "<tj><suffix>" into out (n bytes, cut to fit): the name of an object a
 * plugin makes for the TrainJob tj. snprintf's answer at a tenth of its
 * cost, which the Pod check pays on every review of such a TrainJob. */
void tp__name_after(char *out, size_t n, const char *tj, const char *suffix);

/* Is s one of list[0..n)? */
bool tp__listed(const char *const *list, size_t n, const char *s);

/* Resources per node: trainer.resourcesPerNode when set, else the runtime's
 * trainer node container's (job `node` or the trainer-ancestor job). */
const cJSON *tp__trainer_resources(const cJSON *trainer, const cJSON *runtime);
/* GPUs per node: the first resource whose name contains "gpu" (any case) in
 * requests, else in limits, rounded up; 0 when none. */
long long tp__gpu_count(const cJSON *resources);
/* CPUs per node rounded up: requests.cpu, else limits.cpu, else 0. */
long long tp__cpu_count(const cJSON *resources);

/* ------------------------------------------------------------ the expansion */

/* One replicated job of the JobSet (upstream's PodSet). */
typedef struct tp_podset {
	const char *name;     /* replicatedJobs[i].name */
	const char *ancestor; /* trainjob-ancestor-step label, or NULL */
	int index;            /* i */
	cJSON *job;           /* the replicatedJob object in x->tmpl */
	cJSON *pod_spec;      /* job.template.spec.template.spec (always present) */
	long long count;      /* pods per Job: parallelism = completions */
	long long replicas;   /* Jobs of it, as the runtime gives them (>= 1), taken
			       * before any build: upstream's PreBuildSync reads them
			       * before the JobSet's Build sets trainer jobs to 1 */
	cJSON *node_args;     /* trainer pod sets: the node container's args as the
			       * template had them before the TrainJob's (NULL: none),
			       * for a plugin that takes the TrainJob's back (Flux) */
} tp_podset;

typedef struct tp_expansion {
	const tp_options *opt;
	const cJSON *trainjob;
	const cJSON *runtime;
	const tp_keys *keys; /* never NULL: no keys is {NULL, NULL} */
	tp_result *res;

	const char *name; /* TrainJob metadata.name */
	const char *ns;   /* TrainJob metadata.namespace ("" when absent) */
	const cJSON *trainer;     /* TrainJob spec.trainer, or NULL */
	const cJSON *ml;          /* runtime spec.mlPolicy, or NULL */
	const cJSON *pod_group;   /* runtime spec.podGroupPolicy, or NULL */

	cJSON *tmpl;  /* {metadata, spec}: becomes the JobSet's labels, annotations, spec */
	tp_podset *podsets;
	size_t npodsets;
	cJSON *runtime_command; /* the trainer node container's command before overrides */
	cJSON *companions;      /* objects listed after the JobSet (array) */

	/* Settled by the ML policy plugins for later phases. */
	long long mpi_slots; /* MPI numProcPerNode (0: not MPI) */
} tp_expansion;

/* ------------------------------------------------------------ lookups */

tp_podset *tp__x_podset_by_name(tp_expansion *x, const char *name);
tp_podset *tp__x_podset_by_ancestor(tp_expansion *x, const char *ancestor);
/* Regular container of a pod set by name, or NULL. */
cJSON *tp__x_container(const tp_podset *ps, const char *name);
/* Container, then initContainer, by name. */
cJSON *tp__x_any_container(const tp_podset *ps, const char *name);
/* The TrainJob's trainer.numNodes when set (clamped to >= 1). */
bool tp__x_trainjob_num_nodes(const tp_expansion *x, long long *out);
/* The trainer pod set (*ps, NULL when the runtime has none) with the
 * TrainJob's numNodes applied, and its `node` container (NULL when absent). */
cJSON *tp__x_trainer_node(tp_expansion *x, tp_podset **ps);
/* Resources per node for GPU/CPU counting: the TrainJob's resourcesPerNode
 * when set, else the runtime trainer node container's resources. */
const cJSON *tp__x_resources_per_node(const tp_expansion *x);
/* GPU and CPU counts: tp__gpu_count / tp__cpu_count (above). */

/* ------------------------------------------------------------ writing
 * All take ownership of the cJSON item they are given, also on failure, and
 * return TP_OK or TP_ENOMEM (TP_EINVAL for a target of the wrong type). */

/* A tree the check built for the request (a copy of a runtime's template):
 * made while the request's arena is current, it goes with the arena and is
 * not walked to be freed (cJSON_Delete of an MPI TrainJob's two job copies
 * was 5,950 instructions a review, callgrind); else it is deleted. */
void tp__x_drop(cJSON *tree);
/* obj[name] = v, in place when present, else appended. */
int tp__x_set(cJSON *obj, const char *name, cJSON *v);
int tp__x_set_string(cJSON *obj, const char *name, const char *s);
int tp__x_set_number(cJSON *obj, const char *name, double n);
/* obj[name] as an object/array, created when absent. NULL when it holds
 * another type or memory ran out. */
cJSON *tp__x_object(cJSON *obj, const char *name);
cJSON *tp__x_array(cJSON *obj, const char *name);
/* Upstream apply.UpsertEnvVars / UpsertVolumes / UpsertVolumeMounts /
 * UpsertPort on a container or pod spec. */
int tp__x_env(cJSON *container, const char *name, const char *value);
int tp__x_env_field(cJSON *container, const char *name, const char *field_path);
int tp__x_env_copy(cJSON *container, const cJSON *env_list); /* upsert each item */
int tp__x_port(cJSON *container, long long port);
int tp__x_mount(cJSON *container, const char *name, const char *mount_path);
int tp__x_mount_as(cJSON *container, const char *name, const char *mount_path, bool read_only);
int tp__x_volume(cJSON *pod_spec, cJSON *volume);
/* data[key] = base64 of text (a Secret's data; TP_ELIMIT past 1 MiB). */
int tp__x_data_base64(cJSON *data, const char *key, const char *text);
/* label/annotation on every pod template of the JobSet. */
int tp__x_pod_metadata(tp_expansion *x, const char *map, const char *key, const char *value);
/* ownerReferences naming the TrainJob as controller. */
cJSON *tp__x_owner_refs(const tp_expansion *x);
/* A new companion object {apiVersion, kind, metadata{name, namespace,
 * ownerReferences}} appended to x->companions; NULL on out of memory. */
cJSON *tp__x_companion(tp_expansion *x, const char *api_version, const char *kind, const char *name);
/* "<tj>-node-0-0.<tj>" with optional ":<port>" (port 0: none). */
int tp__x_master_addr(const tp_expansion *x, int port, char *buf, size_t n);
/* Σ count and Σ count × single-pod requests over every pod set, with the
 * quantities rendered canonically and keys sorted (upstream's ResourceList). */
int tp__x_total_resources(tp_expansion *x, long long *members, cJSON **resources);

/* Errors: Invalid at path with detail; returns TP_EINVAL (TP_ENOMEM when
 * the result could not take the error). */
int tp__x_fail(tp_expansion *x, const char *path, const cJSON *value, const char *detail);

#endif /* TP_RUNTIME_H */
