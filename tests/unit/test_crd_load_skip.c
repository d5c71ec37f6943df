/*
 * test_crd_load_skip.c — loading a CRD without its schemas' descriptions
 * (tp_crds_load_skip, as webhook/cli/crds.c loads every CRD text) leaves out
 * exactly those: a property named description, and whatever default, enum,
 * example or a rule holds, are loaded; anchors, aliases and merges copy
 * whole nodes; a duplicate key is the same error. Every built-in CRD
 * compiles to the same tree either way, so no decision can change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/schema/schema.h"
#include "tests/support/testutil.h"
#include "webhook/cli/builtin_crds.h"

/* A CRD whose schemas hold descriptions where they are documentation and
 * where they are data. */
static const char crd_yaml[] =
	"apiVersion: apiextensions.k8s.io/v1\n"
	"kind: CustomResourceDefinition\n"
	"metadata:\n"
	"  name: widgets.t.example.com\n"
	"  annotations: {description: an annotation}\n"
	"spec:\n"
	"  group: t.example.com\n"
	"  names: {kind: Widget, plural: widgets}\n"
	"  scope: Namespaced\n"
	"  versions:\n"
	"  - name: v1\n"
	"    served: true\n"
	"    schema:\n"
	"      openAPIV3Schema:\n"
	"        description: Widget is documentation.\n"
	"        type: object\n"
	"        properties:\n"
	"          spec:\n"
	"            description: The spec.\n"
	"            type: object\n"
	"            x-kubernetes-validations:\n"
	"            - rule: self.cfg.description == 'kept'\n"
	"              message: the default's description is data\n"
	"            properties:\n"
	"              description:\n"
	"                description: A property named description.\n"
	"                type: string\n"
	"                maxLength: 3\n"
	"              cfg:\n"
	"                type: object\n"
	"                default: {description: kept}\n"
	"                example: {description: an example}\n"
	"                properties:\n"
	"                  description: {type: string, description: inner}\n"
	"              kind:\n"
	"                type: string\n"
	"                enum: [description]\n"
	"              tuple:\n"
	"                type: array\n"
	"                items: [{description: an item of a tuple}]\n"
	"              odd:\n"
	"                description: 12\n"
	"                type: integer\n"
	"              list:\n"
	"                type: array\n"
	"                items:\n"
	"                  description: An item.\n"
	"                  type: object\n"
	"                  anyOf:\n"
	"                  - description: a branch\n"
	"                    required: [description]\n"
	"                  additionalProperties:\n"
	"                    description: A value.\n"
	"                    type: string\n";

static cJSON *load(const char *text, bool skip, tp_load_error *err, int *rc)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.skip = skip ? tp_crds_load_skip() : NULL;
	tp_docs *docs = NULL;
	*rc = tp_load(text, strlen(text), &lim, &docs, err);
	cJSON *o = *rc ? NULL : tp_docs_take(docs, 0);
	tp_docs_free(docs);
	return o;
}

static cJSON *load_ok(const char *text, bool skip)
{
	tp_load_error err;
	int rc;
	cJSON *o = load(text, skip, &err, &rc);
	if (rc)
		fail_msg("load: %s (line %d)", err.msg, err.line);
	return o;
}

/* The node at a dotted path whose names may end in [i] ("a.b[0].c"). */
static const cJSON *at(const cJSON *o, const char *path)
{
	char name[256];
	while (o && *path) {
		size_t n = strcspn(path, ".[");
		snprintf(name, sizeof(name), "%.*s", (int)n, path);
		o = cJSON_GetObjectItemCaseSensitive(o, name);
		path += n;
		while (o && *path == '[') {
			o = cJSON_GetArrayItem(o, atoi(path + 1));
			path = strchr(path, ']') + 1;
		}
		path += *path == '.';
	}
	return o;
}

