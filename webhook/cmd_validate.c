/*
 * cmd_validate.c — `trainer-webhook validate`: the admission decisions as a
 * linter over manifests, for CI and for people, before `kubectl apply`.
 *
 * Every input is read first, so that a TrainJob can name a runtime that sits
 * in another file of the same run; then each object is judged as a CREATE.
 * Exit: 0 all allowed, 1 something denied, 2 unreadable input or usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webhook/cli.h"

#define MAX_INPUT ((size_t)64 * 1024 * 1024) /* one file; tp_load limits each document */

static const char validate_help[] =
	"usage: trainer-webhook validate [--profile kubeflow|strict] [--runtimes PATH]...\n"
	"                                [-o text|json] [--no-schema] PATH...\n"
	"\n"
	"PATH is a file, a folder (searched for *.yaml, *.yml, *.json) or - for stdin.\n"
	"Runtimes among the inputs resolve the TrainJobs' runtimeRef too.\n"
	"exit status: 0 all allowed, 1 something denied, 2 unreadable input or usage\n";

/* One input file and its objects. */
struct input {
	char *file;
	tp_docs *docs;
};

struct run {
	tw_cli cli;
	bool json, color;
	const char **paths;
	size_t npaths;
	struct input *in;
	size_t nin, capin;
	bool unreadable;
	size_t allowed, denied, skipped;
	cJSON *report; /* -o json: the objects array */
};

/* ------------------------------------------------------------ reading */

static int add_input(const char *path, void *ctx)
{
	struct run *r = ctx;
	tp_buf b = TP_BUF_INIT(0);
	int rc = tw_read_file(path, MAX_INPUT, &b);
	if (rc) {
		fprintf(stderr, "%s: %s\n", path,
			rc == TP_ELIMIT ? "larger than 64 MiB: not read" : "cannot read it");
		r->unreadable = true;
		tp_buf_free(&b);
		return 0; /* go on with the other files */
	}
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	rc = tp_load(b.data ? b.data : "", b.len, NULL, &docs, &err);
	tp_buf_free(&b);
	if (rc == TP_OK && tp_docs_count(docs) == 0) {
		fprintf(stderr, "%s: no Kubernetes objects in it (an empty file?)\n", path);
		r->unreadable = true;
		tp_docs_free(docs);
		return 0;
	}
	if (rc) {
		tp_buf msg = TP_BUF_INIT(0);
		tp_load_error_format(&err, path, &msg);
		fprintf(stderr, "%s\n", msg.data ? msg.data : tp_strerror(rc));
		tp_buf_free(&msg);
		r->unreadable = true;
		tp_docs_free(docs);
		return rc == TP_ENOMEM ? rc : 0;
	}
	if (r->nin == r->capin) {
		size_t cap = r->capin ? 2 * r->capin : 16;
		struct input *n = realloc(r->in, cap * sizeof(*n));
		if (!n) {
			tp_docs_free(docs);
			return TP_ENOMEM;
		}
		r->in = n;
		r->capin = cap;
	}
	r->in[r->nin].file = strdup(path);
	r->in[r->nin++].docs = docs;
	return r->in[r->nin - 1].file ? 0 : TP_ENOMEM;
}

/* Runtimes and PriorityClasses among the inputs join the store, so the
 * TrainJobs' rules find them. */
static int store_referenced(struct run *r)
{
	for (size_t i = 0; i < r->nin; i++)
		for (size_t j = 0; j < tp_docs_count(r->in[i].docs); j++)
			if (tw_cli_keep(&r->cli, tp_docs_at(r->in[i].docs, j)->obj))
				return TP_ENOMEM;
	return TP_OK;
}

/* ------------------------------------------------------------ reporting */

static const char *where(const struct input *in, const tp_doc *d, char *buf, size_t n)
{
	if (d->item)
		snprintf(buf, n, "%s:%d.%d", in->file, d->index, d->item);
	else
		snprintf(buf, n, "%s:%d", in->file, d->index);
	return buf;
}

