/*
 * pod/cluster_limits.c — what a TrainJob's namespace allows its Pods to ask
 * for, as kube-apiserver will decide it for each Pod the Job controller
 * creates (the strict profile; called from pod/cluster_state.c):
 *   - LimitRanger (plugin/pkg/admission/limitranger/admission.go): each
 *     LimitRange of the namespace, in order, first fills in its Container
 *     defaults (PodMutateLimitFunc: default limits, default requests, for
 *     what a container leaves unset, after the Pod's own defaulting copied
 *     limits into missing requests, pkg/apis/core/v1 SetDefaults_Pod), then
 *     checks min, max and maxLimitRequestRatio of each container and init
 *     container (type Container) and of the Pod's totals (type Pod,
 *     podRequests/podLimits: init containers count by their largest, sidecars
 *     add up). The first LimitRange that refuses is the Pod's Forbidden,
 *     its errors aggregated as utilerrors.NewAggregate prints them (in
 *     resource-name order here: upstream walks a Go map). A LimitRange read
 *     from the inputs gets SetDefaults_LimitRangeItem first, as the API
 *     server stored it.
 *   - ResourceQuota (pkg/quota/v1/evaluator/core/pods.go, the admission
 *     controller's "exceeded quota: NAME, requested: ..., used: ...,
 *     limited: ..."): the TrainJob's Pods together, against what each quota
 *     of the namespace has left; a warning, not a denial, since quota frees
 *     up and the Job controller retries. Quotas with scopes are not checked.
 * The Pods are the checked ones (pod/trainjob.c: the TrainJob's
 * resourcesPerNode and the plugins' parts written in). Lists nobody could
 * read are a warning that says what was not checked.
 */
#include "policy/core/quantity.h"
#include "policy/plugins/plugin.h"
#include "policy/pod/pod.h"
#include "policy/runtime/runtime.h"
#include "policy/store/store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LISTED 64 /* LimitRanges or ResourceQuotas of one namespace read */
#define MAX_MILLI_VALUE (INT64_MAX / 1000)

/* A ResourceList: quantities by name, in the run's arena; names in the
 * order they were first set. */
typedef struct rlist {
	tp_nameset idx;
	const char **names;
	size_t n, cap;
} rlist;

typedef struct lim_run {
	const tp_tj_ctx *ctx;
	const char *ns;
	tp_arena *arena;
	int rc;
} lim_run;

/* ------------------------------------------------------------ lists */

static void rl_init(rlist *l, tp_arena *a)
{
	*l = (rlist){ 0 };
	tp__nameset_init(&l->idx, a);
}

static tp_quantity *rl_get(const rlist *l, const char *name)
{
	return (tp_quantity *)tp__nameset_get(&l->idx, name);
}

/* The slot of name, made zero when new (NULL: out of memory). */
static tp_quantity *rl_slot(lim_run *r, rlist *l, const char *name, bool *made)
{
	if (!name) { /* a name printed into the arena that ran out */
		r->rc = TP_ENOMEM;
		return NULL;
	}
	tp_quantity *q = rl_get(l, name);
	*made = !q;
	if (q)
		return q;
	q = tp_arena_alloc(r->arena, sizeof(*q));
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		const char **names = tp_arena_alloc(r->arena, cap * sizeof(*names));
		if (names && l->n)
			memcpy(names, l->names, l->n * sizeof(*names));
		l->names = names;
		l->cap = names ? cap : 0;
	}
	if (!q || !l->names || tp__nameset_put(&l->idx, name, q)) {
		r->rc = TP_ENOMEM;
		return NULL;
	}
	*q = (tp_quantity){ 0 };
	l->names[l->n++] = name;
	return q;
}

/* Set name when unset (keep: leave a set one). */
static void rl_default(lim_run *r, rlist *l, const char *name, const tp_quantity *v)
{
	bool made;
	tp_quantity *q = rl_slot(r, l, name, &made);
	if (q && made)
		*q = *v;
}

