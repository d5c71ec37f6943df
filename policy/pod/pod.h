/*
 * pod/pod.h — what the files of policy/pod/ share: the API server's checks of
 * the Jobs and Pods a JobSet will make (core and batch validation of a Job
 * template and its Pod template), Pod Security Admission's checks, and the
 * collector both write their findings into. Private to policy/.
 *
 * A finding keeps what kube-apiserver would say (type, path from the Job,
 * value, detail) apart from what this library adds (which container it is
 * about, what to write instead), so that the same finding can be shown at
 * the TrainJob field that caused it or at the runtime's path.
 */
#ifndef TP_POD_H
#define TP_POD_H

#include "policy/core/hash.h"
#include "policy/core/internal.h"

/* Where in the Pod a finding is: no container, a container or an init
 * container (named by name, so that two templates can be compared). */
typedef enum tp_pod_list { TP_POD_NONE = 0, TP_POD_CONTAINERS, TP_POD_INIT } tp_pod_list;

typedef struct tp_pod_finding {
	tp_field_type type;
	const char *path;      /* from the Job: "spec.template.spec.containers[0].image" */
	const char *value;     /* rendered as the API server does, or NULL */
	const char *detail;    /* the API server's words ("" when it has none) */
	const char *hint;      /* what to write instead, or NULL */
	tp_pod_list list;      /* the container's list, or TP_POD_NONE */
	const char *container; /* its name (NULL: none) */
	const char *rel;       /* the path inside the container (".resources.limits") */
} tp_pod_finding;

#define TP_POD_PATH_MAX 1024

/* The collector of one validation: findings in its arena, and the path of
 * the field being looked at, built by push and pop so that no path is
 * printed unless there is something to say about it. */
typedef struct tp_podv {
	tp_arena *arena;
	tp_pod_finding *items;
	size_t n, cap;
	char path[TP_POD_PATH_MAX];
	size_t len;
	tp_pod_list list;      /* the container being looked at */
	const char *container;
	size_t container_len;  /* path length where its inner path starts */
	int rc;                /* the first TP_ENOMEM, kept until the end */
	/* The volumeClaimPolicies of the JobSet the job is a replicated job of,
	 * when known (NULL: none): they give the Pods volumes the template does
	 * not list. The caller's, set per job with rjob. */
	const struct tp_pod_claims *claims;
	const char *rjob;
	/* The Pods the trainer's JobSet builder gives the job, written as both
	 * its parallelism and its completions (expand/info.c, the plugins): a
	 * template's own counts are not what the Job gets. 0: as the template
	 * says (a JobSet of any other origin). Set per job by the caller. */
	long long pods;
	/* Where the segments a TrainJob may rewrite begin and end in the
	 * findings (pod/plan.c), when the caller records them; else NULL. */
	struct tp_pod_marks *marks;
} tp_podv;

int tp__podv_init(tp_podv *v);
void tp__podv_free(tp_podv *v);
/* Forget the findings, keep the memory. */
void tp__podv_reset(tp_podv *v);

/* Members by one name (no dotted path to split): the checks' hot path.
 * Their types are tested inline, as cJSON_IsString and the like test them
 * (the low byte of type), without a call into libcjson for each: 1,100
 * instructions of a ClusterTrainingRuntime review (callgrind). */
static inline const cJSON *tp__mtyped(const cJSON *o, const char *k, int type)
{
	const cJSON *v = tp_member(o, k);
	return v && (v->type & 0xff) == type ? v : NULL;
}
static inline const char *tp__mstr(const cJSON *o, const char *k)
{
	const cJSON *v = tp__mtyped(o, k, cJSON_String);
	return v ? v->valuestring : NULL;
}
static inline const cJSON *tp__mobj(const cJSON *o, const char *k)
{
	return tp__mtyped(o, k, cJSON_Object);
}
static inline const cJSON *tp__marr(const cJSON *o, const char *k)
{
	return tp__mtyped(o, k, cJSON_Array);
}
static inline bool tp__mint(const cJSON *o, const char *k, long long *out)
{
	const cJSON *v = tp_member(o, k);
	return v && tp_json_is_int(v, out);
}

