/*
 * admission/jobset.c — JobSet's own admission rules (the jobset webhook's
 * ValidateCreate / ValidateUpdate, docs/admission-protocol.md §2.3), so that a
 * JobSet we build, or one a user brings, is judged as a default JobSet
 * install would judge it: feature gates InPlaceRestart, RestartJob and
 * ElasticJobSet off.
 *
 * Upstream mixes field errors with plain errors; the plain ones reach the
 * user as field.InternalError(nil, err), so here they are TP_FIELD_INTERNAL
 * with no path, and their texts say which field they mean.
 *
 * Validation sees the object as JobSet's mutating webhook leaves it on
 * CREATE: completionMode Indexed when unset, failure-policy rules named
 * failurePolicyRule<i> when unnamed; and as the CRD schema defaults it:
 * replicas 1, groupName "default".
 *
 * Every rule is linear in the JobSet: names are looked up through indexes
 * (core/index.h), never by a scan of the jobs, rules or volumes for each
 * one. ValidateUpdate is admission/jobset_update.c.
 */
#include "policy/admission/jobset.h"
#include "policy/core/deadline.h"
#include "policy/core/index.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INT32 2147483647LL
#define MAX_MANAGED_BY 63
#define MAX_VOLUME_CLAIM 63
#define MAX_RESTART_JOB_REPLICAS 1024
#define TOO_LONG_63 "must be no more than 63 characters"

#define MSG_SUBDOMAIN_TOO_LONG ".spec.network.subdomain is too long, must be less than 63 characters"
#define MSG_GROUP_TOO_LONG ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
#define MSG_JOB_TOO_LONG \
	"JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
#define MSG_POD_TOO_LONG \
	"JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"

/* ------------------------------------------------------------ name rules
 *
 * apimachinery's Is* functions return every message that applies (length
 * and pattern), while core/names.c answers with the first. The pattern checks
 * are redone here; the message texts stay in core/names.c, which hands over its
 * pattern message for any value that breaks only the pattern ("-").
 */

