/*
 * test_public_names.c — the library's names say who may use them: every
 * symbol libtrainpolicy.a exports with the public prefix tp_ is declared in
 * policy/trainpolicy.h, the one header callers outside policy/ include;
 * what only policy/ may call is spelled tp__ (a tp_ function added to a
 * private header, and not to trainpolicy.h, fails it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"

/* True when the identifier name appears whole in text. */
static int declared(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
		bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		bool end = !(isalnum((unsigned char)p[n]) || p[n] == '_');
		if (start && end)
			return 1;
	}
	return 0;
}

static void exported_tp_names_are_public(void **state)
{
	(void)state;
	char *header = tt_read_file("policy/trainpolicy.h", NULL);
	assert_non_null(header);
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "nm -g --defined-only '%.400s/libtrainpolicy.a'", build);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[512], bad[8192] = "";
	unsigned exported = 0, outside = 0;
	while (fgets(line, sizeof(line), p)) {
		char addr[64], type[8], name[400];
		if (sscanf(line, "%63s %7s %399s", addr, type, name) != 3 || strncmp(name, "tp_", 3))
			continue;
		if (name[3] == '_') /* tp__: the library's own */
			continue;
		exported++;
		if (declared(header, name))
			continue;
		outside++;
		size_t used = strlen(bad);
		snprintf(bad + used, sizeof(bad) - used, " %s", name);
	}
	assert_int_equal(pclose(p), 0);
	free(header);
	assert_true(exported > 50); /* the archive was read */
	if (outside)
		fail_msg("%u of %u exported tp_ names are not in policy/trainpolicy.h: declare "
			 "each there, or spell it tp__ (policy/ only):%s", outside, exported, bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exported_tp_names_are_public),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
