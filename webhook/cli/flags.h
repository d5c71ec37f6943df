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
/* Every command's synopsis, then --version's (docs/usage.md's "Synopsis"). */
void tw_flags_synopses(FILE *out);
/* The flags one a line with their help ("  --profile kubeflow|strict  ..."). */
void tw_flags_list(const tw_command_flags *c, FILE *out);
/* A command's --help: its synopsis, text (may be NULL), its flags. */
void tw_flags_help(const char *command, const char *text, FILE *out);

/* The name the binary is run by in what it prints: "trainer-webhook", or
 * $TRAINER_WEBHOOK_PROG ("kubectl trainer", which the kubectl plugin sets). */
const char *tw_prog(void);

/* How a command reads its argv with the table: what each kind of argument
 * means to it. Every callback returns 0 to go on, or what the parse returns
 * (an exit status, or -1 after --help). */
typedef struct tw_argv {
	const char *command; /* its row of the table: "validate", "certs check" */
	void *ctx;           /* the command's, passed back to every callback */
	/* A flag of the table, as written (as: "-o" or "--output"); v its value,
	 * NULL for a switch or for a value flag that ends argv. */
	int (*flag)(void *ctx, const char *as, const tw_flag *f, const char *v);
	/* An argument that is not a flag ("-" is one). */
	int (*operand)(void *ctx, const char *arg);
	/* A dash argument that is no flag of the table as written ("--", a
	 * "--flag=value" unless equals, a switch given a value). */
	int (*unknown)(void *ctx, const char *arg);
	/* -h or --help, where it stands (NULL: the command looked first). */
	int (*help)(void *ctx);
	bool equals; /* "--flag=value" gives the flag that value */
} tw_argv;

/* Read argv (from index 1). A command with flags first refuses, for the
 * whole of argv, the dash arguments that name none of them ("unknown
 * option" with the nearest flag, on stderr, and TW_EXIT_USAGE) so that the
 * nearest name is said before any value is judged; then each argument goes
 * to its callback in order. 0, or the first callback's nonzero. */
int tw_flags_parse(const tw_argv *p, int argc, char **argv);
/* Whether -h or --help is anywhere in argv (from index 1): the commands
 * that answer it before reading the rest (certs, completion). */
bool tw_flags_help_asked(int argc, char **argv);

#endif /* TW_FLAGS_H */
