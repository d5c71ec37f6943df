/*
 * test_schema_fast.c — the CRD engine's shortcuts (issue 32) must skip no
 * check. For each: the shortcut itself (what the compiled schema holds),
 * then an object broken below the node it covers, whose findings read as
 * the API server's: an unknown field (with "did you mean"), a bad enum, a
 * missing required field, a failed CEL rule deep below.
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

/* .spec's properties: twelve that start with 'a' (more than
 * TP_SCH_BUCKET_SCAN: searched by halves), names whose first byte is
 * upper case, a digit, '_' or not ASCII, a one-byte name. */
static const char *const names[] = {
	"alpha", "alps", "amber", "anchor", "angle", "apple", "april", "arch", "area", "arm",
	"army", "art", "Big", "9lives", "_under", "\xc3\xa9t\xc3\xa9", "b", "mode", "zone",
};
#define N_NAMES (sizeof(names) / sizeof(*names))

/* A one-version CRD of kind (t.example.com/v1) whose .spec schema is spec. */
static tp_crds *crds_of(const char *kind, const char *spec)
{
	char *text = NULL;
	assert_true(asprintf(&text,
			     "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
			     "'metadata':{'name':'%ss.t.example.com'},'spec':{'group':'t.example.com',"
			     "'names':{'kind':'%s','plural':'%ss'},'scope':'Namespaced',"
			     "'versions':[{'name':'v1','served':true,'schema':{'openAPIV3Schema':"
			     "{'type':'object','properties':{'spec':%s}}}}]}}",
			     kind, kind, kind, spec) > 0);
	cJSON *crd = tt_jsq(text);
	tp_crds *crds = tt_crds_of(crd);
	cJSON_Delete(crd);
	free(text);
	return crds;
}

static const tp_sch *spec_of(const tp_crds *crds, const char *kind)
{
	const tp_crd_version *v = tp__crds_find(crds, "t.example.com", "v1", kind);
	assert_non_null(v);
	return tp__sch_prop(v->root, "spec");
}

/* A Widget's spec: the properties above, "amber" an enum, "arch"
 * required, "art" an object with a CEL rule two levels down, each other
 * an integer. */
static char *widget(void)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_adds(&b, "{'type':'object','required':['arch'],'properties':{"),
			 TP_OK);
	for (size_t i = 0; i < N_NAMES; i++) {
		const char *schema = "{'type':'integer'}";
		if (!strcmp(names[i], "amber"))
			schema = "{'type':'string','enum':['x','y']}";
		else if (!strcmp(names[i], "art"))
			schema = "{'type':'object','properties':{'deep':{'type':'object','properties':"
				 "{'leaf':{'type':'object','properties':{'n':{'type':'integer'}},"
				 "'x-kubernetes-validations':[{'rule':'self.n < 5',"
				 "'message':'n must be under 5'}]}}}}}";
		assert_int_equal(tp_buf_addf(&b, "%s'%s':%s", i ? "," : "", names[i], schema), TP_OK);
	}
	assert_int_equal(tp_buf_adds(&b, "}}"), TP_OK);
	return b.data;
}

/* Errors then warnings of a kind (.spec schema spec_schema) with spec,
 * and old_spec on UPDATE; "" when allowed silently. */
static char *verdict(const char *kind, const char *spec_schema, const char *spec,
		     const char *old_spec)
{
	char *text = NULL, *old_text = NULL;
	static const char *const head = "{'apiVersion':'t.example.com/v1','kind':'%s',"
					"'metadata':{'name':'w'},'spec':%s}";
	assert_true(asprintf(&text, head, kind, spec) > 0);
	cJSON *obj = tt_jsq(text), *old = NULL;
	if (old_spec) {
		assert_true(asprintf(&old_text, head, kind, old_spec) > 0);
		old = tt_jsq(old_text);
	}
	tp_crds *crds = crds_of(kind, spec_schema);
	char *answer = tt_validate_text(crds, obj, old);
	tp_crds_unref(crds);
	cJSON_Delete(obj);
	cJSON_Delete(old);
	free(text);
	free(old_text);
	return answer;
}

