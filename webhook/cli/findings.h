/*
 * webhook/cli/findings.h — a decision's errors and warnings as the findings
 * the offline commands report (findings.c): each at the field the user wrote
 * (spec.runtimeRef, not upstream's Go-cased spec.RuntimeRef; a rule of the
 * whole object that names a field, at that field), each once (a rule that
 * fails only because a field already reported is missing is no second
 * finding), each with the kind of finding it is (a SARIF rule id) and, where
 * there is one, a hint saying what to write instead.
 */
#ifndef TW_FINDINGS_H
#define TW_FINDINGS_H

#include "policy/trainpolicy.h"

/* A kind of finding: SARIF's rule. */
typedef struct tw_finding_rule {
	const char *id;    /* "unknown-field" */
	const char *level; /* "error" or "warning" */
	const char *name;  /* one line: what it is */
	const char *help;  /* what to do about it */
} tw_finding_rule;

/* Every kind of finding, in a fixed order (SARIF's rules array). */
size_t tw_finding_rule_count(void);
const tw_finding_rule *tw_finding_rule_at(size_t i);
/* The index of id in that order, or -1. */
int tw_finding_rule_index(const char *id);

typedef struct tw_finding_ctx {
	const tp_docs *docs; /* the object's file with positions (NULL: none kept) */
	const cJSON *obj;    /* the object judged */
	int line;            /* its first line */
	const cJSON *known;  /* the runtimes the run knows (tw_cli.known; may be NULL) */
	const char *give_runtime; /* how this command is given a runtime, for the hint */
	bool no_runtimes;    /* the run has no source of runtimes at all: a runtime not
			      * found is no finding (the command says so once) */
} tw_finding_ctx;

/* Whether e is a "runtime not found" (specified ...Runtime must be created
 * before the TrainJob is created). */
bool tw_finding_runtime_not_found(const tp_field_error *e);

/* res's errors appended to errs and its warnings to warns, each an object
 * { field, rule, detail?, message, hint?, line, column } (report.h). TP_OK
 * or TP_ENOMEM. */
int tw_findings_add(const tw_finding_ctx *fc, const tp_result *res, cJSON *errs, cJSON *warns);

/* "<message>; <hint>" of a finding (or its message alone), as a line shows
 * it; into out (appended). */
int tw_finding_line(const cJSON *finding, tp_buf *out);

/* What to write instead for a file that does not load as YAML (rule one
 * of the yaml-* rules, msg the loader's): NULL when there is nothing to say. */
const char *tw_finding_load_hint(const char *rule, const char *msg);

/* A file that does not load, as a finding of one of the yaml-* rules (or
 * "unreadable" when err is NULL): { file, rule, reason, hint?, line, column }.
 * at_tab: the error points at a tab. NULL when out of memory. */
cJSON *tw_finding_unreadable(const char *file, const tp_load_error *err, const char *reason,
			     bool at_tab);

#endif /* TW_FINDINGS_H */
