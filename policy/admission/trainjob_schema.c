/*
 * admission/trainjob_schema.c — what the API server checks on a TrainJob before any
 * validating webhook: the CRD's OpenAPI schema (types, lengths, list sizes,
 * minimums, list-map keys) and its CEL rules (§1, trainjobs CRD), with the
 * API server's message shapes. Offline there is no API server to do it.
 *
 * A JSON null counts as absent: the API server drops nulls of non-nullable
 * fields before validating. Transition rules (self == oldSelf) run only when
 * the field is present in both objects, as in Kubernetes.
 *
 * In the API server's order (apiextensions' customResourceStrategy.Validate):
 * the OpenAPI schema (a list's items, then its maxItems, as kube-openapi's
 * slice validator and schema/check.c report them), then the
 * list-map keys, then the CEL rules, which do not run at all once a
 * blocking error (Required, Too long, Too many, a wrong type) was found:
 * the message says so instead. Every pass is linear in the object (a scan
 * of the earlier items for each item's key cost 51 s for 100,000 env items).
 */
#include "policy/admission/trainjob.h"
#include "policy/core/deadline.h"
#include "policy/core/index.h"

#include <stdio.h>
#include <string.h>

#define MAX_STR 253
#define MAX_ARG_LEN 1048576

typedef struct sc {
	tp_result *res;
	int rc; /* the first TP_ENOMEM, kept so checks can run on without testing each call */
	bool blocking; /* an error that keeps the CEL rules from running */
	tp_result *dups; /* the list-map keys' errors, which follow the schema's */
	tp_result *cel; /* the CEL rules' errors, kept apart until the schema's are known */
} sc;

static void add(sc *s, int rc)
{
	if (rc && !s->rc)
		s->rc = rc;
}

/* An error of a type the API server's hasBlockingErr stops the CEL rules for. */
static void block(sc *s, int rc)
{
	s->blocking = true;
	add(s, rc);
}

static bool absent(const cJSON *v)
{
	return !v || cJSON_IsNull(v);
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v)) return "string";
	if (cJSON_IsBool(v)) return "boolean";
	if (cJSON_IsNumber(v)) return tp_json_is_int(v, NULL) ? "integer" : "number";
	if (cJSON_IsArray(v)) return "array";
	if (cJSON_IsObject(v)) return "object";
	return "null";
}

/* "spec.suspend: Invalid value: "string": spec.suspend in body must be of type boolean: "string"" */
static bool want_type(sc *s, const char *path, const cJSON *v, const char *want)
{
	const char *got = type_name(v);
	if (!strcmp(got, want) || (!strcmp(want, "number") && cJSON_IsNumber(v)))
		return true;
	block(s, tp_result_add(s->res, TP_FIELD_INVALID, path, tp_result_quote(s->res, got),
			       "%s in body must be of type %s: \"%s\"", path, want, got));
	return false;
}

/* A CEL rule's failure as kube-apiserver v1.32 words it: the value shown
 * is the schema's type name ("string", "object"), as a real v1.32.13 API
 * server prints it. It joins the result after the schema's errors, if none
 * of them blocks it. */
static void cel(sc *s, const char *path, const cJSON *v, const char *msg)
{
	if (!s->cel && tp_result_new(&s->cel)) {
		add(s, TP_ENOMEM);
		return;
	}
	/* apiextensions shows the schema's type name, never the value; a value
	 * of another type never reaches the rules (a type error blocks them) */
	const char *shown = tp_result_quote(s->cel, type_name(v));
	add(s, tp_result_add(s->cel, TP_FIELD_INVALID, path, shown, "%s", msg));
}

