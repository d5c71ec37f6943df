/*
 * webhook/cluster/certmgr.h — serve --manage-certs: the CA and the serving
 * pair live in a Secret of the server's namespace, and every replica keeps
 * them, and the caBundle of its own webhook configurations, right (upstream
 * Kubeflow Trainer's certificate rotator, with a CA overlap).
 *
 *   - the Secret is read, certs/rotation.c decides what it should hold, and
 *     a change is written with the Secret's resourceVersion: a 409 means
 *     another replica wrote first, so the Secret is read again and nothing
 *     of ours is kept (never a second CA);
 *   - the serving pair is served from the Secret's data (no files, no
 *     restart): a pair another replica renewed is picked up from the watch
 *     within seconds;
 *   - every webhook of both configurations gets the bundle as its
 *     clientConfig.caBundle, and gets it back when something else changes it
 *     (shipped empty, they have none until register.c fills them, with the
 *     bundle tw_certmgr_bundle gives);
 *   - ready once a valid pair is served and every webhook of both
 *     configurations carries the bundle.
 *
 * One thread, woken by a watch on the three objects (by name) and by the
 * next renewal coming due; errors retry with a growing backoff.
 */
#ifndef TW_CERTMGR_H
#define TW_CERTMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "webhook/cluster/kube.h"

/* Serve the PEM pair cert/key (source names it in err) from now on: 1 when
 * a new pair is served, 0 when it is the pair already served, -1 when it is
 * broken (err says why; the last good pair stays). The manager sits below
 * the server, so the server's side is handed in (tw_tls_serve_pem). */
typedef int (*tw_pem_sink)(void *arg, const char *cert, const char *key, const char *source,
			   char *err, size_t errlen);

typedef struct tw_certmgr_opts {
	const tw_kube_config *kube; /* copied */
	const char *namespace_;     /* of the Secret and of the Service */
	const char *secret;         /* the Secret's name */
	const char *service;        /* the Service's name: the certificate's DNS names */
	const char *validating;     /* ValidatingWebhookConfiguration name (NULL: none) */
	const char *mutating;       /* MutatingWebhookConfiguration name (NULL: none) */
	int64_t validity;           /* serving certificate, seconds (0: one year) */
	int64_t ca_validity;        /* CA, seconds (0: ten years) */
	int64_t overlap;            /* a new CA is trusted this long before it signs (0: 1 h) */
	unsigned resync_ms;         /* look again at least this often (0: 60 s) */
	unsigned backoff_max_ms;    /* retries after errors, at most this far apart (0: 30 s) */
	tw_pem_sink serve;          /* where the pair is served (serve: server/tls.c) */
	void *serve_arg;            /* its first argument (borrowed) */
} tw_certmgr_opts;

typedef struct tw_certmgr tw_certmgr;

/* Start the thread (and its watch). 0, or TW_EFAILED with the reason in err. */
int tw_certmgr_start(const tw_certmgr_opts *o, tw_certmgr **out, char *err, size_t errlen);
void tw_certmgr_stop(tw_certmgr *m);

/* A tw_ready_fn (arg: the tw_certmgr): true once a valid pair is served and
 * every configuration carries the bundle; else why says what is missing. */
bool tw_certmgr_ready(void *arg, char *why, size_t whylen);

/* A tw_register_bundle (arg: the tw_certmgr): the CA bundle the Secret
 * holds, as last served (PEM, malloc'd), or NULL before the first. */
char *tw_certmgr_bundle(void *arg);

/* Secret annotation: when the signing CA joined the bundle (RFC 3339). */
#define TW_CERTMGR_CA_ADDED "trainer-webhook/ca-added-at"

#endif /* TW_CERTMGR_H */
