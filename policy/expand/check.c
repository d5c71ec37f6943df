/*
 * expand/check.c — the JSON types of every field the expansion reads, checked
 * once, before anything is built, so that a wrong type becomes an error that
 * names the field instead of a silently skipped setting or a crash further on.
 * Only types are checked here; values are the validators' business.
 * A JSON null counts as absent, as it does for Kubernetes' decoder.
 */
#include "policy/expand/expand.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum want { W_STRING, W_INT, W_BOOL, W_OBJECT, W_ARRAY, W_INT_OR_STRING };

struct checker {
	tp_expansion *x;
	const char *where; /* "" for the TrainJob, else a note on the source */
	int errors;
};

static const char *want_detail(enum want w)
{
	switch (w) {
	case W_STRING: return "must be a string";
	case W_INT: return "must be an integer";
	case W_BOOL: return "must be a boolean";
	case W_OBJECT: return "must be an object";
	case W_ARRAY: return "must be a list";
	case W_INT_OR_STRING: return "must be an integer or a string";
	}
	return "has the wrong type";
}

static bool has_type(const cJSON *v, enum want w)
{
	switch (w) {
	case W_STRING: return cJSON_IsString(v);
	case W_INT: return tp_json_is_int(v, NULL);
	case W_BOOL: return cJSON_IsBool(v);
	case W_OBJECT: return cJSON_IsObject(v);
	case W_ARRAY: return cJSON_IsArray(v);
	case W_INT_OR_STRING: return cJSON_IsString(v) || tp_json_is_int(v, NULL);
	}
	return false;
}

/* A field path into a fixed buffer; one deeper than the buffer holds (never
 * in a real object) ends in "...". */
static void path_of(char *out, size_t n, const char *fmt, ...) TP_PRINTF(3, 4);
static void path_of(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(out, n, fmt, ap);
	va_end(ap);
	if (len >= (int)n && n > 4)
		memcpy(out + n - 4, "...", 4);
}

static void report(struct checker *c, const char *path, const cJSON *v, const char *detail)
{
	char d[160];
	snprintf(d, sizeof(d), "%s%s", detail, c->where);
	(void)tp__x_fail(c->x, path, v, d);
	c->errors++;
}

/* obj[member] at path "<base>.<member>": the value when present and of the
 * wanted type, NULL otherwise (with an error when of another type). */
static const cJSON *field(struct checker *c, const cJSON *obj, const char *base,
			  const char *member, enum want w)
{
	const cJSON *v = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, member) : NULL;
	if (!v || cJSON_IsNull(v))
		return NULL;
	if (has_type(v, w))
		return v;
	char path[512];
	path_of(path, sizeof(path), "%s%s%s", base, *base ? "." : "", member);
	report(c, path, v, want_detail(w));
	return NULL;
}

static void required_string(struct checker *c, const cJSON *obj, const char *base,
			    const char *member)
{
	const cJSON *v = field(c, obj, base, member, W_STRING);
	if (v && *v->valuestring)
		return;
	if (!v && cJSON_IsObject(obj) && cJSON_GetObjectItemCaseSensitive(obj, member) &&
	    !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(obj, member)))
		return; /* wrong type, reported */
	char path[512];
	path_of(path, sizeof(path), "%s.%s", base, member);
	char d[160];
	snprintf(d, sizeof(d), "must be set%s", c->where);
	(void)tp_result_add(c->x->res, TP_FIELD_REQUIRED, path, NULL, "%s", d);
	c->errors++;
}

/* A list whose elements must all be of type w; calls each() per element. */
static void list(struct checker *c, const cJSON *obj, const char *base, const char *member,
		 enum want w, void (*each)(struct checker *, const cJSON *, const char *))
{
	const cJSON *arr = field(c, obj, base, member, W_ARRAY);
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, arr) {
		char path[512];
		path_of(path, sizeof(path), "%s.%s[%d]", base, member, i++);
		if (!has_type(e, w))
			report(c, path, e, want_detail(w));
		else if (each)
			each(c, e, path);
	}
}

static void named(struct checker *c, const cJSON *e, const char *path)
{
	required_string(c, e, path, "name");
}

static void env_list(struct checker *c, const cJSON *obj, const char *base)
{
	list(c, obj, base, "env", W_OBJECT, named);
}