static void expect_of(const char *kind, const char *spec_schema, const char *spec,
		      const char *old, const char *want)
{
	char *got = verdict(kind, spec_schema, spec, old);
	char *w = tt_dq(want);
	if (strcmp(got, w))
		print_message("%s spec %s\nold  %s\ngot  [%s]\nwant [%s]\n", kind, spec,
			      old ? old : "-", got, w);
	assert_string_equal(got, w);
	free(got);
	free(w);
}

static void expect(const char *spec, const char *want)
{
	char *schema = widget();
	expect_of("Widget", schema, spec, NULL, want);
	free(schema);
}

/* The first-byte index (cel/sch.h's tp__sch_prop_at): every property is
 * found, with its length; names near them are not. */
static void lookup_by_first_byte(void **state)
{
	(void)state;
	char *schema = widget();
	tp_crds *crds = crds_of("Widget", schema);
	const tp_sch *s = spec_of(crds, "Widget");
	assert_int_equal(s->nprops, N_NAMES);
	assert_non_null(s->lead); /* more than TP_SCH_SCAN_MAX properties */
	for (size_t i = 0; i < N_NAMES; i++) {
		const tp_sch_prop *p = tp__sch_prop_at(s, names[i]);
		assert_non_null(p);
		assert_string_equal(p->name, names[i]);
		assert_int_equal(p->len, strlen(names[i]));
	}
	static const char *const absent[] = {
		"", "a", "alph", "alphaa", "amberr", "ar", "arts", "b0", "big", "Bi", "0", "9",
		"_", "\xc3\xa9", "\xff", "\x7f", "zonee", "zz", "A",
	};
	for (size_t i = 0; i < sizeof(absent) / sizeof(*absent); i++)
		assert_null(tp__sch_prop_at(s, absent[i]));
	tp_crds_unref(crds);
	free(schema);
}

/* What a blocking error (a type, an enum, Required) adds: the CRD has rules. */
#define NOT_CHECKED                                                                         \
	"<nil>: Invalid value: 'null': some validation rules were not checked because the " \
	"object was invalid; correct the existing errors to complete validation"

/* The checks below properties found through the index still run. */
static void checks_below_indexed_props(void **state)
{
	(void)state;
	expect("{'arch':1,'amber':'x','art':{'deep':{'leaf':{'n':1}}}}", "");
	/* unknown field, with the closest name of the bucket searched by halves */
	expect("{'arch':1,'amberr':1}",
	       "unknown field 'spec.amberr'; did you mean 'amber'?");
	expect("{'arch':1,'\xc3\xa9t\xc3\xa9x':1,'Big':'no'}",
	       "[unknown field 'spec.\xc3\xa9t\xc3\xa9x'; did you mean '\xc3\xa9t\xc3\xa9'?, "
	       "spec.Big: Invalid value: 'string': spec.Big in body must be of type integer: "
	       "'string', " NOT_CHECKED "]");
	/* the enum and the required field of a bucket searched by halves */
	expect("{'amber':'z'}",
	       "[spec.amber: Unsupported value: 'z': supported values: 'x', 'y', "
	       "spec.arch: Required value, " NOT_CHECKED "]");
	/* a CEL rule two levels below */
	expect("{'arch':1,'art':{'deep':{'leaf':{'n':7}}}}",
	       "spec.art.deep.leaf: Invalid value: 'object': n must be under 5");
}

/* A Gadget's spec: "fixed" and the list-map "items" (keyed by name) hold
 * only rules on oldSelf (field is immutable), "opt" one with
 * optionalOldSelf, "odd" one this interpreter cannot run, "tags" a set
 * whose items hold a rule without oldSelf. */