/* Set name to v, replacing what was set. */
static void rl_set(lim_run *r, rlist *l, const char *name, const tp_quantity *v)
{
	bool made;
	tp_quantity *q = rl_slot(r, l, name, &made);
	if (q)
		*q = *v;
}

static void rl_add(lim_run *r, rlist *l, const char *name, const tp_quantity *v)
{
	bool made;
	tp_quantity *q = rl_slot(r, l, name, &made);
	if (q && tp__quantity_add(q, v))
		*q = *v; /* past int64: keep the larger part, never wrap */
}

static void rl_max(lim_run *r, rlist *l, const char *name, const tp_quantity *v)
{
	bool made;
	tp_quantity *q = rl_slot(r, l, name, &made);
	if (q && (made || tp__quantity_cmp(v, q) > 0))
		*q = *v;
}

/* Each entry of a JSON ResourceList through fn (what does not parse is the
 * schema layer's to report). */
static void rl_each(lim_run *r, rlist *l, const cJSON *list,
		    void (*fn)(lim_run *, rlist *, const char *, const tp_quantity *))
{
	for (const cJSON *e = cJSON_IsObject(list) ? list->child : NULL; e; e = e->next) {
		tp_quantity q;
		if (e->string && !tp__quantity_from_json(e, &q))
			fn(r, l, e->string, &q);
	}
}

static void rl_merge(lim_run *r, rlist *into, const rlist *from,
		     void (*fn)(lim_run *, rlist *, const char *, const tp_quantity *))
{
	for (size_t i = 0; i < from->n; i++)
		fn(r, into, from->names[i], rl_get(from, from->names[i]));
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* l's names sorted (a copy in the arena; NULL when l is empty or memory
 * ran out). */
static const char **rl_sorted(lim_run *r, const rlist *l)
{
	if (!l->n)
		return NULL;
	const char **s = tp_arena_alloc(r->arena, l->n * sizeof(*s));
	if (!s) {
		r->rc = TP_ENOMEM;
		return NULL;
	}
	memcpy(s, l->names, l->n * sizeof(*s));
	if (l->n > 1)
		qsort(s, l->n, sizeof(*s), cmp_names);
	return s;
}

static const char *qtext(lim_run *r, const tp_quantity *q)
{
	char buf[TP_QUANTITY_MAX_TEXT];
	if (tp__quantity_format(q, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), "?");
	const char *s = tp_arena_strdup(r->arena, buf);
	if (!s)
		r->rc = TP_ENOMEM;
	return s ? s : "";
}

/* ------------------------------------------------------------ LimitRanger */

/* A container's requests and limits as the Pod reaches admission: limits
 * copied into missing requests (SetDefaults_Pod). */
typedef struct cres {
	const char *name;
	bool init;
	rlist req, lim;
} cres;

typedef struct pod_res {
	cres *c;
	size_t n;
} pod_res;

static void add_container(lim_run *r, cres *c, const cJSON *ctr, bool init)
{
	c->name = tp__mstr(ctr, "name");
	c->init = init;
	rl_init(&c->req, r->arena);
	rl_init(&c->lim, r->arena);
	const cJSON *res = tp__mobj(ctr, "resources");
	rl_each(r, &c->req, tp_member(res, "requests"), rl_default);
	rl_each(r, &c->lim, tp_member(res, "limits"), rl_default);
	rl_merge(r, &c->req, &c->lim, rl_default);
}

static int pod_res_of(lim_run *r, const cJSON *spec, pod_res *p)
{
	const cJSON *lists[2] = { tp__marr(spec, "containers"), tp__marr(spec, "initContainers") };
	size_t n = 0;
	for (int k = 0; k < 2; k++)
		n += (size_t)cJSON_GetArraySize(lists[k]);
	p->n = 0;
	p->c = tp_arena_alloc(r->arena, (n ? n : 1) * sizeof(*p->c));
	if (!p->c)
		return r->rc = TP_ENOMEM;
	for (int k = 0; k < 2; k++)
		for (const cJSON *c = lists[k] ? lists[k]->child : NULL; c; c = c->next)
			if (cJSON_IsObject(c))
				add_container(r, &p->c[p->n++], c, k == 1);
	return r->rc;
}

