/*
 * findings.c — a decision's errors and warnings, shaped for the person who
 * reads them offline. The decision's texts stay the API server's and
 * upstream's word for word; what changes is where each is reported, that it
 * is reported once, and the hint after it:
 *   - the field is the one the user wrote: upstream's Go-cased segments
 *     ("spec.RuntimeRef") in the object's spelling, and a CRD rule of the
 *     whole object whose message names a field (the TrainJob's
 *     "metadata.name must match RFC 1035 DNS label format") at that field's
 *     line, not on the object's first line (its text keeps the API
 *     server's "<nil>: Invalid value: \"object\"", so a search finds it);
 *   - such a rule that fails only because the field is missing ("no such
 *     key: name") where a Required error already says so is no second
 *     finding, nor is the same error twice;
 *   - a hint follows where one helps: a quantity in the units people write
 *     elsewhere, a name the API server refuses, a runtime not found.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/cli/finding_rules.h"
#include "webhook/cli/findings.h"
#include "webhook/cli/hints.h"
#include "webhook/core/json_read.h"

#define FIELD_MAX 512

/* ------------------------------------------------------------ fields */

/* path's segments looked up in obj: a segment the object spells with a
 * lowercase first letter where the text has it uppercase (Go's field name)
 * is written as the object spells it. The rest is kept as it is. */
static void user_spelling(const cJSON *obj, const char *path, char *out, size_t n)
{
	snprintf(out, n, "%s", path);
	const cJSON *node = obj;
	char *seg = out;
	while (node && *seg) {
		size_t len = strcspn(seg, ".[");
		char save = seg[len];
		seg[len] = '\0';
		const cJSON *child = cJSON_IsObject(node) ? cJSON_GetObjectItemCaseSensitive(node, seg)
							   : NULL;
		if (!child && cJSON_IsObject(node) && seg[0] >= 'A' && seg[0] <= 'Z') {
			seg[0] = (char)(seg[0] + ('a' - 'A'));
			if (!(child = cJSON_GetObjectItemCaseSensitive(node, seg)))
				seg[0] = (char)(seg[0] - ('a' - 'A'));
		}
		seg[len] = save;
		seg += len;
		node = child;
		while (node && *seg == '[') { /* list indexes */
			char *end;
			long i = strtol(seg + 1, &end, 10);
			node = cJSON_IsArray(node) && *end == ']' ? cJSON_GetArrayItem(node, (int)i) : NULL;
			seg = *end == ']' ? end + 1 : end;
		}
		if (*seg != '.')
			break;
		seg++;
	}
}

/* Whether path names a member of obj, member names with dots in them
 * ("limits.nvidia.com/gpu") included: each member whose name is the next
 * part of path is tried. */
static bool path_exists(const cJSON *node, const char *path)
{
	if (!*path)
		return true;
	if (*path == '[') {
		char *end;
		long i = strtol(path + 1, &end, 10);
		const cJSON *it = cJSON_IsArray(node) && *end == ']' ? cJSON_GetArrayItem(node, (int)i)
								     : NULL;
		return it && path_exists(it, end[1] == '.' ? end + 2 : end + 1);
	}
	if (!cJSON_IsObject(node))
		return false;
	for (const cJSON *m = node->child; m; m = m->next) {
		size_t n = strlen(m->string);
		if (!strncmp(path, m->string, n) && (!path[n] || path[n] == '.' || path[n] == '[') &&
		    path_exists(m, path + n + (path[n] == '.')))
			return true;
	}
	return false;
}

/* A rule of the whole object whose text starts with a field of it
 * ("metadata.name must ...", also after "... evaluating rule: "): that
 * field, when its parent is in the object. */
static bool field_in_text(const cJSON *obj, const char *detail, char *out, size_t n)
{
	const char *t = strstr(detail, " evaluating rule: ");
	t = t ? t + strlen(" evaluating rule: ") : detail;
	size_t len = strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
	if (!len || len >= n || t[len] != ' ' || !memchr(t, '.', len) || t[len - 1] == '.')
		return false;
	snprintf(out, n, "%.*s", (int)len, t);
	char parent[FIELD_MAX];
	snprintf(parent, sizeof(parent), "%s", out);
	*strrchr(parent, '.') = '\0';
	return cJSON_IsObject(tp_get(obj, parent));
}