static bool str(sc *s, const char *path, const cJSON *v, size_t minlen, size_t maxlen)
{
	if (!want_type(s, path, v, "string"))
		return false;
	size_t n = strlen(v->valuestring);
	if (n < minlen)
		add(s, tp_result_add(s->res, TP_FIELD_INVALID, path, tp_result_value(s->res, v),
				     "%s in body should be at least %zu chars long", path, minlen));
	if (maxlen && n > maxlen)
		block(s, tp_result_add(s->res, TP_FIELD_TOO_LONG, path, NULL,
				       "may not be more than %zu bytes", maxlen));
	return true;
}

static bool integer(sc *s, const char *path, const cJSON *v, long long min, long long *out)
{
	if (!want_type(s, path, v, "integer"))
		return false;
	tp_json_is_int(v, out);
	if (*out < min) {
		add(s, tp_result_add(s->res, TP_FIELD_INVALID, path, tp_result_value(s->res, v),
				     "%s in body should be greater than or equal to %lld", path, min));
		return false;
	}
	return true;
}

static bool object(sc *s, const char *path, const cJSON *v)
{
	return want_type(s, path, v, "object");
}

/* A list's maxItems, after its items: "Too many" with the count, as the
 * API server says it. */
static void too_many(sc *s, const char *path, const cJSON *v, int max_items)
{
	int n = cJSON_GetArraySize(v);
	if (n <= max_items)
		return;
	char count[24];
	snprintf(count, sizeof(count), "%d", n);
	block(s, tp_result_add(s->res, TP_FIELD_TOO_MANY, path, count,
			       "must have at most %d items", max_items));
}

/* A list with no items checked here: its type and its maxItems. */
static void bounded(sc *s, const char *path, const cJSON *v, int max_items)
{
	if (want_type(s, path, v, "array"))
		too_many(s, path, v, max_items);
}

static void required(sc *s, const char *path)
{
	block(s, tp_result_add(s->res, TP_FIELD_REQUIRED, path, NULL, "%s", ""));
}

static const cJSON *member(const cJSON *obj, const char *name)
{
	const cJSON *v = tp_member(obj, name);
	return absent(v) ? NULL : v;
}

/* out = "<base>.<name>", cut to fit; base may be out itself. */
static void join(char *out, size_t n, const char *base, const char *name)
{
	size_t bl = strlen(base), nl = strlen(name);
	if (bl >= n)
		bl = n - 1;
	memmove(out, base, bl);
	if (bl + 1 < n)
		out[bl++] = '.';
	if (nl > n - 1 - bl)
		nl = n - 1 - bl;
	memcpy(out + bl, name, nl);
	out[bl + nl] = '\0';
}

static void unique_keys(sc *s, const char *path, const cJSON *arr, const char *key);

/* A list-map: items are objects with a required string key, unique (the
 * duplicates are reported after the schema's other errors, as the API
 * server's list-type pass comes after its OpenAPI one). */
static void list_map(sc *s, const char *path, const cJSON *arr, const char *key, int max_items,
		     size_t maxlen, void (*item)(sc *, const char *, const cJSON *))
{
	if (!want_type(s, path, arr, "array"))
		return;
	unique_keys(s, path, arr, key);
	int i = 0;
	for (const cJSON *it = arr->child; it && !s->rc; it = it->next, i++) {
		char ip[512], kp[600];
		add(s, tp__tick(1));
		snprintf(ip, sizeof(ip), "%s[%d]", path, i);
		if (!object(s, ip, it))
			continue;
		join(kp, sizeof(kp), ip, key);
		const cJSON *k = member(it, key);
		if (!k)
			required(s, kp);
		else
			str(s, kp, k, 1, maxlen);
		if (item)
			item(s, ip, it);
	}
	too_many(s, path, arr, max_items);
}

/* --------------------------------------------------------------- sections */

/* The CEL rule's regex '^[A-Za-z][A-Za-z0-9+.-]*://.+$', or empty. */
static bool storage_uri_ok(const char *u)
{
	if (!*u)
		return true;
	if (!((*u >= 'A' && *u <= 'Z') || (*u >= 'a' && *u <= 'z')))
		return false;
	const char *p = u + 1;
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
	       *p == '+' || *p == '.' || *p == '-')
		p++;
	/* ".+" does not match a newline; the rest must hold one character at least. */
	return !strncmp(p, "://", 3) && p[3] && p[3] != '\n' && !strchr(p + 3, '\n');
}