/* One item's list (min, max, default, ...), with SetDefaults_LimitRangeItem
 * for type Container. */
static void item_list(lim_run *r, const cJSON *item, const char *which, rlist *out)
{
	rl_init(out, r->arena);
	rl_each(r, out, tp_member(item, which), rl_default);
	if (!tp_get_str(item, "type") || strcmp(tp_get_str(item, "type"), "Container"))
		return;
	if (!strcmp(which, "default")) {
		rl_each(r, out, tp_member(item, "max"), rl_default);
	} else if (!strcmp(which, "defaultRequest")) {
		rlist dflt;
		item_list(r, item, "default", &dflt);
		rl_merge(r, out, &dflt, rl_default);
		rl_each(r, out, tp_member(item, "min"), rl_default);
	}
}

/* PodMutateLimitFunc: the Container defaults of one LimitRange (a later
 * item's replace an earlier one's), for what each container leaves unset. */
static void apply_defaults(lim_run *r, const cJSON *lr, pod_res *p)
{
	rlist req, lim;
	rl_init(&req, r->arena);
	rl_init(&lim, r->arena);
	const cJSON *item;
	cJSON_ArrayForEach(item, tp_get_array(lr, "spec.limits")) {
		const char *type = tp_get_str(item, "type");
		if (!type || strcmp(type, "Container"))
			continue;
		rlist d, dr;
		item_list(r, item, "default", &d);
		item_list(r, item, "defaultRequest", &dr);
		rl_merge(r, &lim, &d, rl_set);
		rl_merge(r, &req, &dr, rl_set);
	}
	for (size_t i = 0; i < p->n; i++) {
		rl_merge(r, &p->c[i].lim, &lim, rl_default);
		rl_merge(r, &p->c[i].req, &req, rl_default);
	}
}

/* requestLimitEnforcedValues: milli-values when all fit, else values. */
static void enforced_values(const tp_quantity *req, const tp_quantity *lim,
			    const tp_quantity *enf, int64_t out[3])
{
	const tp_quantity *q[3] = { req, lim, enf };
	bool milli = true;
	for (int i = 0; i < 3; i++) {
		out[i] = 0;
		if (q[i] && tp__quantity_ceil(q[i], &out[i]))
			out[i] = INT64_MAX;
		milli &= out[i] <= MAX_MILLI_VALUE;
	}
	for (int i = 0; milli && i < 3; i++) {
		tp_quantity m = q[i] ? *q[i] : (tp_quantity){ 0 };
		if (tp__quantity_mul(&m, 1000) || tp__quantity_ceil(&m, &out[i]))
			out[i] = INT64_MAX;
	}
}

typedef struct constraint {
	const char *type; /* "Container" or "Pod" */
	const char *name; /* the resource */
	const tp_quantity *enf;
	const rlist *req, *lim;
} constraint;

static int say(lim_run *r, tp_buf *errs, const char *fmt, ...) TP_PRINTF(3, 4);

static int say(lim_run *r, tp_buf *errs, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = tp_buf_adds(errs, errs->len ? ", " : "");
	if (!rc)
		rc = tp_buf_vaddf(errs, fmt, ap);
	va_end(ap);
	return rc ? (r->rc = rc) : TP_OK;
}

static void min_constraint(lim_run *r, const constraint *c, tp_buf *errs, int *n)
{
	const tp_quantity *req = rl_get(c->req, c->name), *lim = rl_get(c->lim, c->name);
	int64_t v[3];
	enforced_values(req, lim, c->enf, v);
	const char *e = qtext(r, c->enf);
	if (!req)
		*n += !say(r, errs, "minimum %s usage per %s is %s.  No request is specified", c->name,
			   c->type, e);
	else if (v[0] < v[2])
		*n += !say(r, errs, "minimum %s usage per %s is %s, but request is %s", c->name,
			   c->type, e, qtext(r, req));
	else if (lim && v[1] < v[2])
		*n += !say(r, errs, "minimum %s usage per %s is %s, but limit is %s", c->name, c->type,
			   e, qtext(r, lim));
}