/* The schema's "\"<field>\" must validate at least one schema (anyOf)"
 * at the root: its own error, about that field. */
static bool quoted_field(const cJSON *obj, const char *detail, char *out, size_t n)
{
	if (*detail != '"')
		return false;
	size_t q = strcspn(detail + 1, "\"");
	if (detail[1 + q] != '"' || q >= n)
		return false;
	snprintf(out, n, "%.*s", (int)q, detail + 1);
	if (memchr(out, '.', q) && path_exists(obj, out))
		return true;
	out[0] = '\0';
	return false;
}

static bool at_root(const tp_field_error *e)
{
	return !e->path || !*e->path || !strcmp(e->path, "<nil>");
}

/* ------------------------------------------------------------ placing */

/* Where path was written; its nearest written parent when it is missing
 * (a missing metadata.name at metadata:); the object's first line last. */
static void place(cJSON *item, const tw_finding_ctx *fc, const char *path)
{
	int line = fc->line, col = 1;
	if (fc->docs && path && *path) /* one walk: the deepest written node on the path */
		tp_docs_path_position(fc->docs, fc->obj, path, &line, &col);
	cJSON_AddNumberToObject(item, "line", line);
	cJSON_AddNumberToObject(item, "column", col);
}

/* ------------------------------------------------------------ hints */

static const char *string_value(const char *rendered, char *buf, size_t n)
{
	cJSON *v = rendered ? tw_json_value(rendered) : NULL;
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;
	if (s)
		snprintf(buf, n, "%s", s);
	cJSON_Delete(v);
	return s ? buf : NULL;
}

/* "did you mean ...?" among the runtimes the run knows, else how to give
 * one. */
static void runtime_hint(const tw_finding_ctx *fc, char *out, size_t n)
{
	const char *want = tp_get_str(fc->obj, "spec.runtimeRef.name");
	const char *kind = tp_get_str(fc->obj, "spec.runtimeRef.kind");
	const char *ns = tp_meta_namespace(fc->obj);
	if (!kind || !*kind)
		kind = "ClusterTrainingRuntime";
	const char *best = NULL, *other = NULL, *other_ns = NULL;
	size_t best_d = 99;
	const cJSON *k;
	cJSON_ArrayForEach(k, fc->known) {
		const char *name = tp_get_str(k, "name"), *kk = tp_get_str(k, "kind");
		const char *kns = tp_get_str(k, "namespace");
		bool same_ns = !strcmp(kns ? kns : "", ns) ||
			       (!*ns && kns && !strcmp(kns, "default")) || (!strcmp(ns, "default") && kns && !*kns);
		bool scoped = kk && !strcmp(kk, "TrainingRuntime");
		if (scoped && !same_ns && want && name && !strcmp(name, want) && !strcmp(kind, kk))
			other_ns = kns; /* given, but in another namespace */
		if (!name || !kk || (scoped && !same_ns))
			continue;
		if (want && strcmp(kk, kind) && !strcmp(name, want))
			other = kk;
		size_t d = want && !strcmp(kk, kind) ? tw_edit_distance(want, name, 3) : 99;
		if (d < best_d && tw_is_near(want, name))
			best = name, best_d = d;
	}
	if (best)
		snprintf(out, n, "did you mean \"%s\"?", best);
	else if (other)
		snprintf(out, n, "there is a %s \"%s\": set spec.runtimeRef.kind: %s", other, want,
			 other);
	else if (other_ns)
		snprintf(out, n, "create the TrainJob in namespace \"%s\", or a TrainingRuntime \"%s\" "
			 "in namespace \"%s\"", other_ns, want, *ns ? ns : "default");
	else
		snprintf(out, n, "%s", fc->give_runtime ? fc->give_runtime : "");
}