static bool lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool any_alnum(char c)
{
	return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

static bool label_shape(const char *s, size_t n, bool alpha_first)
{
	if (n == 0 || !lower_alnum(s[n - 1]))
		return false;
	if (alpha_first ? !(s[0] >= 'a' && s[0] <= 'z') : !lower_alnum(s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

static bool subdomain_shape(const char *s)
{
	for (;;) {
		const char *dot = strchr(s, '.');
		size_t n = dot ? (size_t)(dot - s) : strlen(s);
		if (!label_shape(s, n, false))
			return false;
		if (!dot)
			return true;
		s = dot + 1;
	}
}

static bool label_value_shape(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return true;
	if (!any_alnum(s[0]) || !any_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!any_alnum(s[i]) && !strchr("-_.", s[i]))
			return false;
	return true;
}

/* IsDNS1035Label: the messages that apply, length first; returns how many. */
static int dns1035_errors(const char *s, const char *msg[2])
{
	int n = 0;
	if (strlen(s) > 63)
		msg[n++] = TOO_LONG_63;
	if (!label_shape(s, strlen(s), true))
		msg[n++] = tp__check_dns1035_label("-");
	return n;
}

static int subdomain_errors(const char *s, const char *msg[2])
{
	int n = 0;
	if (strlen(s) > 253)
		msg[n++] = "must be no more than 253 characters";
	if (!subdomain_shape(s))
		msg[n++] = tp__check_dns1123_subdomain("-");
	return n;
}

static int label_value_errors(const char *s, const char *msg[2])
{
	int n = 0;
	if (strlen(s) > 63)
		msg[n++] = TOO_LONG_63;
	if (!label_value_shape(s))
		msg[n++] = tp__check_label_value("-");
	return n;
}

/* ------------------------------------------------------------ helpers */

struct check {
	tp_result *res;
	const cJSON *spec;
	const cJSON *jobs;   /* spec.replicatedJobs, or NULL */
	tp_index jobs_by_name;
	tp_strset names_so_far; /* the names of the jobs up to the one checked */
	int rc;              /* TP_ENOMEM of an index: the checks are not to be trusted */
	char name[256];      /* the JobSet name the generated names start with */
};

/* A plain upstream error: field.InternalError(nil, err). */
static void plain(struct check *c, const char *fmt, ...) TP_PRINTF(2, 3);
static void plain(struct check *c, const char *fmt, ...)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	va_list ap;
	va_start(ap, fmt);
	int rc = tp_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	tp_result_add(c->res, TP_FIELD_INTERNAL, NULL, NULL, "%s", rc ? fmt : b.data);
	tp_buf_free(&b);
}

static void invalid(struct check *c, const char *path, const char *quoted, const char *detail)
{
	tp_result_add(c->res, TP_FIELD_INVALID, path, quoted, "%s", detail);
}

static long long int_or(const cJSON *obj, const char *dotted, long long dflt)
{
	long long v;
	return tp_get_int(obj, dotted, &v) ? v : dflt;
}

static const char *str_or(const cJSON *obj, const char *dotted, const char *dflt)
{
	const char *s = tp_get_str(obj, dotted);
	return s ? s : dflt;
}

/* JobSet's defaulting: completionMode Indexed when unset. */
static bool is_indexed(const cJSON *job)
{
	const char *mode = tp_get_str(job, "template.spec.completionMode");
	return !mode || !strcmp(mode, "Indexed");
}

static bool has_job(const struct check *c, const char *name)
{
	return tp__index_named(&c->jobs_by_name, name) != NULL;
}

/* metadata.name, else generateName as the API server completes it (at most
 * 58 characters and 5 random ones; only the length matters here, so the
 * random part is a fixed stand-in). */
static void set_name(struct check *c, const cJSON *js)
{
	const char *name = tp_meta_name(js);
	const char *gen = tp_get_str(js, "metadata.generateName");
	if (!*name && gen && *gen)
		snprintf(c->name, sizeof(c->name), "%.58sxxxxx", gen);
	else
		snprintf(c->name, sizeof(c->name), "%.253s", name);
}

/* ------------------------------------------------------------ CREATE */

static void check_spec_level(struct check *c)
{
	if (!strcmp(str_or(c->spec, "failurePolicy.restartStrategy", ""), "InPlaceRestart"))
		plain(c, "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature "
			 "gate is disabled");
	const cJSON *first = c->jobs ? c->jobs->child : NULL;
	const cJSON *dep = tp_get(first, "dependsOn");
	if (dep && !cJSON_IsNull(dep))
		plain(c, "DependsOn can't be set for the first ReplicatedJob");

	const char *sub = str_or(c->spec, "network.subdomain", "");
	if (*sub) {
		const char *msg[2];
		const char *q = tp_result_quote(c->res, sub);
		for (int i = 0, n = subdomain_errors(sub, msg); i < n; i++)
			invalid(c, "spec.network.subdomain", q, msg[i]);
		for (int i = 0, n = dns1035_errors(sub, msg); i < n; i++)
			invalid(c, "spec.network.subdomain", q,
				strstr(msg[i], TOO_LONG_63) ? MSG_SUBDOMAIN_TOO_LONG : msg[i]);
	}
	const char *mb = tp_get_str(c->spec, "managedBy");
	if (mb) {
		tp__check_domain_prefixed_path(c->res, "spec.managedBy", mb);
		if (strlen(mb) > MAX_MANAGED_BY)
			tp_result_add(c->res, TP_FIELD_TOO_LONG, "spec.managedBy", NULL,
				      "may not be more than %d bytes", MAX_MANAGED_BY);
	}
}

/* The longest generated job name must be a DNS-1035 label; for Indexed jobs
 * with completions, the longest pod name (with its 5-character suffix) too. */
static void check_generated_names(struct check *c, const cJSON *job, const char *path)
{
	long long replicas = int_or(job, "replicas", 1), completions;
	tp_buf name = TP_BUF_INIT(1 << 16);
	if (tp_buf_addf(&name, "%s-%s-%lld", c->name, str_or(job, "name", ""), replicas - 1))
		goto out;
	const char *q = tp_result_quote(c->res, name.data);
	const char *msg[2];
	for (int i = 0, n = dns1035_errors(name.data, msg); i < n; i++)
		invalid(c, path, q, strstr(msg[i], TOO_LONG_63) ? MSG_JOB_TOO_LONG : msg[i]);
	if (!is_indexed(job) || !tp_get_int(job, "template.spec.completions", &completions))
		goto out;
	if (tp_buf_addf(&name, "-%lld-abcde", completions - 1))
		goto out;
	/* upstream shows the job name as the value here too */
	for (int i = 0, n = dns1035_errors(name.data, msg); i < n; i++)
		invalid(c, path, q, strstr(msg[i], TOO_LONG_63) ? MSG_POD_TOO_LONG : msg[i]);
out:
	tp_buf_free(&name);
}

/* dependsOn may name the jobs before this one (and, as upstream adds the
 * job's own name to the set first, itself). */
static void check_depends_on(struct check *c, const cJSON *job)
{
	const char *rname = str_or(job, "name", "");
	const cJSON *deps = tp_get_array(job, "dependsOn");
	c->rc |= tp__strset_add(&c->names_so_far, rname, NULL);
	for (const cJSON *d = deps ? deps->child : NULL; d; d = d->next) {
		const char *dn = str_or(d, "name", "");
		if (!tp__strset_has(&c->names_so_far, dn))
			plain(c, "replicatedJob: %s cannot depend on replicatedJob: %s", rname, dn);
	}
}

static void check_job(struct check *c, const cJSON *job, int idx)
{
	char path[96];
	const char *rname = str_or(job, "name", "");
	long long parallelism = int_or(job, "template.spec.parallelism", 1);
	long long replicas = int_or(job, "replicas", 1);
	/* divided, not multiplied: values past int32 would overflow long long */
	if (parallelism > 0 && replicas > 0 && replicas > MAX_INT32 / parallelism)
		plain(c, "the product of replicas and parallelism must not exceed %lld for "
			 "replicatedJob '%s'", MAX_INT32, rname);

	const char *group = str_or(job, "groupName", "default");
	const char *msg[2];
	snprintf(path, sizeof(path), "spec.replicatedJobs[%d].groupName", idx);
	for (int i = 0, n = dns1035_errors(group, msg); i < n; i++)
		invalid(c, path, tp_result_quote(c->res, group),
			strstr(msg[i], TOO_LONG_63) ? MSG_GROUP_TOO_LONG : msg[i]);

	snprintf(path, sizeof(path), "spec.replicatedJobs[%d].name", idx);
	check_generated_names(c, job, path);
	check_depends_on(c, job);
}

static void check_jobs(struct check *c)
{
	int idx = 0;
	for (const cJSON *job = c->jobs ? c->jobs->child : NULL; job && !tp__tick(1);
	     job = job->next, idx++)
		check_job(c, job, idx);
	const cJSON *targets = tp_get_array(c->spec, "successPolicy.targetReplicatedJobs");
	for (const cJSON *t = targets ? targets->child : NULL; t; t = t->next)
		if (cJSON_IsString(t) && !has_job(c, t->valuestring))
			plain(c, "invalid replicatedJob name '%s' does not appear in .spec.ReplicatedJobs",
			      t->valuestring);
}

/* ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ */
static bool rule_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return false;
	if (!any_alnum(s[n - 1]) && s[n - 1] != '_')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!any_alnum(s[i]) && !strchr("_,:", s[i]))
			return false;
	return true;
}

/* A rule's name as JobSet's defaulting leaves it. */
static const char *rule_name(const cJSON *rule, int idx, char *buf, size_t n)
{
	const char *s = str_or(rule, "name", "");
	if (*s)
		return s;
	snprintf(buf, n, "failurePolicyRule%d", idx);
	return buf;
}

static bool known_reason(const char *r)
{
	static const char *const reasons[] = { "BackoffLimitExceeded", "DeadlineExceeded",
					       "FailedIndexes", "MaxFailedIndexesExceeded",
					       "PodFailurePolicy" };
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (!strcmp(r, reasons[i]))
			return true;
	return false;
}

static void check_rule(struct check *c, const cJSON *rule, const char *name)
{
	size_t len = strlen(name);
	if (len < 1 || len > 128)
		plain(c, "invalid failure policy rule name of length %zu, the rule name must be at "
			 "least 1 characters long and at most 128 characters long", len);
	if (!rule_name_ok(name))
		plain(c, "invalid failure policy rule name '%s', a failure policy rule name must "
			 "start with an alphabetic character, optionally followed by a string of "
			 "alphanumeric characters or '_,:', and must end with an alphanumeric "
			 "character or '_'", name);
	const cJSON *targets = tp_get_array(rule, "targetReplicatedJobs");
	for (const cJSON *t = targets ? targets->child : NULL; t; t = t->next)
		if (cJSON_IsString(t) && !has_job(c, t->valuestring))
			plain(c, "invalid replicatedJob name '%s' in failure policy does not appear "
				 "in .spec.ReplicatedJobs", t->valuestring);
	const cJSON *reasons = tp_get_array(rule, "onJobFailureReasons");
	for (const cJSON *r = reasons ? reasons->child : NULL; r; r = r->next)
		if (cJSON_IsString(r) && !known_reason(r->valuestring))
			plain(c, "invalid job failure reason '%s' in failure policy is not a "
				 "recognized job failure reason", r->valuestring);
}

/* Each rule's name and the next rule of the same name. */
struct rule_named {
	char made[32];    /* failurePolicyRule<i>, for a rule with no name */
	const char *name;
	int next;         /* the next rule of this name, or -1 */
	int last;         /* the first rule of a name: the last one so far */
	bool repeat;      /* an earlier rule has this name */
};

/* Rules of one name are chained in order through a table of each name's
 * first rule (a scan of the rules for each rule before). */
static int chain_rule_names(const cJSON *rules, struct rule_named *v)
{
	tp_htab firsts = TP_HTAB_INIT;
	int i = 0, rc = TP_OK;
	for (const cJSON *r = rules->child; r && !rc; r = r->next, i++) {
		v[i].name = rule_name(r, i, v[i].made, sizeof(v[i].made));
		v[i].next = -1;
		v[i].last = i;
		uint64_t h = tp__hash_str(v[i].name);
		size_t pos = 0;
		struct rule_named *f;
		while ((f = (struct rule_named *)tp__htab_next(&firsts, h, &pos)) &&
		       strcmp(f->name, v[i].name))
			;
		if (f) {
			v[f->last].next = i;
			f->last = i;
			v[i].repeat = true;
		} else {
			rc = tp__htab_put(&firsts, h, &v[i]);
		}
	}
	tp__htab_free(&firsts);
	return rc;
}

/* "rule names are not unique, rules with indices [0 2] all have the same
 * name 'x'", once per repeated name, in order of first use. */
static void check_rule_names_unique(struct check *c, const cJSON *rules)
{
	int n = cJSON_GetArraySize(rules);
	struct rule_named *v = n ? calloc((size_t)n, sizeof(*v)) : NULL;
	if (!n || !v || (c->rc |= chain_rule_names(rules, v))) {
		c->rc |= n && !v ? TP_ENOMEM : TP_OK;
		free(v);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (v[i].repeat || v[i].next < 0)
			continue;
		tp_buf idx = TP_BUF_INIT(1 << 16);
		(void)tp_buf_addf(&idx, "[%d", i);
		for (int j = v[i].next; j >= 0; j = v[j].next)
			(void)tp_buf_addf(&idx, " %d", j);
		(void)tp_buf_addc(&idx, ']');
		if (idx.data)
			plain(c, "rule names are not unique, rules with indices %s all have the same "
				 "name '%s'", idx.data, v[i].name);
		tp_buf_free(&idx);
	}
	free(v);
}

static bool is_restart_job(const char *action)
{
	return !strcmp(action, "RestartJob") || !strcmp(action, "RestartJobAndIgnoreMaxRestarts");
}

static void check_failure_policy(struct check *c)
{
	const cJSON *fp = tp_get_object(c->spec, "failurePolicy");
	if (!fp)
		return;
	const cJSON *rules = tp_get_array(fp, "rules");
	for (const cJSON *r = rules ? rules->child : NULL; r; r = r->next)
		if (is_restart_job(str_or(r, "action", ""))) {
			/* the RestartJob gate is off: nothing else of the policy is checked */
			plain(c, "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions "
				 "are not allowed when RestartJob feature gate is disabled");
			return;
		}
	if (!rules)
		return;
	char buf[64];
	int i = 0;
	for (const cJSON *r = rules->child; r; r = r->next, i++)
		check_rule(c, r, rule_name(r, i, buf, sizeof(buf)));
	check_rule_names_unique(c, rules);
}

/* validateCoordinator: the first problem only. */
static void check_coordinator_target(struct check *c, const cJSON *co)
{
	const char *rj = str_or(co, "replicatedJob", "");
	long long ji = int_or(co, "jobIndex", 0), pi = int_or(co, "podIndex", 0), completions;
	const cJSON *job = tp_find_named(c->jobs, "name", rj);
	if (!job)
		plain(c, "coordinator replicatedJob %s does not exist", rj);
	else if (ji < 0 || ji >= int_or(job, "replicas", 1))
		plain(c, "coordinator job index %lld is invalid for replicatedJob %s", ji, rj);
	else if (!is_indexed(job) || !tp_get_int(job, "template.spec.completions", &completions))
		plain(c, "job for coordinator pod must be indexed completion mode, and completions "
			 "number must be set");
	else if (pi < 0 || pi >= completions)
		plain(c, "coordinator pod index %lld is invalid for replicatedJob %s job index %lld",
		      pi, rj, ji);
}

/* The coordinator endpoint becomes a label value on every pod. */
static void check_coordinator_label(struct check *c, const cJSON *co)
{
	const char *sub = str_or(c->spec, "network.subdomain", "");
	char ep[700];
	/* A longer endpoint is cut here, but it is already far past a label
	 * value's 63 characters, so the verdict is the same. */
	int len = snprintf(ep, sizeof(ep), "%s-%.256s-%lld-%lld.%.256s", c->name,
			   str_or(co, "replicatedJob", ""), int_or(co, "jobIndex", 0),
			   int_or(co, "podIndex", 0), *sub ? sub : c->name);
	if (len < 0)
		return;
	const char *msg[2];
	int n = label_value_errors(ep, msg);
	if (n)
		plain(c, "spec will lead to invalid label value \"%s\" for coordinator label "
			 "\"jobset.sigs.k8s.io/coordinator\" (long JobSet / ReplicatedJob / SubDomain "
			 "name?): %s%s%s", ep, msg[0], n > 1 ? ", " : "", n > 1 ? msg[1] : "");
}

/* ------------------------------------------------- volumeClaimPolicies
 *
 * Each claim template is compared with every pod volume and every mount:
 * both are filed once, by name, before the first template is checked. */

struct pod_volume {
	const char *name;
	int job, index;   /* spec.replicatedJobs[job]...volumes[index] */
	int next;         /* the next volume of this name, or -1 */
	int last;         /* the first volume of a name: the last one so far */
};

struct claims {
	tp_strset mounted;   /* names some container or init container mounts */
	tp_htab volumes;     /* name -> the first struct pod_volume of that name */
	struct pod_volume *v;
	tp_strset seen;      /* claim template names so far */
};

static int file_mounts(struct claims *cl, const cJSON *containers)
{
	int rc = TP_OK;
	for (const cJSON *ct = containers ? containers->child : NULL; ct && !rc; ct = ct->next) {
		const cJSON *mounts = tp_get(ct, "volumeMounts");
		for (const cJSON *m = cJSON_IsArray(mounts) ? mounts->child : NULL; m && !rc;
		     m = m->next) {
			const char *name = tp_get_str(m, "name");
			if (name)
				rc = tp__strset_add(&cl->mounted, name, NULL);
		}
	}
	return rc;
}

static int file_volume(struct claims *cl, int k)
{
	struct pod_volume *pv = &cl->v[k], *first;
	uint64_t h = tp__hash_str(pv->name);
	size_t pos = 0;
	while ((first = (struct pod_volume *)tp__htab_next(&cl->volumes, h, &pos)) &&
	       strcmp(first->name, pv->name))
		;
	if (!first)
		return tp__htab_put(&cl->volumes, h, pv);
	cl->v[first->last].next = k;
	first->last = k;
	return TP_OK;
}

static int file_pods(struct check *c, struct claims *cl)
{
	size_t n = 0;
	for (const cJSON *job = c->jobs ? c->jobs->child : NULL; job; job = job->next)
		n += (size_t)cJSON_GetArraySize(tp_get_array(job, "template.spec.template.spec.volumes"));
	if (n && !(cl->v = calloc(n, sizeof(*cl->v))))
		return TP_ENOMEM;
	int rc = TP_OK, i = 0, k = 0;
	for (const cJSON *job = c->jobs ? c->jobs->child : NULL; job && !rc; job = job->next, i++) {
		const cJSON *pod = tp_get(job, "template.spec.template.spec");
		const cJSON *vols = tp_get_array(pod, "volumes");
		int v = 0;
		for (const cJSON *vol = vols ? vols->child : NULL; vol && !rc; vol = vol->next, v++) {
			cl->v[k] = (struct pod_volume){ str_or(vol, "name", ""), i, v, -1, k };
			rc = file_volume(cl, k++);
		}
		if (!rc)
			rc = file_mounts(cl, tp_get_array(pod, "initContainers"));
		if (!rc)
			rc = file_mounts(cl, tp_get_array(pod, "containers"));
	}
	return rc;
}

static void claims_free(struct claims *cl)
{
	tp__strset_free(&cl->mounted);
	tp__strset_free(&cl->seen);
	tp__htab_free(&cl->volumes);
	free(cl->v);
}

/* A claim template's name must not be a pod volume's name, and some
 * container or init container must mount it. */
static void check_claim_use(struct check *c, const struct claims *cl, const char *claim)
{
	char path[160];
	uint64_t h = tp__hash_str(claim);
	size_t pos = 0;
	const struct pod_volume *first;
	while ((first = tp__htab_next(&cl->volumes, h, &pos)) && strcmp(first->name, claim))
		;
	for (int k = first ? (int)(first - cl->v) : -1; k >= 0; k = cl->v[k].next) {
		snprintf(path, sizeof(path),
			 "spec.replicatedJobs[%d].template.spec.template.spec.volumes[%d].name",
			 cl->v[k].job, cl->v[k].index);
		tp_result_add(c->res, TP_FIELD_INVALID, path, tp_result_quote(c->res, claim),
			      "volume name conflicts with VolumeClaimPolicy template name: %s", claim);
	}
	if (!tp__strset_has(&cl->mounted, claim))
		tp_result_add(c->res, TP_FIELD_INVALID, "spec.replicatedJobs",
			      tp_result_value(c->res, c->jobs),
			      "replicatedJob containers don't have a matching volumeMount: %s from "
			      "VolumeClaimPolicies", claim);
}

/* The existing-PVC comparison upstream also makes needs the cluster's
 * PVCs, which the store does not hold: it is not made here. */
static void check_claim_template(struct check *c, struct claims *cl, const cJSON *tmpl,
				 const char *path)
{
	const char *name = str_or(tmpl, "metadata.name", "");
	const char *q = tp_result_quote(c->res, name);
	bool fresh = true;
	c->rc |= tp__strset_add(&cl->seen, name, &fresh);
	if (!fresh)
		invalid(c, path, q, "names must be unique for VolumeClaimPolicies template");
	const char *msg[2];
	for (int i = 0, n = subdomain_errors(name, msg); i < n; i++)
		invalid(c, path, q, msg[i]);
	/* the PVC is named <claim>-<jobset> */
	if (strlen(name) + 1 + strlen(c->name) > MAX_VOLUME_CLAIM)
		invalid(c, path, q, "VolumeClaimPolicies template name is too long");
	check_claim_use(c, cl, name);
}

static void check_volume_claim_policies(struct check *c)
{
	const cJSON *policies = tp_get_array(c->spec, "volumeClaimPolicies");
	struct claims cl = { .mounted = TP_STRSET_INIT, .volumes = TP_HTAB_INIT,
			     .seen = TP_STRSET_INIT };
	if (policies && policies->child && (c->rc |= file_pods(c, &cl)) == TP_OK) {
		char path[128];
		int i = 0;
		for (const cJSON *p = policies->child; p && !tp__tick(1); p = p->next, i++) {
			const cJSON *ts = tp_get_array(p, "templates");
			int j = 0;
			for (const cJSON *t = ts ? ts->child : NULL; t; t = t->next, j++) {
				/* upstream's path says "template", not "templates" */
				snprintf(path, sizeof(path),
					 "spec.volumeClaimPolicies[%d].template[%d].name", i, j);
				check_claim_template(c, &cl, t, path);
			}
		}
	}
	claims_free(&cl);
}

static void validate_create(struct check *c)
{
	check_spec_level(c);
	check_jobs(c);
	check_failure_policy(c);
	const cJSON *co = tp_get_object(c->spec, "coordinator");
	if (co) {
		check_coordinator_target(c, co);
		check_coordinator_label(c, co);
	}
	check_volume_claim_policies(c);
}

/* ------------------------------------------------------------ entry */

int tp_validate_jobset(const tp_options *opt, tp_operation op, const cJSON *obj,
		       const cJSON *old_obj, tp_result *res)
{
	(void)opt; /* JobSet's rules do not depend on the profile or the store */
	if (!obj || !res)
		return TP_EINVAL;
	if (tp_kind_of(obj) != TP_KIND_JOBSET)
		return TP_EUNSUPPORTED;
	if (op == TP_OP_UPDATE) {
		if (!old_obj)
			return TP_EINVAL;
		return tp__jobset_update(res, obj, old_obj);
	}
	if (op != TP_OP_CREATE)
		return TP_OK; /* DELETE and CONNECT are always allowed */
	struct check c = { .res = res, .spec = tp_get_object(obj, "spec"),
			   .names_so_far = TP_STRSET_INIT };
	c.jobs = tp_get_array(c.spec, "replicatedJobs");
	set_name(&c, obj);
	c.rc = tp__index_items(&c.jobs_by_name, c.jobs, "name");
	if (!c.rc)
		validate_create(&c);
	tp__index_free(&c.jobs_by_name);
	tp__strset_free(&c.names_so_far);
	return tp__deadline_status(c.rc ? TP_ENOMEM : TP_OK);
}
