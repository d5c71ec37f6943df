/*
 * deploycheck_internal.h — what the deploycheck*.c files share: the facts of
 * the Deployment's pod that every checker reads.
 */
#ifndef TT_DEPLOYCHECK_INTERNAL_H
#define TT_DEPLOYCHECK_INTERNAL_H

#include "tests/support/deploycheck.h"

typedef struct podfacts {
	const cJSON *dep, *pod, *ctr;
	const char *listen, *metrics_listen, *cert, *key;
	bool managed; /* --manage-certs */
	const char *secret, *service, *validating, *mutating; /* as the flags name them */
	long long grace; /* --shutdown-grace */
	bool registers;  /* --register-webhooks */
	const char *failure_policy; /* --failure-policy (default Fail) */
	unsigned timeout_s;         /* --webhook-timeout (default 5) */
	const char *exempt[16];     /* every --exempt-namespace */
	size_t nexempt;
	long long webhook_port, metrics_port;
} podfacts;

/* The facts of objs' one Deployment; false (and why in p) without one. */
bool dc_pod_facts(const cJSON *objs, podfacts *f, dc_probs *p);
/* The same for a checker that leaves reporting their absence to the
 * Deployment's own checks. */
bool dc_quiet_pod_facts(const cJSON *objs, podfacts *f);
/* Value after flag in the container's args (or command), or NULL. */
const char *dc_arg_value(const cJSON *ctr, const char *flag);
/* The set of strings of arr is exactly the n given. */
bool dc_str_set_is(const cJSON *arr, const char *const *want, int n);

void dc_check_rbac(const cJSON *objs, dc_probs *p);
void dc_check_webhooks(const cJSON *objs, dc_probs *p);

#endif
