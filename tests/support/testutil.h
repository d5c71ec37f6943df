/*
 * testutil.h — small helpers every cmocka test may use.
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>.
 */
#ifndef TT_TESTUTIL_H
#define TT_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/trainpolicy.h"

/* The ../shared folder (env TP_SHARED, else ../shared beside the repo), or
 * NULL when it is absent. */
const char *tt_shared_dir(void);
/* A path under ../shared, or NULL when ../shared is absent (static buffer
 * per call site is not needed: the string is malloc'd and leaked to the
 * test's end — use tt_free at teardown if valgrind matters). */
char *tt_shared_path(const char *rel);
/* Skip the current cmocka test when ../shared is absent. */
#define TT_REQUIRE_SHARED()                                                  \
	do {                                                                 \
		if (!tt_shared_dir()) {                                      \
			print_message("../shared absent: skipped\n");       \
			skip();                                              \
		}                                                            \
	} while (0)

/* The first object of kind k in the file rel under ../shared (its other
 * documents dropped); cJSON_Delete it. Fails the test when there is none. */
cJSON *tt_shared_object(const char *rel, tp_kind k);
/* A CRD of ../shared/fixtures/upstream/crds (file name) as the API server
 * returns it: compact JSON, malloc'd. Fails the test when it cannot load. */
char *tt_crd_json(const char *file);
/* Whole file into a malloc'd NUL-terminated buffer; NULL on error. */
char *tt_read_file(const char *path, size_t *len);
/* fn(path, text) for every .c and .h file under the folder root (text is
 * the file's, freed after fn): the source checks of test_one_tool and
 * test_one_clock. Fails the test when a file cannot be read. */
void tt_each_source(const char *root, void (*fn)(const char *path, const char *text));
/* Parse JSON text; fails the test on a parse error. Free with cJSON_Delete. */
cJSON *tt_json(const char *text);
/* text with single quotes as double quotes (\\' stays a single quote), so
 * JSON reads well in C strings; malloc'd. tt_jsq parses it (as tt_json). */
char *tt_dq(const char *text);
cJSON *tt_jsq(const char *text);
/* True when res holds an error at exactly path whose detail contains
 * detail_part (NULL: any detail). */
bool tt_has_error(const tp_result *res, const char *path, const char *detail_part);
/* True when some warning contains part. */
bool tt_has_warning(const tp_result *res, const char *part);
/* Print every error and warning (for a failing test's output). */
void tt_dump(const tp_result *res);
/* A set of the one CRD crd, compiled (the test fails, saying why, when it
 * does not compile). */
tp_crds *tt_crds_of(const cJSON *crd);
/* The errors as tp_result_format writes them, then " | warning: <w>" for
 * each warning; "" when there is neither. malloc'd. */
char *tt_result_text(const tp_result *res);
/* obj validated against crds, as an UPDATE from old when old is given, else
 * a CREATE: tt_result_text of its result. malloc'd. */
char *tt_validate_text(tp_crds *crds, const cJSON *obj, const cJSON *old);

/* The binary under test: $TW_BIN, else build/trainer-webhook. */
const char *tt_bin(void);
/* Run cmdline with /bin/sh (stdin from /dev/null); stdout and stderr come back
 * malloc'd (NULL pointers to skip). Returns the exit status, -1 if it did not
 * exit normally (a crash). */
int tt_run(const char *cmdline, char **out, char **err);

/* Monotonic milliseconds; sleep ms; poll cond(arg) every 10 ms for at most
 * ms (true once it holds). */
long long tt_mono_ms(void);
void tt_sleep_ms(int ms);
bool tt_wait_until(bool (*cond)(void *), void *arg, long long ms);
/* How many PEM certificates text holds. */
int tt_count_certs(const char *pem);

#endif
