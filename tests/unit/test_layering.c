/*
 * test_layering.c — the shape of policy/ as its object files show it (nm):
 * no files call each other's functions in a circle (the dispatcher above
 * what it dispatches to, shared helpers below), and the library calls
 * nothing of webhook/ or certs/ (DESIGN.md: policy/ calls nobody of ours).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/testutil.h"

#define MAX_OBJS 128
#define MAX_SYMS 4096

struct sym {
	char name[96];
	int obj;
};

static char objs[MAX_OBJS][160];
static int nobjs;
static struct sym defs[MAX_SYMS], uses[MAX_SYMS * 4];
static int ndefs, nuses;
static bool edge[MAX_OBJS][MAX_OBJS];

static void read_symbols(int o)
{
	char cmd[sizeof(objs[0]) + 16], line[512];
	snprintf(cmd, sizeof(cmd), "nm '%.159s'", objs[o]);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char a[128], b[128], c[128];
		int n = sscanf(line, "%127s %127s %127s", a, b, c);
		if (n == 3 && strchr("TDBR", b[0]) && ndefs < MAX_SYMS) {
			snprintf(defs[ndefs].name, sizeof(defs[ndefs].name), "%.95s", c);
			defs[ndefs++].obj = o;
		} else if (n == 2 && !strcmp(a, "U") && nuses < MAX_SYMS * 4) {
			snprintf(uses[nuses].name, sizeof(uses[nuses].name), "%.95s", b);
			uses[nuses++].obj = o;
		}
	}
	pclose(p);
}

/* The objects of the library's sources (policy/ and its folders): the
 * objects of files that are gone are no part of it. */
static void load(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	const char *pat[2] = { "policy/*.c", "policy/*/*.c" };
	nobjs = ndefs = nuses = 0;
	memset(edge, 0, sizeof(edge));
	for (int k = 0; k < 2; k++) {
		glob_t g;
		if (glob(pat[k], 0, NULL, &g) == 0)
			for (size_t i = 0; i < g.gl_pathc && nobjs < MAX_OBJS; i++) {
				const char *src = g.gl_pathv[i];
				snprintf(objs[nobjs], sizeof(objs[0]), "%.40s/%.*so", build,
					 (int)strlen(src) - 1, src);
				if (access(objs[nobjs], R_OK) == 0)
					nobjs++;
			}
		globfree(&g);
	}
	if (nobjs < 10) {
		print_message("policy/ objects not found under %s: skipped\n", build);
		skip();
	}
	for (int o = 0; o < nobjs; o++)
		read_symbols(o);
	for (int u = 0; u < nuses; u++)
		for (int d = 0; d < ndefs; d++)
			if (!strcmp(uses[u].name, defs[d].name) && defs[d].obj != uses[u].obj)
				edge[uses[u].obj][defs[d].obj] = true;
}

/* Does o reach target through edges (depth-first)? */
static bool reaches(int o, int target, bool *seen)
{
	for (int w = 0; w < nobjs; w++) {
		if (!edge[o][w] || seen[w])
			continue;
		if (w == target)
			return true;
		seen[w] = true;
		if (reaches(w, target, seen))
			return true;
	}
	return false;
}

static void no_circles_in_policy(void **state)
{
	(void)state;
	load();
	static char circles[MAX_OBJS * 200];
	size_t len = 0;
	for (int o = 0; o < nobjs; o++) {
		bool seen[MAX_OBJS] = { false };
		if (reaches(o, o, seen) && len < sizeof(circles))
			len += (size_t)snprintf(circles + len, sizeof(circles) - len,
						"  %.159s calls back into itself through others\n",
						objs[o]);
	}
	if (len)
		fail_msg("calls in a circle:\n%s", circles);
}

/* The library's undefined symbols are its own, libc's and its libraries':
 * never a tw_ (webhook/, certs/) function. */
static void policy_calls_nobody_of_ours(void **state)
{
	(void)state;
	load();
	for (int u = 0; u < nuses; u++)
		if (!strncmp(uses[u].name, "tw_", 3))
			fail_msg("%s calls %s of webhook/ or certs/", objs[uses[u].obj], uses[u].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_circles_in_policy),
		cmocka_unit_test(policy_calls_nobody_of_ours),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
