/*
 * webhook/metrics/metrics.h — the binary's Prometheus metrics: the registry
 * every folder above updates (requests, lookups, the watch, certificates,
 * connections) and its text exposition (metrics.c).
 *
 * One registry per process. Updates are relaxed atomic adds (no lock on the
 * request path); server/metrics_http.c renders a snapshot at /metrics on its
 * own plain-HTTP port.
 */
#ifndef TW_METRICS_H
#define TW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "webhook/admission/admission.h"
#include "webhook/admission/routes.h"

typedef enum tw_verdict {
	TW_VERDICT_ALLOWED = 0,
	TW_VERDICT_DENIED,
	TW_VERDICT_NONE, /* no admission decision: an HTTP error, a probe */
	TW_VERDICT__COUNT
} tw_verdict;

/* Latency buckets, upper bounds in microseconds (50 µs .. 10 s). */
#define TW_METRICS_BUCKETS 17

/* Version string shown by trainer_webhook_build_info. */
#ifndef TW_VERSION
#define TW_VERSION "dev"
#endif

/* Forget every value (start of serve; tests). */
void tw_metrics_reset(void);

/* One answered request. route NULL: a path that is no route. */
void tw_metrics_request(const tw_route *route, tw_verdict verdict, int http_code,
			uint64_t micros, size_t warnings);
void tw_metrics_in_flight(int delta);
/* Objects in the store, by kind (call after every store load). */
void tw_metrics_store_set(const tp_store *store);
void tw_metrics_store_reload(bool ok);
/* The API-server watch (watch.c): shown once enabled (serve --kube). */
void tw_metrics_watch_enable(void);
/* The slot of a watched kind ("ClusterTrainingRuntime"), registered on first
 * use; -1 when every slot is taken. */
int tw_metrics_watch_kind(const char *kind);
/* A list attempt of the kind in slot ended with HTTP status (0: no answer);
 * on 200 unix_s is when (Unix seconds). */
void tw_metrics_watch_listed(int slot, int64_t unix_s, long status);
/* Why a watched kind is listed again: each cause of a re-list, counted when
 * the watch decides it (once per episode, however many attempts it takes). */
typedef enum tw_relist_reason {
	TW_RELIST_GONE = 0,      /* 410: the resourceVersion is too old (status or ERROR event) */
	TW_RELIST_STREAM_BROKEN, /* a line that cannot be read: not {type, object}, too long */
	TW_RELIST_ERROR_EVENT,   /* an ERROR event other than 410 ended the watch */
	TW_RELIST_WATCH_FAILED,  /* the watch could not go on: connection lost, an error
				    status, a watch that ended at once */
	TW_RELIST__COUNT
} tw_relist_reason;
/* A re-list of the kind in slot was decided, and why. */
void tw_metrics_watch_relist(int slot, tw_relist_reason why);
/* The kind in slot is stale (its cache may miss what changed: lookups read
 * through to the API server) or fresh again after a list. */
void tw_metrics_watch_stale(int slot, bool stale);
/* A watch started again after one ended. */
void tw_metrics_watch_reconnect(int slot);

/* Why an answer was an error rather than a verdict. */
typedef enum tw_error_reason {
	TW_ERR_LOOKUP = 0,   /* 500: an object could not be looked up (API server) */
	TW_ERR_INTERNAL,     /* 500: out of memory, an internal failure */
	TW_ERR_BAD_REQUEST,  /* 400: not an AdmissionReview, bad ?timeout= */
	TW_ERR_NOT_FOUND,    /* 404: no such path */
	TW_ERR_METHOD,       /* 405 */
	TW_ERR_TOO_LARGE,    /* 413 */
	TW_ERR_MEDIA_TYPE,   /* 415 */
	TW_ERR_NOT_READY,    /* 503: no store yet */
	TW_ERR_TIMEOUT,      /* 504: past the request's ?timeout= */
	TW_ERR_BUSY,         /* 503: over the memory budget (Retry-After) */
	TW_ERR_MALFORMED,    /* 400, 411, 413, 414, 431, 501, 505: framing refused */
	TW_ERR__COUNT
} tw_error_reason;
void tw_metrics_error_answer(tw_error_reason r);

/* One lookup a decision made: from the cache (the store) or the API server,
 * and what it found (0 found, 1 not found, 2 could not tell). */
void tw_metrics_lookup(tp_kind k, bool from_api, int result);
/* Strict-profile violations answered as warnings (--strict-action warn). */
void tw_metrics_strict_warned(const tw_route *route, size_t n);

/* The certificate manager (serve --manage-certs). */
void tw_metrics_certmgr_enable(void);
void tw_metrics_ca_set(int64_t not_after);
void tw_metrics_cert_rotated(bool ca);
void tw_metrics_cabundle_written(void);
/* The managed Secret written (created or updated) by this replica. */
void tw_metrics_cert_secret_written(void);
void tw_metrics_certmgr_ready(bool ready);
/* The serving certificate's notAfter (Unix seconds) after a (re)load. */
void tw_metrics_cert_set(int64_t not_after);
void tw_metrics_cert_reload(bool ok);
/* A connection closed at once by the connection limits; the limit in force. */
void tw_metrics_connection_refused(void);
void tw_metrics_connection_limit(int64_t max);

/* (limits.c) What requests may hold and hold now (server/budget.c): the
 * budget in bytes (0: none), bytes taken (+) and given back (-), and a
 * request answered at once because its share did not fit; a request
 * refused for its framing (server/http_head.c), by status. */
void tw_metrics_budget_set(uint64_t limit);
void tw_metrics_budget_held(int64_t delta);
void tw_metrics_budget_refused(void);
/* Of what is held, the open connections' part (+ opened, - closed). */
void tw_metrics_budget_conns(int64_t delta);
void tw_metrics_malformed(int status);
int tw_metrics_render_limits(tp_buf *out);
void tw_metrics_limits_reset(void);

/* The whole exposition, Prometheus text format 0.0.4. */
int tw_metrics_render(tp_buf *out);

/* (denials.c) A denied verdict on route, by the class of its first finding
 * (tw_outcome.reason_class); its family's text, and its reset. */
void tw_metrics_denial(const tw_route *route, const char *reason_class);
int tw_metrics_render_denials(tp_buf *out);
void tw_metrics_denials_reset(void);
/* (process.c) process_* as every Prometheus client exports them, read from
 * /proc now. */
int tw_metrics_render_process(tp_buf *out);

#endif /* TW_METRICS_H */
