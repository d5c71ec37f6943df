/*
 * webhook/admission/admission.h — one AdmissionReview in, its answer out,
 * exactly as the server and `review` both decide it (admission.c): the
 * configuration a decision runs with, what it decided, the JSON bodies every
 * answer and error is made of.
 */
#ifndef TW_ADMISSION_H
#define TW_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/trainpolicy.h"
#include "webhook/admission/routes.h"

#define TW_DEFAULT_MAX_BODY ((size_t)3 * 1024 * 1024) /* the API server's own limit */

typedef struct tw_config {
	tp_options opt;          /* profile, no_schema, now; opt.store is set per request,
				  * opt.lookup too in the server (its resolver) */
	tp_store *store;         /* cluster state (runtimes, TrainJobs, JobSets) */
	size_t max_body;         /* bytes; TW_DEFAULT_MAX_BODY when 0 */
	bool json_only;          /* the body must be JSON (the server: sent as application/json) */
	bool strict_warn;        /* --strict-action warn: what only the strict profile
				  * denies is allowed with a warning per violation */
} tw_config;

/* What one admission call decided, for logs and metrics. Strings live in the
 * request arena. */
typedef struct tw_outcome {
	int http_status;         /* 200, or 400 for a body that is not an AdmissionReview */
	bool allowed;
	bool patched;
	size_t warnings;
	const char *uid, *kind, *namespace_, *name, *operation;
	const char *error;       /* for non-200: the JSON error's text */
	const tw_route *route;   /* the route that answered (review picks it by kind) */
	bool unavailable;        /* an error answer (status 500): a lookup went unanswered */
	size_t strict_warned;    /* strict violations answered as warnings */
	/* For the request log and the denials metric (outcome.c). */
	const char *user;        /* request.userInfo.username */
	bool dry_run;            /* request.dryRun */
	const char *reason;      /* not allowed: the first finding, as the answer words it */
	const char *reason_class;/* not allowed: its kind, one of a fixed few
				  * (TW_REASON_CLASSES), never free text */
} tw_outcome;

/* The reason classes of a refusal (outcome.c): a field error's type
 * ("invalid", "required", ...), or "request" for a review that cannot be
 * decided as sent (a kind on the wrong route, an object that is not one). */
#define TW_REASON_CLASSES 11
extern const char *const tw_reason_classes[TW_REASON_CLASSES];

/* Append root as one line of compact JSON, and {"error": msg} likewise: the
 * bodies every answer and HTTP error is made of. In the current arena, if any. */
int tw_json_put(const cJSON *root, tp_buf *out);
int tw_json_error(const char *msg, tp_buf *out);

/* A request body (JSON or YAML) into one object, within --max-body; want
 * names the one object expected ("AdmissionReview") in the error. err says
 * what is wrong on failure (TP_EPARSE, TP_ELIMIT, TP_ENOMEM). */
int tw_body_parse(const tw_config *cfg, const char *body, size_t len, const char *want,
		  cJSON **out, char *err, size_t errlen);

/* Answer one AdmissionReview body on route (NULL: the route request.kind
 * belongs on, validating first), exactly as the server does:
 * writes the response body (an AdmissionReview, or {"error": "..."} with a
 * 4xx status) to out. Holds the store's read lock while it decides. All
 * per-request memory comes from arena. Returns 0, or TP_ENOMEM. */
int tw_admission_handle(const tw_config *cfg, const tw_route *route, const char *body,
			size_t len, tp_arena *arena, tp_buf *out, tw_outcome *oc);

#endif /* TW_ADMISSION_H */
