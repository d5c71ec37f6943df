/*
 * cmd_expand.c — `trainer-webhook expand`: preview the JobSet (and its
 * companions) a TrainJob becomes, without a cluster.
 *
 * Exit: 0 expanded, 1 the TrainJob is refused (its errors on stderr),
 * 2 unreadable input or usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "webhook/cli/cli.h"
#include "webhook/cli/cluster_reads.h"
#include "webhook/admission/expand_api.h"
#include "webhook/core/files.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"
#include "webhook/cli/finding_rules.h"
#include "webhook/cli/findings.h"
#include "webhook/cli/report.h"
#include "webhook/cli/served_kinds.h"
#include "webhook/cli/yaml_out.h"

static const char expand_help[] =
	"Prints the JobSet and companion objects (MPI and Flux ConfigMap and Secret,\n"
	"PodGroup) that the TrainJob's runtime makes of it: YAML documents (default) or\n"
	"a v1 List. Runtimes in the TRAINJOB file are used too; with --kubeconfig, a\n"
	"runtime neither it nor --runtimes holds is read from that cluster.\n"
	"--ssh-key (ECDSA P-521 PEM) makes MPI output repeatable; --curve-key (X25519\n"
	"PEM: openssl genpkey -algorithm X25519) makes Flux output repeatable, as a\n"
	"TrainJob with metadata.uid already is (its key is derived from the uid).\n"
	"Every object of the file is checked first, as validate checks it (the same\n"
	"CRDs, --crds, profile and findings): nothing is previewed that would not run.\n"
	"exit status: 0 expanded, 1 something in the file is refused (validate's\n"
	"findings on stderr), 2 unreadable input or usage\n";

struct expand_args {
	tw_cli cli; /* first: tw_cli_help and tw_cli_unknown take it */
	bool json;
	const char *ssh_key;
	const char *curve_key;
	const char *file;
};

static int on_flag(void *ctx, const char *as, const tw_flag *f, const char *v)
{
	struct expand_args *a = ctx;
	int rc = tw_cli_flag(&a->cli, as, f, v);
	if (rc != TW_CLI_OTHER)
		return rc;
	if (!v)
		return tw_cli_usage(&a->cli, "%s needs a value", as);
	if (!strcmp(f->name, "--ssh-key"))
		a->ssh_key = v;
	else if (!strcmp(f->name, "--curve-key"))
		a->curve_key = v;
	else if (!strcmp(v, "json") || !strcmp(v, "yaml"))
		a->json = !strcmp(v, "json");
	else
		return tw_cli_usage(&a->cli, "-o \"%s\": use yaml or json", v);
	return 0;
}

static int on_file(void *ctx, const char *arg)
{
	struct expand_args *a = ctx;
	if (a->file)
		return tw_cli_usage(&a->cli, "one TRAINJOB file at a time");
	a->file = arg;
	return 0;
}

static int parse_args(struct expand_args *a, int argc, char **argv)
{
	tw_argv p = { "expand", a, on_flag, on_file, tw_cli_unknown, tw_cli_help, false };
	int rc = tw_flags_parse(&p, argc, argv);
	if (!rc && !a->file)
		return tw_cli_usage(&a->cli, "name the TRAINJOB file (or -)");
	return rc;
}

/* Loads the file; puts its runtimes and PriorityClasses into the store and returns its one
 * TrainJob (NULL with the reason printed when there is not exactly one). */
static cJSON *load_input(struct expand_args *a, tp_docs **docs)
{
	tp_buf b = TP_BUF_INIT(0);
	tp_load_error lerr = { 0 };
	int rc = tw_read_file(a->file, TW_DEFAULT_MAX_BODY * 8, &b);
	if (rc) {
		fprintf(stderr, "%s: %s\n", a->file, rc == TP_ELIMIT ? "larger than 24 MiB: not read"
						   : tw_read_failure(errno, "expand takes the "
									       "TrainJob's file"));
		tp_buf_free(&b);
		return NULL;
	}
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.positions = true; /* the findings of a refused TrainJob say where */
	rc = tp_load(b.data ? b.data : "", b.len, &lim, docs, &lerr);
	tp_buf_free(&b);
	if (rc) {
		tp_buf msg = TP_BUF_INIT(0);
		tp_load_error_format(&lerr, a->file, &msg);
		const char *hint = tw_finding_load_hint(tw_finding_rule_of_load(lerr.msg, false),
							lerr.msg);
		fprintf(stderr, "%s%s%s\n", msg.data ? msg.data : tp_strerror(rc), hint ? "; " : "",
			hint ? hint : "");
		tp_buf_free(&msg);
		return NULL;
	}
	cJSON *tj = NULL;
	size_t ntj = 0;
	for (size_t i = 0; i < tp_docs_count(*docs); i++) {
		cJSON *obj = tp_docs_at(*docs, i)->obj;
		tp_kind k = tp_kind_of(obj);
		if (k == TP_KIND_TRAINJOB) {
			tj = obj;
			ntj++;
		} else if (tw_cli_keep(&a->cli, obj)) {
			return NULL;
		}
	}
	for (size_t i = 0; !ntj && i < tp_docs_count(*docs); i++) {
		const char *v1 = tw_served_kind_v1_job(tp_docs_at(*docs, i)->obj);
		if (v1)
			fprintf(stderr, "%s: %s\n", a->file, v1);
	}
	if (ntj != 1) {
		fprintf(stderr, "%s: holds %zu TrainJobs: expand takes exactly one\n", a->file, ntj);
		return NULL;
	}
	return tj;
}

