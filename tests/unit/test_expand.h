/*
 * test_expand.h — helpers and small runtimes shared by the test_expand*.c
 * files (header-only: each test file is its own binary).
 * JSON is written with single quotes for readability; \' is a literal quote.
 */
#ifndef TT_TEST_EXPAND_H
#define TT_TEST_EXPAND_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

#define TT_UNUSED __attribute__((unused))

/* A TrainJob "tj" in namespace "team" referring to ClusterTrainingRuntime
 * "rt"; members are appended to its spec and must start with a comma. */
#define TJ(members)                                                                       \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"     \
	"{'name':'tj','namespace':'team','uid':'u-1'},'spec':{'runtimeRef':{'name':'rt',"  \
	"'kind':'ClusterTrainingRuntime','apiGroup':'trainer.kubeflow.org'}" members "}}"

/* A ClusterTrainingRuntime "rt": mlPolicy members ml, one trainer job "node"
 * whose node container has env RT_ENV and the extra members container. */
#define RT_TORCH_WITH(ml, container)                                                      \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"    \
	"'spec':{'mlPolicy':{" ml "},'template':{'metadata':{'labels':{'rl':'rv'},"        \
	"'annotations':{'ra':'av'}},'spec':{'replicatedJobs':[{'name':'node','template':"  \
	"{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}}," \
	"'spec':{'template':{'spec':{'containers':[{'name':'node','image':'rt-img',"        \
	"'env':[{'name':'RT_ENV','value':'r'}]" container "}]}}}}}]}}}}"

#define RT_TORCH RT_TORCH_WITH("'numNodes':1,'torch':{}", "")

#define RT_TORCH_COSCHED                                                                  \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt'},'spec':{'mlPolicy':{'torch':{}},'podGroupPolicy':"       \
	"{'coscheduling':{'scheduleTimeoutSeconds':100}},'template':{'spec':{"              \
	"'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"               \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"   \
	"{'spec':{'containers':[{'name':'node','image':'n'}]}}}}}]}}}}"

/* No mlPolicy: a trainer job and a helper job "aux" (parallelism 2, 3 Jobs). */
#define RT_PLAIN                                                                          \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt'},'spec':{'template':{'spec':{'replicatedJobs':["          \
	"{'name':'node','template':{'metadata':{'labels':"                                 \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"   \
	"{'spec':{'containers':[{'name':'node','image':'n'}]}}}}},"                         \
	"{'name':'aux','replicas':3,'template':{'spec':{'parallelism':2,'template':"       \
	"{'spec':{'containers':[{'name':'aux','image':'a'}]}}}}}]}}}}"

/* Torch with dataset and model initializer jobs. */
#define RT_INIT                                                                           \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt'},'spec':{'mlPolicy':{'torch':{}},'template':{'spec':{"    \
	"'replicatedJobs':[{'name':'dataset-initializer','template':{'metadata':{'labels':" \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'dataset-initializer'}},'spec':"   \
	"{'template':{'spec':{'containers':[{'name':'dataset-initializer','image':'d',"     \
	"'env':[{'name':'STORAGE_URI','value':'hf://old'},{'name':'KEEP','value':'k'}]}]}}}}}," \
	"{'name':'model-initializer','template':{'metadata':{'labels':"                     \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'model-initializer'}},'spec':"     \
	"{'template':{'spec':{'containers':[{'name':'model-initializer','image':'m'}]}}}}}," \
	"{'name':'node','template':{'metadata':{'labels':"                                 \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"   \
	"{'spec':{'containers':[{'name':'node','image':'n'}]}}}}}]}}}}"

static TT_UNUSED cJSON *ex_js(const char *text)
{
	return tt_jsq(text);
}

static TT_UNUSED void ex_assert_json(const cJSON *got, const char *want_text)
{
	cJSON *want = ex_js(want_text);
	if (!tp_json_equal(got, want)) {
		char *g = cJSON_PrintUnformatted(got);
		char *w = cJSON_PrintUnformatted(want);
		print_message("got:  %s\nwant: %s\n", g ? g : "(null)", w ? w : "(null)");
		free(g);
		free(w);
		cJSON_Delete(want);
		fail();
	}
	cJSON_Delete(want);
}

static TT_UNUSED const tp_ssh_key ex_ssh = {
	"-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
	"ecdsa-sha2-nistp521 AAAAE2 test",
};
/* RFC 7748 section 6.1's Alice: a secret key and its X25519 public key. */
static TT_UNUSED const tp_curve_key ex_curve = {
	{ 0x77, 0x07, 0x6d, 0x0a, 0x73, 0x18, 0xa5, 0x7d, 0x3c, 0x16, 0xc1, 0x72, 0x51, 0xb2, 0x66, 0x45,
	  0xdf, 0x4c, 0x2f, 0x87, 0xeb, 0xc0, 0x99, 0x2a, 0xb1, 0x77, 0xfb, 0xa5, 0x1d, 0xb9, 0x2c, 0x2a },
	{ 0x85, 0x20, 0xf0, 0x09, 0x89, 0x30, 0xa7, 0x54, 0x74, 0x8b, 0x7d, 0xdc, 0xb4, 0x3e, 0xf7, 0x5a,
	  0x0d, 0xbf, 0x3a, 0x0d, 0x26, 0x38, 0x1a, 0xf4, 0xeb, 0xa4, 0xa9, 0x8e, 0xaa, 0x9b, 0x4e, 0x6a },
};
static TT_UNUSED const tp_keys ex_key = { &ex_ssh, &ex_curve };

