/*
 * cli.h — the options and state every command shares.
 */
#ifndef TW_CLI_H
#define TW_CLI_H

#include <stdarg.h>

#include "webhook/webhook.h"

typedef struct tw_cli {
	const char *cmd;       /* "validate", "review", ... for messages */
	tp_options opt;        /* --profile, --no-schema, --now; opt.store once loaded */
	const char **runtimes; /* --runtimes PATH, in order */
	size_t nruntimes;
	tp_store *store;       /* what --runtimes loaded (and what a command adds) */
} tw_cli;

void tw_cli_init(tw_cli *c, const char *cmd);
void tw_cli_free(tw_cli *c);

/* Try argv[*i] as a shared option. 1: taken (and *i moved past its value),
 * 0: not a shared option, negative: a usage error already printed (its
 * negation is the exit code). */
int tw_cli_common(tw_cli *c, int argc, char **argv, int *i);

/* "trainer-webhook CMD: <what>" on stderr; returns TW_EXIT_USAGE. */
int tw_cli_usage(const tw_cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Create the store and load every --runtimes path into it; problems are
 * reported on stderr. Sets opt.store. */
int tw_cli_load_store(tw_cli *c);

#endif /* TW_CLI_H */