/* Path building: each push returns the length to pop back to. A path that
 * would not fit is cut (and marked "..."), never overrun. */
size_t tp__podv_push(tp_podv *v, const char *member);             /* ".name" */
size_t tp__podv_push_member(tp_podv *v, const char *name);         /* "." + name */
size_t tp__podv_push_index(tp_podv *v, const char *member, int i);  /* ".ports[3]" */
size_t tp__podv_push_key(tp_podv *v, const char *member, const char *key); /* ".limits[cpu]" */
static inline void tp__podv_pop(tp_podv *v, size_t len)
{
	v->len = len;
	v->path[len] = '\0';
}

/* Add a finding at the current path plus suffix (NULL: none): value (the
 * rendered bad value, NULL for types that show none) and hint (what to
 * write instead, may be NULL) are copied; the detail is a printf format.
 * Returns TP_OK or TP_ENOMEM (also kept in v->rc). */
int tp__podv_add(tp_podv *v, tp_field_type type, const char *suffix, const char *value,
		 const char *hint, const char *detail_fmt, ...) TP_PRINTF(6, 7);
/* IsDNS1123Label's errors for name, each an Invalid at the current path
 * plus suffix: its length, then its shape ("must not contain dots" when it
 * would be a subdomain). */
int tp__pod_dns_label(tp_podv *v, const char *suffix, const char *name, const char *hint);
/* Values as the API server prints them: a Go %q string, an integer, a
 * compact JSON object. In v's arena. */
const char *tp__podv_quote(tp_podv *v, const char *s);
const char *tp__podv_int(tp_podv *v, long long n);
const char *tp__podv_json(tp_podv *v, const cJSON *j);
/* printf into v's arena (NULL when memory ran out). */
const char *tp__podv_printf(tp_podv *v, const char *fmt, ...) TP_PRINTF(2, 3);

/* --------------------------------------------------------- name sets
 * A set of strings for "unique" and "exists" questions, keyed by hash so
 * that a Pod with many containers, volumes or ports stays linear. Memory
 * from the arena; the strings are not copied. */
typedef struct tp_nameset {
	const char **slots;
	const void **vals; /* a value beside each name (tp__nameset_put) */
	size_t cap, n;
	tp_arena *arena;
} tp_nameset;

void tp__nameset_init(tp_nameset *s, tp_arena *a);
bool tp__nameset_has(const tp_nameset *s, const char *name);
/* TP_OK (also when already there: the first value stays) or TP_ENOMEM. */
int tp__nameset_add(tp_nameset *s, const char *name);
int tp__nameset_put(tp_nameset *s, const char *name, const void *val);
/* The value put with name, or NULL. */
const void *tp__nameset_get(const tp_nameset *s, const char *name);

/* --------------------------------------------------------- claims
 * (pod/claims.c) The volumeClaimPolicies of one JobSet spec, filed once for
 * all its jobs. */
typedef struct tp_pod_claims {
	tp_arena *arena;                 /* NULL: no policies */
	struct claim_policy *policies;
	size_t npolicies;
	tp_htab names;                   /* claim templates by name */
} tp_pod_claims;

/* TP_OK or TP_ENOMEM; *c is usable (it may miss policies) and must be
 * freed either way. */
int tp__pod_claims_init(tp_pod_claims *c, const cJSON *jobset_spec);
/* Does a policy give the Pods of replicated job rjob a volume named name? */
bool tp__pod_claims_has(const tp_pod_claims *c, const char *rjob, const char *name);
void tp__pod_claims_free(tp_pod_claims *c);

/* --------------------------------------------------------- validation
 * kube-apiserver's checks, v1.32 texts (each file's header notes where
 * v1.26 differs). Inputs are the versioned JSON a manifest holds; what the API
 * server's defaulting fills in (restartPolicy, dnsPolicy, protocol, ...)
 * counts as filled in. A member of the wrong JSON type counts as absent:
 * the schema layer reports it. */

