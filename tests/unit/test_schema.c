/*
 * test_schema.c — the CRD engine keyword by keyword and CEL construct by
 * construct: for each, an object allowed and one refused, with the API
 * server's message exactly. Each case compiles a one-property CRD
 * (t.example.com/v1 Widget, the schema under test at .spec).
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

/* Errors then warnings of validating spec (and old_spec on UPDATE) against
 * a CRD whose .spec schema is schema; "" when allowed silently. */
static char *verdict(const char *schema, const char *spec, const char *old_spec)
{
	char *crd_text = NULL, *obj_text = NULL, *old_text = NULL;
	assert_true(asprintf(&crd_text,
			     "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
			     "'metadata':{'name':'widgets.t.example.com'},'spec':{'group':'t.example.com',"
			     "'names':{'kind':'Widget','plural':'widgets'},'scope':'Namespaced',"
			     "'versions':[{'name':'v1','served':true,'schema':{'openAPIV3Schema':"
			     "{'type':'object','properties':{'spec':%s}}}}]}}", schema) > 0);
	assert_true(asprintf(&obj_text, "{'apiVersion':'t.example.com/v1','kind':'Widget',"
				       "'metadata':{'name':'w'},'spec':%s}", spec) > 0);
	cJSON *crd = tt_jsq(crd_text), *obj = tt_jsq(obj_text), *old = NULL;
	if (old_spec) {
		assert_true(asprintf(&old_text, "{'apiVersion':'t.example.com/v1','kind':'Widget',"
					       "'metadata':{'name':'w'},'spec':%s}", old_spec) > 0);
		old = tt_jsq(old_text);
	}
	tp_crds *crds = tt_crds_of(crd);
	char *answer = tt_validate_text(crds, obj, old);
	tp_crds_unref(crds);
	cJSON_Delete(crd);
	cJSON_Delete(obj);
	cJSON_Delete(old);
	free(crd_text);
	free(obj_text);
	free(old_text);
	return answer;
}

static void expect(const char *schema, const char *spec, const char *old, const char *want)
{
	char *got = verdict(schema, spec, old);
	char *w = tt_dq(want);
	if (strcmp(got, w))
		print_message("schema %s\nvalue  %s\ngot  [%s]\nwant [%s]\n", schema, spec, got, w);
	assert_string_equal(got, w);
	free(got);
	free(w);
}

#define OK ""

static void types(void **state)
{
	(void)state;
	expect("{'type':'integer'}", "3", NULL, OK);
	expect("{'type':'integer'}", "'x'", NULL,
	       "spec: Invalid value: 'string': spec in body must be of type integer: 'string'");
	expect("{'type':'number'}", "3", NULL, OK);
	expect("{'type':'number'}", "true", NULL,
	       "spec: Invalid value: 'boolean': spec in body must be of type number: 'boolean'");
	expect("{'type':'object'}", "[]", NULL,
	       "spec: Invalid value: 'array': spec in body must be of type object: 'array'");
	expect("{'type':'array','items':{'type':'string'}}", "['a',1]", NULL,
	       "spec[1]: Invalid value: 'integer': spec[1] in body must be of type string: 'integer'");
	expect("{'type':'array','items':{'type':'string'}}", "['a',null]", NULL,
	       "spec[1]: Invalid value: 'null': spec[1] in body must be of type string: 'null'");
	expect("{'type':'array','items':{'type':'string','nullable':true}}", "['a',null]", NULL, OK);
	/* apiextensions drops format int64 (not among its supportedFormats) */
	expect("{'type':'integer','format':'int64'}", "1.5", NULL,
	       "spec: Invalid value: 'number': spec in body must be of type integer: 'number'");
}

static void numbers(void **state)
{
	(void)state;
	expect("{'type':'integer','minimum':1}", "1", NULL, OK);
	expect("{'type':'integer','minimum':1}", "0", NULL,
	       "spec: Invalid value: 0: spec in body should be greater than or equal to 1");
	expect("{'type':'integer','minimum':1,'exclusiveMinimum':true}", "1", NULL,
	       "spec: Invalid value: 1: spec in body should be greater than 1");
	expect("{'type':'number','maximum':2.5}", "2.6", NULL,
	       "spec: Invalid value: 2.6: spec in body should be less than or equal to 2.5");
	expect("{'type':'integer','maximum':10,'exclusiveMaximum':true}", "10", NULL,
	       "spec: Invalid value: 10: spec in body should be less than 10");
	expect("{'type':'integer','format':'int32'}", "2147483647", NULL, OK);
	/* the API server stores it (format int32 is dropped); the strict
	 * profile (this test's) refuses what the controller cannot read */
	expect("{'type':'integer','format':'int32'}", "3000000000", NULL,
	       "spec: Invalid value: 3000000000: must be no more than 2147483647 (format: int32): the "
	       "API server stores it, but the controller reads it into an int32 and cannot read it");
}

