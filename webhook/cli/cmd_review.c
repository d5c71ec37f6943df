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
	const char *path; /* --path */
	const char *file; /* FILE or "-" */
	bool strict_warn; /* --strict-action warn */
};

static int parse_args(tw_cli *c, struct review_args *a, int argc, char **argv)
{
	if (!tw_flags_check("review", argc, argv))
		return TW_EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		int took = tw_cli_common(c, argc, argv, &i);
		if (took < 0)
			return tw_cli_stop(took);
		if (took)
			continue;
		if (!strcmp(argv[i], "--path")) {
			if (++i >= argc)
				return tw_cli_usage(c, "--path needs a route");
			a->path = argv[i];
		} else if (!strcmp(argv[i], "--strict-action")) {
			if (++i >= argc || (strcmp(argv[i], "deny") && strcmp(argv[i], "warn")))
				return tw_cli_usage(c, "--strict-action: use deny or warn");
			a->strict_warn = !strcmp(argv[i], "warn");
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return tw_cli_usage(c, "unknown option \"%s\"", argv[i]);
		} else if (a->file) {
			return tw_cli_usage(c, "one AdmissionReview at a time (got \"%s\" and "
					       "\"%s\")", a->file, argv[i]);
		} else {
			a->file = argv[i];
		}
	}
	if (!a->file)
		a->file = "-";
	return 0;
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
	tw_cli c;
	struct review_args a = { 0 };
	tw_cli_init(&c, "review", review_help);
	int rc = parse_args(&c, &a, argc, argv);
	if (rc) {
		tw_cli_free(&c);
		return rc < 0 ? TW_EXIT_OK : rc;
	}
	const tw_route *route = NULL;
	if (a.path) {
		route = tw_route_find(a.path);
		if (!route || route->type == TW_ROUTE_HEALTH || route->type == TW_ROUTE_EXPAND) {
			tw_cli_free(&c);
			return tw_cli_usage(&c, "--path \"%s\" is no admission route of this webhook",
					    a.path);
		}
	}
	if (tw_cli_load_store(&c)) {
		tw_cli_free(&c);
		return bad_input("cannot load --runtimes", "review");
	}
	if (tw_cli_load_crds(&c)) {
		tw_cli_free(&c);
		return bad_input("cannot load the CRDs (see above)", "review");
	}
	tw_cli_reads *reads = NULL; /* what the inputs do not hold, from --kubeconfig's cluster */
	if (tw_cli_reads_open(&reads, &c)) {
		tw_cli_free(&c);
		return bad_input("cannot read the cluster (see above)", "review");
	}
	int code = answer(&c, &a, route);
	tw_cli_reads_close(reads, &c);
	tw_cli_free(&c);
	return code;
}