static const char *const gadget =
	"{'type':'object','properties':{"
	"'fixed':{'type':'object','properties':{'inner':{'type':'object','properties':{"
	" 'v':{'type':'string','x-kubernetes-validations':"
	"  [{'rule':'self == oldSelf','message':'field is immutable'}]}}}}},"
	"'items':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name'],"
	" 'items':{'type':'object','properties':{'name':{'type':'string'},"
	"  'v':{'type':'string','x-kubernetes-validations':"
	"   [{'rule':'self == oldSelf','message':'field is immutable'}]}}}},"
	"'opt':{'type':'string','x-kubernetes-validations':[{'rule':"
	" 'self != \\'bad\\' || self == oldSelf','optionalOldSelf':true,"
	" 'message':'bad on create'}]},"
	"'odd':{'type':'object','properties':{'s':{'type':'string','x-kubernetes-validations':"
	" [{'rule':'self.reverse() == oldSelf'}]}}},"
	"'tags':{'type':'array','x-kubernetes-list-type':'set','items':{'type':'string',"
	" 'x-kubernetes-validations':[{'rule':'self != \\'x\\'','message':'no x'}]}}}}";

static void expect_gadget(const char *spec, const char *old, const char *want)
{
	expect_of("Gadget", gadget, spec, old, want);
}

/* What the compiled schema says of its rules with no old value. */
static void rules_without_old_value(void **state)
{
	(void)state;
	tp_crds *crds = crds_of("Gadget", gadget);
	const tp_sch *spec = spec_of(crds, "Gadget");
	assert_true(tp__sch_prop(spec, "fixed")->rules_below);
	assert_false(tp__sch_prop(spec, "fixed")->new_rules_below);
	assert_false(tp__sch_prop(spec, "items")->new_rules_below);
	assert_true(tp__sch_prop(spec, "opt")->new_rules_below);
	assert_true(tp__sch_prop(spec, "odd")->new_rules_below); /* it warns */
	assert_true(tp__sch_prop(spec, "tags")->new_rules_below);
	assert_true(spec->new_rules_below);
	tp_crds_unref(crds);
}

/* The CEL walk skips, with no old value, what holds only rules on
 * oldSelf; every other rule still runs, and those run on UPDATE. */
static void rules_below_skipped_subtrees(void **state)
{
	(void)state;
	static const char *const ok = "{'fixed':{'inner':{'v':'a'}},'items':[{'name':'n','v':'a'}],"
				      "'opt':'good','tags':['a']";
	char *spec = NULL;
	assert_true(asprintf(&spec, "%s}", ok) > 0);
	expect_gadget(spec, NULL, "");
	free(spec);
	/* CREATE: the rules with no need of oldSelf, beside and below the skipped
	 * (optionalOldSelf's runs: with no oldSelf its || errs) */
	expect_gadget("{'fixed':{'inner':{'v':'a'}},'opt':'bad','tags':['a','x']}", NULL,
		      "[spec.opt: Invalid value: 'string': no such attribute(s): oldSelf evaluating "
		      "rule: bad on create, "
		      "spec.tags[1]: Invalid value: 'string': no x]");
	/* what cannot run warns, with or without an old value */
	expect_gadget("{'odd':{'s':'a'}}", NULL,
		      " | warning: spec.odd.s: the x-kubernetes-validations rule "
		      "self.reverse() == oldSelf was not checked (function \\'reverse\\' with 1 "
		      "argument is not supported)");
	/* UPDATE: the transition rules deep below run, in a list-map item too */
	expect_gadget("{'fixed':{'inner':{'v':'b'}},'items':[{'name':'n','v':'b'}]}",
		      "{'fixed':{'inner':{'v':'a'}},'items':[{'name':'n','v':'a'}]}",
		      "[spec.fixed.inner.v: Invalid value: 'string': field is immutable, "
		      "spec.items[0].v: Invalid value: 'string': field is immutable]");
	/* UPDATE where the old object lacks the member: nothing to compare */
	expect_gadget("{'fixed':{'inner':{'v':'b'}},'items':[{'name':'m','v':'b'}]}",
		      "{'items':[{'name':'n','v':'a'}]}", "");
}

/* A Holder's spec: five required properties, one nullable, one defaulted;
 * a Loose's: a required name that is no property, and one named twice. */
