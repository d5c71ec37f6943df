/*
 * webhook/server/server.h — the HTTPS admission server: the daemon's
 * lifecycle (server.c) and what its requests read, swappable while they run:
 * store, CRDs, readiness (state.c). Requests themselves are http.h.
 */
#ifndef TW_SERVER_H
#define TW_SERVER_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "webhook/cluster/resolver.h"
#include "webhook/server/budget.h"
#include "webhook/server/deciders.h"
#include "webhook/server/tls.h"
#include "webhook/admission/admission.h"

/* Idle keep-alive connections live longer than the API server's own idle
 * timeout (Go's 90 s), so that it is always the client that closes an idle
 * connection and never races a request against our close. */
#define TW_SERVER_IDLE_TIMEOUT_S 120u
/* A new connection has this long between two bytes before its first request
 * (TLS handshake included): a peer that connects and stalls goes early. */
#define TW_SERVER_HANDSHAKE_TIMEOUT_S 10u
/* A request's headers and body arrive within this (and within its
 * ?timeout=): the API server's own default timeout for a webhook, so that a
 * peer that trickles a body holds its memory no longer than a real request
 * could take (as nginx's client_body_timeout and Go's ReadTimeout bound it). */
#define TW_SERVER_READ_TIMEOUT_S 10u

/* One condition /readyz waits for: true when met, else false with what is
 * missing written into why. Called under no lock of ours; must be quick. */
typedef bool (*tw_ready_fn)(void *arg, char *why, size_t whylen);

/* The conditions a replica may wait for, besides its serving pair. */
enum { TW_READY_WATCH = 0, TW_READY_CERTS, TW_READY_CRDS, TW_READY__COUNT };

typedef struct tw_server_opts {
	const char *listen;   /* "HOST:PORT", ":PORT", "[::1]:PORT" */
	unsigned threads;     /* connection threads, each with its own poll loop */
	unsigned deciders;    /* threads that decide admission requests (0: 4) */
	size_t memory_budget; /* bytes the requests in flight may hold together (0: no
			       * limit) */
	unsigned max_conns;   /* open connections at most (0: 1024) */
	unsigned max_per_peer; /* from one address at most (0: no limit) */
	unsigned handshake_timeout_s; /* silence allowed before the first request (0: default) */
	unsigned idle_timeout_s;      /* silence allowed after it (0: default) */
	unsigned read_timeout_s;      /* a request's headers and body within this (0: default) */
	tw_config base;       /* profile, no_schema, max_body, strict_warn; store per request */
	tw_tls *tls;          /* the serving pair (owned by the caller) */
	tp_store *store;      /* the first store, served from the first request on; the
			       * server takes it, even when it fails to start */
	tw_cluster cluster;   /* the API server lookups go to, and what the store caches */
	tp_crds *crds;        /* the first CRDs (a reference is taken; NULL: none yet) */
	tw_ready_fn ready[TW_READY__COUNT]; /* the first readiness checks (NULL: none) */
	void *ready_arg[TW_READY__COUNT];
} tw_server_opts;

/* A store shared by the requests that started while it was current. */
typedef struct tw_store_ref {
	tp_store *store;
	atomic_uint refs;
} tw_store_ref;

typedef struct tw_server {
	tw_server_opts opt;
	struct MHD_Daemon *daemon;
	unsigned short port;
	pthread_mutex_t store_lock; /* guards store */
	tw_store_ref *store;        /* NULL until the first load */
	tp_crds *crds;              /* the CRDs requests check with (guarded by store_lock) */
	atomic_bool draining;       /* answers say Connection: close */
	atomic_int in_flight;       /* requests between headers and completion */
	tw_budget budget;           /* memory held by the requests in flight and connections */
	tw_peers *peers;            /* the addresses whose requests hold some of it */
	atomic_uint conns, conns_peak; /* open connections; their most since the last trim */
	tw_deciders *deciders;      /* where requests are decided */
	tw_ready_fn ready[TW_READY__COUNT]; /* more conditions for /readyz */
	void *ready_arg[TW_READY__COUNT];   /* (both guarded by store_lock) */
} tw_server;

/* 0, or with the reason in err TW_EFAILED or TP_ENOMEM. */
int tw_server_start(const tw_server_opts *o, tw_server **out, char *err, size_t errlen);
unsigned short tw_server_port(const tw_server *s);
/* Serve store from now on (takes ownership); the old one is freed after the
 * requests that use it finish. The first call makes /readyz true. */
void tw_server_set_store(tw_server *s, tp_store *store);
/* Ready: not draining, a store, a serving pair, and every check met.
 * Otherwise why (may be NULL) lists everything missing, "; "-separated. */
bool tw_server_ready(tw_server *s, char *why, size_t whylen);
/* Set (or clear, fn NULL) the readiness check in slot (TW_READY_*). Whoever
 * clears a check may then free its arg: a probe in progress has finished. */
void tw_server_set_ready_check(tw_server *s, int slot, tw_ready_fn fn, void *arg);
/* Stop accepting, let requests in flight finish (at most grace_ms), close
 * everything. */
void tw_server_drain(tw_server *s, unsigned grace_ms);
void tw_server_free(tw_server *s);

/* The CRDs requests check with from now on (a reference is taken; NULL:
 * none, the built-in schema checks). Requests that started keep theirs. */
void tw_server_set_crds(tw_server *s, tp_crds *crds);
/* The current CRDs with a reference (release with tp_crds_unref), or NULL. */
tp_crds *tw_server_crds_acquire(tw_server *s);

/* The current store with a reference (NULL before the first load). */
tw_store_ref *tw_server_store_acquire(tw_server *s);
void tw_server_store_release(tw_store_ref *r);

#endif /* TW_SERVER_H */
