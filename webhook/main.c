/*
 * main.c — trainer-webhook: one binary, several commands.
 */
#include <stdio.h>
#include <string.h>

#include "policy/trainpolicy.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"
#include "webhook/cli/version.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "validate", tw_cmd_validate }, { "review", tw_cmd_review },
	{ "expand", tw_cmd_expand },     { "serve", tw_cmd_serve },
	{ "certs", tw_cmd_certs },       { "completion", tw_cmd_completion },
};

/* The synopses come from the flags' table (webhook/cli/flags.c), as the
 * README's and the completion's do. */
static int usage(FILE *f)
{
	fprintf(f, "usage: trainer-webhook COMMAND [FLAGS]  (trainer-webhook COMMAND --help for "
		   "its flags)\n\n");
	tw_flags_synopses(f);
	fprintf(f, "\nexit status: 0 allowed, 1 denied, 2 bad input or usage\n");
	return TW_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	tp_json_init();
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return TW_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		tw_version_print(stdout);
		return TW_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "trainer-webhook: unknown command \"%s\"\n", argv[1]);
	return usage(stderr);
}
