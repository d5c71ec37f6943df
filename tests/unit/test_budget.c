/*
 * test_budget.c — the memory budget of the requests in flight
 * (webhook/server/budget.c): taking and giving back, the lane of small
 * requests, a peer's share (and the peers table, peers.c), connections'
 * half, the decision's arena allowance, the container's limit read from fake cgroup v1 and v2 trees
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
#include <arpa/inet.h>
#include <netinet/in.h>
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

/* A budget of 1600 bytes: a lane of 200 for small requests, 1400 for the
 * rest, of which one peer's requests hold at most 700, connections 800. */
static void take_and_give(void **state)
{
	(void)state;
	tw_budget b;
	tw_budget_init(&b, 1600);
	assert_int_equal(b.lane, 200);
	assert_int_equal(b.peer_share, 700);
	assert_int_equal(b.conn_max, 800);
	tw_hold x = { .cls = TW_HOLD_LARGE }, y = { .cls = TW_HOLD_LARGE };
	assert_int_equal(tw_budget_take(&b, &x, 600), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_take(&b, &x, 50), TW_BUDGET_TAKEN);
	assert_int_equal(x.held, 650);
	assert_int_equal(tw_budget_take(&b, &y, 700), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_take(&b, &y, 100), TW_BUDGET_NEVER); /* 800 > its class */
	assert_int_equal(tw_budget_take(&b, &x, 50), TW_BUDGET_TAKEN);   /* 1400: the lane is left */
	assert_int_equal(tw_budget_used(&b), 1400);
	tw_hold z = { .cls = TW_HOLD_LARGE }, small = { .cls = TW_HOLD_SMALL };
	assert_int_equal(tw_budget_take(&b, &z, 1), TW_BUDGET_BUSY); /* never the lane */
	assert_int_equal(tw_budget_take(&b, &small, 200), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_take(&b, &small, 1), TW_BUDGET_BUSY);
	assert_int_equal(tw_budget_used(&b), 1600);
	tw_budget_release(&b, &x);
	assert_int_equal(x.held, 0);
	assert_int_equal(tw_budget_used(&b), 900);
	tw_budget_release(&b, &y);
	tw_budget_release(&b, &small);
	tw_budget_release(&b, &small); /* twice: nothing more */
	assert_int_equal(tw_budget_used(&b), 0);
	assert_int_equal(tw_budget_could(&b, TW_HOLD_LARGE, 700), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_could(&b, TW_HOLD_LARGE, 701), TW_BUDGET_NEVER);
	tw_budget_init(&b, 0); /* no budget */
	assert_int_equal(tw_budget_take(&b, &z, (size_t)1 << 40), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_could(&b, TW_HOLD_LARGE, (size_t)1 << 40), TW_BUDGET_TAKEN);
	tw_budget_release(&b, &z);
	assert_int_equal(tw_budget_used(&b), 0);
}

/* One peer's requests together hold at most its share, whatever each
 * holds; another peer still finds the rest. */
static void a_peer_holds_its_share(void **state)
{
	(void)state;
	tw_budget b;
	tw_budget_init(&b, 1600); /* share 700 */
	tw_peer p = { .refs = 1 }, q = { .refs = 1 };
	atomic_init(&p.held, 0);
	atomic_init(&q.held, 0);
	tw_hold a1 = { .cls = TW_HOLD_LARGE, .peer = &p }, a2 = a1, b1 = { .cls = TW_HOLD_LARGE,
									  .peer = &q };
	assert_int_equal(tw_budget_take(&b, &a1, 400), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_take(&b, &a2, 301), TW_BUDGET_PEER); /* 701 > 700 */
	assert_int_equal(tw_budget_used(&b), 400);                      /* nothing taken */
	assert_int_equal(tw_budget_take(&b, &a2, 300), TW_BUDGET_TAKEN);
	assert_int_equal(atomic_load(&p.held), 700);
	assert_int_equal(tw_budget_take(&b, &b1, 700), TW_BUDGET_TAKEN); /* the other peer */
	assert_int_equal(tw_budget_take(&b, &b1, 1), TW_BUDGET_NEVER);  /* one request past it */
	tw_hold b2 = { .cls = TW_HOLD_SMALL, .peer = &q };
	assert_int_equal(tw_budget_take(&b, &b2, 1), TW_BUDGET_PEER);
	tw_budget_release(&b, &a1);
	assert_int_equal(atomic_load(&p.held), 300);
	assert_int_equal(tw_budget_take(&b, &a2, 1), TW_BUDGET_TAKEN);
	tw_budget_release(&b, &a2);
	tw_budget_release(&b, &b1);
	assert_int_equal(atomic_load(&p.held) + atomic_load(&q.held) + tw_budget_used(&b), 0);
}

