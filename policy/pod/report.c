/*
 * pod/report.c — a Pod finding as a field error where it is shown: at the
 * TrainJob field that caused it or at the runtime's path, with the API
 * server's own type, value and detail first, then which replicated job and
 * container it is about and what to write instead.
 */
#include "policy/pod/pod.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *tp__pod_key(tp_podv *v, const tp_pod_finding *f)
{
	/* \x1f cannot appear in a name, a path or a rendered value unescaped */
	return tp__podv_printf(v, "%d\x1f%d\x1f%s\x1f%s\x1f%s\x1f%s", (int)f->type, (int)f->list,
			       f->container ? f->container : "",
			       f->container && f->rel ? f->rel : f->path, f->value ? f->value : "",
			       f->detail);
}

const char *tp__pod_where(tp_podv *v, const char *job, const tp_pod_finding *f)
{
	if (!f->container)
		return tp__podv_printf(v, "replicated job \"%s\"", job ? job : "");
	return tp__podv_printf(v, "replicated job \"%s\", %s \"%s\"", job ? job : "",
			       f->list == TP_POD_INIT ? "init container" : "container",
			       f->container);
}

int tp__pod_report(tp_result *res, const char *path, const tp_pod_finding *f,
		   const char *context_fmt, ...)
{
	tp_buf b = TP_BUF_INIT(1 << 16);
	int rc = TP_OK;
	if (f->detail && *f->detail)
		rc = tp_buf_addf(&b, "%s: ", f->detail);
	va_list ap;
	va_start(ap, context_fmt);
	if (!rc)
		rc = tp_buf_vaddf(&b, context_fmt, ap);
	va_end(ap);
	if (!rc && f->hint && *f->hint)
		rc = tp_buf_addf(&b, "; %s", f->hint);
	if (!rc)
		rc = tp_result_add(res, f->type, path, f->value, "%s", b.data ? b.data : "");
	tp_buf_free(&b);
	return rc;
}

bool tp__pod_trainjob_fills(const cJSON *job, const tp_pod_finding *f)
{
	const char *step = tp_meta_label(tp_member(job, "template"), TP_LABEL_ANCESTOR);
	return f->type == TP_FIELD_REQUIRED && f->list == TP_POD_CONTAINERS && f->rel &&
	       !strcmp(f->rel, ".image") && f->container &&
	       !strcmp(f->container, TP_CONTAINER_NODE) && step &&
	       !strcmp(step, TP_ANCESTOR_TRAINER);
}