static void runtime_ref(sc *s, const cJSON *spec)
{
	const cJSON *ref = member(spec, "runtimeRef");
	if (!ref) {
		required(s, "spec.runtimeRef");
		return;
	}
	if (!object(s, "spec.runtimeRef", ref))
		return;
	const cJSON *name = member(ref, "name");
	if (!name)
		required(s, "spec.runtimeRef.name");
	else
		str(s, "spec.runtimeRef.name", name, 1, MAX_STR);
	const char *opt_members[] = { "apiGroup", "kind" };
	for (int i = 0; i < 2; i++) {
		char p[64];
		join(p, sizeof(p), "spec.runtimeRef", opt_members[i]);
		const cJSON *v = member(ref, opt_members[i]);
		if (v)
			str(s, p, v, 0, MAX_STR);
	}
}

static void env_item(sc *s, const char *path, const cJSON *e)
{
	const cJSON *v = member(e, "value");
	char p[600];
	join(p, sizeof(p), path, "value");
	if (v)
		want_type(s, p, v, "string");
	join(p, sizeof(p), path, "valueFrom");
	if ((v = member(e, "valueFrom")))
		object(s, p, v);
}

static void env_list(sc *s, const char *path, const cJSON *env)
{
	list_map(s, path, env, "name", 128, 0, env_item);
}

static void initializer_part(sc *s, const cJSON *init, const char *name)
{
	char base[64], p[96];
	join(base, sizeof(base), "spec.initializer", name);
	const cJSON *part = member(init, name);
	if (!part || !object(s, base, part))
		return;
	const cJSON *uri = member(part, "storageUri");
	join(p, sizeof(p), base, "storageUri");
	if (uri && str(s, p, uri, 0, 2048) && !storage_uri_ok(uri->valuestring))
		cel(s, p, uri, "storageUri may be empty, or it must be a valid URI (scheme://...)");
	const cJSON *env = member(part, "env");
	join(p, sizeof(p), base, "env");
	if (env)
		env_list(s, p, env);
	const cJSON *sec = member(part, "secretRef");
	join(p, sizeof(p), base, "secretRef");
	if (sec && object(s, p, sec) && member(sec, "name")) {
		char np[128];
		join(np, sizeof(np), p, "name");
		str(s, np, member(sec, "name"), 0, 0);
	}
}

static void string_list(sc *s, const char *path, const cJSON *arr)
{
	if (!want_type(s, path, arr, "array"))
		return;
	int i = 0;
	for (const cJSON *it = arr->child; it && !s->rc; it = it->next, i++) {
		char p[128];
		add(s, tp__tick(1));
		snprintf(p, sizeof(p), "%s[%d]", path, i);
		str(s, p, it, 0, MAX_ARG_LEN);
	}
	too_many(s, path, arr, 128);
}

static void trainer(sc *s, const cJSON *spec)
{
	const cJSON *t = member(spec, "trainer"), *v;
	if (!t || !object(s, "spec.trainer", t))
		return;
	long long n;
	if ((v = member(t, "image")))
		str(s, "spec.trainer.image", v, 0, 500);
	if ((v = member(t, "command")))
		string_list(s, "spec.trainer.command", v);
	if ((v = member(t, "args")))
		string_list(s, "spec.trainer.args", v);
	if ((v = member(t, "env")))
		env_list(s, "spec.trainer.env", v);
	if ((v = member(t, "numNodes")))
		integer(s, "spec.trainer.numNodes", v, 0, &n);
	if ((v = member(t, "numProcPerNode")) && want_type(s, "spec.trainer.numProcPerNode", v,
							     "integer")) {
		tp_json_is_int(v, &n);
		if (n < 1)
			cel(s, "spec.trainer.numProcPerNode", v,
			    "numProcPerNode must be greater than or equal to 1");
	}
	if ((v = member(t, "resourcesPerNode")))
		object(s, "spec.trainer.resourcesPerNode", v);
}