/* Connections: counted while open, half the budget at most, never the
 * lane; the count of connections a budget holds. */
static void connections_hold_half(void **state)
{
	(void)state;
	tw_budget b;
	tw_budget_init(&b, 16 * TW_BUDGET_CONN_COST); /* 8 connections */
	int open = 0;
	while (tw_budget_conn_fits(&b)) {
		tw_budget_conn_open(&b);
		open++;
	}
	assert_int_equal(open, 8);
	assert_int_equal(tw_budget_used(&b), 8 * TW_BUDGET_CONN_COST);
	tw_hold r = { .cls = TW_HOLD_LARGE }; /* requests find the rest but the lane */
	assert_int_equal(tw_budget_take(&b, &r, 6 * TW_BUDGET_CONN_COST), TW_BUDGET_TAKEN);
	tw_budget_conn_close(&b);
	assert_true(tw_budget_conn_fits(&b));
	assert_int_equal(tw_budget_take(&b, &r, TW_BUDGET_CONN_COST), TW_BUDGET_TAKEN);
	assert_false(tw_budget_conn_fits(&b)); /* what is left is the lane, for small requests */
	tw_budget_release(&b, &r);
	assert_true(tw_budget_conn_fits(&b));
	for (int i = 0; i < 7; i++)
		tw_budget_conn_close(&b);
	assert_int_equal(tw_budget_used(&b), 0);
	assert_int_equal(tw_budget_max_conns(16 * TW_BUDGET_CONN_COST), 8);
	assert_int_equal(tw_budget_max_conns((size_t)32 << 20), 341);
	assert_int_equal(tw_budget_max_conns(0), 0);
	tw_budget_init(&b, 0);
	assert_true(tw_budget_conn_fits(&b));
}

static void addr4(struct sockaddr_in *a, unsigned n)
{
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(0x7f000000u + n);
}

/* The peers table: one entry per address while its requests hold it, the
 * same entry for an IPv4 address and its IPv6 mapping, gone with its last
 * request, and found again after any order of removals around it. */
static void peers_by_address(void **state)
{
	(void)state;
	tw_peers *t = tw_peers_new(300);
	assert_non_null(t);
	struct sockaddr_in a;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	addr4(&a, 1);
	a6.sin6_addr.s6_addr[10] = a6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&a6.sin6_addr.s6_addr[12], &a.sin_addr, 4);
	tw_peer *p = tw_peers_get(t, (struct sockaddr *)&a), *p6 = tw_peers_get(t, (struct sockaddr *)&a6);
	assert_non_null(p);
	assert_ptr_equal(p, p6);
	assert_int_equal(p->refs, 2);
	struct sockaddr un = { .sa_family = AF_UNIX };
	assert_null(tw_peers_get(t, &un));
	tw_peers_put(t, p6);
	tw_peers_put(t, p);
	assert_int_equal(tw_peers_count(t), 0);
	tw_peer *many[300];
	for (unsigned i = 0; i < 300; i++) {
		addr4(&a, i);
		assert_non_null(many[i] = tw_peers_get(t, (struct sockaddr *)&a));
	}
	addr4(&a, 1000);
	assert_null(tw_peers_get(t, (struct sockaddr *)&a)); /* full */
	for (unsigned i = 0; i < 300; i += 3) /* every third out, then each still found */
		tw_peers_put(t, many[i]);
	for (unsigned i = 0; i < 300; i++) {
		if (i % 3 == 0)
			continue;
		addr4(&a, i);
		tw_peer *again = tw_peers_get(t, (struct sockaddr *)&a);
		assert_ptr_equal(again, many[i]);
		tw_peers_put(t, again);
	}
	assert_int_equal(tw_peers_count(t), 200);
	for (unsigned i = 0; i < 300; i++)
		if (i % 3)
			tw_peers_put(t, many[i]);
	assert_int_equal(tw_peers_count(t), 0);
	tw_peers_free(t);
}

