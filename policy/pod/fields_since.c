/*
 * pod/fields_since.c — the fields of a Job template that the cluster's
 * Kubernetes release does not know yet, or knows behind a feature gate that
 * is off by default. The built-in JobSet CRD's Pod template schema is a
 * newer release's PodSpec (kubernetes-sigs/jobset@08dfbdfd builds with
 * k8s.io/api v0.36), so the JobSet's schema admits, and its controller
 * sends, fields an older API server does not have:
 *   - a field the release's API types do not have is an unknown field. The
 *     JobSet controller creates its Jobs without ?fieldValidation=, which
 *     the API server takes as Warn (k8s.io/apiserver's handlers/rest.go
 *     fieldValidation): the Job is created without the field, and the
 *     controller gets the warning `unknown field "spec.template.spec.X"`
 *     (kubectl, whose --validate is strict, is refused "strict decoding
 *     error: unknown field ..." instead). Either way the Pods never get
 *     what the runtime asked for, whatever the cluster's gates: refused.
 *   - a field behind a gate off by default is dropped without a word by
 *     the API server's gate-dependent dropping (pkg/api/pod/util.go
 *     dropDisabledFields, pkg/registry/batch/job/strategy.go), unless the
 *     cluster turns the gate on, which nobody outside it can tell: a
 *     warning, never a denial.
 * When each field came and when its gate turned on by default: v1.32's
 * pkg/features/versioned_kube_features.go for the gates up to 1.32, the
 * release notes of 1.33 to 1.36 for the later ones.
 */
#include "policy/pod/members.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where a member is, from the Job template down. */
typedef enum since_at {
	AT_JOB,         /* spec */
	AT_POD,         /* spec.template.spec */
	AT_POD_SC,      /* spec.template.spec.securityContext */
	AT_VOLUME,      /* spec.template.spec.volumes[i] */
	AT_CONTAINER,   /* containers[i], initContainers[i] */
	AT_INIT,        /* initContainers[i] only */
	AT_CONTAINER_SC, /* a container's securityContext */
	AT_LIFECYCLE,   /* a container's lifecycle */
	AT_HANDLER,     /* lifecycle.postStart, lifecycle.preStop */
	AT_MOUNT,       /* volumeMounts[i] */
	AT_ENV_SOURCE,  /* env[i].valueFrom */
	AT_RESOURCES,   /* a container's resources */
	AT_COUNT
} since_at;

typedef struct since {
	since_at at;
	const char *member;
	int added;        /* the first 1.<minor> whose API types have it */
	int on;           /* the first whose gate is on by default; 0: on when added,
			   * or not known past the supported releases */
	const char *gate;
	/* where the member is in its place's struct of members (pod/members.h:
	 * AT_JOB tp_pod_jm, AT_POD tp_pod_sm, AT_CONTAINER and AT_INIT
	 * tp_pod_cm), read there instead of looked up; 0: looked up (the other
	 * places, whose objects are not walked into a struct) */
	size_t slot;
} since;

#define JOB(f) offsetof(tp_pod_jm, f)
#define POD(f) offsetof(tp_pod_sm, f)
#define CONTAINER(f) offsetof(tp_pod_cm, f)

