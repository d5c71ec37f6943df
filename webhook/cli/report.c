/*
 * report.c — `validate`'s findings in the shape a reader wants: text for
 * people (file:line:col), JSON for scripts, GitHub workflow commands, JUnit
 * XML for CI test reports, SARIF 2.1.0 for code-scanning. Every format is
 * rendered from the one JSON report cmd_validate.c builds, so they agree.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/cli/findings.h"
#include "webhook/cli/report.h"
#include "webhook/cli/sarif.h"

static const char *str(const cJSON *o, const char *k)
{
	const char *s = tp_get_str(o, k);
	return s ? s : "";
}

static int num(const cJSON *o, const char *k)
{
	long long v = 0;
	tp_get_int(o, k, &v);
	return (int)v;
}

/* metadata.generateName when it is a non-empty string, else NULL. */
static const char *generate_name(const cJSON *obj)
{
	const char *g = tp_get_str(obj, "metadata.generateName");
	return g && *g ? g : NULL;
}

/* "TrainJob/team-a/mnist"; an object named by the API server from its
 * generateName reads "TrainJob/team-a/mnist-(generated)". */
static void who(const cJSON *o, char *buf, size_t n)
{
	const char *kind = str(o, "kind"), *ns = str(o, "namespace"), *name = str(o, "name");
	const char *gen = *name ? "" : str(o, "generateName");
	snprintf(buf, n, "%s/%s%s%s%s%s", *kind ? kind : "(no kind)", ns, *ns ? "/" : "", name, gen,
		 *gen ? "(generated)" : "");
}

/* ------------------------------------------------------------ text */

/* A finding's message and hint, as one line shows them (static, per call). */
static const char *line_of(const cJSON *f)
{
	static tp_buf b = TP_BUF_INIT(0);
	tp_buf_reset(&b);
	return tw_finding_line(f, &b) || !b.data ? str(f, "message") : b.data;
}

static void summary_line(const cJSON *report, FILE *out)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "summary");
	fprintf(out, "%d object%s in %d file%s: %d allowed, %d denied, %d with warnings, %d skipped",
		num(s, "objects"), num(s, "objects") == 1 ? "" : "s", num(s, "files"),
		num(s, "files") == 1 ? "" : "s", num(s, "allowed"), num(s, "denied"),
		num(s, "warned"), num(s, "skipped"));
	if (num(s, "unreadable"))
		fprintf(out, ", %d unreadable", num(s, "unreadable"));
	fputc('\n', out);
}

static void text(const cJSON *report, const tw_report_opts *o, FILE *out)
{
	const cJSON *objs = tp_get_array(report, "objects"), *obj;
	const char *off = o->color ? "\033[0m" : "", *red = o->color ? "\033[31;1m" : "";
	cJSON_ArrayForEach(obj, objs) {
		char name[1024];
		who(obj, name, sizeof(name));
		const char *file = str(obj, "file"), *verdict = str(obj, "verdict");
		const cJSON *errs = tp_get_array(obj, "errors"), *e;
		const cJSON *warns = tp_get_array(obj, "warnings"), *w;
		bool problem = strcmp(verdict, "ok") && strcmp(verdict, "skipped");
		if (o->quiet && !problem)
			continue;
		const char *on = "";
		if (o->color)
			on = !strcmp(verdict, "denied") ? red : !strcmp(verdict, "ok") ? "\033[32m"
										: "\033[33m";
		if (!cJSON_GetArraySize(errs) && !cJSON_GetArraySize(warns))
			fprintf(out, "%s:%d:%d: %s: %s%s%s%s%s\n", file, num(obj, "line"), 1, name, on, verdict,
				off, tp_get_str(obj, "message") ? ": " : "", str(obj, "message"));
		cJSON_ArrayForEach(e, errs)
			fprintf(out, "%s:%d:%d: %s: %sdenied%s: %s\n", file, num(e, "line"), num(e, "column"),
				name, on, off, line_of(e));
		cJSON_ArrayForEach(w, warns)
			fprintf(out, "%s:%d:%d: %s: %swarning%s: %s\n", file, num(w, "line"), num(w, "column"),
				name, o->color ? "\033[33m" : "", off, line_of(w));
	}
	cJSON_ArrayForEach(obj, tp_get_array(report, "unreadable"))
		fprintf(out, "%s:%d:%d: %sunreadable%s: %s\n", str(obj, "file"), num(obj, "line"),
			num(obj, "column"), red, off, line_of(obj));
	summary_line(report, out);
}

