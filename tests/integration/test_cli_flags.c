/*
 * test_cli_flags.c — one source of truth for the flags (webhook/cli/flags.c):
 * docs/usage.md's synopsis is `trainer-webhook --help`'s, line for line; every
 * flag of the table is in its command's --help and in both completion
 * scripts under its command, and its command's parser takes it; a flag the
 * table does not give a command is refused with the nearest one named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"
#include "webhook/cli/flags.h"

static void contains(const char *hay, const char *needle, const char *what)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("%s: \"%s\" not found in:\n%s", what, needle, hay ? hay : "(null)");
}

static char *run(int *rc, const char *fmt, ...) TP_PRINTF(2, 3);
static char *run(int *rc, const char *fmt, ...)
{
	char args[1024], cmd[1300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s %s", tt_bin(), args);
	char *out = NULL, *err = NULL;
	*rc = tt_run(cmd, &out, &err);
	size_t n = strlen(out ? out : "") + strlen(err ? err : "") + 1;
	char *both = malloc(n);
	snprintf(both, n, "%s%s", out ? out : "", err ? err : "");
	free(out);
	free(err);
	return both;
}

/* docs/usage.md's first block under "## Synopsis" is --help's synopsis. */
static void readme_synopsis_is_helps(void **state)
{
	(void)state;
	char *readme = tt_read_file("docs/usage.md", NULL);
	assert_non_null(readme);
	const char *sec = strstr(readme, "## Synopsis\n");
	assert_non_null(sec);
	const char *open = strstr(sec, "```\n"), *close = open ? strstr(open + 4, "```\n") : NULL;
	assert_non_null(close);
	int rc;
	char *help = run(&rc, "--help");
	assert_int_equal(rc, 0);
	const char *from = strstr(help, "\n\n"), *to = from ? strstr(from + 2, "\n\n") : NULL;
	assert_non_null(to);
	size_t hn = (size_t)(to - from - 2) + 1, rn = (size_t)(close - open - 4);
	if (hn != rn || memcmp(from + 2, open + 4, rn))
		fail_msg("docs/usage.md's synopsis differs from trainer-webhook --help's:\n--- docs/usage.md\n"
			 "%.*s--- --help\n%.*s", (int)rn, open + 4, (int)hn, from + 2);
	free(help);
	free(readme);
}

/* A value the parser takes for f. */
static const char *sample(const tw_flag *f, char *buf, size_t n)
{
	if (f->choices) {
		snprintf(buf, n, "%.*s", (int)strcspn(f->choices, " "), f->choices);
		return buf;
	}
	static const char *const by_arg[][2] = {
		{ "N", "8" }, { "SECONDS", "10" }, { "DURATION", "1h" }, { "BYTES", "65536" },
		{ "RFC3339", "2026-01-01T00:00:00Z" }, { "LEVEL[:VERSION]", "restricted:v1.30" },
		{ "SIZE", "64Mi" },
	};
	for (size_t i = 0; i < sizeof(by_arg) / sizeof(by_arg[0]); i++)
		if (!strcmp(f->arg, by_arg[i][0]))
			return by_arg[i][1];
	return "x";
}

static void every_flag_everywhere(void **state)
{
	(void)state;
	int rc;
	char *bash = run(&rc, "completion bash");
	assert_int_equal(rc, 0);
	char *zsh = run(&rc, "completion zsh");
	assert_int_equal(rc, 0);
	for (size_t i = 0; tw_commands_at(i); i++) {
		const tw_command_flags *c = tw_commands_at(i);
		bool certs = !strncmp(c->command, "certs", 5);
		char *help = run(&rc, "%s --help", c->command);
		if (rc != 0)
			fail_msg("%s --help: exit %d\n%s", c->command, rc, help);
		/* the command's part of each script */
		char key[64];
		snprintf(key, sizeof(key), "'%s')", c->command);
		const char *b = strstr(bash, key), *z = strstr(zsh, key);
		if (c->flags->name && (!b || !z))
			fail_msg("%s has no case in the completion scripts", c->command);
		for (const tw_flag *f = c->flags; f->name; f++) {
			contains(help, f->name, c->command);
			char *bend = strstr(b, ";;\n    '"), *zend = strstr(z, ";;\n    '");
			size_t bl = bend ? (size_t)(bend - b) : strlen(b), zl = zend ? (size_t)(zend - z) : strlen(z);
			char want[80];
			snprintf(want, sizeof(want), "%s ", f->name);
			if (!memmem(b, bl, f->name, strlen(f->name)))
				fail_msg("bash completion of %s lacks %s", c->command, f->name);
			if (!memmem(z, zl, f->name, strlen(f->name)))
				fail_msg("zsh completion of %s lacks %s", c->command, f->name);
			/* the parser takes it (certs answers --help before parsing) */
			char val[64];
			char *out = run(&rc, "%s %s %s%s", c->command, f->name, f->arg ? sample(f, val, sizeof(val)) : "",
					certs ? "" : " --help");
			if (strstr(out, "unknown option") || strstr(out, "unknown flag") ||
			    (!certs && rc != 0))
				fail_msg("%s %s: exit %d\n%s", c->command, f->name, rc, out);
			free(out);
		}
		free(help);
	}
	free(bash);
	free(zsh);
}

static void other_flags_refused(void **state)
{
	(void)state;
	int rc;
	char *out = run(&rc, "validate --ssh-key k x.yaml");
	assert_int_equal(rc, 2);
	contains(out, "unknown option \"--ssh-key\"", "validate");
	free(out);
	out = run(&rc, "serve --profle strict");
	assert_int_equal(rc, 2);
	contains(out, "did you mean \"--profile\"?", "serve");
	free(out);
	out = run(&rc, "certs check --out x");
	assert_int_equal(rc, 2);
	contains(out, "unknown option \"--out\"", "certs check");
	free(out);
	out = run(&rc, "completion --help");
	assert_int_equal(rc, 0);
	contains(out, "completion bash|zsh", "completion --help");
	free(out);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readme_synopsis_is_helps),
		cmocka_unit_test(every_flag_everywhere),
		cmocka_unit_test(other_flags_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
