/*
 * webhook/cluster/register_internal.h — what register.c (the loop, its
 * thread, the shutdown) and register_objects.c (the configurations and the
 * Service's EndpointSlices, read and written) share; register.c calls
 * register_objects.c, never the other way. Not for other files: the public
 * face is register.h.
 */
#ifndef TW_REGISTER_INTERNAL_H
#define TW_REGISTER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/register.h"
#include "webhook/cluster/wake.h"
#include "webhook/cluster/watch.h"

enum { REG_VALIDATING = 0, REG_MUTATING, REG_NCFG };

struct tw_register {
	tw_register_opts o;      /* its strings point into the copies below */
	char *ns, *service, *pod, *policy, *cfg_name[REG_NCFG];
	char **exempt;
	tw_kubeapi *api;
	tw_watch *watch;
	pthread_t thread;
	tw_wake wake;            /* the watch's events and the stop cut its sleeps short */
	atomic_bool filled;
	char said[512];          /* the last state logged, so each is logged once */
};

/* This pod's endpoint in the Service's EndpointSlices. */
enum own_endpoint { OWN_ABSENT, OWN_SERVING, OWN_TERMINATING };

typedef struct reg_endpoints {
	int ready;               /* ready endpoints, this pod's included */
	int others;              /* ready endpoints of other pods */
	enum own_endpoint own;
} reg_endpoints;

/* register_objects.c: the Service's endpoints; 0, or TW_EFAILED with why. */
int tw__register_endpoints(tw_register *r, reg_endpoints *out, char *why, size_t n);
/* Make configuration i hold every webhook of ours (fill) or none. 0 when it
 * does (written or already so), 1 on a conflict (read again), TW_EFAILED with why. */
int tw__register_put(tw_register *r, int i, bool fill, char *why, size_t n);

#endif /* TW_REGISTER_INTERNAL_H */
