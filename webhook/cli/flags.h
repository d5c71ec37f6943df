/*
 * webhook/cli/flags.h — every command's flags, in one table (flags.c): the
 * synopsis `--help` and the README print, the shell completion, and which
 * flags each command's parser takes are all read from it, so they cannot
 * drift apart (tests/integration/test_cli_flags.c compares them).
 */
#ifndef TW_FLAGS_H
#define TW_FLAGS_H

#include <stdbool.h>
#include <stdio.h>

typedef struct tw_flag {
	const char *name;    /* "--output" */
	const char *alias;   /* "-o", or NULL */
	const char *arg;     /* what the value is ("PATH"), NULL for a switch */
	const char *choices; /* the values it takes, space-separated ("text json"), or NULL */
	bool many;           /* may be given more than once */
	bool path;           /* its value is a file or folder (completed as one) */
	const char *help;    /* one line */
	bool required;       /* the command needs it (shown without brackets) */
} tw_flag;

typedef struct tw_command_flags {
	const char *command;  /* "validate", "certs generate" */
	const char *operands; /* "PATH...", or "" */
	const tw_flag *flags; /* ends with a { NULL } entry */
} tw_command_flags;

/* The commands, in the order --help lists them; NULL past the last. */
const tw_command_flags *tw_commands_at(size_t i);
/* The command named name ("certs check"), or NULL. */
const tw_command_flags *tw_command_find(const char *name);
/* The flag arg names (name or alias; "--x=v" is looked up as "--x"), or NULL. */
const tw_flag *tw_flag_find(const tw_command_flags *c, const char *arg);

/* "trainer-webhook validate [--profile kubeflow|strict] ... PATH...",
 * wrapped at 96 columns with continuation lines indented under the
 * command's first flag. */
void tw_flags_synopsis(const tw_command_flags *c, FILE *out);
/* Every command's synopsis, then --version's (the README's "Using it"). */
void tw_flags_synopses(FILE *out);
/* The flags one a line with their help ("  --profile kubeflow|strict  ..."). */
void tw_flags_list(const tw_command_flags *c, FILE *out);
/* A command's --help: its synopsis, text (may be NULL), its flags. */
void tw_flags_help(const char *command, const char *text, FILE *out);

/* The arguments of argv (from index 1) that are flags the command does not
 * have: "unknown option" with the nearest flag, on stderr, and false. */
/* The name the binary is run by in what it prints: "trainer-webhook", or
 * $TRAINER_WEBHOOK_PROG ("kubectl trainer", which the kubectl plugin sets). */
const char *tw_prog(void);

bool tw_flags_check(const char *command, int argc, char **argv);

#endif /* TW_FLAGS_H */
