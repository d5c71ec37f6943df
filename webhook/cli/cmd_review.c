/*
 * cmd_review.c — `trainer-webhook review`: an AdmissionReview in, the answer
 * the server would give on that route out, with no network. The decision
 * is tw_admission_handle's, the very function the server calls.
 *
 * Exit: 0 allowed, 1 denied, 2 bad input or usage (a JSON error on stderr).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "webhook/cli/cli.h"
#include "webhook/cli/cluster_reads.h"
#include "webhook/core/files.h"
#include "webhook/admission/admission.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"

static const char review_help[] =
	"Reads an admission.k8s.io/v1 (or v1beta1) AdmissionReview and writes the\n"
	"AdmissionReview the server answers on ROUTE (default: the route of\n"
	"request.kind). --runtimes loads runtimes, TrainJobs and JobSets as the\n"
	"cluster's state. --strict-action is the server's (serve --help). The CRDs\n"
	"are the built-in ones unless --crds or --kubeconfig says otherwise; with\n"
	"--kubeconfig, what --runtimes does not hold is read from that cluster.\n"
	"exit status: 0 allowed, 1 denied, 2 bad input or usage\n";

struct review_args {
	tw_cli cli;       /* first: tw_cli_help and tw_cli_unknown take it */
	const char *path; /* --path */
	const char *file; /* FILE or "-" */
	bool strict_warn; /* --strict-action warn */
};

static int on_flag(void *ctx, const char *as, const tw_flag *f, const char *v)
{
	struct review_args *a = ctx;
	int rc = tw_cli_flag(&a->cli, as, f, v);
	if (rc != TW_CLI_OTHER)
		return rc;
	if (!strcmp(f->name, "--path")) {
		if (!v)
			return tw_cli_usage(&a->cli, "--path needs a route");
		a->path = v;
	} else if (!strcmp(f->name, "--strict-action")) {
		if (!v || (strcmp(v, "deny") && strcmp(v, "warn")))
			return tw_cli_usage(&a->cli, "--strict-action: use deny or warn");
		a->strict_warn = !strcmp(v, "warn");
	}
	return 0;
}

static int on_file(void *ctx, const char *arg)
{
	struct review_args *a = ctx;
	if (a->file)
		return tw_cli_usage(&a->cli, "one AdmissionReview at a time (got \"%s\" and "
					     "\"%s\")", a->file, arg);
	a->file = arg;
	return 0;
}

static int parse_args(struct review_args *a, int argc, char **argv)
{
	tw_argv p = { "review", a, on_flag, on_file, tw_cli_unknown, tw_cli_help, false };
	int rc = tw_flags_parse(&p, argc, argv);
	if (!rc && !a->file)
		a->file = "-";
	return rc;
}

/* The error the server would send as a 400 body, on stderr. */
static int bad_input(const char *what, const char *file)
{
	char msg[600];
	snprintf(msg, sizeof(msg), "%s: %s", file, what);
	tp_buf b = TP_BUF_INIT(0);
	fputs(tw_json_error(msg, &b) ? msg : b.data, stderr);
	tp_buf_free(&b);
	return TW_EXIT_USAGE;
}

/* A TrainJob denied for a runtime that is not found, when no runtime was
 * given at all: the answer is the server's, and the server would have its
 * runtimes; say how to give them (on stderr, the answer stays as it is). */
static void hint_runtimes(const tw_cli *c, const tw_outcome *oc, const char *answer_text)
{
	if (oc->allowed || c->nruntimes || c->kubeconfig || c->context ||
	    !strstr(answer_text, "must be created before the TrainJob is created"))
		return;
	fprintf(stderr, "trainer-webhook review: no runtimes were given, so the TrainJob's runtime "
		"is not found: give --runtimes DIR (this repository's deploy/runtimes for its "
		"sample; kubectl get clustertrainingruntimes -o yaml > runtimes.yaml saves a "
		"cluster's) or --kubeconfig to read the cluster's\n");
}

static int answer(tw_cli *c, const struct review_args *a, const tw_route *route)
{
	tp_buf body = TP_BUF_INIT(0);
	int rc = tw_read_file(a->file, TW_DEFAULT_MAX_BODY, &body);
	if (rc) {
		tp_buf_free(&body);
		return bad_input(rc == TP_ELIMIT ? "larger than the API server's 3 MiB request limit"
						 : tw_read_failure(errno, "review takes one "
									  "AdmissionReview file"),
				 a->file);
	}
	tp_arena *arena = NULL;
	tp_buf out = TP_BUF_INIT(0);
	tw_outcome oc;
	tw_config cfg = { .opt = c->opt, .store = c->store, .max_body = TW_DEFAULT_MAX_BODY,
			  .strict_warn = a->strict_warn };
	int exit_code = TW_EXIT_USAGE;
	if (tp_arena_new(&arena, 0) ||
	    tw_admission_handle(&cfg, route, body.data ? body.data : "", body.len, arena, &out,
				&oc)) {
		fprintf(stderr, "trainer-webhook review: out of memory\n");
	} else if (oc.http_status != 200) {
		bad_input(oc.error ? oc.error : "not an AdmissionReview", a->file);
	} else {
		fputs(out.data, stdout);
		exit_code = oc.allowed ? TW_EXIT_OK : TW_EXIT_DENIED;
		hint_runtimes(c, &oc, out.data);
	}
	tp_buf_free(&out);
	tp_arena_free(arena);
	tp_buf_free(&body);
	return exit_code;
}

int tw_cmd_review(int argc, char **argv)
{
	struct review_args a = { 0 };
	tw_cli *c = &a.cli;
	tw_cli_init(c, "review", review_help);
	int rc = parse_args(&a, argc, argv);
	if (rc) {
		tw_cli_free(c);
		return rc < 0 ? TW_EXIT_OK : rc;
	}
	const tw_route *route = NULL;
	if (a.path) {
		route = tw_route_find(a.path);
		if (!route || route->type == TW_ROUTE_HEALTH || route->type == TW_ROUTE_EXPAND) {
			tw_cli_free(c);
			return tw_cli_usage(c, "--path \"%s\" is no admission route of this webhook",
					    a.path);
		}
	}
	if (tw_cli_load_store(c)) {
		tw_cli_free(c);
		return bad_input("cannot load --runtimes", "review");
	}
	if (tw_cli_load_crds(c)) {
		tw_cli_free(c);
		return bad_input("cannot load the CRDs (see above)", "review");
	}
	tw_cli_reads *reads = NULL; /* what the inputs do not hold, from --kubeconfig's cluster */
	if (tw_cli_reads_open(&reads, c)) {
		tw_cli_free(c);
		return bad_input("cannot read the cluster (see above)", "review");
	}
	int code = answer(c, &a, route);
	tw_cli_reads_close(reads, c);
	tw_cli_free(c);
	return code;
}
