/*
 * webhook/server/http_internal.h — one request as http.c (the
 * libmicrohttpd callbacks, on a connection thread) and http_decide.c (its
 * decision, on a decider) share it. Not for other files.
 */
#ifndef TW_HTTP_INTERNAL_H
#define TW_HTTP_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "webhook/core/clock.h"
#include "webhook/server/deciders.h"
#include "webhook/server/server.h"

typedef enum req_state {
	REQ_READING = 0, /* headers and body on the connection's thread */
	REQ_DECIDING,    /* suspended, queued or being decided */
	REQ_DECIDED,     /* resumed: the answer is ready to be sent */
} req_state;

typedef struct request {
	tw_job job;            /* the decision, queued on the deciders */
	tw_server *s;
	struct MHD_Connection *conn;
	const tw_route *route;
	int64_t t0_ns;        /* tw_mono_ns when the request began */
	long long deadline_us; /* from ?timeout=; 0: none */
	tp_buf body;
	tp_buf out;            /* the answer's body once decided */
	size_t length;         /* its Content-Length */
	tw_hold hold;          /* of the memory budget: the body so far, then the arena */
	size_t allow;          /* of which the decision's arena may use */
	long long read_by_us;  /* the headers and body arrive within this (since t0) */
	int status;            /* 0, or an error answer chosen (early, or by the decision) */
	const char *error;     /* that answer's text (static) */
	bool retry_after;      /* that answer says Retry-After (503 over the budget) */
	bool json_body;        /* sent as application/json */
	bool corked;           /* the answer waits in GnuTLS for tw_tls_flush */
	atomic_int state;      /* req_state */
	tw_outcome oc;         /* its strings in kept, outliving the decision's arena */
	tp_buf kept;
} request;

/* The decision of r on a decider (http_decide.c): fills r->out and r->oc,
 * or r->status and r->error; then resumes the connection. */
void tw_http_decide(tw_job *job, bool cancelled);
/* The same on the connection thread, for a body of at most
 * TW_HTTP_DECIDE_HERE_MAX bytes decided from the cache alone: true when r
 * is decided; false (r untouched) when it must go to a decider. */
bool tw_http_decide_here(request *r);
long long tw_http_micros_since(int64_t t0_ns);

/* Bodies up to this are decided on their connection thread when the cache
 * answers every lookup, and so hold its other connections that long: the
 * budget's small requests (32 KiB, budget.h). The costliest shapes of this
 * size take under a millisecond (0.9 ms: a TrainJob of 750 runtimePatches
 * on the mutating route; 0.7 ms: 900 env items validated against the
 * built-in CRDs); at 64 KiB they took twice that. */
#define TW_HTTP_DECIDE_HERE_MAX TW_BUDGET_SMALL_MAX

/* Answers of more than this (Content-Length) give their memory back to the
 * system when they end (malloc_trim): 1 MiB, far above what the API
 * server's own requests send, so it costs nothing on their path. */
#define TW_HTTP_TRIM_AFTER ((size_t)1 << 20)

#endif /* TW_HTTP_INTERNAL_H */