static void max_constraint(lim_run *r, const constraint *c, tp_buf *errs, int *n)
{
	const tp_quantity *req = rl_get(c->req, c->name), *lim = rl_get(c->lim, c->name);
	int64_t v[3];
	enforced_values(req, lim, c->enf, v);
	const char *e = qtext(r, c->enf);
	if (!lim)
		*n += !say(r, errs, "maximum %s usage per %s is %s.  No limit is specified", c->name,
			   c->type, e);
	else if (v[1] > v[2])
		*n += !say(r, errs, "maximum %s usage per %s is %s, but limit is %s", c->name, c->type,
			   e, qtext(r, lim));
	else if (req && v[0] > v[2])
		*n += !say(r, errs, "maximum %s usage per %s is %s, but request is %s", c->name,
			   c->type, e, qtext(r, req));
}

static void ratio_constraint(lim_run *r, const constraint *c, tp_buf *errs, int *n)
{
	const tp_quantity *req = rl_get(c->req, c->name), *lim = rl_get(c->lim, c->name);
	int64_t v[3], ev;
	enforced_values(req, lim, c->enf, v);
	const char *e = qtext(r, c->enf);
	if (!req || v[0] == 0) {
		*n += !say(r, errs, "%s max limit to request ratio per %s is %s, but no request is "
				    "specified or request is 0", c->name, c->type, e);
		return;
	}
	if (!lim || v[1] == 0) {
		*n += !say(r, errs, "%s max limit to request ratio per %s is %s, but no limit is "
				    "specified or limit is 0", c->name, c->type, e);
		return;
	}
	double observed = (double)v[1] / (double)v[0], shown = observed;
	if (tp__quantity_ceil(c->enf, &ev))
		ev = INT64_MAX;
	double max = (double)ev;
	if (ev <= MAX_MILLI_VALUE) {
		tp_quantity m = *c->enf;
		int64_t mv;
		observed *= 1000;
		max = tp__quantity_mul(&m, 1000) || tp__quantity_ceil(&m, &mv) ? (double)INT64_MAX
									      : (double)mv;
	}
	if (observed > max)
		*n += !say(r, errs, "%s max limit to request ratio per %s is %s, but provided ratio "
				    "is %f", c->name, c->type, e, shown);
}

/* min, max and maxLimitRequestRatio of one item on one set of lists, in
 * resource-name order. */
static void check_item(lim_run *r, const cJSON *item, const char *type, const rlist *req,
		       const rlist *lim, tp_buf *errs, int *n)
{
	static const char *const which[] = { "min", "max", "maxLimitRequestRatio" };
	static void (*const fn[])(lim_run *, const constraint *, tp_buf *, int *) = {
		min_constraint, max_constraint, ratio_constraint
	};
	for (int k = 0; k < 3; k++) {
		rlist enf;
		rl_init(&enf, r->arena);
		rl_each(r, &enf, tp_member(item, which[k]), rl_default);
		const char **names = rl_sorted(r, &enf);
		for (size_t i = 0; names && i < enf.n; i++) {
			constraint c = { type, names[i], rl_get(&enf, names[i]), req, lim };
			fn[k](r, &c, errs, n);
		}
	}
}

/* podRequests / podLimits: containers add up; init containers count by
 * the largest, each with the sidecars (restartPolicy Always) before it,
 * which also add to the containers. */
