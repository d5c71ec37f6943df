/*
 * clicheck.h — what the CLI's integration tests share (clicheck.c): a
 * scratch folder per test binary, files written into it, the binary run
 * with arguments, and checks on what it printed.
 * Include after <setjmp.h>, <stdarg.h>, <stddef.h> and <cmocka.h>.
 */
#ifndef TT_CLICHECK_H
#define TT_CLICHECK_H

#include <stddef.h>

#include "policy/trainpolicy.h"

/* cmocka group setup and teardown: a fresh /tmp/<prefix>-XXXXXX, removed at
 * the end. 0 on success. */
int tt_cli_setup(const char *prefix);
int tt_cli_teardown(void);
/* The scratch folder, and name inside it (one of four rotating buffers). */
const char *tt_cli_dir(void);
const char *tt_cli_path(const char *name);
/* text into name inside the folder; fails the test when it cannot. */
void tt_cli_write(const char *name, const char *text);
/* The binary under test (tt_bin) with the arguments: its exit status, and
 * its stdout and stderr malloc'd (NULL pointers to skip). */
int tt_cli_run(char **out, char **err, const char *fmt, ...) TP_PRINTF(3, 4);
/* Fail the test unless hay holds needle (tt_contains) or does not (tt_lacks). */
void tt_contains(const char *hay, const char *needle);
void tt_lacks(const char *hay, const char *needle);
/* How many times needle occurs in hay, without overlaps. */
size_t tt_count_of(const char *hay, const char *needle);

/* cmocka's group setup and teardown of a test file, its folder named prefix. */
#define TT_CLI_GROUP(prefix)                                                      \
	static int setup(void **state)                                            \
	{                                                                         \
		(void)state;                                                      \
		return tt_cli_setup(prefix);                                      \
	}                                                                         \
	static int teardown(void **state)                                         \
	{                                                                         \
		(void)state;                                                      \
		return tt_cli_teardown();                                         \
	}

/* The short names the CLI's test files use, for a file that defines
 * TT_CLI_SHORT_NAMES before including this. */
#ifdef TT_CLI_SHORT_NAMES
#define tmp tt_cli_dir()
#define tpath tt_cli_path
#define write_text tt_cli_write
#define run tt_cli_run
#define contains tt_contains
#define lacks tt_lacks
#define count_of tt_count_of
#endif

#endif