/* The PodSpecPatch lists with their CRD maxItems. */
static const struct {
	const char *name;
	int max;
} pod_lists[] = {
	{ "volumes", 128 }, { "initContainers", 64 }, { "containers", 64 },
	{ "tolerations", 128 }, { "schedulingGates", 16 }, { "imagePullSecrets", 64 },
};

/* A ContainerPatch's lists, 128 items each in the CRD. */
static void patch_container(sc *s, const char *path, const cJSON *c)
{
	static const char *const lists[] = { "env", "volumeMounts" };
	for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
		const cJSON *l = member(c, lists[i]);
		char p[600];
		join(p, sizeof(p), path, lists[i]);
		if (l)
			bounded(s, p, l, 128);
	}
}

static void patch_job(sc *s, const char *path, const cJSON *job)
{
	char p[700];
	join(p, sizeof(p), path, "template.spec.template.spec");
	const cJSON *pod = tp_get(job, "template.spec.template.spec");
	if (absent(pod) || !object(s, p, pod))
		return;
	for (size_t i = 0; i < sizeof(pod_lists) / sizeof(*pod_lists); i++) {
		const cJSON *l = member(pod, pod_lists[i].name);
		char lp[800];
		join(lp, sizeof(lp), p, pod_lists[i].name);
		if (!l)
			continue;
		if (!strcmp(pod_lists[i].name, "containers") ||
		    !strcmp(pod_lists[i].name, "initContainers"))
			list_map(s, lp, l, "name", pod_lists[i].max, MAX_STR, patch_container);
		else if (!strcmp(pod_lists[i].name, "volumes"))
			list_map(s, lp, l, "name", pod_lists[i].max, MAX_STR, NULL);
		else
			bounded(s, lp, l, pod_lists[i].max);
	}
	const cJSON *g = member(pod, "terminationGracePeriodSeconds");
	long long n;
	join(p, sizeof(p), p, "terminationGracePeriodSeconds");
	if (g)
		integer(s, p, g, 0, &n);
}

static void patch_item(sc *s, const char *path, const cJSON *patch)
{
	char p[600];
	const cJSON *v = member(patch, "time");
	join(p, sizeof(p), path, "time");
	if (v)
		want_type(s, p, v, "string");
	const cJSON *trs = member(patch, "trainingRuntimeSpec");
	join(p, sizeof(p), path, "trainingRuntimeSpec");
	if (!trs || !object(s, p, trs))
		return;
	const cJSON *tmpl = member(trs, "template");
	join(p, sizeof(p), p, "template");
	if (!tmpl || !object(s, p, tmpl))
		return;
	const cJSON *tspec = member(tmpl, "spec");
	join(p, sizeof(p), p, "spec");
	if (!tspec || !object(s, p, tspec))
		return;
	const cJSON *jobs = member(tspec, "replicatedJobs");
	join(p, sizeof(p), p, "replicatedJobs");
	if (jobs)
		list_map(s, p, jobs, "name", 100, 0, patch_job);
}

static void top_level(sc *s, const cJSON *spec)
{
	const cJSON *v;
	long long n;
	if ((v = member(spec, "suspend")))
		want_type(s, "spec.suspend", v, "boolean");
	if ((v = member(spec, "activeDeadlineSeconds")))
		integer(s, "spec.activeDeadlineSeconds", v, 1, &n);
	if ((v = member(spec, "managedBy")) && str(s, "spec.managedBy", v, 0, MAX_STR) &&
	    strcmp(v->valuestring, TP_DEFAULT_MANAGED_BY) && strcmp(v->valuestring, TP_MULTIKUEUE))
		cel(s, "spec.managedBy", v, "ManagedBy must be " TP_DEFAULT_MANAGED_BY " or "
		    TP_MULTIKUEUE " if set");
	if ((v = member(spec, "runtimePatches")))
		list_map(s, "spec.runtimePatches", v, "manager", 16, MAX_STR, patch_item);
}