static void pod_totals(lim_run *r, const pod_res *p, const cJSON *spec, bool limits, rlist *out)
{
	rlist side, init;
	rl_init(out, r->arena);
	rl_init(&side, r->arena);
	rl_init(&init, r->arena);
	const cJSON *inits = tp__marr(spec, "initContainers");
	const cJSON *ic = inits ? inits->child : NULL;
	for (size_t i = 0; i < p->n; i++) {
		const rlist *l = limits ? &p->c[i].lim : &p->c[i].req;
		if (!p->c[i].init) {
			rl_merge(r, out, l, rl_add);
			continue;
		}
		while (ic && !cJSON_IsObject(ic))
			ic = ic->next;
		const char *rp = tp__mstr(ic, "restartPolicy");
		ic = ic ? ic->next : NULL;
		if (rp && !strcmp(rp, "Always")) {
			rl_merge(r, out, l, rl_add);
			rl_merge(r, &side, l, rl_add);
			rl_merge(r, &init, &side, rl_max);
		} else {
			rlist tmp;
			rl_init(&tmp, r->arena);
			rl_merge(r, &tmp, l, rl_add);
			rl_merge(r, &tmp, &side, rl_add);
			rl_merge(r, &init, &tmp, rl_max);
		}
	}
	rl_merge(r, out, &init, rl_max);
}

/* PodValidateLimitFunc of one LimitRange: its errors into errs, *n of
 * them. */
static void validate_pod(lim_run *r, const cJSON *lr, const pod_res *p, const cJSON *spec,
			 tp_buf *errs, int *n)
{
	const cJSON *item;
	cJSON_ArrayForEach(item, tp_get_array(lr, "spec.limits")) {
		const char *type = tp_get_str(item, "type");
		if (type && !strcmp(type, "Container")) {
			for (size_t i = 0; i < p->n; i++)
				check_item(r, item, type, &p->c[i].req, &p->c[i].lim, errs, n);
		} else if (type && !strcmp(type, "Pod")) {
			rlist req, lim;
			pod_totals(r, p, spec, false, &req);
			pod_totals(r, p, spec, true, &lim);
			check_item(r, item, type, &req, &lim, errs, n);
		}
	}
}

/* Several errors as utilerrors' Aggregate prints them: "[e1, e2]". */
static int aggregate(tp_buf *errs)
{
	tp_buf b = TP_BUF_INIT(0);
	int rc = tp_buf_addf(&b, "[%s]", errs->data ? errs->data : "");
	tp_buf_reset(errs);
	if (!rc)
		rc = tp_buf_adds(errs, b.data);
	tp_buf_free(&b);
	return rc;
}

/* The LimitRanges' verdict on one Pod spec: the first that refuses into
 * errs (aggregated: "[e1, e2]" when several) and *by its name; p gets the
 * defaults of every LimitRange applied. */
static void limit_ranges_on(lim_run *r, const cJSON *const *lrs, size_t n, const cJSON *spec,
			    pod_res *p, tp_buf *errs, const char **by)
{
	*by = NULL;
	tp_buf_reset(errs);
	if (pod_res_of(r, spec, p))
		return;
	for (size_t i = 0; i < n; i++)
		apply_defaults(r, lrs[i], p);
	for (size_t i = 0; i < n && !*by && !r->rc; i++) {
		int count = 0;
		validate_pod(r, lrs[i], p, spec, errs, &count);
		if (!count)
			continue;
		*by = tp_meta_name(lrs[i]);
		if (count > 1 && aggregate(errs))
			r->rc = TP_ENOMEM;
	}
}

/* ------------------------------------------------------------ jobs */

/* The Pods the JobSet gets of replicated job rj: replicas times what the
 * trainer's builder gives each Job (the TrainJob's numNodes for the first
 * trainer job, else the runtime's count; MPI's launcher split is not
 * followed: the ResourceQuota warning is an estimate of the total). */
static long long pods_of(const tp_tj_ctx *ctx, const cJSON *rj, bool *trainer_seen)
{
	long long replicas = 1, n;
	if (!tp__mint(rj, "replicas", &replicas) || replicas < 0)
		replicas = 1;
	const char *step = tp__pod_step(rj);
	if (step && !strcmp(step, TP_ANCESTOR_TRAINER) && !*trainer_seen &&
	    tp_get_int(ctx->job, "spec.trainer.numNodes", &n)) {
		*trainer_seen = true;
		return replicas * (n < 1 ? 1 : n);
	}
	if (step && !strcmp(step, TP_ANCESTOR_TRAINER))
		*trainer_seen = true;
	return replicas *
	       tp__pod_runtime_count_at(tp_get_object(ctx->runtime, "spec.mlPolicy"), rj, step);
}