static void strings(void **state)
{
	(void)state;
	expect("{'type':'string','maxLength':3}", "'abc'", NULL, OK);
	expect("{'type':'string','maxLength':3}", "'abcd'", NULL, "spec: Too long: may not be more than 3 bytes");
	expect("{'type':'string','minLength':2}", "'a'", NULL,
	       "spec: Invalid value: 'a': spec in body should be at least 2 chars long");
	expect("{'type':'string','pattern':'^[a-z]+$'}", "'abc'", NULL, OK);
	expect("{'type':'string','pattern':'^[a-z]+$'}", "'aBc'", NULL,
	       "spec: Invalid value: 'aBc': spec in body should match \\'^[a-z]+$\\'");
	expect("{'type':'string','enum':['a','b']}", "'b'", NULL, OK);
	expect("{'type':'string','enum':['a','b']}", "'c'", NULL,
	       "spec: Unsupported value: 'c': supported values: 'a', 'b'");
	expect("{'type':'string','format':'date-time'}", "'2026-01-02T03:04:05Z'", NULL, OK);
	expect("{'type':'string','format':'date-time'}", "'yesterday'", NULL,
	       "spec: Invalid value: 'yesterday': spec in body must be of type date-time: 'yesterday'");
}

static void arrays(void **state)
{
	(void)state;
	const char *s = "{'type':'array','minItems':1,'maxItems':2,'items':{'type':'integer'}}";
	expect(s, "[1,2]", NULL, OK);
	expect(s, "[]", NULL, "spec: Invalid value: []: spec in body should have at least 1 items");
	expect(s, "[1,2,3]", NULL, "spec: Too many: 3: must have at most 2 items");
	expect("{'type':'array','uniqueItems':true,'items':{'type':'integer'}}", "[1,1]", NULL,
	       "spec: Invalid value: [1,1]: spec in body shouldn\\'t contain duplicates");
	expect("{'type':'array','x-kubernetes-list-type':'set','items':{'type':'string'}}",
	       "['a','b']", NULL, OK);
	expect("{'type':'array','x-kubernetes-list-type':'set','items':{'type':'string'}}",
	       "['a','b','a','a']", NULL, "spec[2]: Duplicate value: 'a'");
	const char *m = "{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':"
			"['name'],'items':{'type':'object','properties':{'name':{'type':'string'},"
			"'v':{'type':'integer'}}}}";
	expect(m, "[{'name':'a','v':1},{'name':'b','v':1}]", NULL, OK);
	expect(m, "[{'name':'a','v':1},{'name':'a','v':2}]", NULL,
	       "spec[1]: Duplicate value: {'name':'a'}");
}

static void objects(void **state)
{
	(void)state;
	const char *s = "{'type':'object','required':['name'],'properties':{'name':{'type':'string'},"
			"'size':{'type':'integer','default':3}},'minProperties':1}";
	expect(s, "{'name':'x'}", NULL, OK);
	expect(s, "{'size':1}", NULL, "spec.name: Required value");
	expect(s, "{'name':'x','sise':1}", NULL, "unknown field 'spec.sise'; did you mean 'size'?");
	expect(s, "{'name':'x','colour':1}", NULL, "unknown field 'spec.colour'");
	expect("{'type':'object','maxProperties':1,'additionalProperties':{'type':'string'}}",
	       "{'a':'x','b':'y'}", NULL, "spec: Too many: 2: must have at most 1 item");
	expect("{'type':'object','additionalProperties':{'type':'string'}}", "{'a':1}", NULL,
	       "spec.a: Invalid value: 'integer': spec.a in body must be of type string: 'integer'");
	expect("{'type':'object','x-kubernetes-preserve-unknown-fields':true}", "{'any':{'x':1}}", NULL, OK);
	expect("{'type':'object','x-kubernetes-embedded-resource':true,'properties':{'spec':{'type':'object'}}}",
	       "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','labls':{}},'spec':{}}", NULL,
	       "unknown field 'spec.metadata.labls'; did you mean 'labels'?");
}

static void int_or_string(void **state)
{
	(void)state;
	const char *s = "{'anyOf':[{'type':'integer'},{'type':'string'}],'x-kubernetes-int-or-string':true}";
	expect(s, "1", NULL, OK);
	expect(s, "'1Gi'", NULL, OK);
	expect(s, "true", NULL,
	       "[spec: Invalid value: 'boolean': spec in body must be of type integer,string: 'boolean', "
	       "<nil>: Invalid value: '': 'spec' must validate at least one schema (anyOf), "
	       "spec: Invalid value: 'boolean': spec in body must be of type integer: 'boolean']");
}

