/*
 * webhook/cluster/certmgr_internal.h — what certmgr.c (the loop, its thread,
 * readiness) and certmgr_objects.c (the Secret and the webhook
 * configurations, read and written) share; certmgr.c calls
 * certmgr_objects.c, never the other way. Not for other files: the public
 * face is certmgr.h.
 */
#ifndef TW_CERTMGR_INTERNAL_H
#define TW_CERTMGR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "certs/certs.h"
#include "policy/trainpolicy.h"
#include "webhook/cluster/certmgr.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/wake.h"
#include "webhook/cluster/watch.h"

enum cfg_kind { VALIDATING = 0, MUTATING, NCFG };

/* Both files name the configurations (static: a copy each, both use it). */
static const char *const cfg_plural[NCFG] = { "validatingwebhookconfigurations",
					      "mutatingwebhookconfigurations" };
static const char *const cfg_kind_name[NCFG] = { "ValidatingWebhookConfiguration",
						 "MutatingWebhookConfiguration" };

struct tw_certmgr {
	tw_certmgr_opts o;
	char *ns, *secret, *service, *cfg_name[NCFG];
	tw_kubeapi *api;
	tw_watch *watch;
	pthread_t thread;
	tw_wake wake;         /* the watch's events and the stop cut its sleeps short */
	pthread_mutex_t lock; /* guards why, bundle */
	atomic_bool ready;
	char why[1024];       /* what is missing while not ready */
	char *bundle;         /* the CA bundle last served (PEM; guarded by lock) */
	unsigned backoff;
	int64_t last_write;   /* when this replica last wrote the Secret: the write floor */
};

/* A round's verdict: done (sleep until next due), again (a conflict: read
 * again at once), failed (back off), held (a write waits for the write
 * floor: nothing changed, readiness stays, sleep until next due). */
enum round { ROUND_DONE, ROUND_AGAIN, ROUND_FAILED, ROUND_HELD };

/* certmgr_objects.c: GET path into *obj (malloc'd tree, NULL on 404; TW_EFAILED on
 * anything else, with why); the webhook configurations as they are now
 * (NULL: not configured or absent); whether every one carries ca_crt; put
 * the bundle into every webhook that lacks it; the Secret's keys read into
 * *in; the Secret written (a new one when old is NULL). */
int tw__certmgr_get(tw_certmgr *m, const char *path, cJSON **obj, char *why, size_t n);
int tw__certmgr_read_configs(tw_certmgr *m, cJSON *cfg[NCFG], char *why, size_t n);
bool tw__certmgr_published(tw_certmgr *m, cJSON *cfg[NCFG], const char *ca_crt);
enum round tw__certmgr_publish(tw_certmgr *m, cJSON *cfg[NCFG], const char *ca_crt, char *why,
			       size_t n);
void tw__certmgr_read_secret(const cJSON *sec, tw_certs_managed *in);
enum round tw__certmgr_write_secret(tw_certmgr *m, const cJSON *old, const tw_certs_managed *out,
				    const tw_certs_plan *plan, char *why, size_t n);

#endif /* TW_CERTMGR_INTERNAL_H */
