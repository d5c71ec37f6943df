/*
 * webhook/server/metrics_http.h — the plain-HTTP /metrics (and /healthz)
 * endpoint of `serve --metrics-listen` (metrics_http.c).
 */
#ifndef TW_METRICS_HTTP_H
#define TW_METRICS_HTTP_H

#include <stddef.h>

/* The plain-HTTP /metrics endpoint on listen ("HOST:PORT", ":PORT"): 0, or
 * TW_EFAILED (TP_ENOMEM) with the reason in err. */
typedef struct tw_metrics_server tw_metrics_server;
int tw_metrics_serve(const char *listen, tw_metrics_server **out, char *err, size_t errlen);
unsigned short tw_metrics_port(const tw_metrics_server *m);
void tw_metrics_stop(tw_metrics_server *m);

#endif /* TW_METRICS_HTTP_H */