/* A batch/v1 JobTemplateSpec as a JobSet's replicated job holds it, with
 * JobSet's defaults (completionMode Indexed, restartPolicy OnFailure): the
 * Job spec's own rules, then its Pod template at "spec.template". */
int tp__pod_check_job(tp_podv *v, const cJSON *job_template);
/* Metadata (pod/meta.c), as apimachinery's ValidateObjectMeta and
 * ValidatePodTemplateSpec check it: ValidateLabels and ValidateAnnotations
 * of a map at the current path plus suffix; the Job's metadata, made from
 * its template's (JobSet's constructJob), at "metadata"; the JobSet's own,
 * made from a runtime's spec.template.metadata (with the runtimePatches'),
 * at "metadata", once per JobSet template (pod/runtime.c: a runtime's own;
 * a TrainJob's runtimePatches of it are not checked yet). */
int tp__pod_check_labels(tp_podv *v, const char *suffix, const cJSON *labels);
/* IsQualifiedName's errors for name, each an Invalid at the current path
 * plus suffix with name as the value (a label key, a condition type). */
int tp__pod_qualified_name(tp_podv *v, const char *suffix, const char *name, const char *hint);
int tp__pod_check_annotations(tp_podv *v, const char *suffix, const cJSON *annotations);
int tp__pod_check_job_meta(tp_podv *v, const cJSON *job_template);
int tp__pod_check_jobset_meta(tp_podv *v, const cJSON *jobset_template);
/* A PodTemplateSpec at the current path (".metadata", ".spec"). */
int tp__pod_check_template(tp_podv *v, const cJSON *tmpl);
/* What the template's annotations mean to the API server
 * (ValidatePodSpecificAnnotations, and the seccomp and AppArmor annotations
 * against their fields), at the current path: pod/annotations.c. */
int tp__pod_check_pod_annotations(tp_podv *v, const cJSON *tmpl);
/* The PodSpec at the current path, less containers (pod/spec.c). */
int tp__pod_check_spec_fields(tp_podv *v, const cJSON *spec);
/* Containers and init containers (pod/containers.c), given the volumes
 * that passed validation. */
int tp__pod_check_containers(tp_podv *v, const cJSON *spec, const tp_nameset *volumes);
/* The parts of one container at the current path (pod/container_fields.c). */
int tp__pod_check_ports(tp_podv *v, const cJSON *ports);
int tp__pod_check_env(tp_podv *v, const cJSON *env);
/* validateObjectFieldSelector at the current path (a fieldRef), with the
 * fields its user may read: tp__pod_env_fields
 * (validEnvDownwardAPIFieldPathExpressions) or tp__pod_volume_fields
 * (validVolumeDownwardAPIFieldPathExpressions); NULL-ended. */
extern const char *const tp__pod_env_fields[];
extern const char *const tp__pod_volume_fields[];
void tp__pod_check_field_selector(tp_podv *v, const cJSON *ref, const char *const *fields);
/* validateContainerResourceFieldSelector at the current path (a
 * resourceFieldRef), hugepages by prefix; a volume's names its container. */
void tp__pod_check_resource_selector(tp_podv *v, const cJSON *ref, bool volume);
/* validateLocalDescendingPath of p at the current path plus suffix, what
 * naming the directory p is relative to (for the hint). */
void tp__pod_local_path(tp_podv *v, const char *suffix, const char *p, const char *what);
int tp__pod_check_env_from(tp_podv *v, const cJSON *list);
int tp__pod_check_mounts(tp_podv *v, const cJSON *mounts, const tp_nameset *volumes);
/* The volumeMounts of container c, with what depends on the container
 * (Bidirectional propagation only when privileged). */
int tp__pod_check_container_mounts(tp_podv *v, const cJSON *c, const tp_nameset *volumes);
/* The volumeDevices of container c (ValidateVolumeDevices); sources: the
 * Pod's volumes by name, each with its JSON (the kind of volume matters). */
int tp__pod_check_devices(tp_podv *v, const cJSON *c, const tp_nameset *volumes,
			  const tp_nameset *sources);
