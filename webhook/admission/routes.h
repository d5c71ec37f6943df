/*
 * webhook/admission/routes.h — the paths the server answers and the kind each
 * admission route accepts (routes.c, in docs/design.md's order); the server, the
 * `review` command and the metrics read the same table.
 */
#ifndef TW_ROUTES_H
#define TW_ROUTES_H

#include <stdbool.h>

#include "policy/trainpolicy.h"

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

/* Every route the server answers, in docs/design.md's order; ends with {NULL}. */
extern const tw_route tw_routes[];
const tw_route *tw_route_find(const char *path);
/* The tp_kind an AdmissionReview's request.kind names (TP_KIND_UNKNOWN: none). */
tp_kind tw_kind_of_gvk(const char *group, const char *version, const char *kind);
/* The admission route for a request.kind (group, version, kind) when mutating
 * is false or true; NULL when none. */
const tw_route *tw_route_for_kind(const char *group, const char *version, const char *kind,
				  bool mutating);

#endif /* TW_ROUTES_H */