typedef struct base_job {
	const cJSON *job;
	int index;
} base_job;

/* The runtime's own replicated job named name and its place, or NULL. */
static const base_job *base_of(lim_run *r, tp_nameset *jobs, bool *filed, const char *name)
{
	if (!*filed) {
		tp__nameset_init(jobs, r->arena);
		const cJSON *list = tp_get_array(r->ctx->base, "spec.replicatedJobs");
		int i = 0;
		for (const cJSON *j = list ? list->child : NULL; j; j = j->next, i++) {
			base_job *b = tp_arena_alloc(r->arena, sizeof(*b));
			if (!b || tp__nameset_put(jobs, tp__mstr(j, "name"), b)) {
				r->rc = TP_ENOMEM;
				return NULL;
			}
			*b = (base_job){ j, i };
		}
		*filed = true;
	}
	return name ? tp__nameset_get(jobs, name) : NULL;
}

typedef struct lr_set {
	const cJSON *const *items;
	size_t n;
	tp_nameset base;
	bool base_filed;
} lr_set;

/* Where a LimitRange refusal of job rj is shown: the runtime's Pod spec
 * when its own job is refused too, else what the TrainJob wrote
 * (resourcesPerNode, or the runtimePatches). */
static const char *refusal_path(lim_run *r, lr_set *lrs, const cJSON *rj)
{
	const base_job *own = base_of(r, &lrs->base, &lrs->base_filed, tp__mstr(rj, "name"));
	if (own) {
		pod_res p;
		tp_buf errs = TP_BUF_INIT(0);
		const char *by;
		limit_ranges_on(r, lrs->items, lrs->n, tp__tj_pod_spec(own->job), &p, &errs, &by);
		tp_buf_free(&errs);
		if (by)
			return tp_arena_printf(r->arena, "spec.template.spec.replicatedJobs[%d]."
							 "template.spec.template.spec",
					       own->index);
	}
	if (tp_get(r->ctx->job, "spec.trainer.resourcesPerNode"))
		return "spec.trainer.resourcesPerNode";
	return r->ctx->tmpl != r->ctx->base ? "spec.runtimePatches" : "spec.runtimeRef";
}

static int refuse(lim_run *r, lr_set *lrs, const cJSON *rj, const char *by, const char *errs)
{
	const char *path = refusal_path(r, lrs, rj);
	const char *rjob = tp__mstr(rj, "name");
	if (!path || r->rc)
		return r->rc ? r->rc : TP_ENOMEM;
	return tp_result_add(r->ctx->res, TP_FIELD_FORBIDDEN, path, NULL,
			     "%s: LimitRange \"%s\" of namespace \"%s\" refuses the Pods of replicated "
			     "job \"%s\" (Job.batch \"%s-%s-0\"), its defaults applied; ask for "
			     "resources within it (kubectl describe limitrange %s -n %s)",
			     errs, by, r->ns, rjob ? rjob : "", tp_meta_name(r->ctx->job),
			     rjob ? rjob : "", by, r->ns);
}

/* ------------------------------------------------------------ ResourceQuota */

static bool extended(const char *name)
{
	const char *slash = strchr(name, '/');
	if (!slash || !strncmp(name, "requests.", 9))
		return false;
	size_t d = (size_t)(slash - name);
	static const char k8s[] = "kubernetes.io";
	size_t k = sizeof(k8s) - 1;
	return !(d == k && !strncmp(name, k8s, k)) &&
	       !(d > k && name[d - k - 1] == '.' && !strncmp(slash - k, k8s, k));
}

