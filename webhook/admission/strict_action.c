/*
 * strict_action.c — `--strict-action warn`: roll the strict rules out
 * without blocking anyone (Gatekeeper's enforcementAction: warn, Kyverno's
 * Audit).
 *
 * The strict profile's errors are split by what the kubeflow profile says
 * about the same object: an error whose field and type upstream reports too
 * stays an error (with the strict wording and its hint), one only the strict
 * profile reports becomes a warning "strict: <error>". The answer then
 * denies exactly what upstream would deny. The strict violations also go
 * into one audit annotation, so an audit log shows what a later switch to
 * --strict-action deny would refuse.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/admission/decide.h"

#define ANNOTATION "strict-violations"
#define ANNOTATION_MAX 2000

static bool same_field(const tp_field_error *a, const tp_field_error *b)
{
	if (a->type != b->type)
		return false;
	if (!a->path || !b->path)
		return a->path == b->path; /* plain errors match plain errors */
	return !strcmp(a->path, b->path);
}

/* Does upstream (the kubeflow profile's result) report this error too? */
static bool upstream_reports(const tp_result *kf, const tp_field_error *e)
{
	for (size_t i = 0; i < tp_result_error_count(kf); i++)
		if (same_field(tp_result_error_at(kf, i), e))
			return true;
	return false;
}

static int copy_error(tp_result *to, const tp_field_error *e)
{
	return tp_result_add(to, e->type, e->path, e->value, "%s", e->detail ? e->detail : "");
}

/* One violation as a warning line and into the annotation's text. */
static int demote(tp_result *to, const tp_field_error *e, tp_buf *note)
{
	tp_buf one = TP_BUF_INIT(0);
	int rc = tp_field_error_format(e, &one);
	if (!rc)
		rc = tp_result_warn(to, "strict: %s", one.data ? one.data : "");
	if (!rc && note->len < ANNOTATION_MAX)
		rc = tp_buf_addf(note, "%s%.*s", note->len ? "; " : "",
				 (int)(ANNOTATION_MAX - note->len), one.data ? one.data : "");
	tp_buf_free(&one);
	return rc;
}

static int split(const tp_result *strict, const tp_result *kf, tp_result *out, size_t *warned)
{
	int rc = TP_OK;
	tp_buf note = TP_BUF_INIT(0);
	for (size_t i = 0; !rc && i < tp_result_warning_count(strict); i++)
		rc = tp_result_warn(out, "%s", tp_result_warning_at(strict, i));
	for (size_t i = 0; !rc && i < tp_result_error_count(strict); i++) {
		const tp_field_error *e = tp_result_error_at(strict, i);
		if (upstream_reports(kf, e)) {
			rc = copy_error(out, e);
		} else {
			rc = demote(out, e, &note);
			++*warned;
		}
	}
	for (size_t i = 0; !rc && i < tp_result_annotation_count(strict); i++) {
		const char *k, *v;
		tp_result_annotation_at(strict, i, &k, &v);
		rc = tp_result_annotate(out, k, v);
	}
	if (!rc && note.len)
		rc = tp_result_annotate(out, ANNOTATION, note.data);
	tp_buf_free(&note);
	return rc;
}

int tw_strict_as_warnings(const tp_options *opt, const tw_review *rv, tp_result **res,
			  size_t *warned)
{
	tp_options kopt = *opt;
	kopt.profile = TP_PROFILE_KUBEFLOW;
	tp_result *kf = NULL, *out = NULL;
	int rc = tp_result_new(&kf);
	if (!rc)
		rc = tp_result_new(&out);
	if (!rc)
		rc = tp_validate(&kopt, rv->op, rv->object, rv->old_object, kf);
	if (rc == TP_EUNSUPPORTED)
		rc = TP_OK; /* upstream checks nothing of this kind: all is strict's */
	*warned = 0;
	if (!rc)
		rc = split(*res, kf, out, warned);
	if (!rc && tp_result_unavailable(kf))
		tp_result_set_unavailable(out);
	tp_result_free(kf);
	if (rc) {
		tp_result_free(out);
		return rc;
	}
	tp_result_free(*res);
	*res = out;
	return TP_OK;
}
