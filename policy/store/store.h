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

/* What a layer above keeps per runtime version (pod/plan.c's plan): the
 * store is below it and may not name it, so that layer hands the store its
 * two functions once, before any runtime is put. put runs when the store
 * takes a runtime's tree, outside the store's lock; drop when the tree's
 * last reference goes, before the tree is freed, so nothing derived from a
 * tree outlives it. Either may be NULL. */
typedef struct tp__store_derived {
	int (*put)(const cJSON *runtime);
	void (*drop)(const cJSON *runtime);
} tp__store_derived;
void tp__store_set_derived(const tp__store_derived *d);

#endif /* TP_STORE_H */