static void arena_allowance(void **state)
{
	(void)state;
	assert_int_equal(tw_budget_arena_for(0), 256 * 1024);
	assert_int_equal(tw_budget_arena_for(1000), 256 * 1024);
	assert_int_equal(tw_budget_arena_for(1 << 20), 9 << 20);
	assert_int_equal(tw_budget_arena_for(10 << 20), 64 << 20);
	assert_int_equal(tw_budget_class_of(32 * 1024), TW_HOLD_SMALL);
	assert_int_equal(tw_budget_class_of(32 * 1024 + 1), TW_HOLD_LARGE);
	tw_budget b;
	tw_budget_init(&b, 4 << 20); /* share 1.75 MiB */
	size_t allow = 256 * 1024;
	tw_hold h = { .cls = TW_HOLD_SMALL };
	assert_int_equal(tw_budget_take(&b, &h, allow + 1000), TW_BUDGET_TAKEN); /* body 1000 */
	assert_int_equal(tw_budget_more_arena(&b, &h, &allow), TW_BUDGET_TAKEN); /* 512 KiB */
	assert_int_equal(allow, 512 * 1024);
	assert_int_equal(h.held, 512 * 1024 + 1000);
	assert_int_equal(tw_budget_used(&b), h.held);
	tw_hold other = { .cls = TW_HOLD_SMALL }; /* another request holds 3 MiB */
	assert_int_equal(tw_budget_take(&b, &other, 3 << 20), TW_BUDGET_NEVER); /* over a share */
	assert_int_equal(tw_budget_take(&b, &other, 1700 * 1024), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_take(&b, &h, 0), TW_BUDGET_TAKEN);
	tw_hold third = { .cls = TW_HOLD_SMALL };
	assert_int_equal(tw_budget_take(&b, &third, 1700 * 1024), TW_BUDGET_TAKEN);
	assert_int_equal(tw_budget_more_arena(&b, &h, &allow), TW_BUDGET_BUSY); /* not now */
	assert_int_equal(allow, 512 * 1024);
	tw_budget_release(&b, &third);
	assert_int_equal(tw_budget_more_arena(&b, &h, &allow), TW_BUDGET_TAKEN); /* now it fits */
	assert_int_equal(tw_budget_more_arena(&b, &h, &allow), TW_BUDGET_NEVER); /* 2 MiB: never */
	assert_int_equal(allow, 1 << 20);
	tw_budget_release(&b, &h);
	tw_budget_release(&b, &other);
	allow = 64 << 20;
	tw_budget_init(&b, 0);
	assert_int_equal(tw_budget_more_arena(&b, &h, &allow), TW_BUDGET_NEVER); /* the most */
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
		cmocka_unit_test(a_peer_holds_its_share),
		cmocka_unit_test(connections_hold_half),
		cmocka_unit_test(peers_by_address),
		cmocka_unit_test(arena_allowance),
		cmocka_unit_test_setup_teardown(cgroup_v2_smallest_on_the_way_up, setup, teardown),
		cmocka_unit_test_setup_teardown(cgroup_v2_namespaced, setup, teardown),
		cmocka_unit_test_setup_teardown(cgroup_v1_and_no_limit, setup, teardown),
		cmocka_unit_test(serve_flags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
