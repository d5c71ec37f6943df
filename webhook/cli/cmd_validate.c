/*
 * cmd_validate.c — `trainer-webhook validate`: the admission decisions as a
 * linter over manifests, for CI and for people, before `kubectl apply`.
 *
 * Every input is read first, so that a TrainJob can name a runtime that sits
 * in another file of the same run; then each object is judged as a CREATE.
 * Exit: 0 all allowed, 1 something denied, 2 unreadable input or usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fnmatch.h>

#include "webhook/cli/cli.h"
#include "webhook/cli/cluster_reads.h"
#include "webhook/cli/report.h"
#include "webhook/core/files.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/findings.h"
#include "webhook/cli/flags.h"
#include "webhook/cli/manifests.h"
#include "webhook/cli/served_kinds.h"
#include "webhook/cli/version.h"
#include "webhook/core/keyset.h"

#define MAX_INPUT ((size_t)64 * 1024 * 1024) /* one file; tp_load limits each document */

static const char validate_help[] =
	"PATH is a file, a folder (searched for *.yaml, *.yml, *.json) or - for stdin.\n"
	"Runtimes among the inputs resolve the TrainJobs' runtimeRef too. Objects are\n"
	"checked against their CRDs' schemas and CEL rules as the API server checks\n"
	"them: the CRDs built in (trainer-webhook --version names them), or --crds\n"
	"(files or folders of CustomResourceDefinitions), or --kubeconfig's cluster's.\n"
	"--kubeconfig and/or --context read the CRDs from a cluster instead (any\n"
	"kubeconfig kubectl reads: client certificates, tokens, exec plugins; with\n"
	"--context alone, $KUBECONFIG's files merged, or ~/.kube/config), and what the\n"
	"inputs do not hold: runtimes, Namespaces, PriorityClasses, ServiceAccounts,\n"
	"LimitRanges, ResourceQuotas (a folder of TrainJobs alone is checked against it).\n"
	"exit status: 0 all allowed, 1 something denied, 2 unreadable input, no manifests\n"
	"or usage\n";

/* One input file and its objects. */
struct input {
	char *file;
	tp_docs *docs;
};

struct run {
	tw_cli cli;
	tw_report_opts out;
	const char **excludes;
	size_t nexcludes;
	const char *skip_kinds; /* "Kind1,Kind2" */
	const char **paths;
	size_t npaths;
	struct input *in;
	size_t nin, capin;
	bool unreadable;
	size_t allowed, denied, warned, skipped, files;
	cJSON *report;     /* see report.h */
	cJSON *objects;    /* report.objects */
	cJSON *unread;     /* report.unreadable */
	tw_keyset psa_unknown; /* namespaces of strict TrainJobs with no Namespace given */
	bool no_runtimes;       /* no runtime among the inputs, no --runtimes, no cluster */
	size_t unchecked_refs;  /* TrainJobs whose runtimeRef that left unchecked */
};

/* ------------------------------------------------------------ reading */

/* A file that does not load: a finding of its own (findings.h), counted
 * in the summary and shown in the same stream as the others. */
static int unreadable(struct run *r, const char *path, const tp_load_error *err,
		      const char *reason, bool at_tab)
{
	r->unreadable = true;
	cJSON *u = tw_finding_unreadable(path, err, reason, at_tab);
	if (!u || !cJSON_AddItemToArray(r->unread, u)) {
		cJSON_Delete(u);
		return TP_ENOMEM;
	}
	return TP_OK;
}

/* Whether the load error points at a tab of text (libyaml's "cannot start
 * any token" there). */
static bool error_at_tab(const tp_buf *b, const tp_load_error *err)
{
	const char *p = b->data, *end = p ? p + b->len : NULL;
	if (!p || err->line < 1 || err->column < 1)
		return false;
	for (int l = 1; l < err->line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	return p + err->column - 1 < end && p[err->column - 1] == '\t';
}

static bool excluded(const struct run *r, const char *path)
{
	const char *base = strrchr(path, '/');
	for (size_t i = 0; i < r->nexcludes; i++)
		if (!fnmatch(r->excludes[i], path, 0) || (base && !fnmatch(r->excludes[i], base + 1, 0)))
			return true;
	return false;
}

/* A Helm chart's template is no manifest until rendered. */
static bool helm_template(const tp_buf *b)
{
	return b->data && strstr(b->data, "{{") && strstr(b->data, "}}");
}

/* Nothing but comments, blank lines and document markers: no manifest. */
static bool blank(const tp_buf *b)
{
	const char *p = b->data ? b->data : "", *end = p + b->len;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (n && *p != '#' && (n < 3 || strncmp(p, "---", 3)))
			return false;
		if (memchr(p, '\0', n))
			return false; /* binary: the loader says what is wrong with it */
		p += n + (nl != NULL);
	}
	return true;
}

