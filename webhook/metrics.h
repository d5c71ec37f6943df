/*
 * metrics.h — the server's Prometheus metrics.
 *
 * One registry per process. Updates are relaxed atomic adds (no lock on the
 * request path); /metrics renders a snapshot on its own plain-HTTP port.
 */
#ifndef TW_METRICS_H
#define TW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "webhook/webhook.h"

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
/* A list of kind k completed at unix_s (Unix seconds). */
void tw_metrics_watch_synced(tp_kind k, int64_t unix_s);
/* A list after the first (410 Gone, a broken stream). */
void tw_metrics_watch_relist(tp_kind k);
/* A watch started again after one ended. */
void tw_metrics_watch_reconnect(tp_kind k);
/* The serving certificate's notAfter (Unix seconds) after a (re)load. */
void tw_metrics_cert_set(int64_t not_after);
void tw_metrics_cert_reload(bool ok);

/* The whole exposition, Prometheus text format 0.0.4. */
int tw_metrics_render(tp_buf *out);

/* The plain-HTTP /metrics endpoint on listen ("HOST:PORT", ":PORT"). */
typedef struct tw_metrics_server tw_metrics_server;
int tw_metrics_serve(const char *listen, tw_metrics_server **out, char *err, size_t errlen);
unsigned short tw_metrics_port(const tw_metrics_server *m);
void tw_metrics_stop(tw_metrics_server *m);

#endif /* TW_METRICS_H */