static const char *const holder =
	"{'type':'object','required':['a','b','c','d','e'],'properties':{"
	"'a':{'type':'integer'},'b':{'type':'integer','nullable':true},"
	"'c':{'type':'integer','default':3},'d':{'type':'integer'},'e':{'type':'integer'},"
	"'f':{'type':'object','required':['g'],'properties':{'g':{'type':'string'}}}}}";
static const char *const loose =
	"{'type':'object','required':['x','ghost','x'],'properties':{'x':{'type':'integer'}}}";

/* The required members met in the walk of an object, looked up again in
 * none; the lookup kept where bits cannot stand for them. */
static void required_members(void **state)
{
	(void)state;
	tp_crds *crds = crds_of("Holder", holder);
	const tp_sch *spec = spec_of(crds, "Holder");
	assert_non_null(spec->required_props);
	assert_int_equal(tp__sch_prop_at(spec, "d")->req_bit, 1u << 3);
	assert_int_equal(tp__sch_prop_at(spec, "f")->req_bit, 0);
	tp_crds_unref(crds);
	crds = crds_of("Loose", loose);
	assert_null(spec_of(crds, "Loose")->required_props);
	assert_int_equal(tp__sch_prop_at(spec_of(crds, "Loose"), "x")->req_bit, 0);
	tp_crds_unref(crds);

	expect_of("Holder", holder, "{'a':1,'b':2,'d':4,'e':5}", NULL, "");
	expect_of("Holder", holder, "{}", NULL,
		  "[spec.a: Required value, spec.b: Required value, spec.d: Required value, "
		  "spec.e: Required value]");
	/* null: pruned, so missing, unless nullable (the members' findings first) */
	expect_of("Holder", holder, "{'a':null,'b':null,'d':4,'e':5,'f':{}}", NULL,
		  "[spec.f.g: Required value, spec.a: Required value]");
	/* a name twice: the first decides, as the lookup found it */
	expect_of("Holder", holder, "{'a':null,'a':1,'b':2,'d':4,'e':5}", NULL,
		  "spec.a: Required value");
	expect_of("Holder", holder, "{'a':1,'a':null,'b':2,'d':4,'e':5}", NULL, "");
	expect_of("Loose", loose, "{}", NULL,
		  "[spec.x: Required value, spec.ghost: Required value, spec.x: Required value]");
	expect_of("Loose", loose, "{'x':1,'ghost':2}", NULL, "unknown field 'spec.ghost'");
}

/* The findings of an object of the Gadget CRD's group, the first at path
 * (none: NULL). */
static void expect_object(const char *obj_text, const char *path, const char *want)
{
	tp_crds *crds = crds_of("Gadget", gadget);
	cJSON *obj = tt_jsq(obj_text);
	tp_options opt = { .crds = crds };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate(&opt, TP_OP_CREATE, obj, NULL, res), TP_OK);
	char *got = tt_result_text(res), *w = tt_dq(want);
	if (strcmp(got, w))
		print_message("object %s\ngot  [%s]\nwant [%s]\n", obj_text, got, w);
	assert_string_equal(got, w);
	if (path)
		assert_string_equal(tp_result_error_at(res, 0)->path, path);
	free(got);
	free(w);
	tp_result_free(res);
	cJSON_Delete(obj);
	tp_crds_unref(crds);
}