static void defaults(void **state)
{
	(void)state;
	const char *s = "{'type':'object','properties':{'n':{'type':'integer','default':3}},"
			"'x-kubernetes-validations':[{'rule':'self.n == 3'}]}";
	expect(s, "{}", NULL, OK);
	expect(s, "{'n':2}", NULL, "spec: Invalid value: 'object': failed rule: self.n == 3");
}


/* A string schema with one rule (extra: more members of the rule). */
static char *rule_schema(const char *type, const char *rule, const char *extra)
{
	char *s = NULL;
	assert_true(asprintf(&s, "{%s,'x-kubernetes-validations':[{'rule':'%s'%s}]}", type, rule,
			     extra ? extra : "") > 0);
	return s;
}

static void expect_rule(const char *type, const char *rule, const char *extra, const char *spec,
			const char *old, const char *want)
{
	char *s = rule_schema(type, rule, extra);
	expect(s, spec, old, want);
	free(s);
}

#define STR "'type':'string'"
#define INT "'type':'integer'"
#define LIST "'type':'array','items':{'type':'integer'}"
#define OBJ "'type':'object','properties':{'a':{'type':'integer'},'b':{'type':'string'}}"

static void cel_operators(void **state)
{
	(void)state;
	expect_rule(INT, "self >= 1 && self < 10 || self == 100", NULL, "100", NULL, OK);
	expect_rule(INT, "self >= 1 && self < 10 || self == 100", NULL, "10", NULL,
		    "spec: Invalid value: 'integer': failed rule: self >= 1 && self < 10 || self == 100");
	expect_rule(INT, "!(self % 2 == 0) ? self * 3 - 1 == 8 : self / 2 == 2", NULL, "3", NULL, OK);
	expect_rule(INT, "!(self % 2 == 0) ? self * 3 - 1 == 8 : self / 2 == 2", NULL, "6", NULL,
		    "spec: Invalid value: 'integer': failed rule: !(self % 2 == 0) ? self * 3 - 1 == 8 : self / 2 == 2");
	expect_rule(STR, "self in [\\'a\\', \\'b\\']", NULL, "'a'", NULL, OK);
	expect_rule(STR, "self in [\\'a\\', \\'b\\']", NULL, "'c'", NULL,
		    "spec: Invalid value: 'string': failed rule: self in [\\'a\\', \\'b\\']");
	expect_rule(STR, "self + \\'x\\' == \\'ax\\' && size(self) == 1", NULL, "'a'", NULL, OK);
	expect_rule(INT, "double(self) / 2.0 == 1.5 && int(\\'7\\') == 7 && string(self) == \\'3\\'",
		    NULL, "3", NULL, OK);
	expect_rule(INT, "self / 0 == 1", NULL, "3", NULL,
		    "spec: Invalid value: 'integer': division by zero evaluating rule: self / 0 == 1");
}

static void cel_strings(void **state)
{
	(void)state;
	const char *r = "self.startsWith(\\'ab\\') && self.endsWith(\\'yz\\') && "
			"self.contains(\\'-\\') && self.matches(\\'^[a-z-]+$\\')";
	expect_rule(STR, r, NULL, "'ab-yz'", NULL, OK);
	expect_rule(STR, "self.matches(\\'^[a-z]+$\\')", NULL, "'aB'", NULL,
		    "spec: Invalid value: 'string': failed rule: self.matches(\\'^[a-z]+$\\')");
	expect_rule(STR, "self.lowerAscii() == \\'ab\\' && self.size() == 2", NULL, "'AB'", NULL, OK);
}

static void cel_macros(void **state)
{
	(void)state;
	expect_rule(LIST, "self.all(x, x > 0) && self.exists(x, x == 2) && self.exists_one(x, x == 3)",
		    NULL, "[1,2,3]", NULL, OK);
	expect_rule(LIST, "self.all(x, x > 0)", NULL, "[1,0]", NULL,
		    "spec: Invalid value: 'array': failed rule: self.all(x, x > 0)");
	expect_rule(LIST, "self.exists_one(x, x == 1)", NULL, "[1,1]", NULL,
		    "spec: Invalid value: 'array': failed rule: self.exists_one(x, x == 1)");
	expect_rule(LIST, "self.filter(x, x > 1).size() == 2 && self.map(x, x * 2)[2] == 6", NULL,
		    "[1,2,3]", NULL, OK);
	expect_rule(LIST, "self.map(x, x > 1, x * 10) == [20, 30]", NULL, "[1,2,3]", NULL, OK);
	expect_rule(LIST, "self[5] == 1", NULL, "[1]", NULL,
		    "spec: Invalid value: 'array': index \\'5\\' out of range in list size \\'1\\' "
		    "evaluating rule: self[5] == 1");
	/* false decides over an error in all() */
	expect_rule(LIST, "self.all(x, 10 / x > 1)", NULL, "[0, 20]", NULL,
		    "spec: Invalid value: 'array': failed rule: self.all(x, 10 / x > 1)");
}