/* PodUsageFunc of one Pod (its totals), times pods, into usage. */
static void pod_usage(lim_run *r, const rlist *req, const rlist *lim, long long pods, rlist *usage)
{
	tp_quantity one = { 1, 0, TP_QFMT_DECIMAL_SI };
	rlist u;
	rl_init(&u, r->arena);
	rl_set(r, &u, "count/pods", &one);
	rl_set(r, &u, "pods", &one);
	static const char *const compute[] = { "cpu", "memory", "ephemeral-storage" };
	for (int k = 0; k < 3; k++) {
		const tp_quantity *q = rl_get(req, compute[k]);
		if (q) {
			rl_set(r, &u, compute[k], q);
			rl_set(r, &u, tp_arena_printf(r->arena, "requests.%s", compute[k]), q);
		}
		if ((q = rl_get(lim, compute[k])))
			rl_set(r, &u, tp_arena_printf(r->arena, "limits.%s", compute[k]), q);
	}
	for (size_t i = 0; i < req->n; i++) {
		const char *name = req->names[i];
		const tp_quantity *q = rl_get(req, name);
		if (!strncmp(name, "hugepages-", 10))
			rl_set(r, &u, name, q);
		if (!strncmp(name, "hugepages-", 10) || extended(name))
			rl_set(r, &u, tp_arena_printf(r->arena, "requests.%s", name), q);
	}
	for (size_t i = 0; i < u.n && !r->rc; i++) {
		tp_quantity q = *rl_get(&u, u.names[i]);
		if (!u.names[i] || tp__quantity_mul(&q, pods))
			continue;
		rl_add(r, usage, u.names[i], &q);
	}
}

/* "a=1,b=2" of names in l (sorted), as prettyPrint. */
static const char *pretty(lim_run *r, const rlist *l, const char **names, size_t n)
{
	tp_buf b = TP_BUF_INIT(0);
	for (size_t i = 0; i < n; i++) {
		const tp_quantity *q = rl_get(l, names[i]);
		if (tp_buf_addf(&b, "%s%s=%s", i ? "," : "", names[i],
				qtext(r, q ? q : &(tp_quantity){ 0 })))
			r->rc = TP_ENOMEM;
	}
	const char *s = tp_arena_strdup(r->arena, b.data ? b.data : "");
	tp_buf_free(&b);
	return s ? s : "";
}

/* One quota against the TrainJob's usage: a warning when it does not fit. */
static int check_quota(lim_run *r, const cJSON *q, const rlist *usage, long long pods)
{
	if (tp_get(q, "spec.scopes") || tp_get(q, "spec.scopeSelector"))
		return TP_OK; /* which Pods a scope matches is not followed */
	rlist hard, used, over;
	rl_init(&hard, r->arena);
	rl_init(&used, r->arena);
	rl_init(&over, r->arena);
	const cJSON *h = tp_get_object(q, "status.hard");
	rl_each(r, &hard, h ? h : tp_get(q, "spec.hard"), rl_default);
	rl_each(r, &used, tp_get(q, "status.used"), rl_default);
	const char **names = rl_sorted(r, &hard);
	for (size_t i = 0; names && i < hard.n; i++) {
		const tp_quantity *want = rl_get(usage, names[i]);
		if (!want)
			continue;
		tp_quantity total = *want, *u = rl_get(&used, names[i]);
		if ((u && tp__quantity_add(&total, u)) ||
		    tp__quantity_cmp(&total, rl_get(&hard, names[i])) > 0)
			rl_set(r, &over, names[i], &total);
	}
	if (!over.n || r->rc)
		return r->rc;
	const char **ex = rl_sorted(r, &over);
	rlist short_by;
	rl_init(&short_by, r->arena);
	for (size_t i = 0; ex && i < over.n; i++) {
		tp_quantity d = *rl_get(&over, ex[i]), neg = *rl_get(&hard, ex[i]);
		neg.value = -neg.value;
		if (!tp__quantity_add(&d, &neg))
			rl_set(r, &short_by, ex[i], &d);
	}
	const char *name = tp_meta_name(q);
	return tp_result_warn_at(
		r->ctx->res, "metadata.namespace",
		"the %lld Pods of TrainJob \"%s\" together would exceed ResourceQuota \"%s\" of "
		"namespace \"%s\" by %s: exceeded quota: %s, requested: %s, used: %s, limited: %s; "
		"the Pods past it are refused until the quota frees up (kubectl describe "
		"resourcequota %s -n %s)",
		pods, tp_meta_name(r->ctx->job), name, r->ns, pretty(r, &short_by, ex, over.n), name,
		pretty(r, usage, ex, over.n), pretty(r, &used, ex, over.n),
		pretty(r, &hard, ex, over.n), name, r->ns);
}