/* ------------------------------------------------------------ GitHub */

/* Workflow command escaping: data escapes % CR LF; properties also : and ,. */
static void gh_escape(FILE *out, const char *s, bool property)
{
	for (; *s; s++) {
		if (*s == '%')
			fputs("%25", out);
		else if (*s == '\r')
			fputs("%0D", out);
		else if (*s == '\n')
			fputs("%0A", out);
		else if (property && *s == ':')
			fputs("%3A", out);
		else if (property && *s == ',')
			fputs("%2C", out);
		else
			fputc(*s, out);
	}
}

static void gh_line(FILE *out, const char *level, const char *file, const cJSON *at,
		    const char *title, const char *msg)
{
	fprintf(out, "::%s file=", level);
	gh_escape(out, file, true);
	fprintf(out, ",line=%d,col=%d,title=", num(at, "line"), num(at, "column") ? num(at, "column") : 1);
	gh_escape(out, title, true);
	fputs("::", out);
	gh_escape(out, msg, false);
	fputc('\n', out);
}

static void github(const cJSON *report, FILE *out)
{
	const cJSON *obj;
	cJSON_ArrayForEach(obj, tp_get_array(report, "objects")) {
		char name[1024];
		who(obj, name, sizeof(name));
		const cJSON *e;
		cJSON_ArrayForEach(e, tp_get_array(obj, "errors"))
			gh_line(out, "error", str(obj, "file"), e, name, line_of(e));
		cJSON_ArrayForEach(e, tp_get_array(obj, "warnings"))
			gh_line(out, "warning", str(obj, "file"), e, name, line_of(e));
	}
	const cJSON *u;
	cJSON_ArrayForEach(u, tp_get_array(report, "unreadable"))
		gh_line(out, "error", str(u, "file"), u, "unreadable", line_of(u));
}

/* ------------------------------------------------------------ JUnit */

static void xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c < 0x20 && c != '\n' && c != '\t')
			fprintf(out, "&#x%x;", c == '\r' ? c : 0xfffd);
		else
			fputc(c, out);
	}
}

static void junit(const cJSON *report, FILE *out)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(report, "summary"), *obj;
	/* a test case per object and per file that does not load, as below */
	int unread = cJSON_GetArraySize(tp_get_array(report, "unreadable"));
	int tests = cJSON_GetArraySize(tp_get_array(report, "objects")) + unread;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<testsuites name=\"trainer-webhook validate\" tests=\"%d\" failures=\"%d\" "
		     "errors=\"%d\">\n"
		     "  <testsuite name=\"trainer-webhook validate\" tests=\"%d\" failures=\"%d\" "
		     "errors=\"%d\" skipped=\"%d\">\n",
		tests, num(s, "denied"), unread, tests, num(s, "denied"), unread, num(s, "skipped"));
	cJSON_ArrayForEach(obj, tp_get_array(report, "objects")) {
		char name[1024];
		who(obj, name, sizeof(name));
		fputs("    <testcase classname=\"", out);
		xml(out, str(obj, "file"));
		fputs("\" name=\"", out);
		xml(out, name);
		fprintf(out, " (line %d)\">\n", num(obj, "line"));
		const cJSON *e, *errs = tp_get_array(obj, "errors");
		if (!strcmp(str(obj, "verdict"), "skipped")) {
			fputs("      <skipped message=\"", out);
			xml(out, str(obj, "message"));
			fputs("\"/>\n", out);
		} else if (cJSON_GetArraySize(errs)) {
			fprintf(out, "      <failure type=\"denied\" message=\"%d error%s\">", cJSON_GetArraySize(errs),
				cJSON_GetArraySize(errs) == 1 ? "" : "s");
			cJSON_ArrayForEach(e, errs) {
				fprintf(out, "%s:%d:%d: ", str(obj, "file"), num(e, "line"), num(e, "column"));
				xml(out, line_of(e));
				fputc('\n', out);
			}
			fputs("</failure>\n", out);
		}
		if (cJSON_GetArraySize(tp_get_array(obj, "warnings"))) {
			fputs("      <system-out>", out);
			cJSON_ArrayForEach(e, tp_get_array(obj, "warnings")) {
				fputs("warning: ", out);
				xml(out, line_of(e));
				fputc('\n', out);
			}
			fputs("</system-out>\n", out);
		}
		fputs("    </testcase>\n", out);
	}
	cJSON_ArrayForEach(obj, tp_get_array(report, "unreadable")) {
		fputs("    <testcase classname=\"", out);
		xml(out, str(obj, "file"));
		fprintf(out, "\" name=\"read (line %d)\">\n      <error type=\"%s\" message=\"",
			num(obj, "line"), str(obj, "rule"));
		xml(out, line_of(obj));
		fputs("\">", out);
		xml(out, str(obj, "file"));
		fprintf(out, ":%d:%d: ", num(obj, "line"), num(obj, "column"));
		xml(out, line_of(obj));
		fputs("</error>\n    </testcase>\n", out);
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
}