/* The owner's uid, which a TrainJob gets from the API server: a preview of
 * one written without it shows no ownerReferences[].uid rather than an
 * empty one that no API server would accept. */
static void drop_empty_uids(cJSON *list)
{
	cJSON *item;
	cJSON_ArrayForEach(item, tp_get_array(list, "items")) {
		cJSON *ref;
		cJSON_ArrayForEach(ref, tp_get_array(item, "metadata.ownerReferences")) {
			const char *uid = tp_get_str(ref, "uid");
			if (uid && !*uid)
				cJSON_DeleteItemFromObjectCaseSensitive(ref, "uid");
		}
	}
}

/* cJSON's layout with two spaces a level, as kubectl's JSON reads: JSON
 * escapes a tab inside a string, so every tab cJSON writes is layout (a
 * level of indentation, or the one after a member's colon). */
static int print_json(const cJSON *list)
{
	char *text = cJSON_Print(list);
	if (!text)
		return TP_ENOMEM;
	bool lead = true;
	for (const char *p = text; *p; p++) {
		if (*p == '\t')
			fputs(lead ? "  " : " ", stdout);
		else
			putchar(*p);
		lead = *p == '\n' || (lead && *p == '\t');
	}
	putchar('\n');
	cJSON_free(text);
	return TP_OK;
}

static int print_list(const struct expand_args *a, cJSON *list)
{
	drop_empty_uids(list);
	if (a->json)
		return print_json(list);
	const cJSON *item;
	bool first = true;
	cJSON_ArrayForEach(item, tp_get_array(list, "items"))
	{
		tp_buf y = TP_BUF_INIT(0);
		int rc = tw_yaml_write(item, &y);
		if (!rc)
			printf("%s%s", first ? "" : "---\n", y.data ? y.data : "");
		tp_buf_free(&y);
		if (rc)
			return rc;
		first = false;
	}
	return TP_OK;
}

static const char give_runtime[] = "give the runtime as well: in the TrainJob's file, or "
				   "--runtimes DIR";

/* One object of the file judged (CREATE) into the report's objects, as
 * validate judges it: *denied when it is refused. Kinds no rule checks
 * (a Namespace, a ConfigMap) are left out. */
static int judge_one(struct expand_args *a, const tp_docs *docs, const tp_doc *d, cJSON *objects,
		     tp_result *res, bool *denied)
{
	tp_result_clear(res);
	tp_store_rdlock(a->cli.store);
	int rc = tp_validate(&a->cli.opt, TP_OP_CREATE, d->obj, NULL, res);
	tp_store_unlock(a->cli.store);
	if (rc == TP_EUNSUPPORTED || tp_result_ok(res))
		return rc == TP_ENOMEM ? rc : TP_OK;
	if (rc)
		return rc;
	*denied = true;
	cJSON *o = tw_report_object(objects, a->file, d, "denied", NULL);
	cJSON *errs = o ? cJSON_AddArrayToObject(o, "errors") : NULL;
	cJSON *warns = o ? cJSON_AddArrayToObject(o, "warnings") : NULL;
	tw_finding_ctx fc = { .docs = docs, .obj = d->obj, .line = d->line, .known = a->cli.known,
			      .give_runtime = give_runtime };
	return errs && warns ? tw_findings_add(&fc, res, errs, warns) : TP_ENOMEM;
}

/* validate's lines on stderr for the objects refused (with their summary). */
static void say_refused(cJSON *report, size_t objects)
{
	cJSON *s = cJSON_AddObjectToObject(report, "summary");
	size_t denied = (size_t)cJSON_GetArraySize(tp_get_array(report, "objects"));
	cJSON_AddNumberToObject(s, "objects", (double)objects);
	cJSON_AddNumberToObject(s, "files", 1);
	cJSON_AddNumberToObject(s, "allowed", (double)(objects - denied));
	cJSON_AddNumberToObject(s, "denied", (double)denied);
	tw_report_opts o = { .format = TW_REPORT_TEXT, .quiet = true };
	tw_report_print(report, &o, stderr);
}