/* The object-level CEL rules on metadata.name; the API server reports them at
 * the object's root. */
static void name_rules(sc *s, const cJSON *obj)
{
	const cJSON *name = tp_get(obj, "metadata.name");
	if (absent(name) || !want_type(s, "metadata.name", name, "string"))
		return;
	const char *n = name->valuestring;
	size_t len = strlen(n);
	bool ok = len > 0 && n[0] >= 'a' && n[0] <= 'z' &&
		  ((n[len - 1] >= 'a' && n[len - 1] <= 'z') || (n[len - 1] >= '0' && n[len - 1] <= '9'));
	for (size_t i = 0; ok && i < len; i++)
		ok = (n[i] >= 'a' && n[i] <= 'z') || (n[i] >= '0' && n[i] <= '9') || n[i] == '-';
	if (!ok)
		cel(s, "", obj, "metadata.name must match RFC 1035 DNS label format");
	if (len > 63)
		cel(s, "", obj, "metadata.name must be no more than 63 characters");
}

/* -------------------------------------------------------- transition rules */

static void immutable(sc *s, const char *path, const cJSON *now, const cJSON *before)
{
	if (absent(now) || absent(before) || tp_json_equal(now, before))
		return;
	cel(s, path, now, "field is immutable");
}

/* runtimeRef is compared with the CRD defaults filled in, as stored. */
static bool same_ref(const cJSON *a, const cJSON *b)
{
	static const char *const m[] = { "name", "apiGroup", "kind" };
	static const char *const dflt[] = { "", TP_GROUP_TRAINER, "ClusterTrainingRuntime" };
	for (int i = 0; i < 3; i++) {
		const cJSON *x = member(a, m[i]), *y = member(b, m[i]);
		const char *xs = x ? (cJSON_IsString(x) ? x->valuestring : "\x01") : dflt[i];
		const char *ys = y ? (cJSON_IsString(y) ? y->valuestring : "\x01") : dflt[i];
		if (strcmp(xs, ys))
			return false;
	}
	return true;
}

/* PodSpecPatch fields marked self == oldSelf (§1). */
static const char *const immutable_pod_fields[] = {
	"serviceAccountName", "volumes", "initContainers", "containers", "imagePullSecrets",
	"securityContext", "terminationGracePeriodSeconds",
};

/* runtimePatches are a list-map keyed by manager and replicatedJobs one keyed
 * by name: the API server pairs old and new items by key, so a patch's
 * manager can never differ from its pair's (that CEL rule cannot fire) and
 * the pod fields are compared between items of the same manager and job. */
static void immutable_patches(sc *s, const cJSON *now, const cJSON *before)
{
	const char *jobs_at = "trainingRuntimeSpec.template.spec.replicatedJobs";
	int i = 0;
	for (const cJSON *p = cJSON_IsArray(now) ? now->child : NULL; p; p = p->next, i++) {
		const cJSON *op = tp_find_named(before, "manager", tp_get_str(p, "manager"));
		const cJSON *jobs = tp_get_array(p, jobs_at), *ojobs = tp_get_array(op, jobs_at);
		int j = 0;
		for (const cJSON *jb = jobs ? jobs->child : NULL; op && jb; jb = jb->next, j++) {
			const cJSON *ojb = tp_find_named(ojobs, "name", tp_get_str(jb, "name"));
			const cJSON *pod = tp_get(jb, "template.spec.template.spec");
			const cJSON *opod = tp_get(ojb, "template.spec.template.spec");
			if (!cJSON_IsObject(pod) || !cJSON_IsObject(opod))
				continue;
			for (size_t f = 0; f < sizeof(immutable_pod_fields) / sizeof(char *); f++) {
				char path[512];
				snprintf(path, sizeof(path), "spec.runtimePatches[%d].%s[%d].template."
					 "spec.template.spec.%s", i, jobs_at, j, immutable_pod_fields[f]);
				immutable(s, path, member(pod, immutable_pod_fields[f]),
					  member(opod, immutable_pod_fields[f]));
			}
		}
	}
}