static void hint_for(const tw_finding_ctx *fc, const char *rule, const char *field,
		     const tp_field_error *e, char *out, size_t n)
{
	char v[256];
	out[0] = '\0';
	if (!strcmp(rule, "invalid-quantity")) {
		tw_hint_quantity(field, string_value(e->value, v, sizeof(v)), out, n);
	} else if (!strcmp(rule, "invalid-name")) {
		const char *kind = tp_get_str(fc->obj, "kind");
		const char *name = tp_get_str(fc->obj, "metadata.name");
		const char *gen = tp_get_str(fc->obj, "metadata.generateName");
		bool label = kind && !strcmp(kind, "TrainJob");
		if ((!name || !*name) && gen && *gen) { /* the API server names it */
			char h[400];
			tw_hint_name(kind, label, gen, h, sizeof(h));
			snprintf(out, n, "its name will be metadata.generateName and five random "
				 "characters: %s", h);
		} else {
			tw_hint_name(kind, label, e->type == TP_FIELD_REQUIRED ? NULL : name, out, n);
		}
	} else if (!strcmp(rule, "runtime-not-found")) {
		runtime_hint(fc, out, n);
	} else if (!strcmp(rule, "unknown-field")) {
		const cJSON *w = tp_get(fc->obj, field);
		char *r = w && !cJSON_IsObject(w) && !cJSON_IsArray(w) ? cJSON_PrintUnformatted(w)
								       : NULL;
		tw_hint_guide_field(field, r ? string_value(r, v, sizeof(v)) ? v : r : NULL, out, n);
		cJSON_free(r);
	}
}

/* ------------------------------------------------------------ errors */

bool tw_finding_runtime_not_found(const tp_field_error *e)
{
	return e->detail && strstr(e->detail, "must be created before the TrainJob is created");
}

typedef struct shaped {
	char field[FIELD_MAX];
	bool from_message; /* read from a root rule's text */
	const char *at;    /* where a finding of the whole object is shown: NULL, its
			    * field's place */
} shaped;

/* What folded() asks of the other errors of the same field, worked out
 * once for all of them: a sort by field, type, detail, value and place, where a
 * scan of every error for each error made E errors cost O(E^2) (20,000
 * findings of one TrainJob took a minute). */
typedef struct fold_info {
	size_t required; /* Required errors of the field */
	bool repeat;     /* an earlier error of the field has the same type and text */
} fold_info;

struct sorting {
	const tp_result *res;
	const shaped *sh;
};

static int by_field_text(const void *a, const void *b, void *arg)
{
	const struct sorting *st = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const tp_field_error *x = tp_result_error_at(st->res, i);
	const tp_field_error *y = tp_result_error_at(st->res, j);
	int c = strcmp(st->sh[i].field, st->sh[j].field);
	if (!c)
		c = (int)x->type - (int)y->type;
	if (!c)
		c = strcmp(x->detail ? x->detail : "", y->detail ? y->detail : "");
	if (!c)
		c = strcmp(x->value ? x->value : "", y->value ? y->value : "");
	return c ? c : (i > j) - (i < j);
}

static bool same_field(const shaped *sh, size_t i, size_t j)
{
	return !strcmp(sh[i].field, sh[j].field);
}

/* The same error twice: type, text and value (two bad label keys share a
 * text and are two findings, as the API server lists them). */
static bool same_text(const tp_result *res, size_t i, size_t j)
{
	const tp_field_error *x = tp_result_error_at(res, i), *y = tp_result_error_at(res, j);
	return x->type == y->type && !strcmp(x->detail ? x->detail : "", y->detail ? y->detail : "") &&
	       !strcmp(x->value ? x->value : "", y->value ? y->value : "");
}

/* fi[i] for each of the n errors; order: scratch for n indices. */
static void fold_infos(const tp_result *res, const shaped *sh, size_t n, size_t *order,
		       fold_info *fi)
{
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	struct sorting st = { res, sh };
	qsort_r(order, n, sizeof(*order), by_field_text, &st);
	for (size_t a = 0, b; a < n; a = b) {
		size_t required = 0;
		for (b = a; b < n && same_field(sh, order[a], order[b]); b++) {
			required += tp_result_error_at(res, order[b])->type == TP_FIELD_REQUIRED;
			fi[order[b]].repeat = b > a && same_field(sh, order[b - 1], order[b]) &&
					      same_text(res, order[b - 1], order[b]);
		}
		for (size_t k = a; k < b; k++)
			fi[order[k]].required = required;
	}
}

/* Whether error i says nothing that another does not: a rule that failed on
 * the missing field of a Required error, or the same error twice. A root
 * rule beside an error at its field is kept: the API server lists both. */
static bool folded(const tp_result *res, const fold_info *fi, size_t i)
{
	const tp_field_error *e = tp_result_error_at(res, i);
	bool no_key = strstr(e->detail ? e->detail : "", "no such key:") != NULL;
	size_t others_required = fi[i].required - (e->type == TP_FIELD_REQUIRED);
	return (no_key && others_required > 0) || fi[i].repeat;
}

