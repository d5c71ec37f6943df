/*
 * test_one_clock.c — one monotonic clock: the library reads it in
 * policy/core/deadline.c (tp_monotonic_ns) and the binary through
 * webhook/core/clock.c, so every deadline, backoff and wait of either is on
 * one time line and a change of clock is made in one place. The test reads
 * every .c and .h of policy/, webhook/ and certs/ and fails on a clock read
 * or a condition-clock setting anywhere else (a planted
 * clock_gettime(CLOCK_MONOTONIC, ...) in any file fails it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"

struct reader {
	const char *needle; /* what only owner may hold */
	const char *owner;  /* the one file allowed to */
};

static const struct reader readers[] = {
	{ "clock_gettime(CLOCK_MONOTONIC", "policy/core/deadline.c" },
	{ "CLOCK_MONOTONIC_RAW", "" },
	{ "pthread_condattr_setclock", "webhook/core/clock.c" },
};

#define NREADERS (sizeof(readers) / sizeof(readers[0]))

static char found[4096]; /* "file: needle\n" for each one out of place */
static unsigned seen[NREADERS];

static void one_file(const char *path, const char *text)
{
	for (size_t i = 0; i < NREADERS; i++) {
		if (!strstr(text, readers[i].needle))
			continue;
		if (!strcmp(path, readers[i].owner)) {
			seen[i]++;
			continue;
		}
		size_t used = strlen(found);
		snprintf(found + used, sizeof(found) - used, "%s: %s\n", path, readers[i].needle);
	}
}

static void one_monotonic_clock(void **state)
{
	(void)state;
	found[0] = '\0';
	memset(seen, 0, sizeof(seen));
	const char *folders[] = { "policy", "webhook", "certs" };
	for (size_t i = 0; i < 3; i++)
		tt_each_source(folders[i], one_file);
	if (found[0])
		fail_msg("a clock read outside its one place (use tp_monotonic_ns in policy/, "
			 "webhook/core/clock.h in webhook/ and certs/):\n%s", found);
	/* the owners still hold them: a rename is noticed here, not missed */
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[2], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_monotonic_clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