static int add_input(const char *path, void *ctx)
{
	struct run *r = ctx;
	if (excluded(r, path))
		return 0;
	tp_buf b = TP_BUF_INIT(0);
	int rc = tw_read_file(path, MAX_INPUT, &b);
	if (rc) {
		tp_buf_free(&b);
		return unreadable(r, path, NULL, rc == TP_ELIMIT ? "larger than 64 MiB: not read"
				  : tw_read_failure(errno, "give the folder itself"), false);
	}
	if (blank(&b)) {
		tp_buf_free(&b);
		return 0;
	}
	if (helm_template(&b)) {
		fprintf(stderr, "%s: a Helm template ({{ ... }}): skipped; validate what `helm template` "
				"renders\n", path);
		tp_buf_free(&b);
		return 0;
	}
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.positions = true;
	rc = tp_load(b.data ? b.data : "", b.len, &lim, &docs, &err);
	bool tab = rc && error_at_tab(&b, &err);
	tp_buf_free(&b);
	if (rc == TP_OK && tp_docs_count(docs) == 0) {
		tp_docs_free(docs);
		return 0; /* comments only: no manifest here */
	}
	if (rc) {
		tp_docs_free(docs);
		if (rc == TP_ENOMEM)
			return rc;
		return unreadable(r, path, &err, err.msg[0] ? err.msg : tp_strerror(rc), tab);
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

/* ------------------------------------------------------------ judging */

static bool kind_skipped(const struct run *r, const char *kind)
{
	if (!r->skip_kinds || !kind)
		return false;
	size_t n = strlen(kind);
	for (const char *p = r->skip_kinds; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, kind, n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

static cJSON *record(struct run *r, const struct input *in, const tp_doc *d, const char *verdict,
		     const char *message)
{
	return tw_report_object(r->objects, in->file, d, verdict, message);
}

static int add_findings(struct run *r, cJSON *o, const struct input *in, const tp_doc *d,
			const tp_result *res)
{
	cJSON *errs = cJSON_AddArrayToObject(o, "errors");
	cJSON *warns = cJSON_AddArrayToObject(o, "warnings");
	if (!errs || !warns)
		return TP_ENOMEM;
	tw_finding_ctx fc = { .docs = in->docs, .obj = d->obj, .line = d->line,
			      .known = r->cli.known, .no_runtimes = r->no_runtimes,
			      .give_runtime = "give the runtime as well: its file in the same run, or "
					      "--runtimes DIR (kubectl get clustertrainingruntimes "
					      "-o yaml > runtimes.yaml saves a cluster's)" };
	return tw_findings_add(&fc, res, errs, warns);
}

/* Offline, a TrainJob's namespace has Pod Security labels only when its
 * Namespace is among the inputs: without it (and without --pod-security)
 * the strict profile's Pod Security check has nothing to apply, which
 * finish() says once per namespace rather than on every TrainJob. */
static void note_psa_unknown(struct run *r, const cJSON *obj)
{
	if (r->cli.opt.profile != TP_PROFILE_STRICT || r->cli.opt.pod_security ||
	    r->cli.opt.lookup || tp_kind_of(obj) != TP_KIND_TRAINJOB)
		return;
	const char *ns = tp_meta_namespace(obj);
	ns = *ns ? ns : "default";
	tp_store_rdlock(r->cli.store);
	bool given = tp_store_get(r->cli.store, TP_KIND_NAMESPACE, NULL, ns) != NULL;
	tp_store_unlock(r->cli.store);
	if (!given)
		tw_keyset_append(&r->psa_unknown, ns);
}

static void say_psa_unknown(struct run *r)
{
	tw_keyset_sort(&r->psa_unknown);
	if (!r->psa_unknown.n || r->out.quiet || r->out.summary)
		return;
	fflush(stdout); /* after the report, in a terminal too */
	fprintf(stderr, "trainer-webhook validate: Pod Security not checked for the TrainJobs in "
		"namespace%s", r->psa_unknown.n == 1 ? "" : "s");
	for (size_t i = 0; i < r->psa_unknown.n; i++)
		fprintf(stderr, "%s \"%s\"", i ? "," : "", r->psa_unknown.v[i]);
	fprintf(stderr, ": no Namespace among the inputs; give %s (kubectl get namespace NAME -o "
		"yaml), or --pod-security LEVEL[:VERSION] for every namespace\n",
		r->psa_unknown.n == 1 ? "its manifest" : "their manifests");
}

/* With no source of runtimes at all (a repository of TrainJobs alone, no
 * --runtimes, no cluster), a runtimeRef cannot be checked: it is no
 * finding, finish() says so once, and the rest of the TrainJob is judged.
 * Whether res's errors are such runtimeRefs alone (counted). */
static bool only_runtime_not_found(struct run *r, const tp_result *res)
{
	if (!r->no_runtimes)
		return false;
	size_t n = tp_result_error_count(res), refs = 0;
	for (size_t i = 0; i < n; i++)
		refs += tw_finding_runtime_not_found(tp_result_error_at(res, i));
	r->unchecked_refs += refs > 0;
	return refs == n;
}

static int judge(struct run *r, const struct input *in, const tp_doc *d, tp_result *res)
{
	tp_result_clear(res);
	const char *kind = tp_get_str(d->obj, "kind");
	if (kind_skipped(r, kind) || (kind && !strcmp(kind, "CustomResourceDefinition"))) {
		r->skipped++;
		return record(r, in, d, "skipped", kind_skipped(r, kind) ? "--skip-kinds" :
			      "a CustomResourceDefinition (give it with --crds)") ? TP_OK : TP_ENOMEM;
	}
	tp_store_rdlock(r->cli.store);
	int rc = tp_validate(&r->cli.opt, TP_OP_CREATE, d->obj, NULL, res);
	tp_store_unlock(r->cli.store);
	if (rc == TP_ENOMEM)
		return rc;
	const char *verdict, *message = NULL;
	if (rc == TP_EUNSUPPORTED) {
		tp_result_clear(res);
		rc = TP_OK;
		if (tw_served_kinds_refuse(d->obj, res)) {
			verdict = "denied"; /* a served group: never a silent skip */
			r->denied++;
		} else {
			verdict = "skipped";
			message = tw_served_kind_v1_job(d->obj) ? tw_served_kind_v1_job(d->obj)
			: tw_served_kind_crd_only(d->obj)
				? "checked only by its CRD: drop --crds none (or --no-schema)"
			: tp_kind_of(d->obj) == TP_KIND_NAMESPACE
				? "its pod-security.kubernetes.io labels apply to the TrainJobs in "
				  "it (strict profile)"
				: "not a kind trainer-webhook validates";
			r->skipped++;
		}
	} else if (!tp_result_ok(res) && !only_runtime_not_found(r, res)) {
		verdict = "denied";
		r->denied++;
	} else {
		verdict = tp_result_warning_count(res) ? "warning" : "ok";
		r->allowed++;
		r->warned += tp_result_warning_count(res) > 0;
	}
	note_psa_unknown(r, d->obj);
	cJSON *o = record(r, in, d, verdict, message);
	return o ? add_findings(r, o, in, d, res) : TP_ENOMEM;
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

static int add_str(const char ***v, size_t *n, const char *s)
{
	const char **p = realloc(*v, (*n + 1) * sizeof(*p));
	if (!p)
		return TP_ENOMEM;
	*v = p;
	(*v)[(*n)++] = s;
	return TP_OK;
}

static int on_flag(void *ctx, const char *as, const tw_flag *f, const char *v)
{
	struct run *r = ctx;
	int rc = tw_cli_flag(&r->cli, as, f, v);
	if (rc != TW_CLI_OTHER)
		return rc;
	if (f->arg && !v)
		return tw_cli_usage(&r->cli, "%s needs a value", as);
	if (!strcmp(f->name, "--output")) {
		if (tw_report_format_parse(v, &r->out.format))
			return tw_cli_usage(&r->cli, "-o \"%s\": use text, json, github, junit or sarif",
					    v);
	} else if (!strcmp(f->name, "--exclude")) {
		if (add_str(&r->excludes, &r->nexcludes, v))
			return tw_cli_usage(&r->cli, "out of memory");
	} else if (!strcmp(f->name, "--skip-kinds")) {
		r->skip_kinds = v;
	} else if (!strcmp(f->name, "--quiet")) {
		r->out.quiet = true;
	} else if (!strcmp(f->name, "--summary")) {
		r->out.summary = true;
	}
	return 0;
}

static int on_path(void *ctx, const char *arg)
{
	struct run *r = ctx;
	return add_str(&r->paths, &r->npaths, arg) ? tw_cli_usage(&r->cli, "out of memory") : 0;
}

static int parse_args(struct run *r, int argc, char **argv)
{
	/* r starts with its tw_cli, which tw_cli_help and tw_cli_unknown take */
	tw_argv p = { "validate", r, on_flag, on_path, tw_cli_unknown, tw_cli_help, false };
	int rc = tw_flags_parse(&p, argc, argv);
	if (rc)
		return rc;
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
	free(r->excludes);
	cJSON_Delete(r->report);
	tw_keyset_free(&r->psa_unknown);
	tw_cli_free(&r->cli);
}

static int finish(struct run *r)
{
	cJSON *s = cJSON_AddObjectToObject(r->report, "summary");
	double unread = cJSON_GetArraySize(r->unread);
	cJSON_AddNumberToObject(s, "objects", (double)(r->allowed + r->denied + r->skipped));
	cJSON_AddNumberToObject(s, "files", (double)r->nin + unread);
	cJSON_AddNumberToObject(s, "allowed", (double)r->allowed);
	cJSON_AddNumberToObject(s, "denied", (double)r->denied);
	cJSON_AddNumberToObject(s, "warned", (double)r->warned);
	cJSON_AddNumberToObject(s, "skipped", (double)r->skipped);
	cJSON_AddNumberToObject(s, "unreadable", unread);
	r->out.version = tw_version_string();
	tw_report_print(r->report, &r->out, stdout);
	say_psa_unknown(r);
	if (r->unchecked_refs && !r->out.summary) {
		fflush(stdout);
		fprintf(stderr, "trainer-webhook validate: runtimes not checked: give --runtimes DIR or "
			"--kubeconfig (no runtime among the inputs: the runtimeRef of %zu TrainJob%s "
			"was not checked, the rest was)\n", r->unchecked_refs,
			r->unchecked_refs == 1 ? "" : "s");
	}
	if (!r->nin && !r->unreadable) {
		fprintf(stderr, "trainer-webhook validate: no manifests found\n");
		return TW_EXIT_USAGE;
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
	r.out.color = r.out.format == TW_REPORT_TEXT && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
	if (!(r.report = cJSON_CreateObject()) ||
	    !(r.objects = cJSON_AddArrayToObject(r.report, "objects")) ||
	    !(r.unread = cJSON_AddArrayToObject(r.report, "unreadable")))
		rc = TP_ENOMEM;
	if (!rc && tw_cli_load_store(&r.cli))
		r.unreadable = true;
	/* the cluster's CRDs asked for and not read: judge nothing, as an "ok"
	 * then would be one the cluster's CRDs may refuse */
	bool stop = false;
	if (!rc && tw_cli_load_crds(&r.cli)) {
		r.unreadable = true;
		stop = r.cli.kubeconfig || r.cli.context;
	}
	for (size_t i = 0; !rc && !stop && i < r.npaths; i++)
		if (tw_walk_manifests(r.paths[i], add_input, &r, stderr))
			r.unreadable = true;
	if (!rc && !stop)
		rc = store_referenced(&r);
	r.no_runtimes = !r.cli.nruntimes && !r.cli.kubeconfig && !r.cli.context &&
			!cJSON_GetArraySize(r.cli.known);
	tw_cli_reads *reads = NULL; /* what the inputs do not hold, from --kubeconfig's cluster */
	if (!rc && !stop && tw_cli_reads_open(&reads, &r.cli)) {
		r.unreadable = true;
		stop = true;
	}
	if (!rc && !stop)
		rc = judge_all(&r);
	tw_cli_reads_close(reads, &r.cli);
	int code = rc ? TW_EXIT_USAGE : finish(&r);
	if (rc)
		fprintf(stderr, "trainer-webhook validate: %s\n", tp_strerror(rc));
	run_free(&r);
	return code;
}
