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

/* A Widget whose spec has the properties above: "amber" an enum, "arch"
 * required, "art" an object with a CEL rule two levels down, each other
 * an integer. */
static tp_crds *widget_crds(void)
{
	tp_buf props = TP_BUF_INIT(0);
	for (size_t i = 0; i < N_NAMES; i++) {
		const char *schema = "{'type':'integer'}";
		if (!strcmp(names[i], "amber"))
			schema = "{'type':'string','enum':['x','y']}";
		else if (!strcmp(names[i], "art"))
			schema = "{'type':'object','properties':{'deep':{'type':'object','properties':"
				 "{'leaf':{'type':'object','properties':{'n':{'type':'integer'}},"
				 "'x-kubernetes-validations':[{'rule':'self.n < 5',"
				 "'message':'n must be under 5'}]}}}}}";
		assert_int_equal(tp_buf_addf(&props, "%s'%s':%s", i ? "," : "", names[i], schema),
				 TP_OK);
	}
	char *text = NULL;
	assert_true(asprintf(&text,
			     "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
			     "'metadata':{'name':'widgets.t.example.com'},'spec':{'group':'t.example.com',"
			     "'names':{'kind':'Widget','plural':'widgets'},'scope':'Namespaced',"
			     "'versions':[{'name':'v1','served':true,'schema':{'openAPIV3Schema':"
			     "{'type':'object','properties':{'spec':{'type':'object','required':['arch'],"
			     "'properties':{%s}}}}}}]}}", props.data) > 0);
	cJSON *crd = tt_jsq(text);
	tp_crds *crds = tt_crds_of(crd);
	cJSON_Delete(crd);
	free(text);
	tp_buf_free(&props);
	return crds;
}

static const tp_sch *spec_of(const tp_crds *crds)
{
	const tp_crd_version *v = tp__crds_find(crds, "t.example.com", "v1", "Widget");
	assert_non_null(v);
	return tp__sch_prop(v->root, "spec");
}

/* Errors then warnings of a Widget with this spec; "" when allowed. */
static char *verdict(const char *spec)
{
	char *text = NULL;
	assert_true(asprintf(&text, "{'apiVersion':'t.example.com/v1','kind':'Widget',"
				    "'metadata':{'name':'w'},'spec':%s}", spec) > 0);
	cJSON *obj = tt_jsq(text);
	tp_crds *crds = widget_crds();
	tp_options opt = { .crds = crds };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate(&opt, TP_OP_CREATE, obj, NULL, res), TP_OK);
	char *answer = tt_result_text(res);
	tp_result_free(res);
	tp_crds_unref(crds);
	cJSON_Delete(obj);
	free(text);
	return answer;
}

static void expect(const char *spec, const char *want)
{
	char *got = verdict(spec);
	char *w = tt_dq(want);
	if (strcmp(got, w))
		print_message("spec %s\ngot  [%s]\nwant [%s]\n", spec, got, w);
	assert_string_equal(got, w);
	free(got);
	free(w);
}

/* The first-byte index (cel/sch.h's tp__sch_prop_at): every property is
 * found, with its length; names near them are not. */
static void lookup_by_first_byte(void **state)
{
	(void)state;
	tp_crds *crds = widget_crds();
	const tp_sch *s = spec_of(crds);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lookup_by_first_byte),
		cmocka_unit_test(checks_below_indexed_props),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
