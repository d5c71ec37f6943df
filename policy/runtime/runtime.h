/*
 * expand/expand.h — what the expansion's modules (expand*.c, plugins/registry.c,
 * plugin_*.c) share: the runtime info upstream calls runtime.Info, the
 * plugin table, and small JSON helpers. Private to policy/.
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
#ifndef TP_EXPAND_H
#define TP_EXPAND_H

#include "policy/core/internal.h"
#include "policy/core/quantity.h"

#define TP_ENV_COMPLETION_INDEX "metadata.annotations['batch.kubernetes.io/job-completion-index']"
#define TP_LABEL_COSCHEDULING   "scheduling.x-k8s.io/pod-group"
#define TP_ANNOT_VOLCANO_GROUP  "scheduling.k8s.io/group-name"
#define TP_ANNOT_VOLCANO_QUEUE  "scheduling.volcano.sh/queue-name"

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

/* ---------------------------------------------------- checks and info */

/* Type checks of everything the expansion reads (expand/check.c). Adds
 * errors to res; returns their number. */
int tp__expand_check_inputs(tp_expansion *x);
int tp__expand_check_template(tp_expansion *x);

/* Runtime info (expand/info.c): template, pod sets, counts, resources
 * merge and the trainer's image/command/args. */
int tp__expand_info(tp_expansion *x);
void tp__expand_info_free(tp_expansion *x);

/* The TrainJob's runtime snapshot (expand/snapshot.c): TP_OK and *out (the
 * caller's), TP_ENOTFOUND when there is none (use the live runtime), or an
 * error in res at path: TP_EINVAL (a snapshot that is not the TrainJob's
 * runtime, an error of the given type), TP_EUNAVAILABLE (it could not be
 * read: tp_result_lookup_failed). The expansion reports an unusable snapshot
 * as Invalid at spec.runtimeRef, TrainJob validation as upstream's Internal
 * error at its runtimeRef path. */
int tp__runtime_snapshot(const tp_options *opt, const cJSON *trainjob, tp_field_type type,
			 const char *path, tp_result *res, cJSON **out);

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
/* GPU and CPU counts: tp__gpu_count / tp__cpu_count (plugins/plugin.h). */

/* ------------------------------------------------------------ writing
 * All take ownership of the cJSON item they are given, also on failure, and
 * return TP_OK or TP_ENOMEM (TP_EINVAL for a target of the wrong type). */

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

/* The DNS name of pod pod_idx of Job replica_idx of a pod set:
 * "<tj>-<job>-<replica>-<pod>.<subdomain>", subdomain = the template's
 * network.subdomain or the TrainJob's name (plugins/jobset.c). */
int tp__x_endpoint(const tp_expansion *x, const tp_podset *ps, long long replica_idx,
		  long long pod_idx, tp_buf *out);
/* Jobs (replicas) a pod set's replicated job runs, at least 1. */
long long tp__x_replicas(const tp_podset *ps);

/* Errors: Invalid at path with detail; returns TP_EINVAL (TP_ENOMEM when
 * the result could not take the error). */
int tp__x_fail(tp_expansion *x, const char *path, const cJSON *value, const char *detail);

#endif