static cJSON *error_entry(const tw_finding_ctx *fc, const tp_field_error *e, const shaped *sh)
{
	cJSON *je = cJSON_CreateObject();
	if (!je)
		return NULL;
	const char *rule = tw_finding_rule_of_error(e, sh->field, sh->from_message);
	tp_field_error shown = *e;
	/* a root rule's text stays the API server's ("<nil>: Invalid value:
	 * \"object\": metadata.name must ..."): only its place is the field's;
	 * an error at <nil> that quotes its field (anyOf) is said at that field */
	if (!sh->from_message && *sh->field && (at_root(e) || strcmp(e->path, sh->field)))
		shown.path = sh->field; /* the user's spelling of the field */
	tp_buf msg = TP_BUF_INIT(0);
	int rc = tp_field_error_format(&shown, &msg);
	char hint[512];
	hint_for(fc, rule, sh->field, e, hint, sizeof(hint));
	bool ok = !rc && cJSON_AddStringToObject(je, "field", sh->field) &&
		  cJSON_AddStringToObject(je, "rule", rule) &&
		  cJSON_AddStringToObject(je, "detail", e->detail ? e->detail : "") &&
		  cJSON_AddStringToObject(je, "message", msg.data ? msg.data : "") &&
		  (!hint[0] || cJSON_AddStringToObject(je, "hint", hint));
	tp_buf_free(&msg);
	if (!ok) {
		cJSON_Delete(je);
		return NULL;
	}
	place(je, fc, sh->at ? sh->at : sh->field);
	return je;
}

static int add_errors(const tw_finding_ctx *fc, const tp_result *res, cJSON *errs)
{
	size_t n = tp_result_error_count(res);
	shaped *sh = calloc(n ? n : 1, sizeof(*sh));
	fold_info *fi = calloc(n ? n : 1, sizeof(*fi));
	size_t *order = calloc(n ? n : 1, sizeof(*order));
	if (!sh || !fi || !order) {
		free(sh), free(fi), free(order);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		if (at_root(e) && e->detail &&
		    quoted_field(fc->obj, e->detail, sh[i].field, sizeof(sh[i].field)))
			continue;
		if (at_root(e) && e->detail &&
		    field_in_text(fc->obj, e->detail, sh[i].field, sizeof(sh[i].field)))
			sh[i].from_message = true;
		else if (!at_root(e))
			user_spelling(fc->obj, e->path, sh[i].field, sizeof(sh[i].field));
	}
	/* "some validation rules were not checked because the object was
	 * invalid" names no field: it is shown where the first invalid field is */
	const char *first = NULL;
	for (size_t i = 0; i < n && !first; i++)
		first = *sh[i].field ? sh[i].field : NULL;
	for (size_t i = 0; i < n; i++) {
		const char *d = tp_result_error_at(res, i)->detail;
		if (!*sh[i].field && d && strstr(d, "validation rules were not checked"))
			sh[i].at = first;
	}
	fold_infos(res, sh, n, order, fi);
	int rc = TP_OK;
	for (size_t i = 0; !rc && i < n; i++) {
		if (folded(res, fi, i) ||
		    (fc->no_runtimes && tw_finding_runtime_not_found(tp_result_error_at(res, i))))
			continue;
		cJSON *je = error_entry(fc, tp_result_error_at(res, i), &sh[i]);
		if (!je || !cJSON_AddItemToArray(errs, je))
			rc = TP_ENOMEM, cJSON_Delete(je);
	}
	free(sh), free(fi), free(order);
	return rc;
}

/* ------------------------------------------------------------ warnings */

/* A warning without a field: the one its text starts with ("spec.x: ...",
 * "spec.trainer.numNodes is 0", "mlPolicy.mpi... " under spec), else the
 * one it is about (a runtime's deprecation: its support label, or the
 * runtimeRef that names it; a template without a trainer step: its
 * replicatedJobs), else none (the object's first line). */