int tp__pod_check_security_context(tp_podv *v, const cJSON *sc);
/* IsValidPortName's errors for name, each an Invalid at the current path
 * plus suffix (pod/container_fields.c). */
void tp__pod_port_name(tp_podv *v, const char *suffix, const char *name, const char *hint);
/* Probes and lifecycle hooks of container c (pod/probes.c); grace: the
 * Pod's terminationGracePeriodSeconds as tp__pod_grace_period gives it. */
int tp__pod_check_probes(tp_podv *v, const cJSON *c, long long grace);
long long tp__pod_grace_period(const cJSON *spec);
/* ResourceRequirements at the current path (pod/resources.c). */
int tp__pod_check_resources(tp_podv *v, const cJSON *resources);
/* spec.volumes (pod/volumes.c): the names of the valid ones into *names. */
int tp__pod_check_volumes(tp_podv *v, const cJSON *volumes, tp_nameset *names);
/* The rules of ValidatePodSpec on these fields, each reading the PodSpec
 * at the current path through its members read once (pod/members.h): the
 * Pod's securityContext with the host namespace fields and hostNetwork's
 * ports (pod/pod_security_context.c), spec.os (pod/pod_os.c), affinity,
 * scheduling gates with topology spread constraints, and preemptionPolicy
 * (pod/scheduling.c), dnsConfig with dnsPolicy None, and hostAliases
 * (pod/dns.c). */
struct tp_pod_sm;
int tp__pod_check_pod_security_context(tp_podv *v, const struct tp_pod_sm *spec);
int tp__pod_check_os(tp_podv *v, const struct tp_pod_sm *spec);
int tp__pod_check_affinity(tp_podv *v, const struct tp_pod_sm *spec);
int tp__pod_check_scheduling(tp_podv *v, const struct tp_pod_sm *spec);
int tp__pod_check_preemption(tp_podv *v, const struct tp_pod_sm *spec);
int tp__pod_check_dns_config(tp_podv *v, const struct tp_pod_sm *spec);
int tp__pod_check_host_aliases(tp_podv *v, const struct tp_pod_sm *spec);
/* A seccompProfile or appArmorProfile (NULL or not an object: nothing to
 * check) at the current path plus ".seccompProfile" / ".appArmorProfile"
 * (validateSeccompProfileField, ValidateAppArmorProfileField), for a Pod's
 * securityContext or a container's. */
int tp__pod_check_seccomp_profile(tp_podv *v, const cJSON *profile);
int tp__pod_check_apparmor_profile(tp_podv *v, const cJSON *profile);
/* A windowsOptions (NULL or not an object: nothing) at the current path
 * plus ".windowsOptions" (validateWindowsSecurityContextOptions), for a
 * Pod's securityContext or a container's; and hostProcess across the
 * PodSpec at the current path (validateWindowsHostProcessPod). In
 * pod/windows.c. */
int tp__pod_check_windows_options(tp_podv *v, const cJSON *options);
int tp__pod_check_host_process(tp_podv *v, const struct tp_pod_sm *spec);
/* IsValidIP as the API server parses it (ParseIPSloppy: Go 1.16's
 * net.ParseIP, leading zeros allowed in IPv4 parts). */
bool tp__pod_is_ip(const char *s);
/* Findings from here on are about container name of list (for where a
 * report names it), its inner path starting at the current path; until
 * tp__podv_leave. */
void tp__podv_enter(tp_podv *v, tp_pod_list list, const char *name);
void tp__podv_leave(tp_podv *v);

/* (pod/fields_since.c) The fields of a Job template that Kubernetes
 * 1.<tp_kube_minor(opt)> does not know: a finding each (its API server
 * creates the Job without them); those it drops behind a feature gate off
 * by default: a warning each into warnings (NULL: none), naming v->rjob. */
int tp__pod_check_since(tp_podv *v, const tp_options *opt, const cJSON *job_template,
			tp_result *warnings);