static const since fields[] = {
	/* batch/v1 JobSpec */
	{ AT_JOB, "podReplacementPolicy", 28, 29, "JobPodReplacementPolicy",
	  JOB(pod_replacement_policy) },
	{ AT_JOB, "backoffLimitPerIndex", 28, 29, "JobBackoffLimitPerIndex",
	  JOB(backoff_limit_per_index) },
	{ AT_JOB, "maxFailedIndexes", 28, 29, "JobBackoffLimitPerIndex", JOB(max_failed_indexes) },
	{ AT_JOB, "managedBy", 30, 32, "JobManagedBy", JOB(managed_by) },
	{ AT_JOB, "successPolicy", 30, 31, "JobSuccessPolicy", JOB(success_policy) },
	/* core/v1 PodSpec */
	{ AT_POD, "hostUsers", 25, 33, "UserNamespacesSupport", POD(host_users) },
	{ AT_POD, "resourceClaims", 26, 34, "DynamicResourceAllocation", POD(resource_claims) },
	{ AT_POD, "resources", 32, 34, "PodLevelResources", POD(resources) },
	{ AT_POD, "hostnameOverride", 34, 0, "HostnameOverride", POD(hostname_override) },
	{ AT_POD, "schedulingGroup", 36, 0, "GenericWorkload", POD(scheduling_group) },
	{ AT_POD_SC, "appArmorProfile", 30, 0, "AppArmorFields" },
	{ AT_POD_SC, "supplementalGroupsPolicy", 31, 33, "SupplementalGroupsPolicy" },
	{ AT_POD_SC, "seLinuxChangePolicy", 32, 33, "SELinuxChangePolicy" },
	{ AT_VOLUME, "image", 31, 35, "ImageVolume" },
	/* core/v1 Container */
	{ AT_CONTAINER, "resizePolicy", 27, 33, "InPlacePodVerticalScaling",
	  CONTAINER(resize_policy) },
	{ AT_INIT, "restartPolicy", 28, 29, "SidecarContainers", CONTAINER(restart_policy) },
	{ AT_CONTAINER, "restartPolicyRules", 34, 0, "ContainerRestartRules",
	  CONTAINER(restart_policy_rules) },
	{ AT_CONTAINER_SC, "appArmorProfile", 30, 0, "AppArmorFields" },
	{ AT_LIFECYCLE, "stopSignal", 33, 0, "ContainerStopSignals" },
	{ AT_HANDLER, "sleep", 29, 30, "PodLifecycleSleepAction" },
	{ AT_MOUNT, "recursiveReadOnly", 30, 31, "RecursiveReadOnlyMounts" },
	{ AT_ENV_SOURCE, "fileKeyRef", 34, 0, "EnvFiles" },
	{ AT_RESOURCES, "claims", 26, 34, "DynamicResourceAllocation" },
};

/* ------------------------------------------------------------ versions */

int tp_kube_minor(const tp_options *opt)
{
	return opt && opt->kubernetes_minor > 0 ? opt->kubernetes_minor : TP_KUBE_MINOR_NEWEST;
}

/* "N" or "N.P" after "1.": the minor, or -1. */
static int minor_of(const char *s)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	long n = strtol(s, &end, 10);
	if (*end == '.') {
		const char *p = end + 1;
		if (*p < '0' || *p > '9')
			return -1;
		strtol(p, &end, 10);
	}
	return *end || n > 1000 ? -1 : (int)n;
}

int tp_kube_version_parse(const char *s, int *minor, char *why, size_t whylen)
{
	const char *p = s && (*s == 'v' || *s == 'V') ? s + 1 : s;
	int n = p && !strncmp(p, "1.", 2) ? minor_of(p + 2) : -1;
	if (n < TP_KUBE_MINOR_OLDEST || n > TP_KUBE_MINOR_NEWEST) {
		if (why && whylen)
			snprintf(why, whylen, "%s: use 1.%d to 1.%d, the Kubernetes versions "
				 "supported", n < 0 ? "not a Kubernetes version 1.N" :
				 "not a supported Kubernetes version", TP_KUBE_MINOR_OLDEST,
				 TP_KUBE_MINOR_NEWEST);
		return TP_EINVAL;
	}
	*minor = n;
	return TP_OK;
}

/* ------------------------------------------------------------ the check */

typedef struct since_walk {
	tp_podv *v;
	int minor;
	tp_result *warnings; /* NULL: none wanted */
	uint32_t *present;   /* not NULL: the fields[] found are noted, not judged */
	/* per place, the fields[] (bit i: fields[i]) the release has something
	 * to say about: the others are neither unknown nor gated off, so their
	 * places are not walked (the whole walk was 2,450 instructions of make
	 * bench's TrainJob review at 1.32, callgrind, most of it finding nothing) */
	uint32_t want[AT_COUNT];
	/* looking only (tp__pod_check_since's first walk): no path is built and
	 * a field to judge sets found instead */
	bool quiet, found;
} since_walk;

_Static_assert(sizeof(fields) / sizeof(fields[0]) <= 32, "since_walk.want has a bit a field");