/* The group, kind and version served, found in one scan of the CRDs. */
static void kind_and_version_served(void **state)
{
	(void)state;
	expect_object("{'apiVersion':'t.example.com/v1','kind':'Gadget','metadata':{'name':'g'}}",
		      NULL, "");
	expect_object("{'apiVersion':'t.example.com/v2','kind':'Gadget','metadata':{'name':'g'}}",
		      "apiVersion", "no matches for kind 'Gadget' in version 't.example.com/v2' "
		      "(served: Gadget t.example.com/v1)");
	expect_object("{'apiVersion':'t.example.com/v1','kind':'gadget','metadata':{'name':'g'}}",
		      "kind", "no matches for kind 'gadget' in version 't.example.com/v1': did you "
		      "mean kind 'Gadget'? (served: Gadget t.example.com/v1)");
	expect_object("{'apiVersion':'t.example.com/v1','metadata':{'name':'g'}}", "kind",
		      "no matches for kind '' in version 't.example.com/v1' "
		      "(served: Gadget t.example.com/v1)");
	/* another group, or one longer than 255 bytes (cut there): not the
	 * CRDs' to answer */
	char long_obj[600];
	snprintf(long_obj, sizeof(long_obj), "{'apiVersion':'t.example.com%0300d/v1','kind':'Gadget'}",
		 0);
	const char *const others[] = {
		"{'apiVersion':'t.example.co/v1','kind':'Gadget'}", long_obj,
		"{'apiVersion':'t.example.com','kind':'Gadget'}",
	};
	tp_crds *crds = crds_of("Gadget", gadget);
	tp_options opt = { .crds = crds };
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		cJSON *obj = tt_jsq(others[i]);
		tp_result *res = NULL;
		bool handled = true;
		assert_int_equal(tp_result_new(&res), TP_OK);
		assert_int_equal(tp__schema_validate(&opt, TP_OP_CREATE, obj, NULL, res, &handled), TP_OK);
		assert_false(handled);
		assert_true(tp_result_ok(res));
		tp_result_free(res);
		cJSON_Delete(obj);
	}
	tp_crds_unref(crds);
}

/* Scalars of every kind of node: plain, bounded, nullable, int-or-string,
 * untyped, enums, a date-time, a minimum, a list, a oneOf. */
static const char *const scalars =
	"{'type':'object','properties':{'plain':{'type':'string'},"
	"'bounded':{'type':'string','maxLength':3,'minLength':2},'num':{'type':'number'},"
	"'int':{'type':'integer'},'i32':{'type':'integer','format':'int32'},"
	"'nul':{'type':'string','nullable':true},'ios':{'x-kubernetes-int-or-string':true},"
	"'any':{},'pick':{'type':'string','enum':['a','b']},"
	"'nulpick':{'type':'string','nullable':true,'enum':['a',null]},"
	"'when':{'type':'string','format':'date-time'},'lo':{'type':'integer','minimum':2},"
	"'list':{'type':'array','items':{'type':'integer'}},"
	"'one':{'oneOf':[{'type':'integer'},{'type':'boolean'}]},"
	"'tags':{'type':'object','additionalProperties':{'type':'string'}},"
	"'sized':{'type':'object','additionalProperties':{'type':'string','maxLength':1}}}}";

/* The record each node is compiled to (cel/sch.h: checks, type_ok,
 * pass_ok): what tp__sch_check has to do there, and the scalars it has
 * nothing to do for, which the walk leaves out. */