static void cel_fields(void **state)
{
	(void)state;
	expect_rule(OBJ, "has(self.a) || has(self.b)", NULL, "{'b':'x'}", NULL, OK);
	expect_rule(OBJ, "has(self.a) || has(self.b)", ",'message':'set a or b'", "{}", NULL,
		    "spec: Invalid value: 'object': set a or b");
	expect_rule(OBJ, "self.a > 1", NULL, "{}", NULL,
		    "spec: Invalid value: 'object': no such key: a evaluating rule: self.a > 1");
	expect_rule(OBJ, "self.a > 1", ",'fieldPath':'.a','reason':'FieldValueForbidden'", "{'a':1}", NULL,
		    "spec.a: Forbidden: failed rule: self.a > 1");
	expect_rule(OBJ, "self.a > 1", ",'reason':'FieldValueRequired','message':'a > 1'", "{'a':1}",
		    NULL, "spec: Required value: a > 1");
	expect_rule(OBJ, "self.a > 1", ",'messageExpression':'\\'a is \\' + string(self.a)'",
		    "{'a':1}", NULL, "spec: Invalid value: 'object': a is 1");
	/* a messageExpression that gives no usable text: the message stands */
	expect_rule(OBJ, "self.a > 1", ",'message':'m','messageExpression':'\\' \\''", "{'a':1}", NULL,
		    "spec: Invalid value: 'object': m");
}

static void cel_transitions(void **state)
{
	(void)state;
	expect_rule(STR, "self == oldSelf", ",'message':'Value is immutable'", "'a'", NULL, OK);
	expect_rule(STR, "self == oldSelf", ",'message':'Value is immutable'", "'a'", "'a'", OK);
	expect_rule(STR, "self == oldSelf", ",'message':'Value is immutable'", "'b'", "'a'",
		    "spec: Invalid value: 'string': Value is immutable");
	/* ratcheting: an unchanged value that fails a rule without oldSelf warns */
	expect_rule(INT, "self > 5", NULL, "3", "3",
		    " | warning: spec: Invalid value: 'integer': failed rule: self > 5");
	expect_rule(INT, "self > 5", NULL, "3", "4", "spec: Invalid value: 'integer': failed rule: self > 5");
}

static void cel_limits(void **state)
{
	(void)state;
	/* int-or-string is dyn: a string where an int is compared */
	const char *ios = "'anyOf':[{'type':'integer'},{'type':'string'}],'x-kubernetes-int-or-string':true";
	expect_rule(ios, "self >= 1", NULL, "'x'", NULL,
		    "spec: Invalid value: '': \\'no such overload\\': call arguments did not match a "
		    "supported operator, function or macro signature for rule: self >= 1");
	/* a rule past the per-call cost limit stops validation */
	char *items = malloc(40000), *p = items;
	*p++ = '[';
	for (int i = 0; i < 2000; i++)
		p += sprintf(p, "%s%d", i ? "," : "", i);
	strcpy(p, "]");
	expect_rule(LIST, "self.all(x, self.all(y, x + y >= 0))", NULL, items, NULL,
		    "spec: Invalid value: 'array': \\'operation cancelled: actual cost limit exceeded\\': "
		    "no further validation rules will be run due to call cost exceeds limit for rule: "
		    "self.all(x, self.all(y, x + y >= 0))");
	free(items);
	/* what the interpreter lacks warns, never passes silently */
	expect_rule(STR, "self.reverse() == self", NULL, "'a'", NULL,
		    " | warning: spec: the x-kubernetes-validations rule self.reverse() == self was not "
		    "checked (function \\'reverse\\' with 1 argument is not supported)");
	/* a blocking error skips the rules, and says so */
	expect_rule("'type':'string','maxLength':1", "self == \\'a\\'", NULL, "'bb'", NULL,
		    "[spec: Too long: may not be more than 1 byte, <nil>: Invalid value: 'null': some "
		    "validation rules were not checked because the object was invalid; correct the "
		    "existing errors to complete validation]");
}