/* The fields of that check present in job_template, whatever the release
 * (a bit each, for tp__pod_since_silent; v lends its path); whether a
 * release has nothing to say about any of present; and the check of what a
 * TrainJob's trainer settings write into container c at
 * spec.template.spec.containers[index] (its resources and env, where the
 * table has fields; image, command and args it has none), as the whole
 * check finds it there. A runtime's plan notes its template's fields once,
 * so that a TrainJob whose job is the runtime's but for those has only
 * them checked. */
int tp__pod_since_fields(tp_podv *v, const cJSON *job_template, uint32_t *present);
bool tp__pod_since_silent(const tp_options *opt, uint32_t present);
int tp__pod_check_since_trainer(tp_podv *v, const tp_options *opt, const cJSON *c, int index,
				tp_result *warnings);

/* f, whose strings outlive v, appended as it is (TP_OK or TP_ENOMEM). */
int tp__podv_append(tp_podv *v, const tp_pod_finding *f);

/* --------------------------------------------------------- marks
 * (pod/plan.c) The segments of a Job's findings that a TrainJob's trainer
 * settings and numNodes can change, recorded when a runtime's job is
 * checked once, so that a TrainJob's check re-checks only those: the Job
 * spec's rules that read parallelism and completions, and the image, env
 * and resources of the container the trainer's settings go into (node).
 * Each mark is a findings count (v->n) where the segment begins or ends. */
typedef enum tp_pod_mark {
	TP_MARK_HEAD_BEGIN, /* the Job spec's rules before its Pod template */
	TP_MARK_HEAD_END,
	TP_MARK_IMAGE_BEGIN,
	TP_MARK_IMAGE_END,
	TP_MARK_ENV_BEGIN,
	TP_MARK_ENV_END,
	TP_MARK_RES_BEGIN,
	TP_MARK_RES_END,
	TP_MARK__COUNT
} tp_pod_mark;

typedef struct tp_pod_marks {
	const cJSON *node; /* the container whose segments are recorded */
	size_t at[TP_MARK__COUNT];
	bool seen[TP_MARK__COUNT];
} tp_pod_marks;

static inline void tp__podv_mark(tp_podv *v, const cJSON *container, tp_pod_mark m)
{
	if (v->marks && (!container || container == v->marks->node)) {
		v->marks->at[m] = v->n;
		v->marks->seen[m] = true;
	}
}

/* The parts of a container a TrainJob's trainer settings rewrite, each
 * checked as validateContainerCommon checks it, at the current path (the
 * container's, entered): pod/containers.c. */
void tp__pod_check_container_image(tp_podv *v, const cJSON *c);
void tp__pod_check_container_resources(tp_podv *v, const cJSON *c);
/* The Job spec's rules before its Pod template (validateJobSpec's counts
 * and what reads them) at the current path plus "spec" (pod/job.c). */
void tp__pod_check_job_head(tp_podv *v, const cJSON *job_template);

/* (pod/plan.c) A runtime's plan: what its Pods are, worked out once per
 * runtime version. */
typedef struct tp_rt_plan tp_rt_plan;
typedef struct tp_rt_plan_job {
	const cJSON *job;  /* the runtime's replicated job */
	bool planned;      /* checked: the rest is set */
	long long pods;    /* the runtime's Pod count for it */
	int node_index;    /* the node container's place, or -1 */
	const tp_pod_finding *items; /* tp__pod_check_job's findings */
	size_t n;
	tp_arena *arena;   /* theirs; NULL when there are none */
	tp_pod_marks marks;
	/* no default is due in the template, and it has no subdomain of its
	 * own (the one default that reads the TrainJob's name) */
	bool plain;
	uint32_t since; /* tp__pod_since_fields of the template */
	const char *step; /* tp__pod_step of the job */
} tp_rt_plan_job;

/* A plan for runtime, for the caller to free (TP_OK or TP_ENOMEM). */
int tp__rt_plan_new(const cJSON *runtime, tp_rt_plan **out);
void tp__rt_plan_free(tp_rt_plan *p);
/* The store's: a plan filed under the runtime's tree when it takes it,
 * dropped when it lets the tree go; found by the tree (NULL: none). */