static void node_records(void **state)
{
	(void)state;
	tp_crds *crds = crds_of("Scalar", scalars);
	const tp_sch *spec = spec_of(crds, "Scalar");
	static const struct {
		const char *name;
		unsigned checks, type_ok, pass_ok;
	} want[] = {
		{ "plain", 0, cJSON_String, cJSON_String },
		{ "bounded", TP_SCH_CK_STRING, cJSON_String, 0 },
		{ "num", 0, cJSON_Number, cJSON_Number },
		{ "int", 0, 0, 0 }, /* a number passes only if integral: tested */
		{ "i32", TP_SCH_CK_NUMBER, 0, 0 }, /* the strict profile's bound */
		{ "nul", 0, cJSON_String | cJSON_NULL, cJSON_String | cJSON_NULL },
		{ "ios", 0, cJSON_String, cJSON_String },
		{ "any", 0,
		  cJSON_NULL | cJSON_False | cJSON_True | cJSON_Number | cJSON_String | cJSON_Array |
			  cJSON_Object,
		  cJSON_NULL | cJSON_False | cJSON_True | cJSON_Number | cJSON_String },
		{ "pick", TP_SCH_CK_ENUM, cJSON_String, 0 },
		{ "nulpick", TP_SCH_CK_ENUM, cJSON_String | cJSON_NULL, 0 },
		{ "lo", TP_SCH_CK_NUMBER, 0, 0 },
		{ "list", TP_SCH_CK_ARRAY, cJSON_Array, 0 },
		/* null is judged by type and enum only: pruned here anyway */
		{ "one", TP_SCH_CK_COMBINATORS, 0x7f, cJSON_NULL },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		const tp_sch *p = tp__sch_prop(spec, want[i].name);
		assert_non_null(p);
		if (p->checks != want[i].checks || p->type_ok != (want[i].type_ok & 0x7f) ||
		    p->pass_ok != want[i].pass_ok)
			print_message("%s: checks %#x type_ok %#x pass_ok %#x\n", want[i].name,
				      p->checks, p->type_ok, p->pass_ok);
		assert_int_equal(p->checks, want[i].checks);
		assert_int_equal(p->type_ok, want[i].type_ok & 0x7f);
		assert_int_equal(p->pass_ok, want[i].pass_ok);
	}
	/* a date-time is checked: strings are not left out */
	const tp_sch *when = tp__sch_prop(spec, "when");
	assert_int_equal(when->checks, TP_SCH_CK_STRING);
	assert_true(when->type_ok & cJSON_String);
	assert_int_equal(when->pass_ok & cJSON_String, 0);
	tp_crds_unref(crds);
}

/* The scalars the walk leaves out pass; every other one is still judged,
 * in the API server's words and order. */
static void scalars_left_out_still_judged(void **state)
{
	(void)state;
	expect_of("Scalar", scalars,
		  "{'plain':'x','bounded':'\xc3\xa9\xc3\xa9\xc3\xa9','num':1.5,'int':3,'i32':5,"
		  "'nul':null,'ios':'5%','any':[1],'pick':'a','nulpick':null,"
		  "'when':'2024-01-01T00:00:00Z','lo':2,'list':[1,2],'one':true}",
		  NULL, "");
	expect_of("Scalar", scalars, "{'plain':1,'num':'x','int':1.5,'nul':true,'ios':1.5}", NULL,
		  "[spec.plain: Invalid value: 'integer': spec.plain in body must be of type string: "
		  "'integer', spec.num: Invalid value: 'string': spec.num in body must be of type "
		  "number: 'string', spec.int: Invalid value: 'number': spec.int in body must be of "
		  "type integer: 'number', spec.nul: Invalid value: 'boolean': spec.nul in body must "
		  "be of type string: 'boolean', spec.ios: Invalid value: 'number': spec.ios in body "
		  "must be of type integer,string: 'number']");
	expect_of("Scalar", scalars, "{'list':[1,'x',2.5,null],'any':null,'lo':1,'one':'x'}", NULL,
		  "[spec.list[1]: Invalid value: 'string': spec.list[1] in body must be of type "
		  "integer: 'string', spec.list[2]: Invalid value: 'number': spec.list[2] in body must "
		  "be of type integer: 'number', spec.list[3]: Invalid value: 'null': spec.list[3] in "
		  "body must be of type integer: 'null', spec.lo: Invalid value: 1: spec.lo in body "
		  "should be greater than or equal to 2, <nil>: Invalid value: '': 'spec.one' must "
		  "validate one and only one schema (oneOf). Found none valid, spec.one: Invalid "
		  "value: 'string': spec.one in body must be of type integer: 'string']");
	expect_of("Scalar", scalars, "{'pick':'c','nulpick':'c','when':'yesterday','plain':null}",
		  NULL,
		  "[spec.pick: Unsupported value: 'c': supported values: 'a', 'b', spec.nulpick: "
		  "Unsupported value: 'c': supported values: 'a', null, spec.when: Invalid value: "
		  "'yesterday': spec.when in body must be of type date-time: 'yesterday']");
}

/* A map's scalar values (additionalProperties, as labels) are left out
 * like properties' when there is nothing to check, and judged when there
 * is. */