static void resources(struct checker *c, const cJSON *obj, const char *base, const char *member)
{
	const cJSON *r = field(c, obj, base, member, W_OBJECT);
	char path[512];
	path_of(path, sizeof(path), "%s.%s", base, member);
	field(c, r, path, "limits", W_OBJECT);
	field(c, r, path, "requests", W_OBJECT);
}

/* ------------------------------------------------------------ TrainJob */

static void initializer(struct checker *c, const cJSON *init, const char *which)
{
	char base[64];
	snprintf(base, sizeof(base), "spec.initializer.%s", which);
	const cJSON *d = field(c, init, "spec.initializer", which, W_OBJECT);
	field(c, d, base, "storageUri", W_STRING);
	env_list(c, d, base);
	const cJSON *s = field(c, d, base, "secretRef", W_OBJECT);
	if (s) {
		char path[96];
		path_of(path, sizeof(path), "%s.secretRef", base);
		required_string(c, s, path, "name");
	}
}

static void trainer(struct checker *c, const cJSON *spec)
{
	const cJSON *t = field(c, spec, "spec", "trainer", W_OBJECT);
	if (!t)
		return;
	field(c, t, "spec.trainer", "image", W_STRING);
	list(c, t, "spec.trainer", "command", W_STRING, NULL);
	list(c, t, "spec.trainer", "args", W_STRING, NULL);
	env_list(c, t, "spec.trainer");
	field(c, t, "spec.trainer", "numNodes", W_INT);
	field(c, t, "spec.trainer", "numProcPerNode", W_INT_OR_STRING);
	resources(c, t, "spec.trainer", "resourcesPerNode");
}

static void check_trainjob(struct checker *c, const cJSON *tj)
{
	if (!cJSON_IsObject(tj)) {
		report(c, "<root>", NULL, "the TrainJob must be an object");
		return;
	}
	const cJSON *meta = field(c, tj, "", "metadata", W_OBJECT);
	required_string(c, meta, "metadata", "name");
	field(c, meta, "metadata", "namespace", W_STRING);
	field(c, meta, "metadata", "uid", W_STRING);
	const cJSON *spec = field(c, tj, "", "spec", W_OBJECT);
	if (!spec) {
		if (!cJSON_GetObjectItemCaseSensitive(tj, "spec") ||
		    cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(tj, "spec"))) {
			(void)tp_result_add(c->x->res, TP_FIELD_REQUIRED, "spec", NULL,
					    "a TrainJob needs a spec");
			c->errors++;
		}
		return;
	}
	field(c, spec, "spec", "suspend", W_BOOL);
	const cJSON *ref = field(c, spec, "spec", "runtimeRef", W_OBJECT);
	field(c, ref, "spec.runtimeRef", "name", W_STRING);
	field(c, ref, "spec.runtimeRef", "kind", W_STRING);
	field(c, ref, "spec.runtimeRef", "apiGroup", W_STRING);
	trainer(c, spec);
	const cJSON *init = field(c, spec, "spec", "initializer", W_OBJECT);
	initializer(c, init, "dataset");
	initializer(c, init, "model");
}

/* ------------------------------------------------------------- runtime */

static void target(struct checker *c, const cJSON *t, const char *path)
{
	required_string(c, t, path, "jobName");
	list(c, t, path, "containerNames", W_STRING, NULL);
}

static void check_ml_policy(struct checker *c, const cJSON *spec)
{
	const char *b = "spec.mlPolicy";
	const cJSON *ml = field(c, spec, "spec", "mlPolicy", W_OBJECT);
	field(c, ml, b, "numNodes", W_INT);
	const cJSON *torch = field(c, ml, b, "torch", W_OBJECT);
	field(c, torch, "spec.mlPolicy.torch", "numProcPerNode", W_INT_OR_STRING);
	const cJSON *inj = field(c, torch, "spec.mlPolicy.torch", "envInjection", W_OBJECT);
	list(c, inj, "spec.mlPolicy.torch.envInjection", "targets", W_OBJECT, target);
	const cJSON *mpi = field(c, ml, b, "mpi", W_OBJECT);
	field(c, mpi, "spec.mlPolicy.mpi", "numProcPerNode", W_INT);
	field(c, mpi, "spec.mlPolicy.mpi", "sshAuthMountPath", W_STRING);
	field(c, mpi, "spec.mlPolicy.mpi", "runLauncherAsNode", W_BOOL);
	field(c, mpi, "spec.mlPolicy.mpi", "mpiImplementation", W_STRING);
	field(c, ml, b, "jax", W_OBJECT);
	field(c, ml, b, "xgboost", W_OBJECT);
	const cJSON *pg = field(c, spec, "spec", "podGroupPolicy", W_OBJECT);
	const cJSON *co = field(c, pg, "spec.podGroupPolicy", "coscheduling", W_OBJECT);
	field(c, co, "spec.podGroupPolicy.coscheduling", "scheduleTimeoutSeconds", W_INT);
	const cJSON *vo = field(c, pg, "spec.podGroupPolicy", "volcano", W_OBJECT);
	field(c, vo, "spec.podGroupPolicy.volcano", "networkTopology", W_OBJECT);
}

