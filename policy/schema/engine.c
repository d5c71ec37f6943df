/*
 * schema/engine.c — a custom resource through its CRD, in the order of
 * apiextensions' customResourceStrategy: the kind and version served, unknown
 * fields (strict field validation), the OpenAPI schema (defaults read where
 * the API server would have written them), list-type
 * invariants (on UPDATE only when the old object kept them), then the CEL
 * rules unless an error already blocks them.
 */
#include "policy/schema/schema.h"

#include <stdio.h>
#include <string.h>

/* "trainer.kubeflow.org/v1alpha1" -> group, version (core "v1": group ""). */
static bool split_api_version(const char *av, char *group, size_t n, const char **version)
{
	const char *slash = av ? strchr(av, '/') : NULL;
	if (!slash) {
		if (n)
			group[0] = '\0';
		*version = av;
		return av != NULL;
	}
	/* as snprintf's "%.*s" would cut it, without the printf family per request */
	size_t len = (size_t)(slash - av);
	if (n) {
		len = len < n - 1 ? len : n - 1;
		memcpy(group, av, len);
		group[len] = '\0';
	}
	*version = slash + 1;
	return true;
}

/* The group is served but not this version or kind: name what is. */
static void not_served(const tp_crds *c, const char *group, const char *version,
		       const char *kind, tp_result *res)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	const char *hint = NULL;
	bool kind_known = false;
	int rc = 0;
	for (size_t i = 0; i < c->n; i++) {
		const tp_crd_version *v = &c->v[i];
		if (strcmp(v->group, group))
			continue;
		rc |= tp_buf_addf(&b, "%s%s %s/%s", b.len ? ", " : "", v->kind, v->group, v->version);
		kind_known |= kind && !strcmp(v->kind, kind);
		if (kind && !strcasecmp(v->kind, kind) && strcmp(v->kind, kind))
			hint = v->kind;
	}
	if (rc) {
		tp_buf_free(&b);
		return;
	}
	const char *path = kind_known ? "apiVersion" : "kind";
	if (hint)
		tp_result_add(res, TP_FIELD_PLAIN, path, NULL,
			      "no matches for kind \"%s\" in version \"%s/%s\": did you mean kind "
			      "\"%s\"? (served: %s)", kind, group, version, hint, b.data);
	else
		tp_result_add(res, TP_FIELD_PLAIN, path, NULL,
			      "no matches for kind \"%s\" in version \"%s/%s\" (served: %s)",
			      kind ? kind : "", group, version, b.data);
	tp_buf_free(&b);
}

static bool old_lists_hold(const tp_sch *root, const cJSON *old)
{
	tp_result *r = NULL;
	if (!old || tp_result_new(&r))
		return true;
	tp_sch_walk w = { .res = r, .path = TP_BUF_INIT(1 << 16) };
	tp__sch_list_types(&w, root, old);
	bool ok = tp_result_ok(r);
	tp__sch_walk_free(&w);
	tp_result_free(r);
	return ok;
}

/* The findings one pass kept aside, after ObjectMeta's: the schema's,
 * then the list types'. */
static void append_streams(tp_sch_walk *w, tp_result *res)
{
	if (w->checks_res)
		w->rc |= tp_result_append(res, w->checks_res);
	if (w->lists_res)
		w->rc |= tp_result_append(res, w->lists_res);
	tp_result_free(w->checks_res);
	tp_result_free(w->lists_res);
	w->checks_res = w->lists_res = NULL;
}

/* One walk of the object for the unknown fields, the OpenAPI schema and
 * the list-type invariants (three walks before, each looking up every
 * member's schema: make bench's ClusterTrainingRuntime review 200,247 ->
 * 173,187 instructions, TrainJob 103,353 -> 98,799, callgrind); ObjectMeta's
 * rules, then the CEL rules unless an error blocks them. */
static void check_object(const tp_crd_version *v, tp_operation op, const cJSON *obj,
			 const cJSON *old, tp_result *res, tp_sch_walk *w)
{
	w->one_pass = w->unknown = true;
	w->lists = op != TP_OP_UPDATE || old_lists_hold(v->root, old);
	tp__sch_check(w, v->root, obj);
	w->one_pass = w->unknown = w->lists = false;
	tp__sch_pop(w, 0);
	tp__sch_object_meta(w, v, obj);
	append_streams(w, res);
	if (!v->has_rules)
		return;
	if (w->blocking) {
		/* field.Invalid(nil, nil, ...): a nil value prints as "null" */
		w->rc |= tp_result_add(res, TP_FIELD_INVALID, NULL, tp_result_quote(res, "null"), "%s",
				       "some validation rules were not checked because the object "
				       "was invalid; correct the existing errors to complete validation");
		return;
	}
	tp_cel_budget budget = { .per_call = TP_CEL_PER_CALL_LIMIT,
				 .remaining = TP_CEL_RUNTIME_BUDGET };
	tp__sch_rules(w, v->root, obj, op == TP_OP_UPDATE ? old : NULL, &budget);
}