static void transitions(sc *s, const cJSON *spec, const cJSON *old_spec)
{
	const cJSON *ref = member(spec, "runtimeRef"), *oref = member(old_spec, "runtimeRef");
	if (cJSON_IsObject(ref) && cJSON_IsObject(oref) && !same_ref(ref, oref))
		cel(s, "spec.runtimeRef", ref, "field is immutable");
	static const char *const whole[] = {
		"initializer", "trainer", "managedBy", "activeDeadlineSeconds",
	};
	for (size_t i = 0; i < sizeof(whole) / sizeof(*whole); i++) {
		char p[64];
		join(p, sizeof(p), "spec", whole[i]);
		immutable(s, p, member(spec, whole[i]), member(old_spec, whole[i]));
	}
	immutable_patches(s, member(spec, "runtimePatches"), member(old_spec, "runtimePatches"));
}

/* -------------------------------------------------------- list-map keys */

struct repeat {
	sc *s;
	const char *path;
	const char *key;
};

static void report_repeat(void *ctx, const cJSON *item, int i)
{
	const struct repeat *r = ctx;
	sc *s = r->s;
	char ip[700], dup[700];
	if (!s->dups && tp_result_new(&s->dups)) {
		add(s, TP_ENOMEM);
		return;
	}
	snprintf(ip, sizeof(ip), "%s[%d]", r->path, i);
	snprintf(dup, sizeof(dup), "{\"%s\":%s}", r->key,
		 tp_result_quote(s->dups, tp_member(item, r->key)->valuestring));
	add(s, tp_result_add(s->dups, TP_FIELD_DUPLICATE, ip, dup, "%s", ""));
}

/* Each key that repeats, once, at its first repetition (structurallisttype). */
static void unique_keys(sc *s, const char *path, const cJSON *arr, const char *key)
{
	struct repeat r = { s, path, key };
	add(s, tp__index_first_repeats(arr, key, report_repeat, &r));
}

/* ------------------------------------------------------------ CEL rules */

/* After the schema's errors: the list-map keys', then the CEL rules' own,
 * or, when an error blocks them, the API server's word that they did not
 * run. */
static void cel_verdict(sc *s)
{
	add(s, tp_result_append(s->res, s->dups));
	if (s->blocking) {
		add(s, tp_result_add(s->res, TP_FIELD_INVALID, NULL, "\"null\"", "%s",
				     "some validation rules were not checked because the object "
				     "was invalid; correct the existing errors to complete validation"));
		return;
	}
	add(s, tp_result_append(s->res, s->cel));
}

int tp__trainjob_schema(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res)
{
	(void)opt;
	sc s = { .res = res };
	name_rules(&s, obj);
	const cJSON *spec = member(obj, "spec");
	if (spec && object(&s, "spec", spec)) {
		runtime_ref(&s, spec);
		const cJSON *init = member(spec, "initializer");
		if (init && object(&s, "spec.initializer", init)) {
			initializer_part(&s, init, "dataset");
			initializer_part(&s, init, "model");
		}
		trainer(&s, spec);
		top_level(&s, spec);
		const cJSON *old_spec = op == TP_OP_UPDATE ? member(old_obj, "spec") : NULL;
		if (cJSON_IsObject(old_spec) && !s.blocking && !s.rc)
			transitions(&s, spec, old_spec);
	}
	if (!s.rc)
		cel_verdict(&s);
	tp_result_free(s.dups);
	tp_result_free(s.cel);
	return s.rc;
}
