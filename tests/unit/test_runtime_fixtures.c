/*
 * test_runtime_fixtures.c — every runtime upstream ships
 * (../shared/fixtures/upstream/runtimes/, every .yaml below it) passes CREATE in both
 * profiles with no errors. Needs the YAML loader (tp_load).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/admission/runtime.h"
#include "policy/core/internal.h"
#include "tests/support/testutil.h"

static bool is_yaml(const char *name)
{
	size_t n = strlen(name);
	return n > 5 && !strcmp(name + n - 5, ".yaml");
}

static void judge_doc(const cJSON *obj, const char *file, int *runtimes)
{
	tp_kind k = tp_kind_of(obj);
	if (k != TP_KIND_TRAINING_RUNTIME && k != TP_KIND_CLUSTER_TRAINING_RUNTIME)
		return; /* kustomization.yaml and the like */
	(*runtimes)++;
	tp_profile profiles[] = { TP_PROFILE_KUBEFLOW, TP_PROFILE_STRICT };
	for (int p = 0; p < 2; p++) {
		tp_result *res;
		assert_int_equal(tp_result_new(&res), TP_OK);
		tp_options opt = { .profile = profiles[p] };
		assert_int_equal(tp__validate_trainer_runtime(&opt, TP_OP_CREATE, k, obj, NULL, res), TP_OK);
		if (!tp_result_ok(res)) {
			print_error("%s (%s profile):\n", file, tp_profile_name(profiles[p]));
			tt_dump(res);
		}
		assert_int_equal(tp_result_error_count(res), 0);
		tp_result_free(res);
	}
}

static void judge_file(const char *path, int *runtimes)
{
	size_t len = 0;
	char *data = tt_read_file(path, &len);
	assert_non_null(data);
	tp_docs *docs = NULL;
	tp_load_error err;
	memset(&err, 0, sizeof(err));
	int rc = tp_load(data, len, NULL, &docs, &err);
	if (rc)
		print_error("%s: %s\n", path, err.msg);
	assert_int_equal(rc, TP_OK);
	for (size_t i = 0; i < tp_docs_count(docs); i++)
		judge_doc(tp_docs_at(docs, i)->obj, path, runtimes);
	tp_docs_free(docs);
	free(data);
}

static void walk(const char *dir, int *runtimes)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *path = malloc(n);
		assert_non_null(path);
		snprintf(path, n, "%s/%s", dir, e->d_name);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk(path, runtimes);
		else if (is_yaml(e->d_name))
			judge_file(path, runtimes);
		free(path);
	}
	closedir(d);
}

static void upstream_runtimes_pass_create(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *dir = tt_shared_path("fixtures/upstream/runtimes");
	int runtimes = 0;
	walk(dir, &runtimes);
	free(dir);
	/* torch, deepspeed, jax, mlx, xgboost, torchtune x3, data-cache at least */
	assert_true(runtimes >= 9);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(upstream_runtimes_pass_create),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