static void who(const cJSON *obj, char *buf, size_t n)
{
	const char *kind = tp_get_str(obj, "kind");
	const char *ns = tp_meta_namespace(obj);
	snprintf(buf, n, "%s/%s%s%s", kind ? kind : "(no kind)", ns, *ns ? "/" : "",
		 tp_meta_name(obj));
}

static void print_text(struct run *r, const char *at, const char *name, const char *verdict,
		       const tp_result *res, const char *errors)
{
	const char *on = "", *off = r->color ? "\033[0m" : "";
	if (r->color)
		on = !strcmp(verdict, "denied") ? "\033[31;1m"
		     : !strcmp(verdict, "ok")	? "\033[32m"
						: "\033[33m";
	printf("%s %s: %s%s%s", at, name, on, verdict, off);
	if (errors)
		printf(": %s", errors);
	for (size_t i = 0; res && i < tp_result_warning_count(res); i++)
		printf("%s%s", i || errors ? "; warning: " : ": ", tp_result_warning_at(res, i));
	putchar('\n');
}

static int add_json(struct run *r, const struct input *in, const tp_doc *d, const char *verdict,
		    const tp_result *res, const char *errors)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(r->report, o))
		return TP_ENOMEM;
	cJSON_AddStringToObject(o, "file", in->file);
	cJSON_AddNumberToObject(o, "document", d->index);
	if (d->item)
		cJSON_AddNumberToObject(o, "item", d->item);
	cJSON_AddNumberToObject(o, "line", d->line);
	const char *kind = tp_get_str(d->obj, "kind");
	cJSON_AddStringToObject(o, "kind", kind ? kind : "");
	cJSON_AddStringToObject(o, "namespace", tp_meta_namespace(d->obj));
	cJSON_AddStringToObject(o, "name", tp_meta_name(d->obj));
	cJSON_AddStringToObject(o, "verdict", verdict);
	if (errors)
		cJSON_AddStringToObject(o, "message", errors);
	cJSON *errs = cJSON_AddArrayToObject(o, "errors");
	for (size_t i = 0; res && i < tp_result_error_count(res); i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		tp_buf one = TP_BUF_INIT(0);
		tp_field_error_format(e, &one);
		cJSON *je = cJSON_CreateObject();
		cJSON_AddItemToArray(errs, je);
		if (e->path)
			cJSON_AddStringToObject(je, "field", e->path);
		cJSON_AddStringToObject(je, "detail", e->detail ? e->detail : "");
		cJSON_AddStringToObject(je, "message", one.data ? one.data : "");
		tp_buf_free(&one);
	}
	cJSON *warns = cJSON_AddArrayToObject(o, "warnings");
	for (size_t i = 0; res && i < tp_result_warning_count(res); i++)
		cJSON_AddItemToArray(warns, cJSON_CreateString(tp_result_warning_at(res, i)));
	return TP_OK;
}

/* ------------------------------------------------------------ judging */

static int judge(struct run *r, const struct input *in, const tp_doc *d, tp_result *res)
{
	char at[4200], name[1024];
	where(in, d, at, sizeof(at));
	who(d->obj, name, sizeof(name));
	tp_result_clear(res);
	tp_store_rdlock(r->cli.store);
	int rc = tp_validate(&r->cli.opt, TP_OP_CREATE, d->obj, NULL, res);
	tp_store_unlock(r->cli.store);
	if (rc == TP_ENOMEM)
		return rc;
	const char *verdict;
	tp_buf msg = TP_BUF_INIT(0);
	if (rc == TP_EUNSUPPORTED) {
		verdict = "skipped";
		r->skipped++;
		tp_buf_addf(&msg, "not a kind trainer-webhook validates");
		tp_result_clear(res);
	} else if (!tp_result_ok(res)) {
		verdict = "denied";
		r->denied++;
		tp_result_format(res, &msg);
	} else {
		verdict = tp_result_warning_count(res) ? "warning" : "ok";
		r->allowed++;
	}
	if (r->json)
		rc = add_json(r, in, d, verdict, res, msg.data);
	else
		print_text(r, at, name, verdict, res, msg.data);
	tp_buf_free(&msg);
	return r->json ? rc : TP_OK;
}

