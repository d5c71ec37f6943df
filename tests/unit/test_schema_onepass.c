/*
 * test_schema_onepass.c — the CRD engine's one walk (schema/engine.c): the
 * unknown fields, the OpenAPI checks and the list types found in a single
 * pass must read exactly as the three walks they replace wrote them, in
 * the order of apiextensions' strategy (unknown fields, ObjectMeta, the
 * schema, the list types, then the CEL rules or the sentence saying they
 * were not run). The expected texts are those of the engine before the
 * pass was merged, for objects broken in many places at once; and a valid
 * object has no field path written out at all (tp__sch_paths_written).
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

/* A Widget with a status subresource and one property of each kind the
 * walks treat apart: bounds, enum, pattern, set, map, additionalProperties,
 * preserve-unknown-fields, an embedded resource, int-or-string, a
 * date-time, a CEL rule. */
static const char *const schema =
	"{'type':'object','properties':{"
	"'apiVersion':{'type':'string'},'kind':{'type':'string'},'metadata':{'type':'object'},"
	"'spec':{'type':'object','required':['size'],'properties':{"
	" 'size':{'type':'integer','minimum':1,'maximum':10},"
	" 'name':{'type':'string','maxLength':3,'pattern':'^[a-z]+$'},"
	" 'mode':{'type':'string','enum':['a','b']},"
	" 'tags':{'type':'array','x-kubernetes-list-type':'set','items':{'type':'string'}},"
	" 'ports':{'type':'array','x-kubernetes-list-type':'map',"
	"  'x-kubernetes-list-map-keys':['name'],"
	"  'items':{'type':'object','required':['name'],'properties':{'name':{'type':'string'},"
	"   'port':{'type':'integer','minimum':1},"
	"   'hosts':{'type':'array','x-kubernetes-list-type':'set','items':{'type':'string'}}}}},"
	" 'labels':{'type':'object','additionalProperties':{'type':'string','maxLength':5}},"
	" 'free':{'type':'object','x-kubernetes-preserve-unknown-fields':true,"
	"  'properties':{'known':{'type':'string'}}},"
	" 'inner':{'type':'object','x-kubernetes-embedded-resource':true,'properties':{"
	"  'apiVersion':{'type':'string'},'kind':{'type':'string'},'metadata':{'type':'object'},"
	"  'spec':{'type':'object','properties':{'x':{'type':'integer'}}}}},"
	" 'count':{'x-kubernetes-int-or-string':true},"
	" 'when':{'type':'string','format':'date-time'},"
	" 'limits':{'type':'object','properties':{'fixed':{'type':'integer'}},"
	"  'additionalProperties':{'type':'integer','x-kubernetes-validations':"
	"   [{'rule':'self >= 0','message':'must not be negative'}]}},"
	" 'rule':{'type':'object','properties':{'a':{'type':'integer'},'b':{'type':'integer'}},"
	"  'x-kubernetes-validations':[{'rule':'self.a <= self.b',"
	"   'message':'a must not exceed b'}]}"
	"}},"
	"'status':{'type':'object','properties':{'phase':{'type':'string','enum':['Ok']}}}}}";

static tp_crds *widget_crds(void)
{
	char *text = NULL;
	assert_true(asprintf(&text,
			     "{'apiVersion':'apiextensions.k8s.io/v1',"
			     "'kind':'CustomResourceDefinition',"
			     "'metadata':{'name':'widgets.t.example.com'},"
			     "'spec':{'group':'t.example.com',"
			     "'names':{'kind':'Widget','plural':'widgets'},'scope':'Namespaced',"
			     "'versions':[{'name':'v1','served':true,'subresources':{'status':{}},"
			     "'schema':{'openAPIV3Schema':%s}}]}}", schema) > 0);
	cJSON *crd = tt_jsq(text);
	tp_crds *crds = tt_crds_of(crd);
	cJSON_Delete(crd);
	free(text);
	return crds;
}