static void check_runtime(struct checker *c, const cJSON *rt)
{
	if (!cJSON_IsObject(rt)) {
		report(c, "<root>", NULL, "the runtime must be an object");
		return;
	}
	check_ml_policy(c, field(c, rt, "", "spec", W_OBJECT));
}

int tp__expand_check_inputs(tp_expansion *x)
{
	struct checker c = { x, "", 0 };
	check_trainjob(&c, x->trainjob);
	c.where = " (in the runtime)";
	check_runtime(&c, x->runtime);
	return c.errors;
}

/* ------------------------------------------------------------ template */

static void port(struct checker *c, const cJSON *p, const char *path)
{
	field(c, p, path, "containerPort", W_INT);
}

static void mount(struct checker *c, const cJSON *m, const char *path)
{
	required_string(c, m, path, "mountPath");
	field(c, m, path, "name", W_STRING);
}

static void container(struct checker *c, const cJSON *k, const char *path)
{
	required_string(c, k, path, "name");
	field(c, k, path, "image", W_STRING);
	list(c, k, path, "command", W_STRING, NULL);
	list(c, k, path, "args", W_STRING, NULL);
	env_list(c, k, path);
	list(c, k, path, "envFrom", W_OBJECT, NULL);
	list(c, k, path, "ports", W_OBJECT, port);
	list(c, k, path, "volumeMounts", W_OBJECT, mount);
	resources(c, k, path, "resources");
	field(c, k, path, "restartPolicy", W_STRING);
}

static void meta_maps(struct checker *c, const cJSON *obj, const char *base)
{
	char path[512];
	path_of(path, sizeof(path), "%s.metadata", base);
	const cJSON *m = field(c, obj, base, "metadata", W_OBJECT);
	field(c, m, path, "labels", W_OBJECT);
	field(c, m, path, "annotations", W_OBJECT);
}

static void job(struct checker *c, const cJSON *j, const char *path)
{
	char p[512], lp[512];
	required_string(c, j, path, "name");
	field(c, j, path, "replicas", W_INT);
	const cJSON *t = field(c, j, path, "template", W_OBJECT);
	snprintf(p, sizeof(p), "%s.template", path);
	meta_maps(c, t, p);
	snprintf(lp, sizeof(lp), "%s.template.metadata.labels", path);
	field(c, tp_get(t, "metadata.labels"), lp, TP_LABEL_ANCESTOR, W_STRING);
	const cJSON *js = field(c, t, p, "spec", W_OBJECT);
	snprintf(p, sizeof(p), "%s.template.spec", path);
	field(c, js, p, "parallelism", W_INT);
	field(c, js, p, "completions", W_INT);
	const cJSON *pt = field(c, js, p, "template", W_OBJECT);
	snprintf(p, sizeof(p), "%s.template.spec.template", path);
	meta_maps(c, pt, p);
	const cJSON *ps = field(c, pt, p, "spec", W_OBJECT);
	snprintf(p, sizeof(p), "%s.template.spec.template.spec", path);
	list(c, ps, p, "containers", W_OBJECT, container);
	list(c, ps, p, "initContainers", W_OBJECT, container);
	list(c, ps, p, "volumes", W_OBJECT, named);
	field(c, ps, p, "priorityClassName", W_STRING);
	field(c, ps, p, "overhead", W_OBJECT);
}

int tp__expand_check_template(tp_expansion *x)
{
	struct checker c = { x, " (in the runtime template with runtimePatches applied)", 0 };
	const cJSON *spec = tp_get(x->tmpl, "spec");
	const cJSON *net = field(&c, spec, "spec.template.spec", "network", W_OBJECT);
	field(&c, net, "spec.template.spec.network", "subdomain", W_STRING);
	field(&c, spec, "spec.template.spec", "suspend", W_BOOL);
	list(&c, spec, "spec.template.spec", "replicatedJobs", W_OBJECT, job);
	return c.errors;
}