static const char *str_at(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Each path of want[i][0] holds the string want[i][1]. */
static void expect_strings(const cJSON *o, const char *const want[][2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = str_at(o, want[i][0]);
		if (!v || strcmp(v, want[i][1]))
			fail_msg("%s: \"%s\", want \"%s\"", want[i][0], v ? v : "(absent)", want[i][1]);
	}
}

#define SCHEMA "spec.versions[0].schema.openAPIV3Schema"
#define SPEC SCHEMA ".properties.spec"

static void schema_descriptions_are_left_out(void **state)
{
	(void)state;
	cJSON *full = load_ok(crd_yaml, false), *crd = load_ok(crd_yaml, true);
	static const char *const gone[] = {
		SCHEMA ".description",
		SPEC ".description",
		SPEC ".properties.description.description",
		SPEC ".properties.cfg.properties.description.description",
		SPEC ".properties.list.items.description",
		SPEC ".properties.list.items.anyOf[0].description",
		SPEC ".properties.list.items.additionalProperties.description",
	};
	for (size_t i = 0; i < sizeof(gone) / sizeof(*gone); i++) {
		if (!str_at(full, gone[i]))
			fail_msg("%s is not in the CRD", gone[i]);
		if (str_at(crd, gone[i]))
			fail_msg("%s: loaded, but it is a schema's description", gone[i]);
	}
	static const char *const kept[][2] = {
		{ "metadata.annotations.description", "an annotation" },
		{ SPEC ".properties.cfg.default.description", "kept" },
		{ SPEC ".properties.cfg.example.description", "an example" },
		{ SPEC ".properties.kind.enum[0]", "description" },
		{ SPEC ".properties.tuple.items[0].description", "an item of a tuple" },
		{ SPEC ".properties.list.items.anyOf[0].required[0]", "description" },
		{ SPEC ".properties.description.type", "string" },
		{ SPEC ".x-kubernetes-validations[0].rule", "self.cfg.description == 'kept'" },
	};
	expect_strings(crd, kept, sizeof(kept) / sizeof(*kept));
	const cJSON *odd = at(crd, SPEC ".properties.odd");
	assert_non_null(odd);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(odd, "description")));
	cJSON_Delete(full);
	cJSON_Delete(crd);
}

/* Errors then warnings of validating spec against crd; "" when allowed. */
static char *verdict(const cJSON *crd, const char *spec)
{
	tp_crds *crds = NULL;
	char why[256] = "", *obj_text = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	if (tp_crds_add(crds, crd, why, sizeof(why)))
		fail_msg("compile: %s", why);
	assert_true(asprintf(&obj_text, "{'apiVersion':'t.example.com/v1','kind':'Widget',"
				       "'metadata':{'name':'w'},'spec':%s}", spec) > 0);
	cJSON *obj = tt_jsq(obj_text);
	tp_options opt = { .crds = crds };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate(&opt, TP_OP_CREATE, obj, NULL, res), TP_OK);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_adds(&b, ""), TP_OK);
	if (!tp_result_ok(res))
		tp_result_format(res, &b);
	tp_result_free(res);
	cJSON_Delete(obj);
	free(obj_text);
	tp_crds_unref(crds);
	return b.data;
}

static void decisions_are_the_same(void **state)
{
	(void)state;
	cJSON *full = load_ok(crd_yaml, false), *crd = load_ok(crd_yaml, true);
	static const char *const specs[][2] = {
		/* the rule reads the default of cfg: its description is kept */
		{ "{}", "" },
		{ "{'cfg':{'description':'other'}}", "the default's description is data" },
		/* the property named description is checked */
		{ "{'description':'abc'}", "" },
		{ "{'description':'abcd'}", "spec.description: Too long: may not be more than 3 bytes" },
		{ "{'kind':'description'}", "" },
		{ "{'kind':'other'}", "spec.kind: Unsupported value: \"other\": supported values: "
				      "\"description\"" },
		{ "{'list':[{'description':'x'}]}", "" },
		{ "{'list':[{'a':'x'}]}", "spec.list[0].description: Required value" },
	};
	for (size_t i = 0; i < sizeof(specs) / sizeof(*specs); i++) {
		char *with = verdict(full, specs[i][0]), *without = verdict(crd, specs[i][0]);
		if (strcmp(with, without))
			fail_msg("%s: \"%s\" with the descriptions, \"%s\" without", specs[i][0], with,
				 without);
		if (!strstr(without, specs[i][1]) || (!specs[i][1][0] && without[0]))
			fail_msg("%s: \"%s\", want \"%s\"", specs[i][0], without, specs[i][1]);
		free(with);
		free(without);
	}
	cJSON_Delete(full);
	cJSON_Delete(crd);
}

/* An anchored node is loaded whole, so an alias (here a default) copies
 * its description; a merge copies what its source holds. */
static void aliases_copy_whole_nodes(void **state)
{
	(void)state;
	static const char text[] =
		"spec:\n"
		"  versions:\n"
		"  - schema:\n"
		"      openAPIV3Schema:\n"
		"        description: &doc the text\n"
		"        properties:\n"
		"          a: &a {type: object, description: of a}\n"
		"          b: {type: object, default: *a}\n"
		"          c: {type: string, default: *doc}\n"
		"          d: {<<: *a, type: object}\n"
		"          e: {<<: {description: merged}, type: object}\n";
	cJSON *o = load_ok(text, true);
	static const char *const kept[][2] = {
		{ SCHEMA ".description", "the text" },
		{ SCHEMA ".properties.a.description", "of a" },
		{ SCHEMA ".properties.b.default.description", "of a" },
		{ SCHEMA ".properties.c.default", "the text" },
		{ SCHEMA ".properties.d.description", "of a" },
		{ SCHEMA ".properties.e.description", "merged" },
	};
	expect_strings(o, kept, sizeof(kept) / sizeof(*kept));
	cJSON_Delete(o);
}

