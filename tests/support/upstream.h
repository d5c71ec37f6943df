/*
 * upstream.h — the objects upstream's tests are made of
 * (pkg/util/testing/wrapper.go at kubeflow/trainer@8c0f5059) as JSON trees,
 * for the tests that port upstream's cases (tests/unit/test_up_*.c), and
 * the drivers that run them through the library.
 *
 * Builders return a new tree the caller frees; modifiers edit in place and
 * take either a runtime (they work on its spec.template.spec) or a JobSet
 * spec, as the wrappers' methods do. JSON values are written with single
 * quotes (tt_jsq). A failed build aborts the test binary: fixtures are the
 * test's own text, never input under test.
 */
#ifndef TT_UPSTREAM_H
#define TT_UPSTREAM_H

#include "policy/trainpolicy.h"

/* MakeJobSetWrapper(ns, name).Spec: dataset-initializer, model-initializer
 * and node jobs with their ancestor labels, containers, the "initializer"
 * volume and mounts. */
cJSON *up_jobset_spec(void);
/* MakeTrainingRuntimeWrapper: that spec as the template. */
cJSON *up_training_runtime(const char *ns, const char *name);
/* MakeClusterTrainingRuntimeWrapper: the same jobs without ancestor labels. */
cJSON *up_cluster_training_runtime(const char *name);
/* MakeTrainJobWrapper(ns, name).RuntimeRef(trainer group, kind, runtime);
 * kind NULL leaves runtimeRef.kind out, as an empty Kind does. */
cJSON *up_trainjob(const char *ns, const char *name, const char *kind, const char *runtime);

/* The replicatedJobs array of a runtime or a JobSet spec. */
cJSON *up_jobs(cJSON *obj);
/* The replicated job named name (aborts when absent). */
cJSON *up_job(cJSON *obj, const char *name);
/* Replicas(n, names...): names comma-separated. */
void up_replicas(cJSON *obj, int n, const char *names);
/* LauncherReplica(): a launcher job (container node, mpirun echo.sh) put
 * before the node job. */
void up_launcher_replica(cJSON *obj);
/* InitContainer(job, name, image): the job's only init container. */
void up_init_container(cJSON *obj, const char *job, const char *name, const char *image);
/* Container(job, name, image, command, args, requests): set on the named
 * container, else appended; the last three are single-quoted JSON or NULL. */
void up_container(cJSON *obj, const char *job, const char *name, const char *image,
		  const char *command, const char *args, const char *requests);
/* ReplaceContainer(job, name, new name, image, ...): the container replaced. */
void up_replace_container(cJSON *obj, const char *job, const char *name, const char *new_name,
			  const char *image);
/* ReplicatedJobLabel(key, value, names...). */
void up_job_label(cJSON *obj, const char *key, const char *value, const char *names);
/* Env(job, container, envs...): items of a single-quoted JSON list appended. */
void up_env(cJSON *obj, const char *job, const char *container, const char *envs);

/* obj's member at the dotted path := single-quoted JSON (objects made on
 * the way); value NULL removes the member. */
void up_set(cJSON *obj, const char *path, const char *value);
/* A metadata.labels / .annotations entry (keys hold dots). */
void up_label(cJSON *obj, const char *key, const char *value);

/* Validate obj (old on UPDATE) in profile p with the objects of cluster
 * (NULL-terminated; copied into a store) as the cluster. The result is the
 * caller's. */
tp_result *up_validate(tp_profile p, tp_operation op, const cJSON *obj, const cJSON *old,
		       cJSON *const *cluster);
/* The same, with a lookup that cannot answer for objects of kind fail (a
 * client error; TP_KIND_UNKNOWN: every lookup answers) and, webhook_only,
 * without the CRD schema layer: a plugin's own rules, as upstream's plugin
 * unit tests call them. */
tp_result *up_validate_failing(tp_profile p, tp_operation op, const cJSON *obj, const cJSON *old,
			       cJSON *const *cluster, tp_kind fail, bool webhook_only);
/* The result as the API server would print it, in a static buffer. */
const char *up_text(const tp_result *r);

#endif /* TT_UPSTREAM_H */