/* Every object of the file judged as validate judges it: TW_EXIT_OK when
 * none is refused, else TW_EXIT_DENIED with the findings on stderr (or
 * TW_EXIT_USAGE when out of memory). tj's own refusal by the expansion
 * (extra, res given) is reported the same way. */
static int judge_file(struct expand_args *a, const tp_docs *docs, const cJSON *tj,
		      const tp_result *extra)
{
	cJSON *report = cJSON_CreateObject();
	cJSON *objects = report ? cJSON_AddArrayToObject(report, "objects") : NULL;
	tp_result *res = NULL;
	bool denied = false;
	int rc = objects && !tp_result_new(&res) ? TP_OK : TP_ENOMEM;
	for (size_t i = 0; !rc && i < tp_docs_count(docs); i++) {
		const tp_doc *d = tp_docs_at(docs, i);
		if (!extra)
			rc = judge_one(a, docs, d, objects, res, &denied);
		else if (d->obj == tj) {
			cJSON *o = tw_report_object(objects, a->file, d, "denied", NULL);
			cJSON *errs = o ? cJSON_AddArrayToObject(o, "errors") : NULL;
			cJSON *warns = o ? cJSON_AddArrayToObject(o, "warnings") : NULL;
			tw_finding_ctx fc = { .docs = docs, .obj = tj, .line = d->line,
					      .known = a->cli.known, .give_runtime = give_runtime };
			rc = errs && warns ? tw_findings_add(&fc, extra, errs, warns) : TP_ENOMEM;
			denied = true;
		}
	}
	if (!rc && denied)
		say_refused(report, tp_docs_count(docs));
	tp_result_free(res);
	cJSON_Delete(report);
	if (rc)
		fprintf(stderr, "trainer-webhook expand: %s\n", tp_strerror(rc));
	return rc ? TW_EXIT_USAGE : denied ? TW_EXIT_DENIED : TW_EXIT_OK;
}

static int run(struct expand_args *a)
{
	char err[512] = "";
	/* the CRDs validate checks with (built in, --crds, --kubeconfig's) */
	if (tw_cli_load_store(&a->cli) || tw_cli_load_crds(&a->cli))
		return TW_EXIT_USAGE;
	tw_sshkey key = { 0 };
	tp_curve_key curve;
	if ((a->ssh_key && tw_sshkey_read(a->ssh_key, &key, err, sizeof(err))) ||
	    (a->curve_key && tw_curvekey_read(a->curve_key, &curve, err, sizeof(err)))) {
		fprintf(stderr, "trainer-webhook expand: %s\n", err);
		tw_sshkey_free(&key);
		return TW_EXIT_USAGE;
	}
	tw_cli_reads *reads = NULL; /* what the inputs do not hold, from --kubeconfig's cluster */
	if (tw_cli_reads_open(&reads, &a->cli)) {
		tw_sshkey_free(&key);
		return TW_EXIT_USAGE;
	}
	tw_given_keys given = { a->ssh_key ? &key : NULL, a->curve_key ? &curve : NULL };
	tp_docs *docs = NULL;
	tp_result *res = NULL;
	cJSON *list = NULL;
	int code = TW_EXIT_USAGE;
	cJSON *tj = load_input(a, &docs);
	if (tj && (code = judge_file(a, docs, NULL, NULL)) != TW_EXIT_OK)
		tj = NULL;
	else if (tj)
		code = TW_EXIT_USAGE;
	if (tj && tp_result_new(&res) == TP_OK) {
		tp_store_rdlock(a->cli.store);
		int v = tw_expand_trainjob(&a->cli.opt, tj, &given, &list, res, err, sizeof(err));
		tp_store_unlock(a->cli.store);
		if (v == TW_EXPAND_OK) {
			code = print_list(a, list) ? TW_EXIT_USAGE : TW_EXIT_OK;
		} else if (v == TW_EXPAND_INVALID) {
			code = judge_file(a, docs, tj, res);
		} else {
			fprintf(stderr, "%s: %s\n", a->file, err);
		}
		for (size_t i = 0; res && i < tp_result_warning_count(res); i++)
			fprintf(stderr, "Warning: %s\n", tp_result_warning_at(res, i));
	}
	cJSON_Delete(list);
	tp_result_free(res);
	tp_docs_free(docs);
	tw_sshkey_free(&key);
	tw_cli_reads_close(reads, &a->cli);
	return code;
}

int tw_cmd_expand(int argc, char **argv)
{
	struct expand_args a = { 0 };
	tw_cli_init(&a.cli, "expand", expand_help);
	int rc = parse_args(&a, argc, argv);
	int code = rc ? (rc < 0 ? TW_EXIT_OK : rc) : run(&a);
	tw_cli_free(&a.cli);
	return code;
}
