/*
 * clicheck.c — the CLI's integration tests' scratch folder, runs and checks
 * (clicheck.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/clicheck.h"
#include "tests/support/testutil.h"

static char dir[64];

int tt_cli_setup(const char *prefix)
{
	snprintf(dir, sizeof(dir), "/tmp/%s-XXXXXX", prefix);
	return mkdtemp(dir) ? 0 : -1;
}

int tt_cli_teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

const char *tt_cli_dir(void)
{
	return dir;
}

const char *tt_cli_path(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

void tt_cli_write(const char *name, const char *text)
{
	FILE *f = fopen(tt_cli_path(name), "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

int tt_cli_run(char **out, char **err, const char *fmt, ...)
{
	char args[4096], cmd[4400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s", tt_bin(), args);
	return tt_run(cmd, out, err);
}

void tt_contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay ? hay : "(null)");
}

void tt_lacks(const char *hay, const char *needle)
{
	if (hay && strstr(hay, needle))
		fail_msg("\"%s\" found in:\n%s", needle, hay);
}

size_t tt_count_of(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}