int tp__rt_plan_attach(const cJSON *runtime);
void tp__rt_plan_detach(const cJSON *runtime);
const tp_rt_plan *tp__rt_plan_of(const cJSON *runtime);
/* The runtime's spec.template without patches (NULL: it cannot be made),
 * and its index-th replicated job's plan when job is that job (else NULL). */
const cJSON *tp__rt_plan_base(const tp_rt_plan *p);
/* The runtime's spec.mlPolicy and spec.podGroupPolicy objects (NULL:
 * none), looked up when the plan was made. */
const cJSON *tp__rt_plan_ml(const tp_rt_plan *p);
const cJSON *tp__rt_plan_pgp(const tp_rt_plan *p);
const tp_rt_plan_job *tp__rt_plan_job(const tp_rt_plan *p, const cJSON *job, int index);
/* Whether the defaults of job, as build_job made it into a copy whose node
 * container is node (NULL: no copy, the runtime's template itself; else
 * that template with only the node container's trainer settings
 * rewritten), are known to write nothing. */
bool tp__rt_plan_plain(const tp_rt_plan_job *pj, const cJSON *node);
/* Whether opt's release has nothing to say (tp__pod_check_since) about any
 * field the job's template has: then only what a TrainJob rewrites in its
 * node container is checked for it. */
bool tp__rt_plan_since_silent(const tp_rt_plan_job *pj, const tp_options *opt);
/* The findings of tp__pod_check_job of the job with v->pods as its Pod
 * count, copy (NULL: the runtime's template itself) being the runtime's
 * template with only the node container's image, command, args, env and
 * resources rewritten (node: its node container, as build_job opened it),
 * into v: the plan's read in place, the rewritten parts checked.
 * TP_EUNSUPPORTED: the plan cannot say (nothing added). */
int tp__rt_plan_replay(tp_podv *v, const tp_rt_plan_job *pj, const cJSON *copy,
		       const cJSON *node);
/* Upstream's deprecation warning to a TrainJob of the runtime through a
 * reference of kind: false when p cannot say (no plan, another kind);
 * else *text (cleaned, *len bytes) or NULL when the runtime is not
 * deprecated. */
bool tp__rt_plan_deprecation(const tp_rt_plan *p, tp_kind kind, const char **text, size_t *len);
/* The context of a finding of the JobSet's network.subdomain (pod/trainjob.c),
 * or NULL without a plan. */
const char *tp__rt_plan_network(const tp_rt_plan *p);
/* The bytes p holds beside the runtime (its arenas as used, not as
 * reserved: an arena reserves 16 KiB once it holds anything). */
size_t tp__rt_plan_bytes(const tp_rt_plan *p);
/* For the tests: the jobs replayed so far in this process, and plans
 * read or not (on unless a test turns it off). */
size_t tp__rt_plan_replays(void);
void tp__rt_plan_set_replay(bool on);

/* Each finding of v into res as the API server writes it (no hint). */
int tp__podv_to_result(const tp_podv *v, tp_result *res);

/* ------------------------------------------------------------ reports
 * (pod/report.c) How a finding is shown where it is reported. */

/* What makes two findings the same finding in two templates: type, the
 * container by name (not index) and the path inside it, value, detail. In
 * v's arena; NULL when memory ran out. */
const char *tp__pod_key(tp_podv *v, const tp_pod_finding *f);
/* Add f to res at path with the API server's type, value and detail, then
 * the context (a printf format) and f's hint: "<detail>: <context>; <hint>". */
int tp__pod_report(tp_result *res, const char *path, const tp_pod_finding *f,
		   const char *context_fmt, ...) TP_PRINTF(4, 5);
/* "replicated job \"node\", container \"node\"" (no container: the job only). */
const char *tp__pod_where(tp_podv *v, const char *job, const tp_pod_finding *f);

/* A finding a TrainJob settles for its runtime: the trainer's node
 * container without an image takes spec.trainer.image (job: a replicated
 * job of the runtime). */
bool tp__pod_trainjob_fills(const cJSON *job, const tp_pod_finding *f);