/* Fills w->want for w->minor (every field when w notes what is present);
 * the fields[] (bit i: fields[i]) the release has something to say about. */
static uint32_t wanted(since_walk *w)
{
	uint32_t any = 0;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const since *f = &fields[i];
		if (w->present || w->minor < f->added || (f->on && w->minor < f->on)) {
			w->want[f->at] |= UINT32_C(1) << i;
			any |= UINT32_C(1) << i;
		}
	}
	return any;
}

static void unknown(since_walk *w, const since *f)
{
	tp_podv *v = w->v;
	size_t mark = tp__podv_push_member(v, f->member);
	const char *path = tp__podv_printf(v, "%s", v->path);
	const char *hint = tp__podv_printf(v, "remove it, or run the Pods on Kubernetes 1.%d or "
					   "newer", f->added);
	if (path)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, NULL, NULL, hint,
			     "unknown field \"%s\": not known to Kubernetes 1.%d (added in 1.%d), "
			     "whose API server creates the Job without it", path, w->minor,
			     f->added);
	tp__podv_pop(v, mark);
}

static void gated(since_walk *w, const since *f)
{
	const char *rjob = w->v->rjob ? w->v->rjob : "";
	if (w->warnings &&
	    tp_result_warn(w->warnings, "replicated job \"%s\": %s.%s is dropped by Kubernetes "
			   "1.%d unless the cluster turns its %s feature gate on (off by "
			   "default): the Job and its Pods would be created without it", rjob,
			   w->v->path, f->member, w->minor, f->gate))
		w->v->rc = TP_ENOMEM;
}

/* The walk's path, built only when the walk is not quiet: a runtime's
 * templates seldom hold a field to judge, and the path to each list item
 * looked at was most of the walk (pushes and pops: 1,200 instructions of
 * a ClusterTrainingRuntime review of three jobs, callgrind). */
static size_t wpush(since_walk *w, const char *suffix)
{
	return w->quiet ? 0 : tp__podv_push(w->v, suffix);
}
static size_t wpush_member(since_walk *w, const char *member)
{
	return w->quiet ? 0 : tp__podv_push_member(w->v, member);
}
static size_t wpush_index(since_walk *w, const char *member, int i)
{
	return w->quiet ? 0 : tp__podv_push_index(w->v, member, i);
}
static void wpop(since_walk *w, size_t mark)
{
	if (!w->quiet)
		tp__podv_pop(w->v, mark);
}

/* f's member m (NULL: none) of the object at the current path. */
static void judge_member(since_walk *w, const since *f, const cJSON *m)
{
	if (!tp__vset(m))
		return;
	if (w->quiet)
		w->found = true;
	else if (w->present)
		*w->present |= UINT32_C(1) << (f - fields);
	else if (w->minor < f->added)
		unknown(w, f);
	else if (f->on && w->minor < f->on)
		gated(w, f);
}

/* The members of obj (at the current path) the table has at at. */
static void judge(since_walk *w, const cJSON *obj, since_at at)
{
	for (uint32_t bits = obj ? w->want[at] : 0; bits; bits &= bits - 1) {
		const since *f = &fields[__builtin_ctz(bits)];
		judge_member(w, f, tp_member(obj, f->member));
	}
}

/* The same of an object whose members are read into a struct (members: a
 * tp_pod_jm, tp_pod_sm or tp_pod_cm, as at says): each read at its slot. */
static void judge_slots(since_walk *w, const void *members, since_at at)
{
	for (uint32_t bits = w->want[at]; bits; bits &= bits - 1) {
		const since *f = &fields[__builtin_ctz(bits)];
		judge_member(w, f, *(const cJSON *const *)((const char *)members + f->slot));
	}
}

/* The member m (read by the caller: an object, else nothing) at path
 * suffix ".member". */
static void judge_at(since_walk *w, const cJSON *m, const char *member, since_at at)
{
	const cJSON *o = w->want[at] ? tp__vobj(m) : NULL;
	if (!o)
		return;
	size_t mark = wpush_member(w, member);
	judge(w, o, at);
	wpop(w, mark);
}