/* A description written twice is the loader's error either way, in a small
 * mapping (a scan) and a large one (a hash set). */
static void duplicates_are_still_errors(void **state)
{
	(void)state;
	char big[2048] = "spec:\n  versions:\n  - schema:\n      openAPIV3Schema:\n";
	for (int i = 0; i < 20; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "        p%d: 1\n", i);
	strcat(big, "        description: one\n        type: object\n        description: two\n");
	const char *small = "spec:\n  versions:\n  - schema:\n      openAPIV3Schema:\n"
			    "        description: one\n        description: two\n";
	const char *texts[] = { small, big };
	for (size_t i = 0; i < 2; i++) {
		tp_load_error with, without;
		int rc_with, rc_without;
		assert_null(load(texts[i], false, &with, &rc_with));
		assert_null(load(texts[i], true, &without, &rc_without));
		assert_int_equal(rc_with, TP_EPARSE);
		assert_int_equal(rc_without, TP_EPARSE);
		assert_string_equal(with.msg, without.msg);
		assert_int_equal(with.line, without.line);
		assert_non_null(strstr(without.msg, "mapping key \"description\" already defined at line"));
	}
}

/* ------------------------------------------- the built-in CRDs, compiled */

static void same_tree(const tp_sch *a, const tp_sch *b, const char *path);

static void same_json(const cJSON *a, const cJSON *b, const char *path, const char *what)
{
	char *x = a ? cJSON_PrintUnformatted(a) : NULL, *y = b ? cJSON_PrintUnformatted(b) : NULL;
	if ((x == NULL) != (y == NULL) || (x && strcmp(x, y)))
		fail_msg("%s: %s %s != %s", path, what, x ? x : "NULL", y ? y : "NULL");
	free(x);
	free(y);
}

static void same_str(const char *a, const char *b, const char *path, const char *what)
{
	if ((a == NULL) != (b == NULL) || (a && strcmp(a, b)))
		fail_msg("%s: %s \"%s\" != \"%s\"", path, what, a ? a : "NULL", b ? b : "NULL");
}

static void same_list(tp_sch *const *a, size_t na, tp_sch *const *b, size_t nb, const char *path,
		      const char *what)
{
	if (na != nb)
		fail_msg("%s: %zu %s != %zu", path, na, what, nb);
	for (size_t i = 0; i < na; i++) {
		char sub[1024];
		snprintf(sub, sizeof(sub), "%s.%s[%zu]", path, what, i);
		same_tree(a[i], b[i], sub);
	}
}

static void same_rules(const tp_sch *a, const tp_sch *b, const char *path)
{
	if (a->nrules != b->nrules)
		fail_msg("%s: %zu rules != %zu", path, a->nrules, b->nrules);
	for (size_t i = 0; i < a->nrules; i++) {
		const tp_sch_rule *x = &a->rules[i], *y = &b->rules[i];
		same_str(x->rule, y->rule, path, "rule");
		same_str(x->message, y->message, path, "message");
		same_str(x->field_path, y->field_path, path, "fieldPath");
		same_str(x->unsupported, y->unsupported, path, "unsupported");
		if (!x->expr != !y->expr || !x->message_expr != !y->message_expr ||
		    x->reason != y->reason || x->transition != y->transition ||
		    x->optional_old_self != y->optional_old_self)
			fail_msg("%s: rule %zu differs", path, i);
	}
}

static void same_strings(const char **a, size_t na, const char **b, size_t nb, const char *path,
			 const char *what)
{
	if (na != nb)
		fail_msg("%s: %zu %s != %zu", path, na, what, nb);
	for (size_t i = 0; i < na; i++)
		same_str(a[i], b[i], path, what);
}