/* The errors then warnings of a Widget whose members after apiVersion and
 * kind are body (and old_body's on UPDATE); "" when allowed silently. */
static char *verdict(const char *body, const char *old_body)
{
	char *text = NULL, *old_text = NULL;
	static const char *const head = "{'apiVersion':'t.example.com/v1','kind':'Widget',%s}";
	assert_true(asprintf(&text, head, body) > 0);
	cJSON *obj = tt_jsq(text), *old = NULL;
	if (old_body) {
		assert_true(asprintf(&old_text, head, old_body) > 0);
		old = tt_jsq(old_text);
	}
	tp_crds *crds = widget_crds();
	char *answer = tt_validate_text(crds, obj, old);
	tp_crds_unref(crds);
	cJSON_Delete(obj);
	cJSON_Delete(old);
	free(text);
	free(old_text);
	return answer;
}

static void expect(const char *body, const char *old, const char *want)
{
	char *got = verdict(body, old);
	if (strcmp(got, want))
		fprintf(stderr, "body %s\ngot  [%s]\nwant [%s]\n", body, got, want);
	assert_string_equal(got, want);
	free(got);
}

static const char *const valid =
	"'metadata':{'name':'w','labels':{'a':'b'}},"
	"'spec':{'size':3,'name':'abc','mode':'a','tags':['x','y'],"
	"'ports':[{'name':'p','port':1,'hosts':['h1','h2']},{'name':'q','port':2}],"
	"'labels':{'k':'v'},'free':{'known':'k','anything':{'goes':1}},"
	"'inner':{'apiVersion':'v1','kind':'X','metadata':{'name':'n'},'spec':{'x':1}},"
	"'count':'50%','when':'2026-01-02T03:04:05Z','rule':{'a':1,'b':2}},"
	"'status':{'phase':'Ok'}";

/* Nothing found, and so no path written out: every walk keeps its path as
 * steps until a finding needs the text. */
static void valid_object_writes_no_path(void **state)
{
	(void)state;
	size_t before = tp__sch_paths_written();
	expect(valid, NULL, "");
	assert_int_equal(tp__sch_paths_written(), before);
	/* on UPDATE too: the old object's lists are walked, and the CEL rule
	 * runs with oldSelf correlated */
	expect(valid, valid, "");
	assert_int_equal(tp__sch_paths_written(), before);
}

/* One finding, one path. */
static void one_finding_writes_its_path(void **state)
{
	(void)state;
	size_t before = tp__sch_paths_written();
	expect("'metadata':{'name':'w'},'spec':{'size':0}", NULL,
	       "spec.size: Invalid value: 0: spec.size in body should be greater than or equal "
	       "to 1");
	assert_true(tp__sch_paths_written() > before);
	assert_true(tp__sch_paths_written() - before <= 2);
}

/* Unknown fields at every depth (the root, the spec, a list-map item, an
 * embedded resource's metadata and spec, the status of the subresource,
 * ObjectMeta), then ObjectMeta's rules, then the schema's errors, then the
 * list types' duplicates, then the blocked CEL rules' sentence. */
