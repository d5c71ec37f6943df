/*
 * test_expand_resources.c — the TrainJob's resourcesPerNode merged into the
 * trainer's node container when a ResourceList is empty or has one name:
 * the sort that makes its keys canonical (expand/info.c) has nothing, or
 * one member, to sort. An empty list once reached qsort with a NULL array,
 * undefined behaviour that the ASan/UBSan build (make asan) stops on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_expand.h"

/* The node container's resources once tj's trainer is expanded with rt. */
static void assert_resources(const char *trainer, const char *rt, const char *want)
{
	char tj[1024];
	snprintf(tj, sizeof(tj), TJ(",'trainer':%s"), trainer);
	cJSON *list = ex_expand(tj, rt, NULL, TP_OK);
	ex_assert_json(tp_get(ex_container(ex_job(list, "node"), "node"), "resources"), want);
	cJSON_Delete(list);
}

static void empty_lists_stay_empty(void **state)
{
	(void)state;
	assert_resources("{'resourcesPerNode':{'limits':{}}}", RT_TORCH, "{'limits':{}}");
	assert_resources("{'resourcesPerNode':{'limits':{},'requests':{}}}", RT_TORCH,
			 "{'limits':{},'requests':{}}");
	/* the runtime's empty list, and the TrainJob's, merged */
	assert_resources("{'resourcesPerNode':{'requests':{}}}",
			 RT_TORCH_WITH("'torch':{}", ",'resources':{'requests':{},'limits':{}}"),
			 "{'requests':{},'limits':{}}");
}

static void empty_beside_named(void **state)
{
	(void)state;
	assert_resources("{'resourcesPerNode':{'limits':{},'requests':{'cpu':'2'}}}", RT_TORCH,
			 "{'limits':{},'requests':{'cpu':'2'}}");
	/* the runtime's names stay under an empty list of the TrainJob's */
	assert_resources("{'resourcesPerNode':{'limits':{}}}",
			 RT_TORCH_WITH("'torch':{}", ",'resources':{'limits':{'memory':'1Gi'}}"),
			 "{'limits':{'memory':'1Gi'}}");
}

static void empty_lists_count_no_cpus(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'resourcesPerNode':{'limits':{},'requests':{}}}"),
				RT_TORCH, NULL, TP_OK);
	/* no CPU and no GPU named: at least one process, as with no resources */
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "PET_NPROC_PER_NODE"),
			    "1");
	cJSON_Delete(list);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_lists_stay_empty),
		cmocka_unit_test(empty_beside_named),
		cmocka_unit_test(empty_lists_count_no_cpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