/* What rest.BeforeCreate does before any check: a generateName with no name
 * becomes a name, the prefix (cut to 58 bytes) and five random characters
 * (SimpleNameGenerator), so ObjectMeta's rules and the CRD's CEL rules on
 * metadata.name see a name. The five are always "xxxxx" here (one of the
 * generator's letters), so that a finding reads the same every run. *out:
 * a copy of obj with the name, or NULL when obj needs none. */
#define GENERATED_PREFIX_MAX 58
static int with_generated_name(const cJSON *obj, cJSON **out)
{
	*out = NULL;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const char *name = tp_get_str(meta, "name"), *gen = tp_get_str(meta, "generateName");
	if ((name && *name) || !gen || !*gen)
		return TP_OK;
	char generated[GENERATED_PREFIX_MAX + 6];
	snprintf(generated, sizeof(generated), "%.*sxxxxx", GENERATED_PREFIX_MAX, gen);
	cJSON *copy = cJSON_Duplicate(obj, true);
	cJSON *m = cJSON_GetObjectItemCaseSensitive(copy, "metadata");
	cJSON *n = cJSON_CreateString(generated);
	cJSON_DeleteItemFromObjectCaseSensitive(m, "name");
	if (!copy || !n || !cJSON_AddItemToObject(m, "name", n)) {
		cJSON_Delete(n);
		cJSON_Delete(copy);
		return TP_ENOMEM;
	}
	*out = copy;
	return TP_OK;
}

/* What the CRDs serve of group, in one scan of them (three before): *served
 * whether any CRD serves the group, *kind_known whether one serves kind in
 * it; returns the version serving version and kind, or NULL. */
static const tp_crd_version *served_as(const tp_crds *c, const char *group, const char *version,
				       const char *kind, bool *served, bool *kind_known)
{
	const tp_crd_version *found = NULL;
	*served = *kind_known = false;
	for (size_t i = 0; i < c->n && !found; i++) {
		const tp_crd_version *v = &c->v[i];
		if (strcmp(v->group, group))
			continue;
		*served = true;
		if (strcmp(v->kind, kind))
			continue;
		*kind_known = true;
		if (!strcmp(v->version, version))
			found = v;
	}
	return found;
}

/* The CRDs answer for a kind, not for a whole group: a kind the built-in
 * checks know (TrainJob, both runtimes, JobSet, OME's runtimes) whose own CRD
 * is absent keeps those checks while its group's other CRDs are loaded, so a
 * deleted TrainJob CRD never turns every TrainJob into "no matches". What only
 * a CRD could check (OptimizationJob, a misspelt kind, a version no CRD
 * serves) is still reported as the API server would. */
static bool builtin_kind_without_crd(bool kind_known, const cJSON *obj)
{
	return !kind_known && tp_kind_of(obj) != TP_KIND_UNKNOWN; /* kind_of asked only then */
}

int tp__schema_validate(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, tp_result *res, bool *handled)
{
	*handled = false;
	const tp_crds *c = opt ? opt->crds : NULL;
	char group[256];
	const char *version, *kind = tp_get_str(obj, "kind");
	bool served, kind_known;
	if (!c || !split_api_version(tp_get_str(obj, "apiVersion"), group, sizeof(group), &version))
		return TP_OK;
	const tp_crd_version *v = served_as(c, group, version, kind ? kind : "", &served,
					    &kind_known);
	if (!served || builtin_kind_without_crd(kind_known, obj))
		return TP_OK;
	*handled = true;
	if (!v) {
		not_served(c, group, version, kind, res);
		return TP_OK;
	}
	if (!v->root || op == TP_OP_DELETE || op == TP_OP_CONNECT)
		return TP_OK;
	tp_sch_walk w = { .res = res, .path = TP_BUF_INIT(1 << 16),
			  .skip_status = v->status_subresource, .strict = tp_strict(opt) };
	/* The fields and values the runtime guides add (torch.numProcPerNode,
	 * torch.elasticPolicy, mpiImplementation Intel and MPICH) follow the CRD
	 * in force in both profiles (docs/rules.md): one it lacks is refused as
	 * kubectl's strict field validation refuses it, so strict refuses all
	 * that kubeflow refuses; one it has is checked as the guides define. */
	cJSON *named = NULL;
	if (op == TP_OP_CREATE && with_generated_name(obj, &named)) {
		tp__sch_walk_free(&w);
		return TP_ENOMEM;
	}
	/* Defaults are not copied in: a property the API server would default
	 * reads as its default where it matters (required, CEL, list keys).
	 * The unknown fields are looked for in the named copy: it differs only
	 * by metadata.name, a field ObjectMeta knows. */
	check_object(v, op, named ? named : obj, old_obj, res, &w);
	cJSON_Delete(named);
	tp__sch_walk_free(&w);
	return w.rc ? TP_ENOMEM : TP_OK;
}

int tp__schema_layer(const tp_options *opt, tp_operation op, const cJSON *obj,
		     const cJSON *old_obj, tp_result *res, bool *by_crd)
{
	*by_crd = false;
	if (opt && opt->no_schema)
		return TP_OK;
	return tp__schema_validate(opt, op, obj, old_obj, res, by_crd);
}