static void warning_field(const cJSON *obj, const char *w, char *field, size_t size)
{
	size_t n = strcspn(w, ": ");
	if ((w[n] == ':' || w[n] == ' ') && n < size && memchr(w, '.', n)) {
		snprintf(field, size, "%.*s", (int)n, w);
		if (w[n] == ':' || path_exists(obj, field))
			return;
		char under_spec[FIELD_MAX];
		snprintf(under_spec, sizeof(under_spec), "spec.%.*s", (int)n, w);
		snprintf(field, size, "%s", path_exists(obj, under_spec) ? under_spec : "");
		if (*field)
			return;
	}
	field[0] = '\0';
	if (strstr(w, " is deprecated and will be removed"))
		snprintf(field, size, "%s", tp_kind_of(obj) == TP_KIND_TRAINJOB
			 ? "spec.runtimeRef.name" : "metadata.labels[trainer.kubeflow.org/support]");
	else if (strstr(w, "no replicated job is labelled"))
		snprintf(field, size, "spec.template.spec.replicatedJobs");
}

static int add_warnings(const tw_finding_ctx *fc, const tp_result *res, cJSON *warns)
{
	for (size_t i = 0; i < tp_result_warning_count(res); i++) {
		const char *w = tp_result_warning_at(res, i);
		cJSON *jw = cJSON_CreateObject();
		if (!jw || !cJSON_AddItemToArray(warns, jw)) {
			cJSON_Delete(jw);
			return TP_ENOMEM;
		}
		const char *at = tp_result_warning_path_at(res, i);
		char field[FIELD_MAX] = "";
		if (at)
			user_spelling(fc->obj, at, field, sizeof(field));
		else
			warning_field(fc->obj, w, field, sizeof(field));
		if (!cJSON_AddStringToObject(jw, "field", field) ||
		    !cJSON_AddStringToObject(jw, "rule", tw_finding_rule_of_warning(w)) ||
		    !cJSON_AddStringToObject(jw, "message", w))
			return TP_ENOMEM;
		place(jw, fc, field);
	}
	return TP_OK;
}

int tw_findings_add(const tw_finding_ctx *fc, const tp_result *res, cJSON *errs, cJSON *warns)
{
	int rc = add_errors(fc, res, errs);
	return rc ? rc : add_warnings(fc, res, warns);
}

int tw_finding_line(const cJSON *f, tp_buf *out)
{
	const char *msg = tp_get_str(f, "message"), *hint = tp_get_str(f, "hint");
	if (!msg)
		msg = tp_get_str(f, "reason");
	int rc = tp_buf_adds(out, msg ? msg : "");
	if (hint && *hint)
		rc |= tp_buf_addf(out, "; %s", hint);
	return rc ? TP_ENOMEM : TP_OK;
}

/* ------------------------------------------------------------ load errors */

const char *tw_finding_load_hint(const char *rule, const char *msg)
{
	/* libyaml's words for a line indented more or less than its mapping or
	 * list wants */
	static const char *const indentation[] = {
		"mapping values are not allowed", "did not find expected key",
		"did not find expected '-' indicator", "could not find expected ':'",
		"block sequence entries are not allowed", "block mapping",
	};
	if (!strcmp(rule, "yaml-tab"))
		return "YAML indents with spaces, never tabs";
	if (!strcmp(rule, "yaml-duplicate-key"))
		return "keep one of the two keys";
	for (size_t i = 0; msg && i < sizeof(indentation) / sizeof(*indentation); i++)
		if (strstr(msg, indentation[i]))
			return "check the indentation of this line and the ones above it: the keys "
			       "of one mapping start in the same column, a nested mapping or list "
			       "further right (with spaces)";
	return NULL;
}

cJSON *tw_finding_unreadable(const char *file, const tp_load_error *err, const char *reason,
			     bool at_tab)
{
	cJSON *u = cJSON_CreateObject();
	const char *rule = err ? tw_finding_rule_of_load(err->msg, at_tab) : "unreadable";
	const char *hint = tw_finding_load_hint(rule, err ? err->msg : NULL);
	bool ok = u && cJSON_AddStringToObject(u, "file", file) &&
		  cJSON_AddStringToObject(u, "rule", rule) &&
		  cJSON_AddStringToObject(u, "reason", reason) &&
		  (!hint || cJSON_AddStringToObject(u, "hint", hint)) &&
		  cJSON_AddNumberToObject(u, "line", err && err->line > 0 ? err->line : 1) &&
		  cJSON_AddNumberToObject(u, "column", err && err->column > 0 ? err->column : 1);
	if (!ok) {
		cJSON_Delete(u);
		return NULL;
	}
	return u;
}
