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

/* What each command is for, one line each (--help). */
static const char *const purposes[][2] = {
	{ "validate", "lint manifests as the API server and the webhook would, before kubectl apply" },
	{ "review", "answer an AdmissionReview as the server would on its route, offline" },
	{ "expand", "preview the JobSet (and companions) a TrainJob and its runtime become" },
	{ "serve", "run the admission webhook over HTTPS, in a cluster or beside one" },
	{ "certs", "generate or check the webhook's serving certificate and CA" },
	{ "completion", "print bash or zsh completion" },
};

/* The synopses come from the flags' table (webhook/cli/flags.c), as the
 * README's and the completion's do. */
static int usage(FILE *f)
{
	fprintf(f, "usage: %s COMMAND [FLAGS]  (%s COMMAND --help for its flags)\n\n", tw_prog(),
		tw_prog());
	tw_flags_synopses(f);
	fputs("\ncommands:\n", f);
	for (size_t i = 0; i < sizeof(purposes) / sizeof(purposes[0]); i++)
		fprintf(f, "  %-11s %s\n", purposes[i][0], purposes[i][1]);
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
	fprintf(stderr, "%s: unknown command \"%s\"\n", tw_prog(), argv[1]);
	return usage(stderr);
}