/* Every field validation reads, below a and b alike. */
static void same_tree(const tp_sch *a, const tp_sch *b, const char *path)
{
	if (!a || !b) {
		if (a != b)
			fail_msg("%s: one tree has no node", path);
		return;
	}
	same_str(a->type_name, b->type_name, path, "type");
	same_str(a->format, b->format, path, "format");
	same_str(a->pattern_text, b->pattern_text, path, "pattern");
	same_json(a->enum_values, b->enum_values, path, "enum");
	same_json(a->default_value, b->default_value, path, "default");
	if (a->types != b->types || a->nullable != b->nullable ||
	    a->int_or_string != b->int_or_string || a->preserve_unknown != b->preserve_unknown ||
	    a->embedded != b->embedded || a->rules_below != b->rules_below ||
	    a->lists_below != b->lists_below || !a->pattern != !b->pattern ||
	    a->has_min != b->has_min || a->has_max != b->has_max || a->excl_min != b->excl_min ||
	    a->excl_max != b->excl_max || a->min != b->min || a->max != b->max ||
	    a->min_len != b->min_len || a->max_len != b->max_len || a->min_items != b->min_items ||
	    a->max_items != b->max_items || a->min_props != b->min_props ||
	    a->max_props != b->max_props || a->unique != b->unique || a->list_type != b->list_type ||
	    a->lead_lo != b->lead_lo || a->lead_n != b->lead_n ||
	    a->new_rules_below != b->new_rules_below)
		fail_msg("%s: a keyword differs", path);
	same_strings(a->required, a->nrequired, b->required, b->nrequired, path, "required");
	same_strings(a->map_keys, a->nmap_keys, b->map_keys, b->nmap_keys, path, "map keys");
	same_rules(a, b, path);
	if (a->nprops != b->nprops)
		fail_msg("%s: %zu properties != %zu", path, a->nprops, b->nprops);
	char sub[1024];
	for (size_t i = 0; i < a->nprops; i++) {
		same_str(a->props[i].name, b->props[i].name, path, "property");
		snprintf(sub, sizeof(sub), "%s.%s", path, a->props[i].name);
		same_tree(a->props[i].schema, b->props[i].schema, sub);
	}
	snprintf(sub, sizeof(sub), "%s.additionalProperties", path);
	same_tree(a->additional, b->additional, sub);
	snprintf(sub, sizeof(sub), "%s.items", path);
	same_tree(a->items, b->items, sub);
	snprintf(sub, sizeof(sub), "%s.not", path);
	same_tree(a->not_schema, b->not_schema, sub);
	same_list(a->all_of, a->nall_of, b->all_of, b->nall_of, path, "allOf");
	same_list(a->any_of, a->nany_of, b->any_of, b->nany_of, path, "anyOf");
	same_list(a->one_of, a->none_of, b->one_of, b->none_of, path, "oneOf");
}

static tp_crds *compiled(const cJSON *crd)
{
	tp_crds *c = NULL;
	char why[256] = "";
	assert_int_equal(tp_crds_new(&c), TP_OK);
	if (tp_crds_add(c, crd, why, sizeof(why)))
		fail_msg("compile: %s", why);
	return c;
}

static void builtin_crds_compile_the_same(void **state)
{
	(void)state;
	for (size_t i = 0; i < tw_builtin_crds_count(); i++) {
		tw_builtin_crd f;
		assert_true(tw_builtin_crd_get(i, &f));
		cJSON *full = load_ok(f.data, false), *crd = load_ok(f.data, true);
		char *a = cJSON_PrintUnformatted(full), *b = cJSON_PrintUnformatted(crd);
		print_message("%s: %zu -> %zu bytes of JSON\n", f.file, strlen(a), strlen(b));
		assert_true(strlen(b) < strlen(a) / 2); /* upstream's: 60 % to 79 % less */
		free(a);
		free(b);
		tp_crds *x = compiled(full), *y = compiled(crd);
		assert_int_equal(x->n, y->n);
		for (size_t v = 0; v < x->n; v++) {
			const tp_crd_version *p = &x->v[v], *q = &y->v[v];
			same_str(p->group, q->group, f.file, "group");
			same_str(p->version, q->version, f.file, "version");
			same_str(p->kind, q->kind, f.file, "kind");
			same_str(p->plural, q->plural, f.file, "plural");
			assert_int_equal(p->namespaced, q->namespaced);
			assert_int_equal(p->status_subresource, q->status_subresource);
			assert_int_equal(p->has_rules, q->has_rules);
			char path[256];
			snprintf(path, sizeof(path), "%s %s", f.file, p->kind);
			same_tree(p->root, q->root, path);
		}
		assert_int_equal(x->rules, y->rules);
		assert_int_equal(x->rules_unsupported, y->rules_unsupported);
		tp_crds_unref(x);
		tp_crds_unref(y);
		cJSON_Delete(full);
		cJSON_Delete(crd);
	}
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(schema_descriptions_are_left_out),
		cmocka_unit_test(decisions_are_the_same),
		cmocka_unit_test(aliases_copy_whole_nodes),
		cmocka_unit_test(duplicates_are_still_errors),
		cmocka_unit_test(builtin_crds_compile_the_same),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