/* The Pods the trainer's JobSet builder gives a runtime's replicated job
 * before any TrainJob's numNodes (expand/info.c): mlPolicy.numNodes (ml,
 * may be NULL) for a trainer job when the runtime has an mlPolicy, else the
 * template's parallelism; at least 1 (pod/count.c). */
long long tp__pod_runtime_count(const cJSON *ml, const cJSON *job);
/* The same with the job's step (tp__pod_step) read once by the caller:
 * the label lookup is the costly part of both (tp_meta_label). */
long long tp__pod_runtime_count_at(const cJSON *ml, const cJSON *job, const char *step);
/* The trainer.kubeflow.org/trainjob-ancestor-step label of a replicated
 * job's template, or NULL. */
const char *tp__pod_step(const cJSON *job);

/* ------------------------------------------------------------ defaults
 * (pod/defaults.c) What JobSet's webhook and controller, then the API
 * server's defaulting and its v1.32 feature gates, make of a replicated
 * job before the Job is validated and its Pods admitted, as far as a
 * verdict depends on it. */

/* What a JobSet's controller writes into every Pod template of it. */
typedef struct tp_pod_jobset {
	bool hostnames;        /* network.enableDNSHostnames: true unless false */
	const char *subdomain; /* network.subdomain, else the JobSet's name; NULL: not known */
} tp_pod_jobset;

/* Of jobset_spec (a JobSet spec: a runtime's spec.template.spec) and the
 * JobSet's name (the TrainJob's; NULL or "" when not known). */
void tp__pod_jobset_of(const cJSON *jobset_spec, const char *name, tp_pod_jobset *out);

/* The defaults of job_template (a batch/v1 JobTemplateSpec, js its
 * JobSet's part) written into *copy: into the caller's copy of it when
 * *copy is one, else into a new copy only when there is something to
 * write (*copy stays NULL: job_template is as the API server will see it).
 * TP_OK or TP_ENOMEM; *copy is the caller's to delete either way. */
int tp__pod_defaults(const cJSON *job_template, const tp_pod_jobset *js, cJSON **copy);
/* Whether a default is due in job_template without a JobSet (its own
 * subdomain is not looked at), or, with container_of, in the parts of that
 * container a TrainJob's trainer settings rewrite, its env and resources
 * (pod/plan.c: a runtime's job once, a TrainJob's node container). */
bool tp__pod_defaults_due(const cJSON *job_template, const cJSON *container_of);

/* The strict profile's checks of the Pods (pod/trainjob.c, pod/runtime.c),
 * called by the validators of admission/. */
struct tp_tj_ctx;
int tp__pod_check_trainjob(const struct tp_tj_ctx *ctx);
int tp__pod_check_runtime(const tp_options *opt, tp_kind kind, const cJSON *runtime,
			  tp_result *res);

/* ------------------------------------------------------------- names
 * (pod/names.c) The names JobSet and the Job controller make from the
 * TrainJob's name: each replicated job's longest Job name and Pod name, as
 * JobSet's webhook and kube-apiserver check them. The jobs are noted while
 * they are checked (their Pod counts are the builder's), then reported
 * together: the longest name the TrainJob may have takes them all. */
typedef struct tp_pod_name_job {
	const cJSON *job;
	const char *step; /* tp__pod_step of job */
	int index;
	long long pods;
} tp_pod_name_job;

#define TP_POD_NAMES_FEW 8

typedef struct tp_pod_names {
	tp_pod_name_job few[TP_POD_NAMES_FEW]; /* no allocation for a usual runtime */
	tp_pod_name_job *jobs;                 /* few, or an array past it */
	size_t n, cap;
} tp_pod_names;

/* The index-th replicated job of ctx->tmpl with the builder's Pod count
 * (parallelism = completions). TP_OK or TP_ENOMEM. */
int tp__pod_names_note(tp_pod_names *n, const cJSON *job, const char *step, int index,
		       long long pods);
/* Every noted job's names with ctx's TrainJob, and the names of the
 * PersistentVolumeClaims of its runtime's volumeClaimPolicies, into
 * ctx->res. */