/* ------------------------------------------------------------ the run */

/* A namespace's objects of kind k, or a warning that they were not
 * checked (*n 0). */
static int listed(lim_run *r, tp_kind k, const cJSON **out, size_t *n)
{
	char why[512];
	int rc = tp_lookup_list(r->ctx->opt, k, r->ns, out, MAX_LISTED, n, why, sizeof(why));
	if (*n > MAX_LISTED)
		*n = MAX_LISTED;
	if (rc != TP_EUNAVAILABLE)
		return rc == TP_ENOMEM ? rc : TP_OK;
	*n = 0;
	return tp_result_warn_at(r->ctx->res, "metadata.namespace",
				 "the %ss of namespace \"%s\" were not checked against the TrainJob's "
				 "Pods: %s could not be listed: %s",
				 tp_kind_name(k), r->ns, tp__resource_name(k),
				 *why ? why : tp_strerror(rc));
}

static int each_job(lim_run *r, lr_set *lrs, const cJSON *const *quotas, size_t nq,
		    const tp_pod_checked *jobs, size_t n)
{
	int rc = TP_OK;
	rlist usage;
	rl_init(&usage, r->arena);
	tp_buf errs = TP_BUF_INIT(0);
	bool trainer_seen = false;
	long long pods = 0;
	const cJSON *list = r->ctx->jobs;
	size_t i = 0;
	for (const cJSON *rj = list ? list->child : NULL; rj && !rc && !r->rc; rj = rj->next, i++) {
		if (!cJSON_IsObject(rj))
			continue;
		const cJSON *spec = i < n && jobs[i].copy ? tp_get(jobs[i].copy, "spec.template.spec")
							  : tp__tj_pod_spec(rj);
		pod_res p;
		const char *by;
		limit_ranges_on(r, lrs->items, lrs->n, spec, &p, &errs, &by);
		if (by && !r->rc)
			rc = refuse(r, lrs, rj, by, errs.data);
		rlist req, lim;
		pod_totals(r, &p, spec, false, &req);
		pod_totals(r, &p, spec, true, &lim);
		long long k = pods_of(r->ctx, rj, &trainer_seen);
		pod_usage(r, &req, &lim, k, &usage);
		pods += k;
	}
	for (size_t q = 0; q < nq && !rc && !r->rc; q++)
		rc = check_quota(r, quotas[q], &usage, pods);
	tp_buf_free(&errs);
	return rc ? rc : r->rc;
}

int tp__pod_cluster_limits(const tp_tj_ctx *ctx, const char *ns, const tp_pod_checked *checked,
			   size_t n)
{
	lim_run r = { .ctx = ctx, .ns = ns };
	const cJSON *lr[MAX_LISTED], *rq[MAX_LISTED];
	lr_set lrs = { .items = lr };
	size_t nq = 0;
	int rc = listed(&r, TP_KIND_LIMIT_RANGE, lr, &lrs.n);
	if (!rc)
		rc = listed(&r, TP_KIND_RESOURCE_QUOTA, rq, &nq);
	if (rc || (!lrs.n && !nq))
		return rc;
	/* only a namespace with limits makes an arena (make bench's TrainJob
	 * review made and freed one for nothing: 290 instructions) */
	if (tp_arena_new(&r.arena, 0))
		return TP_ENOMEM;
	rc = each_job(&r, &lrs, rq, nq, checked, n);
	tp_arena_free(r.arena);
	return rc;
}
