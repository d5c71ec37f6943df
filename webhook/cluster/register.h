/*
 * webhook/cluster/register.h — serve --register-webhooks: the install ships
 * both webhook configurations empty (webhooks: []), so nothing refuses a
 * write while no replica is ready, whatever the pods do (never scheduled,
 * image not pulled, crash-looping); the server fills them itself, and
 * empties them when the last ready replica goes.
 *
 *   - fill: once this replica is ready (its pair served, its caches synced:
 *     the gate) and the Service has a ready endpoint (its EndpointSlices), so
 *     the API server can reach a replica the moment the webhooks exist;
 *     every admission route of webhook/admission/routes.c becomes one webhook
 *     (register_hooks.c), with the failure policy, timeout and exempted
 *     namespaces given, and the CA bundle;
 *   - keep: a watch on both configurations puts back what something else
 *     changes (kubectl apply --force, a replica that emptied them while
 *     another still serves);
 *   - empty: on shutdown, when no other replica's endpoint is ready
 *     (kubectl delete of the Deployment, scaling to 0); a rolling update
 *     keeps them, since the new replicas are ready first;
 *   - a replica that dies after filling them leaves them: failures once
 *     ready stay fail-closed, on purpose.
 *
 * It never creates or deletes a configuration (the RBAC names both, with
 * get/update/list/watch only): uninstalling removes them with the rest.
 */
#ifndef TW_REGISTER_H
#define TW_REGISTER_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/trainpolicy.h"
#include "webhook/cluster/kube.h"

/* True when the replica is ready to be called; else why says what is
 * missing. */
typedef bool (*tw_register_gate)(void *arg, char *why, size_t whylen);
/* The CA bundle (PEM, malloc'd) the API server is to trust, or NULL when
 * there is none (yet). */
typedef char *(*tw_register_bundle)(void *arg);

typedef struct tw_register_opts {
	const tw_kube_config *kube;    /* copied */
	const char *namespace_;        /* of the Service and of this pod */
	const char *service;           /* the Service the webhooks call */
	const char *validating;        /* ValidatingWebhookConfiguration name (NULL: none) */
	const char *mutating;          /* MutatingWebhookConfiguration name (NULL: none) */
	const char *failure_policy;    /* "Fail" or "Ignore" (NULL: Fail) */
	unsigned timeout_s;            /* every webhook's timeoutSeconds (0: 5) */
	const char *const *exempt;     /* namespaces never sent (a namespaceSelector) */
	size_t nexempt;
	const char *pod;               /* this pod's name: its own endpoint is not "another" */
	tw_register_gate ready;        /* the gate (required) */
	void *ready_arg;
	tw_register_bundle bundle;     /* the CA bundle a webhook gets when it has none
					* (NULL: none); whoever keeps the bundle current (the
					* certificate manager, cert-manager's cainjector) owns
					* it after that, so two writers never fight over it */
	void *bundle_arg;
	unsigned poll_ms;              /* how often to look while not filled (0: 1 s) */
	unsigned resync_ms;            /* and after (0: 30 s) */
} tw_register_opts;

typedef struct tw_register tw_register;

/* Start the thread and its watch. 0, or TW_EFAILED with the reason in err. */
int tw_register_start(const tw_register_opts *o, tw_register **out, char *err, size_t errlen);
/* Stop the thread; then, when unregister and no other replica's endpoint is
 * ready, empty both configurations (each call bounded). Frees r. */
void tw_register_stop(tw_register *r, bool unregister);
/* Whether this replica filled (or found filled) both configurations. */
bool tw_register_filled(tw_register *r);

/* (register_hooks.c) The webhooks of configuration kind (0 validating, 1
 * mutating) as the API server keeps them, caBundle aside: a JSON array,
 * malloc'd; NULL when out of memory. */
typedef struct tw_register_spec {
	const char *namespace_, *service, *failure_policy;
	unsigned timeout_s;
	const char *const *exempt;
	size_t nexempt;
} tw_register_spec;
cJSON *tw_register_webhooks(const tw_register_spec *s, int kind);

#endif /* TW_REGISTER_H */