/* obj's member (an object) at path suffix ".member". */
static void judge_in(since_walk *w, const cJSON *obj, const char *member, since_at at)
{
	if (w->want[at])
		judge_at(w, tp_member(obj, member), member, at);
}

/* Each object of obj's list member at "<dotted>[i]" (dotted: ".member", the
 * path's spelling, so that no printf makes it for each list: 2,160
 * instructions of make bench's ClusterTrainingRuntime review, callgrind),
 * and in each the member inner (NULL: the item itself). */
static void judge_list(since_walk *w, const cJSON *m, const char *dotted, const char *inner,
		       since_at at)
{
	const cJSON *list = w->want[at] ? tp__varr(m) : NULL;
	int i = 0;
	for (const cJSON *it = list ? list->child : NULL; it; it = it->next, i++) {
		size_t mark = wpush_index(w, dotted, i);
		if (inner)
			judge_in(w, it, inner, at);
		else
			judge(w, it, at);
		wpop(w, mark);
	}
}

/* obj's list member at "<dotted>[i]", as judge_list. */
static void judge_items(since_walk *w, const cJSON *obj, const char *dotted, const char *inner,
			since_at at)
{
	if (w->want[at])
		judge_list(w, tp_member(obj, dotted + 1), dotted, inner, at);
}

static void judge_container(since_walk *w, const tp_pod_cm *c, bool init)
{
	judge_slots(w, c, AT_CONTAINER);
	if (init)
		judge_slots(w, c, AT_INIT);
	judge_at(w, c->security_context, "securityContext", AT_CONTAINER_SC);
	judge_at(w, c->resources, "resources", AT_RESOURCES);
	judge_list(w, c->volume_mounts, ".volumeMounts", NULL, AT_MOUNT);
	judge_list(w, c->env, ".env", "valueFrom", AT_ENV_SOURCE);
	bool in_lc = w->want[AT_LIFECYCLE] || w->want[AT_HANDLER];
	const cJSON *lc = in_lc ? tp__vobj(c->lifecycle) : NULL;
	if (!lc)
		return;
	size_t mark = wpush(w, ".lifecycle");
	judge(w, lc, AT_LIFECYCLE);
	judge_in(w, lc, "postStart", AT_HANDLER);
	judge_in(w, lc, "preStop", AT_HANDLER);
	wpop(w, mark);
}

/* c judged at the current path (its own), whole or only what the trainer's
 * settings write (in judge_container's order): findings about a container
 * name it, as pod/containers.c's do. */
static void in_container(since_walk *w, const cJSON *c, bool init, bool trainer)
{
	tp_podv *v = w->v;
	v->list = init ? TP_POD_INIT : TP_POD_CONTAINERS;
	v->container = tp__mstr(c, "name");
	v->container_len = v->len;
	if (trainer) {
		judge_in(w, c, "resources", AT_RESOURCES);
		judge_items(w, c, ".env", "valueFrom", AT_ENV_SOURCE);
	} else {
		tp_pod_cm m; /* its members read once for all the places in it */
		tp__pod_cm_fill(&m, c);
		judge_container(w, &m, init);
	}
	v->list = TP_POD_NONE;
	v->container = NULL;
	v->container_len = 0;
}

static void judge_containers(since_walk *w, const tp_pod_sm *spec, bool init)
{
	uint32_t any = 0;
	for (int at = AT_CONTAINER; at < AT_COUNT; at++)
		any |= w->want[at];
	const cJSON *list = any ? tp__varr(init ? spec->init_containers : spec->containers) : NULL;
	int i = 0;
	for (const cJSON *c = list ? list->child : NULL; c; c = c->next, i++) {
		if (!cJSON_IsObject(c))
			continue;
		size_t mark = wpush_index(w, init ? ".initContainers" : ".containers", i);
		in_container(w, c, init, false);
		wpop(w, mark);
	}
}

