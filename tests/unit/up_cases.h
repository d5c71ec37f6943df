/*
 * up_cases.h — running ported upstream cases under upstream's own names:
 * each file lists {"TestFunc/case name", function} and up_run makes the
 * cmocka group of them, so a failure reads as Go's t.Run would name it.
 */
#ifndef TT_UP_CASES_H
#define TT_UP_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"
#include "tests/support/upstream.h"

typedef struct up_case {
	const char *name; /* "TestValidate/priorityClassName exists" */
	CMUnitTestFunction fn;
	const void *arg; /* the case's row of a table, as *state; or NULL */
} up_case;

#define UP_CASE(name, fn) { name, fn, NULL }
/* A table-driven case: fn reads its row from *state. */
#define UP_ROW(name, fn, row) { name, fn, row }

static inline int up_run(const char *group, const up_case *cases, size_t n)
{
	struct CMUnitTest *t = calloc(n, sizeof(*t));
	if (!t)
		return 1;
	for (size_t i = 0; i < n; i++) {
		t[i].name = cases[i].name;
		t[i].test_func = cases[i].fn;
		t[i].initial_state = (void *)cases[i].arg;
	}
	int rc = _cmocka_run_group_tests(group, t, n, NULL, NULL);
	free(t);
	return rc;
}

#define UP_RUN(group, cases) up_run(group, cases, sizeof(cases) / sizeof(cases[0]))

/* The result allows (no errors), or denies with an error at path whose text
 * holds part; the result is freed. */
static inline void up_allowed(tp_result *r)
{
	if (!tp_result_ok(r))
		fail_msg("denied: %s", up_text(r));
	tp_result_free(r);
}

static inline void up_denied(tp_result *r, const char *path, const char *part)
{
	if (tp_result_ok(r) || !tt_has_error(r, path, part ? part : ""))
		fail_msg("want an error at %s (%s), got: %s", path, part ? part : "", up_text(r));
	tp_result_free(r);
}

/* Denied, with part in the result's text as the API server prints it. */
static inline void up_denied_text(tp_result *r, const char *part)
{
	const char *text = up_text(r);
	if (tp_result_ok(r) || !strstr(text, part))
		fail_msg("want a denial saying %s, got: %s", part, text);
	tp_result_free(r);
}

#endif /* TT_UP_CASES_H */
