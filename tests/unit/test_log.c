/*
 * test_log.c — the JSON-lines log: request lines are batched, and nothing
 * batched is lost or reordered when another line, a flush or the 100 ms
 * flusher writes it out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/core/log.h"

static int fds[2];

static size_t drain(char *buf, size_t n)
{
	ssize_t got = read(fds[0], buf, n - 1);
	buf[got > 0 ? got : 0] = '\0';
	return got > 0 ? (size_t)got : 0;
}

static void batched_line(const char *uid)
{
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_INFO, "request");
	tw_log_str(&l, "uid", uid);
	tw_log_end_batched(&l);
}

static void batches_keep_order(void **state)
{
	(void)state;
	assert_int_equal(pipe(fds), 0);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	tw_log_set_fd(fds[1]);
	char buf[4096];
	batched_line("a");
	batched_line("b");
	tw_log(TW_LOG_WARN, "after the requests"); /* writes the batch first */
	drain(buf, sizeof(buf));
	const char *a = strstr(buf, "\"uid\":\"a\""), *b = strstr(buf, "\"uid\":\"b\"");
	const char *w = strstr(buf, "after the requests");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(w);
	assert_true(a < b && b < w);
	/* alone, a batched line is out within the flusher's period */
	batched_line("c");
	tt_sleep_ms(300);
	drain(buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"uid\":\"c\""));
	/* and tw_log_flush writes what waits at once */
	batched_line("d");
	tw_log_flush();
	drain(buf, sizeof(buf));
	assert_non_null(strstr(buf, "\"uid\":\"d\""));
	tw_log_set_fd(2);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batches_keep_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