cJSON *tw_report_object(cJSON *objects, const char *file, const tp_doc *d, const char *verdict,
			const char *message)
{
	cJSON *o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToArray(objects, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	const char *kind = tp_get_str(d->obj, "kind");
	bool ok = cJSON_AddStringToObject(o, "file", file) &&
		  cJSON_AddNumberToObject(o, "document", d->index) &&
		  (!d->item || cJSON_AddNumberToObject(o, "item", d->item)) &&
		  cJSON_AddNumberToObject(o, "line", d->line) &&
		  cJSON_AddStringToObject(o, "kind", kind ? kind : "") &&
		  cJSON_AddStringToObject(o, "namespace", tp_meta_namespace(d->obj)) &&
		  cJSON_AddStringToObject(o, "name", tp_meta_name(d->obj)) &&
		  (*tp_meta_name(d->obj) || !generate_name(d->obj) ||
		   cJSON_AddStringToObject(o, "generateName", generate_name(d->obj))) &&
		  cJSON_AddStringToObject(o, "verdict", verdict) &&
		  (!message || cJSON_AddStringToObject(o, "message", message));
	return ok ? o : NULL;
}

int tw_report_format_parse(const char *s, tw_report_format *out)
{
	static const char *const names[] = { "text", "json", "github", "junit", "sarif" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (!strcmp(s, names[i])) {
			*out = (tw_report_format)i;
			return TP_OK;
		}
	return TP_EINVAL;
}

/* JSON: the report, or (--quiet) only the objects with a finding, or
 * (--summary) only the summary, on one line. */
static void json(const cJSON *report, const tw_report_opts *o, FILE *out)
{
	cJSON *copy = NULL;
	const cJSON *shown = report;
	if (o->summary) {
		copy = cJSON_CreateObject();
		cJSON_AddItemToObject(copy, "summary", cJSON_Duplicate(
			cJSON_GetObjectItemCaseSensitive(report, "summary"), 1));
		shown = copy;
	} else if (o->quiet && (copy = cJSON_Duplicate(report, 1))) {
		cJSON *objs = cJSON_GetObjectItemCaseSensitive(copy, "objects"), *obj = objs ? objs->child : NULL;
		while (obj) {
			cJSON *next = obj->next;
			const char *v = str(obj, "verdict");
			if (!strcmp(v, "ok") || !strcmp(v, "skipped"))
				cJSON_Delete(cJSON_DetachItemViaPointer(objs, obj));
			obj = next;
		}
		shown = copy;
	}
	char *t = o->summary ? cJSON_PrintUnformatted(shown) : cJSON_Print(shown);
	if (t)
		fprintf(out, "%s\n", t);
	cJSON_free(t);
	cJSON_Delete(copy);
}

void tw_report_print(const cJSON *report, const tw_report_opts *o, FILE *out)
{
	if (o->summary && o->format == TW_REPORT_TEXT) {
		summary_line(report, out);
		return;
	}
	switch (o->format) {
	case TW_REPORT_TEXT: text(report, o, out); break;
	case TW_REPORT_GITHUB: github(report, out); break;
	case TW_REPORT_JUNIT: junit(report, out); break;
	case TW_REPORT_SARIF: tw_sarif_print(report, o->version, out); break;
	case TW_REPORT_JSON: json(report, o, out); break;
	}
}