int tp__pod_names_check(tp_pod_names *n, const struct tp_tj_ctx *ctx);
void tp__pod_names_free(tp_pod_names *n);
/* A runtime's replicated job (the index-th, its step: tp__pod_step) whose
 * name leaves no room for any TrainJob's name, into res (v: for memory). */
int tp__pod_runtime_names(tp_podv *v, const cJSON *ml, const cJSON *job, const char *step,
			  int index, tp_result *res);
/* The JobSet's spec.network.subdomain of jobset_tmpl (a runtime's
 * spec.template, or a TrainJob's with its runtimePatches), which JobSet
 * writes into every Pod's spec.subdomain: ValidatePodSpec's DNS-1123 label
 * rule, each finding into res at spec.template.spec.network.subdomain with
 * context (pod/runtime.c). */
int tp__pod_check_subdomain(tp_podv *v, const cJSON *jobset_tmpl, const char *context,
			    tp_result *res);
/* A runtime's volumeClaimPolicies template whose name leaves no room for
 * any TrainJob's in its PersistentVolumeClaim's, into res. */
int tp__pod_runtime_claim_names(tp_podv *v, const cJSON *runtime, tp_result *res);

/* The admission plugins' refusals that depend on objects in the cluster
 * (ServiceAccount, Priority) for the Pods of ctx->tmpl's replicated jobs,
 * looked up through ctx->opt (pod/cluster_state.c); checked[i] (n of them)
 * the i-th job as the check built it (pod/trainjob.c), not built again. */
struct tp_pod_checked;
int tp__pod_cluster_state(const struct tp_tj_ctx *ctx, const struct tp_pod_checked *checked,
			  size_t n);
/* The LimitRanges (a Forbidden per refused job) and ResourceQuotas (a
 * warning per quota the Pods together exceed) of namespace ns on those Pods
 * (pod/cluster_limits.c). */
int tp__pod_cluster_limits(const struct tp_tj_ctx *ctx, const char *ns,
			   const struct tp_pod_checked *checked, size_t n);

/* One replicated job of a TrainJob's template (ctx->tmpl) as the check sees
 * it: a copy with the TrainJob's settings and the plugins' Pod parts
 * written in (plugins/plugin.h), or NULL when nothing is (the job's own
 * template is it), and what Pod Security should say of a part. */
typedef struct tp_pod_checked {
	cJSON *copy;               /* a JobTemplateSpec, owned */
	const char *psa_container; /* a part without a securityContext, or NULL */
	const char *psa_note;
} tp_pod_checked;

/* Every replicated job of ctx->tmpl as the check sees it, without checking
 * it: *out (n of them, one per item of spec.replicatedJobs) for
 * tp__pod_checked_free (TP_ENOMEM: *out is NULL). For the tests that hold
 * the check to the expansion. */
int tp__pod_checked_jobs(const struct tp_tj_ctx *ctx, tp_pod_checked **out, size_t *n);
void tp__pod_checked_free(tp_pod_checked *jobs, size_t n);

/* Pod Security of the Pods of ctx->tmpl's replicated jobs in the TrainJob's
 * namespace (pod/trainjob_security.c): checked[i] (n of them, or NULL) the
 * i-th job as the check sees it. */
int tp__pod_security_trainjob(const struct tp_tj_ctx *ctx, const tp_pod_checked *checked,
			      size_t n);

/* ------------------------------------------------------ pod security */

/* One check's verdict, as pod-security-admission's CheckResult. */
typedef struct tp_psa_verdict {
	bool allowed;
	const char *reason; /* "allowPrivilegeEscalation != false" */
	const char *detail; /* may be "" */
} tp_psa_verdict;

/* Every check that applies at level/version (pod/security_checks.c), in
 * pod-security-admission's order: baseline checks by ID, then restricted
 * ones, with the overrides of the restricted checks. The forbidden reasons
 * and details joined as ForbiddenDetail() joins them go to detail; *allowed
 * false when any check forbids. minor -1 is "latest". */
int tp__psa_evaluate(tp_psa_level level, int minor, const cJSON *pod_meta, const cJSON *pod_spec,
		     tp_arena *a, tp_buf *detail, bool *allowed);

#endif