static void broken_everywhere(void **state)
{
	(void)state;
	expect("'metadata':{'name':'Bad_Name','bogus':1},'extra':true,"
	       "'spec':{'size':0,'name':'ABCD','mode':'c','tags':['x','x','y','y','x'],"
	       "'ports':[{'name':'p','port':0,'hosts':['h','h']},{'name':'p','port':2,'extra':1}],"
	       "'labels':{'k':'toolong'},'free':{'anything':1},"
	       "'inner':{'apiVersion':'v1','kind':'X','metadata':{'name':'n','oops':1},"
	       "'spec':{'x':'s','y':1}},'count':1.5,'when':'yesterday','typo':1,"
	       "'rule':{'a':2,'b':1}},'status':{'phase':'Bad','extra':1}", NULL,
	       "[unknown field \"metadata.bogus\", unknown field \"extra\", "
	       "unknown field \"spec.ports[1].extra\", "
	       "unknown field \"spec.inner.metadata.oops\", "
	       "unknown field \"spec.inner.spec.y\", unknown field \"spec.typo\", "
	       "unknown field \"status.extra\", "
	       "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain "
	       "must consist of lower case alphanumeric characters, "
	       "'-' or '.', "
	       "and must start and end with an alphanumeric character (e.g. 'example.com', "
	       "regex used for validation is "
	       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
	       "spec.size: Invalid value: 0: spec.size in body should be greater than or equal "
	       "to 1, "
	       "spec.name: Too long: may not be more than 3 bytes, "
	       "spec.name: Invalid value: \"ABCD\": spec.name in body should match '^[a-z]+$', "
	       "spec.mode: Unsupported value: \"c\": supported values: \"a\", \"b\", "
	       "spec.ports[0].port: Invalid value: 0: spec.ports[0].port in body should be "
	       "greater than or equal to 1, "
	       "spec.labels.k: Too long: may not be more than 5 bytes, "
	       "spec.inner.spec.x: Invalid value: \"string\": spec.inner.spec.x in body must "
	       "be of type integer: \"string\", "
	       "spec.count: Invalid value: \"number\": spec.count in body must be of type "
	       "integer,string: \"number\", "
	       "spec.when: Invalid value: \"yesterday\": spec.when in body must be of type "
	       "date-time: \"yesterday\", "
	       "spec.tags[1]: Duplicate value: \"x\", spec.tags[3]: Duplicate value: \"y\", "
	       "spec.ports[1]: Duplicate value: {\"name\":\"p\"}, "
	       "spec.ports[0].hosts[1]: Duplicate value: \"h\", "
	       "<nil>: Invalid value: \"null\": some validation rules were not checked because "
	       "the object was invalid; correct the existing errors to complete validation]");
}

/* No blocking error: the CEL rules run after the unknown fields and the
 * list types (which do not block them). */
static void rules_after_unknown_and_lists(void **state)
{
	(void)state;
	expect("'metadata':{'name':'w'},'spec':{'size':1,'tags':['x','x'],'bogus':1,"
	       "'rule':{'a':2,'b':1}}", NULL,
	       "[unknown field \"spec.bogus\", spec.tags[1]: Duplicate value: \"x\", "
	       "spec.rule: Invalid value: \"object\": a must not exceed b]");
}

/* The rules of a map's values run at each key ("[key]" in the path), not
 * at its properties without rules. */
static void rules_of_map_values(void **state)
{
	(void)state;
	expect("'metadata':{'name':'w'},'spec':{'size':1,'limits':{'fixed':-1,'x':-2,'y':3,'z':-4}}",
	       NULL,
	       "[spec.limits[x]: Invalid value: \"integer\": must not be negative, "
	       "spec.limits[z]: Invalid value: \"integer\": must not be negative]");
}

/* Values of the wrong shape: the walk goes only where the value and the
 * schema both lead, as each of the three walks did. */
static void wrong_shapes(void **state)
{
	(void)state;
	expect("'metadata':{'name':'w'},'spec':'str'", NULL,
	       "[spec: Invalid value: \"string\": spec in body must be of type object: \"string\", "
	       "<nil>: Invalid value: \"null\": some validation rules were not checked because "
	       "the object was invalid; correct the existing errors to complete validation]");
	expect("'metadata':{'name':'w'},'spec':{'size':1,'name':{'x':1},'tags':{'a':'a'},"
	       "'ports':[1,{'name':'a'}]}", NULL,
	       "[unknown field \"spec.name.x\", unknown field \"spec.tags.a\", "
	       "spec.name: Invalid value: \"object\": spec.name in body must be of type "
	       "string: \"object\", "
	       "spec.tags: Invalid value: \"object\": spec.tags in body must be of type array: "
	       "\"object\", "
	       "spec.ports[0]: Invalid value: \"integer\": spec.ports[0] in body must be of "
	       "type object: \"integer\", "
	       "spec.ports[0]: Invalid value: 1: must be an object for an array of list-type map, "
	       "<nil>: Invalid value: \"null\": some validation rules were not checked because "
	       "the object was invalid; correct the existing errors to complete validation]");
	/* null members the API server drops, and required ones it drops */
	expect("'metadata':{'name':'w'},'spec':{'size':null,'name':null,'bogus':null}", NULL,
	       "[unknown field \"spec.bogus\", spec.size: Required value, "
	       "<nil>: Invalid value: \"null\": some validation rules were not checked because "
	       "the object was invalid; correct the existing errors to complete validation]");
}