/* Expand tj with runtime rt under opt (NULL: the strict profile); rc must
 * be want_rc. Returns the List (TP_OK) or NULL. */
static TT_UNUSED cJSON *ex_expand_in(const tp_options *opt, const char *tj, const char *rt,
				     const tp_keys *key, int want_rc)
{
	cJSON *t = ex_js(tj), *r = ex_js(rt), *out = NULL;
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_expand_with_runtime(opt, t, r, key, &out, res);
	if (rc != want_rc || (rc == TP_OK && !tp_result_ok(res))) {
		print_message("rc %d, want %d\n", rc, want_rc);
		tt_dump(res);
	}
	assert_int_equal(rc, want_rc);
	if (rc == TP_OK) {
		assert_true(tp_result_ok(res));
		assert_non_null(out);
	} else {
		assert_null(out);
	}
	tp_result_free(res);
	cJSON_Delete(t);
	cJSON_Delete(r);
	return out;
}

static TT_UNUSED cJSON *ex_expand(const char *tj, const char *rt, const tp_keys *key,
				  int want_rc)
{
	return ex_expand_in(NULL, tj, rt, key, want_rc);
}

static TT_UNUSED const tp_options ex_kubeflow = { .profile = TP_PROFILE_KUBEFLOW };

/* Expand expecting failure; returns the result for the caller to inspect. */
static TT_UNUSED tp_result *ex_expand_fail(const char *tj, const char *rt, const tp_keys *key,
					   int want_rc)
{
	cJSON *t = ex_js(tj), *r = ex_js(rt), *out = NULL;
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_expand_with_runtime(NULL, t, r, key, &out, res);
	if (rc != want_rc)
		tt_dump(res);
	assert_int_equal(rc, want_rc);
	assert_null(out);
	assert_false(tp_result_ok(res));
	cJSON_Delete(t);
	cJSON_Delete(r);
	return res;
}

static TT_UNUSED const cJSON *ex_item(const cJSON *list, int i)
{
	const cJSON *it = cJSON_GetArrayItem(tp_get(list, "items"), i);
	assert_non_null(it);
	return it;
}

/* The item of that kind (first), or NULL. */
static TT_UNUSED const cJSON *ex_kind(const cJSON *list, const char *kind)
{
	return tp_find_named(tp_get(list, "items"), "kind", kind);
}

static TT_UNUSED const cJSON *ex_job(const cJSON *list, const char *name)
{
	const cJSON *j = tp_find_named(tp_get(ex_item(list, 0), "spec.replicatedJobs"), "name", name);
	if (!j)
		print_message("no replicated job %s\n", name);
	assert_non_null(j);
	return j;
}

static TT_UNUSED const cJSON *ex_container(const cJSON *job, const char *name)
{
	const cJSON *c = tp_find_named(tp_get(job, "template.spec.template.spec.containers"), "name",
				       name);
	if (!c)
		print_message("no container %s\n", name);
	assert_non_null(c);
	return c;
}

/* obj at path, then its member key (a label or annotation key with dots). */
static TT_UNUSED const char *ex_key_str(const cJSON *obj, const char *path, const char *key)
{
	const cJSON *m = tp_get_object(obj, path);
	const cJSON *v = m ? cJSON_GetObjectItemCaseSensitive(m, key) : NULL;
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* env value of a container, or NULL when absent. */
static TT_UNUSED const char *ex_env(const cJSON *container, const char *name)
{
	const cJSON *e = tp_find_named(tp_get(container, "env"), "name", name);
	return e ? (tp_get_str(e, "value") ? tp_get_str(e, "value") : "(valueFrom)") : NULL;
}

static TT_UNUSED long long ex_int(const cJSON *obj, const char *path)
{
	long long v = -1;
	if (!tp_get_int(obj, path, &v))
		print_message("no integer at %s\n", path);
	assert_true(tp_get_int(obj, path, &v));
	return v;
}

/* The container's env names, comma-joined, must be exactly want. */
static TT_UNUSED void ex_assert_env_names(const cJSON *container, const char *want)
{
	char got[1024] = "";
	const cJSON *e;
	cJSON_ArrayForEach(e, tp_get(container, "env")) {
		if (*got)
			strncat(got, ",", sizeof(got) - strlen(got) - 1);
		strncat(got, tp_get_str(e, "name"), sizeof(got) - strlen(got) - 1);
	}
	assert_string_equal(got, want);
}

#endif