static void map_values_left_out(void **state)
{
	(void)state;
	expect_of("Scalar", scalars, "{'tags':{'a':'x','b':'','c':null},'sized':{'a':'x'}}", NULL,
		  "");
	expect_of("Scalar", scalars, "{'tags':{'a':'x','b':1,'c':true},'sized':{'a':'xy','b':[]}}",
		  NULL,
		  "[spec.tags.b: Invalid value: 'integer': spec.tags.b in body must be of type string: "
		  "'integer', spec.tags.c: Invalid value: 'boolean': spec.tags.c in body must be of "
		  "type string: 'boolean', spec.sized.a: Too long: may not be more than 1 byte, "
		  "spec.sized.b: Invalid value: 'array': spec.sized.b in body must be of type string: "
		  "'array']");
}

/* maxLength and minLength count runes, as far as they need to: a string
 * no longer in bytes than the maximum is not counted for it. */
static void string_bounds_in_runes(void **state)
{
	(void)state;
	expect_of("Scalar", scalars, "{'bounded':'ab'}", NULL, "");
	expect_of("Scalar", scalars, "{'bounded':'\xc3\xa9\xc3\xa9'}", NULL, ""); /* 4 bytes */
	expect_of("Scalar", scalars, "{'bounded':'\xc3\xa9'}", NULL,
		  "spec.bounded: Invalid value: '\xc3\xa9': spec.bounded in body should be at least 2 "
		  "chars long");
	expect_of("Scalar", scalars, "{'bounded':'a'}", NULL,
		  "spec.bounded: Invalid value: 'a': spec.bounded in body should be at least 2 chars "
		  "long");
	expect_of("Scalar", scalars, "{'bounded':'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'}", NULL,
		  "spec.bounded: Too long: may not be more than 3 bytes");
	expect_of("Scalar", scalars, "{'bounded':'abcd'}", NULL,
		  "spec.bounded: Too long: may not be more than 3 bytes");
}

/* The members every resource's root and metadata are asked about, by
 * their first byte: apiVersion, kind, metadata, ObjectMeta's names. */
static void resource_members(void **state)
{
	(void)state;
	expect_of("Scalar", scalars, "{}", NULL, "");
	expect_object("{'apiVersion':'t.example.com/v1','kind':'Gadget','metadata':{'name':'g',"
		      "'namespace':'n','nme':'x','labels':{},'annotations':{},'uid':'u'},"
		      "'kinds':1,'apiversion':2,'metadatas':3,'zzz':4}",
		      NULL, "[unknown field 'metadata.nme'; did you mean 'name'?, unknown field 'kinds', "
		      "unknown field 'apiversion', unknown field 'metadatas', unknown field 'zzz']");
}

/* resource.Quantity's pattern, as controller-gen writes it in the CRDs. */
#define QUANTITY_RE                                                                  \
	"^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?" \
	"(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"

/* ... as a JSON string's text */
#define QUANTITY_JSON                                                                          \
	"^(\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\\\+|-)?" \
	"(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))))?$"

/* schema/pattern.c answers as the regex engine for every string up to four
 * bytes over the bytes the grammar reads (and a few it does not), and for
 * longer ones around each of its branches. */
