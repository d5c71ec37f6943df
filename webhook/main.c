/*
 * main.c — trainer-webhook: one binary, several commands.
 */
#include <stdio.h>
#include <string.h>

#include "policy/trainpolicy.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/version.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
} commands[] = {
	{ "serve", tw_cmd_serve,
	  "serve    [--listen ADDR] [--tls-cert F --tls-key F] [--runtimes PATH]... [--kube]" },
	{ "validate", tw_cmd_validate,
	  "validate [--profile kubeflow|strict] [--runtimes PATH]... [--crds PATH]...\n"
	  "                           [-o text|json|github|junit|sarif] [--quiet] PATH..." },
	{ "review", tw_cmd_review,
	  "review   [--profile P] [--runtimes PATH]... [--path ROUTE] [FILE|-]" },
	{ "expand", tw_cmd_expand,
	  "expand   [--profile P] [--runtimes PATH]... [-o yaml|json] [--ssh-key FILE]\n"
	  "                           [--curve-key FILE] TRAINJOB" },
	{ "certs", tw_cmd_certs,
	  "certs    generate --service NAME --namespace NS [--dns NAME]... --out DIR | check ..." },
	{ "completion", tw_cmd_completion, "completion bash|zsh" },
};

static int usage(FILE *f)
{
	fprintf(f, "usage: trainer-webhook COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  trainer-webhook %s\n", commands[i].usage);
	fprintf(f, "  trainer-webhook --version\n");
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
