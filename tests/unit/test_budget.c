/*
 * test_budget.c — the memory budget of the requests in flight
 * (webhook/server/budget.c): taking and giving back, the decision's arena
 * allowance, the container's limit read from fake cgroup v1 and v2 trees
 * (webhook/server/cgroup.c), the default budget, and serve's
 * --memory-budget and --decision-threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/cli/serve.h"
#include "webhook/server/budget.h"

static char root[64];

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/tw-cgroup-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

/* Write text to root/rel, making its folders. */
static void put(const char *rel, const char *text)
{
	char path[512], cmd[600];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void take_and_give(void **state)
{
	(void)state;
	tw_budget b;
	tw_budget_init(&b, 100);
	assert_true(tw_budget_take(&b, 60));
	assert_false(tw_budget_take(&b, 50)); /* 110 > 100: nothing taken */
	assert_int_equal(tw_budget_used(&b), 60);
	assert_true(tw_budget_take(&b, 40));
	assert_false(tw_budget_take(&b, 1));
	tw_budget_give(&b, 100);
	assert_false(tw_budget_take(&b, 101));
	assert_true(tw_budget_take(&b, 100));
	tw_budget_init(&b, 0); /* no budget */
	assert_true(tw_budget_take(&b, (size_t)1 << 40));
}

static void arena_allowance(void **state)
{
	(void)state;
	assert_int_equal(tw_budget_arena_for(0), 256 * 1024);
	assert_int_equal(tw_budget_arena_for(1000), 256 * 1024);
	assert_int_equal(tw_budget_arena_for(1 << 20), 9 << 20);
	assert_int_equal(tw_budget_arena_for(10 << 20), 64 << 20);
	tw_budget b;
	tw_budget_init(&b, 2 << 20);
	size_t allow = 256 * 1024, held = allow + 1000; /* a body of 1000 bytes */
	assert_true(tw_budget_take(&b, held));
	assert_int_equal(tw_budget_more_arena(&b, &allow, &held), 1); /* twice: 512 KiB */
	assert_int_equal(allow, 512 * 1024);
	assert_int_equal(held, 512 * 1024 + 1000);
	assert_int_equal(tw_budget_used(&b), held);
	assert_true(tw_budget_take(&b, 1 << 20)); /* another request holds 1 MiB */
	assert_int_equal(tw_budget_more_arena(&b, &allow, &held), 0); /* 1 MiB: not now */
	assert_int_equal(allow, 512 * 1024);
	tw_budget_give(&b, 1 << 20);
	assert_int_equal(tw_budget_more_arena(&b, &allow, &held), 1); /* now it fits */
	assert_int_equal(tw_budget_more_arena(&b, &allow, &held), -1); /* 2 MiB + body: never */
	assert_int_equal(allow, 1 << 20);
	allow = 64 << 20;
	tw_budget_init(&b, 0);
	assert_int_equal(tw_budget_more_arena(&b, &allow, &held), -1); /* the most already */
}

/* cgroup v2, no namespace: the pod's limit is above the container's "max". */
static void cgroup_v2_smallest_on_the_way_up(void **state)
{
	(void)state;
	uint64_t v = 0;
	put("proc/self/cgroup", "0::/kubepods/pod1/c1\n");
	put("sys/fs/cgroup/kubepods/pod1/c1/memory.max", "max\n");
	put("sys/fs/cgroup/kubepods/pod1/memory.max", "67108864\n");
	put("sys/fs/cgroup/kubepods/memory.max", "1073741824\n");
	assert_int_equal(tw_cgroup_memory_limit(root, &v), 0);
	assert_int_equal(v, 64 << 20);
	put("sys/fs/cgroup/kubepods/pod1/c1/memory.max", "50331648\n");
	assert_int_equal(tw_cgroup_memory_limit(root, &v), 0);
	assert_int_equal(v, 48 << 20);
}

/* cgroup v2 with a cgroup namespace: "/" and the limit at the mount's root. */
static void cgroup_v2_namespaced(void **state)
{
	(void)state;
	uint64_t v = 0;
	put("proc/self/cgroup", "0::/\n");
	assert_int_equal(tw_cgroup_memory_limit(root, &v), -1); /* no file: no limit */
	put("sys/fs/cgroup/memory.max", "134217728\n");
	assert_int_equal(tw_cgroup_memory_limit(root, &v), 0);
	assert_int_equal(v, 128 << 20);
	char source[160];
	assert_int_equal(tw_budget_default(root, source, sizeof(source)), 64 << 20);
	assert_non_null(strstr(source, "half the container's memory limit of 128 MiB"));
}

/* cgroup v1 (a hybrid host: the v2 line names no limit), the unlimited
 * value, and the machine's memory when nothing is limited. */
static void cgroup_v1_and_no_limit(void **state)
{
	(void)state;
	uint64_t v = 0;
	put("proc/self/cgroup", "9:name=systemd:/\n4:memory:/docker/abc\n1:cpu:/\n0::/\n");
	put("sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
	put("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("proc/meminfo", "MemTotal:        4194304 kB\nMemFree: 1 kB\n");
	assert_int_equal(tw_cgroup_memory_limit(root, &v), -1);
	char source[160];
	assert_int_equal(tw_budget_default(root, source, sizeof(source)), 1 << 30); /* at most */
	assert_non_null(strstr(source, "no container memory limit"));
	put("proc/meminfo", "MemTotal:        1048576 kB\n");
	assert_int_equal(tw_budget_default(root, source, sizeof(source)), 512 << 20);
	put("sys/fs/cgroup/memory/docker/memory.limit_in_bytes", "268435456\n");
	assert_int_equal(tw_cgroup_memory_limit(root, &v), 0);
	assert_int_equal(v, 256 << 20);
}

static int parse(tw_serve_args *a, const char *flag, const char *value)
{
	char *argv[] = { "serve", "--dev", (char *)flag, (char *)value, NULL };
	int rc = tw_serve_parse(a, 4, argv);
	tw_cli_free(&a->cli);
	return rc;
}

static void serve_flags(void **state)
{
	(void)state;
	tw_serve_args a;
	assert_int_equal(parse(&a, "--memory-budget", "48Mi"), 0);
	assert_int_equal(a.memory_budget, 48 << 20);
	assert_int_equal(parse(&a, "--memory-budget", "1Gi"), 0);
	assert_int_equal(a.memory_budget, 1 << 30);
	assert_int_equal(parse(&a, "--memory-budget", "50000000"), 0);
	assert_int_equal(a.memory_budget, 50000000);
	assert_int_equal(parse(&a, "--memory-budget", "64M"), 0);
	assert_int_equal(a.memory_budget, 64000000);
	assert_int_not_equal(parse(&a, "--memory-budget", "512Ki"), 0); /* under 1 MiB */
	assert_int_not_equal(parse(&a, "--memory-budget", "64MB"), 0);
	assert_int_not_equal(parse(&a, "--memory-budget", "-1Mi"), 0);
	assert_int_not_equal(parse(&a, "--memory-budget", "2048Gi"), 0);
	assert_int_equal(parse(&a, "--decision-threads", "8"), 0);
	assert_int_equal(a.deciders, 8);
	assert_int_not_equal(parse(&a, "--decision-threads", "0"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(take_and_give),
		cmocka_unit_test(arena_allowance),
		cmocka_unit_test_setup_teardown(cgroup_v2_smallest_on_the_way_up, setup, teardown),
		cmocka_unit_test_setup_teardown(cgroup_v2_namespaced, setup, teardown),
		cmocka_unit_test_setup_teardown(cgroup_v1_and_no_limit, setup, teardown),
		cmocka_unit_test(serve_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
