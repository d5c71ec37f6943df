/*
 * webhook/cli/cli.h — the options and state every command shares.
 */
#ifndef TW_CLI_H
#define TW_CLI_H

#include <stdarg.h>

#include "policy/trainpolicy.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"

typedef struct tw_cli {
	const char *cmd;       /* "validate", "review", ... for messages */
	const char *help;      /* -h / --help: what the command does (flags.h adds the
				* synopsis and the flags) */
	tp_options opt;        /* --profile, --no-schema, --now, --pod-security,
				* --kubernetes-version; opt.store once loaded */
	const char **runtimes; /* --runtimes PATH, in order */
	size_t nruntimes;
	tp_store *store;       /* what --runtimes loaded (and what a command adds) */
	cJSON *known;          /* the runtimes in it, [{ kind, namespace, name }], for the
				* near names a finding suggests */
	const char **crd_paths; /* --crds PATH, in order */
	size_t ncrd_paths;
	tp_crds *crds;         /* what they hold, compiled; opt.crds */
	const char *kubeconfig; /* --kubeconfig: the CRDs from that cluster (no --crds) */
	bool crds_none;        /* --crds none: no CRD at all, the built-in checks only */
	bool crds_elsewhere;   /* the command takes its CRDs elsewhere (serve --kube: the
				* cluster's): no built-in CRDs either */
	const char *context;    /* --context: of --kubeconfig, or of $KUBECONFIG's files */
} tw_cli;

void tw_cli_init(tw_cli *c, const char *cmd, const char *help);
void tw_cli_free(tw_cli *c);

/* --help's return: the command prints its help and exits 0. */
enum { TW_CLI_HELP = -1 };
/* tw_cli_flag's return for a flag that is the command's own (not an exit
 * status: the command goes on to give the flag its meaning). */
enum { TW_CLI_OTHER = 3 };

/* A shared flag (tw_argv's flag callback, as written as, value v): 0 when
 * taken, TW_CLI_OTHER when it is not a shared one, TW_EXIT_USAGE after
 * printing what is wrong (v NULL: "--profile needs a value"). */
int tw_cli_flag(tw_cli *c, const char *as, const tw_flag *f, const char *v);
/* tw_argv's help callback (cli: the tw_cli): its --help, TW_CLI_HELP. */
int tw_cli_help(void *cli);
/* tw_argv's unknown callback (cli: the tw_cli): "unknown option", TW_EXIT_USAGE. */
int tw_cli_unknown(void *cli, const char *arg);

/* "trainer-webhook CMD: <what>" on stderr; returns TW_EXIT_USAGE. */
int tw_cli_usage(const tw_cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add a --runtimes path (borrowed: it must outlive c). */
int tw_cli_add_runtimes(tw_cli *c, const char *path);

/* Create the store and load every --runtimes path into it; problems are
 * reported on stderr. Sets opt.store. */
int tw_cli_load_store(tw_cli *c);

/* Compile the CRDs of every --crds path, or read them from the cluster of
 * --kubeconfig and/or --context, else the built-in ones (builtin_crds.h) unless
 * --crds none, --no-schema or crds_elsewhere (problems on stderr); sets
 * opt.crds. TP_EUNAVAILABLE when the cluster named cannot be read (its
 * kubeconfig, the API server, a CRD it does not give): the caller judges
 * nothing then, as the checks asked for are not there. */
int tw_cli_load_crds(tw_cli *c);

/* An input object the rules of others look up (a runtime for TrainJobs, a
 * PriorityClass for Volcano's rule, a TrainJob's runtime snapshot ConfigMap
 * for its expansion and updates, a Namespace for its Pod Security labels) joins the store as a copy, so that a
 * folder holding all of them checks as a cluster would. Others are left
 * alone. TP_OK or TP_ENOMEM. */
int tw_cli_keep(tw_cli *c, const cJSON *obj);

#endif /* TW_CLI_H */