/* Add a one-version CRD of kind `kind` whose .spec schema is spec. */
static void add_kind(tp_crds *crds, const char *kind, const char *spec)
{
	char *text = NULL, why[256] = "";
	assert_true(asprintf(&text,
			     "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
			     "'metadata':{'name':'%ss.t.example.com'},'spec':{'group':'t.example.com',"
			     "'names':{'kind':'%s','plural':'%ss'},'scope':'Namespaced',"
			     "'versions':[{'name':'v1','served':true,'schema':{'openAPIV3Schema':"
			     "{'type':'object','properties':{'spec':%s}}}}]}}",
			     kind, kind, kind, spec) > 0);
	cJSON *crd = tt_jsq(text);
	assert_int_equal(tp_crds_add(crds, crd, why, sizeof(why)), TP_OK);
	cJSON_Delete(crd);
	free(text);
}

static const tp_sch *spec_of(const tp_crds *crds, const char *kind)
{
	const tp_crd_version *v = tp__crds_find(crds, "t.example.com", "v1", kind);
	assert_non_null(v);
	return tp__sch_prop(v->root, "spec");
}

/* Schemas written the same way compile to one shared tree; any difference
 * but a description keeps them apart. A shared tree's rules are counted, and
 * run, for every kind that uses it. */
static void shared_subtrees(void **state)
{
	(void)state;
	tp_crds *crds = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	const char *rule = "'x-kubernetes-validations':[{'rule':'self != \\'xx\\''}]";
	char *a = NULL, *b = NULL, *c = NULL;
	assert_true(asprintf(&a, "{'type':'object','description':'one','properties':{'n':"
				 "{'type':'string','maxLength':3,%s}}}", rule) > 0);
	assert_true(asprintf(&b, "{'type':'object','description':'two','properties':{'n':"
				 "{'type':'string','maxLength':3,'description':'n',%s}}}", rule) > 0);
	assert_true(asprintf(&c, "{'type':'object','description':'one','properties':{'n':"
				 "{'type':'string','maxLength':4,%s}}}", rule) > 0);
	add_kind(crds, "A", a);
	add_kind(crds, "B", b);
	add_kind(crds, "C", c);
	/* a property named description is a schema, not documentation */
	add_kind(crds, "D", "{'type':'object','properties':{'description':{'type':'string'}}}");
	add_kind(crds, "E", "{'type':'object','properties':{'description':{'type':'integer'}}}");
	/* nor is a description inside a default value */
	add_kind(crds, "F", "{'type':'object','default':{'description':'a'}}");
	add_kind(crds, "G", "{'type':'object','default':{'description':'b'}}");
	assert_ptr_equal(spec_of(crds, "A"), spec_of(crds, "B"));
	assert_ptr_not_equal(spec_of(crds, "A"), spec_of(crds, "C"));
	assert_ptr_not_equal(spec_of(crds, "D"), spec_of(crds, "E"));
	assert_ptr_not_equal(spec_of(crds, "F"), spec_of(crds, "G"));
	size_t rules, unsupported;
	tp_crds_rule_counts(crds, &rules, &unsupported);
	assert_int_equal(rules, 3);
	assert_true(tp__crds_find(crds, "t.example.com", "v1", "B")->has_rules);
	/* B checks with A's tree: its rule and its maxLength */
	cJSON *obj = tt_jsq("{'apiVersion':'t.example.com/v1','kind':'B','metadata':{'name':'w'},"
			    "'spec':{'n':'xx'}}");
	tp_options opt = { .crds = crds };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate(&opt, TP_OP_CREATE, obj, NULL, res), TP_OK);
	assert_false(tp_result_ok(res));
	tp_buf out = TP_BUF_INIT(0);
	tp_result_format(res, &out);
	assert_string_equal(out.data, "spec.n: Invalid value: \"string\": failed rule: self != 'xx'");
	tp_buf_free(&out);
	tp_result_free(res);
	cJSON_Delete(obj);
	tp_crds_unref(crds);
	free(a);
	free(b);
	free(c);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(types),   cmocka_unit_test(numbers),       cmocka_unit_test(strings),
		cmocka_unit_test(arrays),  cmocka_unit_test(objects),       cmocka_unit_test(int_or_string),
		cmocka_unit_test(defaults), cmocka_unit_test(cel_operators), cmocka_unit_test(cel_strings),
		cmocka_unit_test(cel_macros), cmocka_unit_test(cel_fields),
		cmocka_unit_test(cel_transitions), cmocka_unit_test(cel_limits),
		cmocka_unit_test(shared_subtrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
