/*
 * store/store.h — what the rules and the expansion ask of the cluster
 * (store/lookup.c), beyond the public tp_lookup_* and tp_store_* of
 * trainpolicy.h. Private to policy/.
 */
#ifndef TP_STORE_H
#define TP_STORE_H

#include "policy/core/internal.h"

/* The runtime a TrainJob names, through opt's lookup: TP_OK and *out;
 * TP_ENOTFOUND (res untouched: each caller words "not found" its own way);
 * TP_EUNAVAILABLE (the lookup's error added to res, res undecided); or
 * TP_ENOMEM. */
int tp__runtime_lookup(const tp_options *opt, const cJSON *trainjob, tp_result *res,
		       const cJSON **out);
/* "clustertrainingruntimes.trainer.kubeflow.org": how the API server names a
 * kind's resource in its NotFound errors. */
const char *tp__resource_name(tp_kind k);
/* Namespaces holding a kind/name, through the lookup or the store. */
size_t tp__namespaces_of(const tp_options *opt, tp_kind k, const char *name, const char **out,
			 size_t max);

#endif /* TP_STORE_H */