/* m: the Job spec's and the Pod spec's members, read once (pod/members.h) */
static void walk(since_walk *w, const tp_pod_tm *m)
{
	const tp_pod_sm *pod = &m->pod;
	size_t mark = wpush(w, "spec");
	judge_slots(w, &m->job, AT_JOB);
	size_t pmark = wpush(w, ".template.spec");
	judge_slots(w, pod, AT_POD);
	judge_at(w, pod->security_context, "securityContext", AT_POD_SC);
	judge_list(w, pod->volumes, ".volumes", NULL, AT_VOLUME);
	judge_containers(w, pod, false);
	judge_containers(w, pod, true);
	wpop(w, pmark);
	wpop(w, mark);
}

/* wanted() of each supported release, worked out once: each check asks
 * for each job (the loop over the table was 380 instructions a job,
 * callgrind). */
#define MINORS (TP_KUBE_MINOR_NEWEST - TP_KUBE_MINOR_OLDEST + 1)
static struct {
	uint32_t want[AT_COUNT];
	uint32_t any;
} loud[MINORS];
static pthread_once_t loud_once = PTHREAD_ONCE_INIT;

static void fill_loud(void)
{
	for (int m = TP_KUBE_MINOR_OLDEST; m <= TP_KUBE_MINOR_NEWEST; m++) {
		since_walk w = { .minor = m };
		loud[m - TP_KUBE_MINOR_OLDEST].any = wanted(&w);
		memcpy(loud[m - TP_KUBE_MINOR_OLDEST].want, w.want, sizeof(w.want));
	}
}

/* w->want filled for opt's release: the fields[] it has something to say
 * about (none when it is not known). */
static uint32_t prepare(since_walk *w, const tp_options *opt)
{
	if (opt && opt->kubernetes_minor < 0) /* TP_KUBE_MINOR_UNKNOWN: nothing to say */
		return 0;
	if (w->minor < TP_KUBE_MINOR_OLDEST || w->minor > TP_KUBE_MINOR_NEWEST)
		return wanted(w);
	pthread_once(&loud_once, fill_loud);
	memcpy(w->want, loud[w->minor - TP_KUBE_MINOR_OLDEST].want, sizeof(w->want));
	return loud[w->minor - TP_KUBE_MINOR_OLDEST].any;
}

/* The check of m, w prepared (some field wanted). */
static int check_since(since_walk *w, const tp_pod_tm *m)
{
	walk(w, m); /* quiet: is there anything to say? */
	w->quiet = false;
	if (w->found) /* then again, saying it where it is */
		walk(w, m);
	return w->v->rc;
}

int tp__pod_check_since(tp_podv *v, const tp_options *opt, const cJSON *job_template,
			tp_result *warnings)
{
	since_walk w = { v, tp_kube_minor(opt), warnings, NULL, { 0 }, true, false };
	if (!prepare(&w, opt)) /* a release that knows every field with its gate on */
		return v->rc;
	tp_pod_tm m;
	tp__pod_tm_fill(&m, job_template);
	return check_since(&w, &m);
}

int tp__pod_check_since_tm(tp_podv *v, const tp_options *opt, const tp_pod_tm *m,
			   tp_result *warnings)
{
	since_walk w = { v, tp_kube_minor(opt), warnings, NULL, { 0 }, true, false };
	return prepare(&w, opt) ? check_since(&w, m) : v->rc;
}

int tp__pod_since_fields(tp_podv *v, const cJSON *job_template, uint32_t *present)
{
	*present = 0;
	since_walk w = { v, 0, NULL, present, { 0 } };
	wanted(&w);
	tp_pod_tm m;
	tp__pod_tm_fill(&m, job_template);
	walk(&w, &m);
	return v->rc;
}

bool tp__pod_since_silent(const tp_options *opt, uint32_t present)
{
	since_walk w = { .minor = tp_kube_minor(opt) };
	return !(prepare(&w, opt) & present);
}

int tp__pod_check_since_trainer(tp_podv *v, const tp_options *opt, const cJSON *c, int index,
				tp_result *warnings)
{
	since_walk w = { v, tp_kube_minor(opt), warnings, NULL, { 0 } };
	if (!prepare(&w, opt) || !cJSON_IsObject(c))
		return v->rc;
	size_t mark = tp__podv_push_index(v, "spec.template.spec.containers", index);
	in_container(&w, c, false, true);
	tp__podv_pop(v, mark);
	return v->rc;
}
