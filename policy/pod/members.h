/*
 * pod/members.h — the members of a container, a Pod spec, a volume mount
 * and a Job spec, found in one walk of the object instead of one lookup by
 * name each. The checks read a dozen or more members of each of these
 * objects, most of them absent, and every lookup scanned the whole object:
 * about 500 lookups a ClusterTrainingRuntime review (tp_member was its
 * largest self cost, callgrind). A walk sees each member once and keeps
 * the FIRST of a name, as tp_member finds it, so that a duplicate member
 * reads as it did. Members the structs do not name are not kept. Private
 * to policy/pod/.
 */
#ifndef TP_POD_MEMBERS_H
#define TP_POD_MEMBERS_H

#include "policy/pod/pod.h"

/* cJSON's type tests without a call into libcjson (as core/object.c's
 * has_type): these run for every member a check reads. */
static inline bool tp__vis(const cJSON *m, int type)
{
	return m && (m->type & 0xff) == type;
}
/* A member of a given type, else NULL (as tp__mstr, tp__mobj, tp__marr). */
static inline const char *tp__vstr(const cJSON *m)
{
	return tp__vis(m, cJSON_String) ? m->valuestring : NULL;
}
static inline const cJSON *tp__vobj(const cJSON *m)
{
	return tp__vis(m, cJSON_Object) ? m : NULL;
}
static inline const cJSON *tp__varr(const cJSON *m)
{
	return tp__vis(m, cJSON_Array) ? m : NULL;
}
/* Set to something other than null (present() of the checks). */
static inline bool tp__vset(const cJSON *m)
{
	return m && !tp__vis(m, cJSON_NULL);
}

/* core/v1 Container (v1.32, and restartPolicyRules of later releases). */
typedef struct tp_pod_cm {
	const cJSON *self; /* the object walked (of any type: its members are NULL) */
	const cJSON *name, *image, *command, *args, *working_dir, *ports, *env_from, *env,
		*resources, *resize_policy, *restart_policy, *restart_policy_rules,
		*volume_mounts, *volume_devices, *liveness_probe, *readiness_probe,
		*startup_probe, *lifecycle, *termination_message_path,
		*termination_message_policy, *image_pull_policy, *security_context, *stdin_,
		*stdin_once, *tty;
} tp_pod_cm;

/* core/v1 PodSpec (v1.32, and the later releases' members
 * pod/fields_since.c names). */
typedef struct tp_pod_sm {
	const cJSON *self;
	const cJSON *volumes, *init_containers, *containers, *ephemeral_containers,
		*restart_policy, *termination_grace_period_seconds, *active_deadline_seconds,
		*dns_policy, *node_selector, *service_account_name, *service_account,
		*automount_service_account_token, *node_name, *host_network, *host_pid,
		*host_ipc, *share_process_namespace, *security_context, *image_pull_secrets,
		*hostname, *subdomain, *affinity, *scheduler_name, *tolerations, *host_aliases,
		*priority_class_name, *priority, *dns_config, *readiness_gates,
		*runtime_class_name, *enable_service_links, *preemption_policy, *overhead,
		*topology_spread_constraints, *set_hostname_as_fqdn, *os, *host_users,
		*scheduling_gates, *resource_claims, *resources, *hostname_override,
		*scheduling_group;
} tp_pod_sm;

/* core/v1 VolumeMount. */
typedef struct tp_pod_mm {
	const cJSON *self;
	const cJSON *name, *read_only, *recursive_read_only, *mount_path, *sub_path,
		*mount_propagation, *sub_path_expr;
} tp_pod_mm;

/* batch/v1 JobSpec (v1.32). */
typedef struct tp_pod_jm {
	const cJSON *self;
	const cJSON *parallelism, *completions, *active_deadline_seconds, *pod_failure_policy,
		*success_policy, *backoff_limit, *backoff_limit_per_index, *max_failed_indexes,
		*selector, *manual_selector, *template_, *ttl_seconds_after_finished,
		*completion_mode, *suspend, *pod_replacement_policy, *managed_by;
} tp_pod_jm;

/* Each fills *m from o (its members all NULL when o is not an object). */
void tp__pod_cm_fill(tp_pod_cm *m, const cJSON *o);
void tp__pod_sm_fill(tp_pod_sm *m, const cJSON *o);
void tp__pod_mm_fill(tp_pod_mm *m, const cJSON *o);
void tp__pod_jm_fill(tp_pod_jm *m, const cJSON *o);

/* The container checks of pod.h that read many of its members, given the
 * container's members read once: tp__pod_check_probes and
 * tp__pod_check_container_mounts (those fill them and call these). */
int tp__pod_check_cm_probes(tp_podv *v, const tp_pod_cm *c, long long grace);
int tp__pod_check_cm_mounts(tp_podv *v, const tp_pod_cm *c, const tp_nameset *volumes);
/* tp__pod_check_containers given the Pod spec's members read once. */
int tp__pod_check_sm_containers(tp_podv *v, const tp_pod_sm *s, const tp_nameset *volumes);

/* A Job template's Job spec and Pod spec, each read once for the checks
 * that read the same template: the Job's (tp__pod_check_job) and its
 * release's (tp__pod_check_since), one after the other for each of a
 * runtime's jobs (pod/runtime.c: 830 instructions a review of three jobs
 * went to reading them twice, callgrind). */
typedef struct tp_pod_tm {
	tp_pod_jm job; /* the template's spec */
	tp_pod_sm pod; /* the template's spec.template.spec */
} tp_pod_tm;

void tp__pod_tm_fill(tp_pod_tm *m, const cJSON *job_template);
/* tp__pod_check_job, tp__pod_check_template and tp__pod_check_since given
 * those members (m read from job_template, s from tmpl's spec). */
int tp__pod_check_job_tm(tp_podv *v, const cJSON *job_template, const tp_pod_tm *m);
int tp__pod_check_template_sm(tp_podv *v, const cJSON *tmpl, const tp_pod_sm *s);
int tp__pod_check_since_tm(tp_podv *v, const tp_options *opt, const tp_pod_tm *m,
			   tp_result *warnings);

#endif