static int judge_all(struct run *r)
{
	tp_result *res;
	if (tp_result_new(&res))
		return TP_ENOMEM;
	int rc = TP_OK;
	for (size_t i = 0; !rc && i < r->nin; i++)
		for (size_t j = 0; !rc && j < tp_docs_count(r->in[i].docs); j++)
			rc = judge(r, &r->in[i], tp_docs_at(r->in[i].docs, j), res);
	tp_result_free(res);
	return rc;
}

/* ------------------------------------------------------------ command */

static int parse_args(struct run *r, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		int took = tw_cli_common(&r->cli, argc, argv, &i);
		if (took < 0)
			return tw_cli_stop(took);
		if (took)
			continue;
		const char *a = argv[i];
		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				return tw_cli_usage(&r->cli, "-o needs text or json");
			if (strcmp(argv[i], "text") && strcmp(argv[i], "json"))
				return tw_cli_usage(&r->cli, "-o \"%s\": use text or json", argv[i]);
			r->json = !strcmp(argv[i], "json");
		} else if (a[0] == '-' && a[1]) {
			return tw_cli_usage(&r->cli, "unknown option \"%s\"", a);
		} else {
			const char **p = realloc(r->paths, (r->npaths + 1) * sizeof(*p));
			if (!p)
				return tw_cli_usage(&r->cli, "out of memory");
			r->paths = p;
			r->paths[r->npaths++] = a;
		}
	}
	if (!r->npaths)
		return tw_cli_usage(&r->cli, "name at least one PATH (a file, a folder or -)");
	return 0;
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->nin; i++) {
		free(r->in[i].file);
		tp_docs_free(r->in[i].docs);
	}
	free(r->in);
	free(r->paths);
	cJSON_Delete(r->report);
	tw_cli_free(&r->cli);
}

static int finish(struct run *r)
{
	if (r->json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddItemToObject(root, "objects", r->report);
		r->report = NULL;
		cJSON_AddNumberToObject(root, "allowed", (double)r->allowed);
		cJSON_AddNumberToObject(root, "denied", (double)r->denied);
		cJSON_AddNumberToObject(root, "skipped", (double)r->skipped);
		cJSON_AddBoolToObject(root, "unreadable", r->unreadable);
		char *text = cJSON_Print(root);
		if (text)
			printf("%s\n", text);
		cJSON_free(text);
		cJSON_Delete(root);
	}
	if (r->unreadable)
		return TW_EXIT_USAGE;
	return r->denied ? TW_EXIT_DENIED : TW_EXIT_OK;
}

int tw_cmd_validate(int argc, char **argv)
{
	struct run r = { 0 };
	tw_cli_init(&r.cli, "validate", validate_help);
	int rc = parse_args(&r, argc, argv);
	if (rc) {
		run_free(&r);
		return rc < 0 ? TW_EXIT_OK : rc;
	}
	r.color = !r.json && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	if (r.json && !(r.report = cJSON_CreateArray()))
		rc = TP_ENOMEM;
	if (!rc && tw_cli_load_store(&r.cli))
		r.unreadable = true;
	if (!rc && tw_cli_load_crds(&r.cli))
		r.unreadable = true;
	for (size_t i = 0; !rc && i < r.npaths; i++)
		if (tw_walk_manifests(r.paths[i], add_input, &r, stderr))
			r.unreadable = true;
	if (!rc)
		rc = store_referenced(&r);
	if (!rc)
		rc = judge_all(&r);
	int code = rc ? TW_EXIT_USAGE : finish(&r);
	if (rc)
		fprintf(stderr, "trainer-webhook validate: %s\n", tp_strerror(rc));
	run_free(&r);
	return code;
}
