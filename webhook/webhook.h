/*
 * webhook.h — what the trainer-webhook binary's modules share.
 * The binary links policy/ (libtrainpolicy) and certs/; nothing here is public API.
 */
#ifndef TW_WEBHOOK_H
#define TW_WEBHOOK_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/trainpolicy.h"

/* Exit codes of every command (DESIGN.md): allowed, denied, bad input/usage. */
enum { TW_EXIT_OK = 0, TW_EXIT_DENIED = 1, TW_EXIT_USAGE = 2 };

#define TW_DEFAULT_MAX_BODY ((size_t)3 * 1024 * 1024) /* the API server's own limit */

/* --------------------------------------------------------------- commands */

int tw_cmd_validate(int argc, char **argv);
int tw_cmd_review(int argc, char **argv);
int tw_cmd_expand(int argc, char **argv);
int tw_cmd_serve(int argc, char **argv);
int tw_cmd_certs(int argc, char **argv);
int tw_cmd_completion(int argc, char **argv);

/* ------------------------------------------------------------ manifests */

/* Load every object found at path (a file, a folder searched recursively for
 * *.yaml, *.yml and *.json, or "-" for standard input) into store. Problems
 * are reported on errf as "<file>: document N, line L: <what>".
 * Returns 0, or TP_EIO / TP_EPARSE / TP_ELIMIT on the first unreadable input. */
int tw_store_load_path(tp_store *store, const char *path, FILE *errf);

/* Read a whole file ("-": stdin) into buf, at most max bytes (TP_ELIMIT past it). */
int tw_read_file(const char *path, size_t max, tp_buf *buf);

/* Write obj as one YAML document (block style; strings that would read back
 * as another type are quoted, multi-line strings use the literal style). */
int tw_yaml_write(const cJSON *obj, tp_buf *out);

/* ----------------------------------------------------------------- routes */

typedef enum tw_route_type {
	TW_ROUTE_VALIDATE,       /* validating admission */
	TW_ROUTE_MUTATE_TRAINJOB,/* defaulting, JSON Patch */
	TW_ROUTE_MUTATE_JOBSET,  /* JobSet reconciled from its TrainJob, JSON Patch */
	TW_ROUTE_EXPAND,         /* preview API: TrainJob in, List out */
	TW_ROUTE_HEALTH,         /* /healthz, /readyz */
} tw_route_type;

typedef struct tw_route {
	const char *path;
	tw_route_type type;
	tp_kind kind; /* the kind this admission route accepts (TP_KIND_UNKNOWN: none) */
} tw_route;

/* Every route the server answers, in DESIGN.md's order; ends with {NULL}. */
extern const tw_route tw_routes[];
const tw_route *tw_route_find(const char *path);
/* The tp_kind an AdmissionReview's request.kind names (TP_KIND_UNKNOWN: none). */
tp_kind tw_kind_of_gvk(const char *group, const char *version, const char *kind);
/* The admission route for a request.kind (group, version, kind) when mutating
 * is false or true; NULL when none. */
const tw_route *tw_route_for_kind(const char *group, const char *version, const char *kind,
				  bool mutating);

/* ------------------------------------------------------------- admission */

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
} tw_outcome;

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

/* ------------------------------------------------ manifest walking (manifests.c)
 * Added by the loader branch for `validate` to reuse: fn is called once per
 * manifest file under path, in sorted order (*.yaml, *.yml, *.json, folders
 * searched recursively, symbolic links followed but never in a loop). A file
 * or "-" named directly is passed to fn once, whatever its name. The walk
 * goes on after a failure, reporting unreadable paths on errf (may be NULL),
 * and returns the first nonzero code (fn's, or TP_EIO / TP_ENOMEM). */
typedef int (*tw_file_fn)(const char *path, void *ctx);
int tw_walk_manifests(const char *path, tw_file_fn fn, void *ctx, FILE *errf);

/* ------------------------------------------------ CRDs (crds.c)
 * Every CustomResourceDefinition in the files under path (a file, a folder,
 * or "-") compiled into crds; other objects beside them are ignored.
 * Problems are reported on errf (may be NULL): TP_EIO for an unreadable
 * file, TP_EINVAL for a CRD that does not compile, TP_ENOTFOUND when path
 * holds no CRD at all. *added (may be NULL) grows by the CRDs added. */
int tw_crds_load(tp_crds *crds, const char *path, FILE *errf, size_t *added);

/* (kube_crds.c) The CRDs of the webhook's kinds, as the cluster has them,
 * GET by name (tw_kube_crd_names, NULL-terminated) into crds; returns how
 * many were added. One that is missing or unreadable is logged and left out. */
struct tw_kubeapi;
extern const char *const tw_kube_crd_names[];
size_t tw_kube_crds_fetch(struct tw_kubeapi *api, tp_crds *crds);

#endif /* TW_WEBHOOK_H */
