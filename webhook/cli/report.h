/*
 * webhook/cli/report.h — rendering `validate`'s report (report.c).
 *
 * The report is JSON: { "objects": [ { file, document, item?, line, kind,
 * namespace, name, verdict, message?, errors: [ { field, rule, detail,
 * message, hint?, line, column } ], warnings: [ { field, rule, message,
 * line, column } ] } ], "unreadable": [ { file, rule, reason, hint?, line,
 * column } ], "summary": { objects, files, allowed, denied, warned, skipped,
 * unreadable } } (findings.h makes the entries; rule is a SARIF rule id).
 */
#ifndef TW_REPORT_H
#define TW_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/trainpolicy.h"

typedef enum tw_report_format {
	TW_REPORT_TEXT,
	TW_REPORT_JSON,
	TW_REPORT_GITHUB,
	TW_REPORT_JUNIT,
	TW_REPORT_SARIF,
} tw_report_format;

typedef struct tw_report_opts {
	tw_report_format format;
	bool quiet;          /* text, json: only the objects with a finding */
	bool summary;        /* text, json: the summary alone, on one line */
	bool color;          /* text: ANSI colours */
	const char *version; /* SARIF's tool version */
} tw_report_opts;

/* An object's record, appended to objects: { file, document, item?, line,
 * kind, namespace, name, verdict, message? } (its errors and warnings are
 * findings.h's to add). NULL when out of memory. */
cJSON *tw_report_object(cJSON *objects, const char *file, const tp_doc *d, const char *verdict,
			const char *message);

/* "text", "json", "github", "junit", "sarif": TP_OK, else TP_EINVAL. */
int tw_report_format_parse(const char *s, tw_report_format *out);
void tw_report_print(const cJSON *report, const tw_report_opts *o, FILE *out);

#endif /* TW_REPORT_H */