static void quantity_as_the_regex(void **state)
{
	(void)state;
	tp_regex *re = NULL;
	char why[128];
	assert_int_equal(tp__regex_compile(QUANTITY_RE, &re, why, sizeof(why)), TP_OK);
	assert_true(tp__sch_is_quantity_pattern(QUANTITY_RE));
	assert_false(tp__sch_is_quantity_pattern("^(\\+|-)?[0-9]+$"));
	static const char alphabet[] = "09.+-eEKMPimnux \n\xc3";
	size_t na = sizeof(alphabet) - 1, matched = 0, total = 0;
	char str[8];
	for (size_t len = 0; len <= 4; len++) {
		size_t n = 1;
		for (size_t i = 0; i < len; i++)
			n *= na;
		for (size_t code = 0; code < n; code++, total++) {
			size_t c = code;
			for (size_t i = 0; i < len; i++, c /= na)
				str[i] = alphabet[c % na];
			str[len] = '\0';
			bool want = tp__regex_match(re, str, len) == 1;
			if (tp__sch_quantity_match(str) != want)
				print_message("'%s': regex %d\n", str, want);
			assert_int_equal(tp__sch_quantity_match(str), want);
			matched += want;
		}
	}
	assert_true(matched > 100 && matched < total / 2);
	static const char *const longer[] = {
		"123456", "-1.25Gi", "+.5e-10", "1.5e+3.", "12345678901234567890Ei", "1.5Kii",
		"0.000001m", "5e", "5e+", "5E5", "5EE", "1..5", ".5.", "1.5.5", "1e1.5", "1e.5",
		"100Mi\n", " 100Mi", "100 Mi", "1Ki1", "\xd9\xa1", "1\xc3\xa9",
	};
	for (size_t i = 0; i < sizeof(longer) / sizeof(*longer); i++) {
		bool want = tp__regex_match(re, longer[i], strlen(longer[i])) == 1;
		if (tp__sch_quantity_match(longer[i]) != want)
			print_message("'%s': regex %d\n", longer[i], want);
		assert_int_equal(tp__sch_quantity_match(longer[i]), want);
	}
	tp__regex_free(re);
}

/* A CRD's quantity pattern is recognised, and judges as before: in the
 * API server's words, and by the regex engine past TP_SCH_QUANTITY_MAX. */
static void quantity_pattern_judged(void **state)
{
	(void)state;
	static const char *const schema =
		"{'type':'object','properties':{'q':{'anyOf':[{'type':'integer'},{'type':'string'}],"
		"'pattern':'" QUANTITY_JSON "','x-kubernetes-int-or-string':true},"
		"'p':{'type':'string','pattern':'^[0-9]+$'}}}";
	tp_crds *crds = crds_of("Sized", schema);
	assert_true(tp__sch_prop(spec_of(crds, "Sized"), "q")->quantity);
	assert_false(tp__sch_prop(spec_of(crds, "Sized"), "p")->quantity);
	tp_crds_unref(crds);
	expect_of("Sized", schema, "{'q':'2Gi','p':'1'}", NULL, "");
	expect_of("Sized", schema, "{'q':2}", NULL, "");
	expect_of("Sized", schema, "{'q':'1e'}", NULL,
		  "spec.q: Invalid value: '1e': spec.q in body should match \\'" QUANTITY_RE "\\'");
	char spec[TP_SCH_QUANTITY_MAX + 64], want[2 * TP_SCH_QUANTITY_MAX + 512];
	char digits[TP_SCH_QUANTITY_MAX + 8];
	memset(digits, '7', TP_SCH_QUANTITY_MAX + 1);
	digits[TP_SCH_QUANTITY_MAX + 1] = '\0';
	snprintf(spec, sizeof(spec), "{'q':'%s'}", digits);
	expect_of("Sized", schema, spec, NULL, "");
	snprintf(spec, sizeof(spec), "{'q':'%sx'}", digits);
	snprintf(want, sizeof(want),
		 "spec.q: Invalid value: '%sx': spec.q in body should match \\'" QUANTITY_RE "\\'",
		 digits);
	expect_of("Sized", schema, spec, NULL, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lookup_by_first_byte),
		cmocka_unit_test(checks_below_indexed_props),
		cmocka_unit_test(rules_without_old_value),
		cmocka_unit_test(rules_below_skipped_subtrees),
		cmocka_unit_test(kind_and_version_served),
		cmocka_unit_test(required_members),
		cmocka_unit_test(node_records),
		cmocka_unit_test(scalars_left_out_still_judged),
		cmocka_unit_test(map_values_left_out),
		cmocka_unit_test(string_bounds_in_runes),
		cmocka_unit_test(resource_members),
		cmocka_unit_test(quantity_as_the_regex),
		cmocka_unit_test(quantity_pattern_judged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