/* UPDATE: a list that already repeated items in the old object is not
 * checked again (the old object's lists are walked apart); the other
 * findings are as on CREATE. */
static void update_keeps_old_repeats(void **state)
{
	(void)state;
	expect("'metadata':{'name':'w'},'spec':{'size':1,'tags':['x','x'],'bogus':1}",
	       "'metadata':{'name':'w'},'spec':{'size':1,'tags':['y','y']}",
	       "unknown field \"spec.bogus\"");
	expect("'metadata':{'name':'w'},'spec':{'size':1,'tags':['x','x'],'bogus':1}",
	       "'metadata':{'name':'w'},'spec':{'size':1,'tags':['y']}",
	       "[unknown field \"spec.bogus\", spec.tags[1]: Duplicate value: \"x\"]");
}

/* generateName: the walk reads the copy with the generated name; its
 * unknown fields are the object's own. */
static void generated_name(void **state)
{
	(void)state;
	expect("'metadata':{'generateName':'w-','bogus':1},'spec':{'size':11,'x':1}", NULL,
	       "[unknown field \"metadata.bogus\", unknown field \"spec.x\", "
	       "spec.size: Invalid value: 11: spec.size in body should be less than or equal "
	       "to 10]");
}

/* The answer writer appends in place when its buffer has room: at every
 * limit around the text's length it writes the text whole or fails with
 * the limit's error, as tp_buf_add does, never a cut or a longer text. */
static void writer_keeps_the_limit(void **state)
{
	(void)state;
	cJSON *j = tt_json("{\"a\":\"0123456789\",\"b\":[true,null,-12],\"c\":\"q\\\"\"}");
	const char *want = "{\"a\":\"0123456789\",\"b\":[true,null,-12],\"c\":\"q\\\"\"}";
	size_t n = strlen(want);
	for (size_t max = 1; max <= n + 2; max++) {
		tp_buf b = TP_BUF_INIT(max);
		int rc = tp_json_write(j, &b);
		assert_int_equal(rc, max >= n ? TP_OK : TP_ELIMIT);
		if (!rc)
			assert_string_equal(b.data, want);
		assert_true(b.len <= max);
		tp_buf_free(&b);
	}
	/* a buffer grown by earlier text, with room to spare past the limit */
	tp_buf b = TP_BUF_INIT(n + 3);
	assert_int_equal(tp_buf_adds(&b, "xyz"), TP_OK);
	assert_int_equal(tp_json_write(j, &b), TP_OK);
	assert_int_equal(tp_json_write(j, &b), TP_ELIMIT);
	assert_true(b.len <= n + 3);
	tp_buf_free(&b);
	cJSON_Delete(j);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_object_writes_no_path),
		cmocka_unit_test(one_finding_writes_its_path),
		cmocka_unit_test(broken_everywhere),
		cmocka_unit_test(rules_after_unknown_and_lists),
		cmocka_unit_test(rules_of_map_values),
		cmocka_unit_test(wrong_shapes),
		cmocka_unit_test(update_keeps_old_repeats),
		cmocka_unit_test(generated_name),
		cmocka_unit_test(writer_keeps_the_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
