/*
 * webhook/cli/builtin_crds.h — the CustomResourceDefinitions built into the
 * binary (builtin_crds.c): upstream's own files of webhook/cli/crds/, byte
 * for byte, which validate, review and serve check with when no --crds is
 * given.
 */
#ifndef TW_BUILTIN_CRDS_H
#define TW_BUILTIN_CRDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/trainpolicy.h"

typedef struct tw_builtin_crd {
	const char *file; /* its name in webhook/cli/crds/ */
	const char *data; /* its bytes (a NUL follows them) */
	size_t len;
} tw_builtin_crd;

/* What is built in, in the order of the folder's listing. */
size_t tw_builtin_crds_count(void);
/* The i-th of them; false past the last. */
bool tw_builtin_crd_get(size_t i, tw_builtin_crd *out);

/* Where they come from, for --version: "kubeflow/trainer v2.3.0
 * (8c0f5059) manifests/base/crds, kubernetes-sigs/jobset 08dfbdfd ...". */
extern const char tw_builtin_crds_source[];

/* Compile every built-in CRD into crds (problems on errf, may be NULL).
 * TP_OK, TP_ENOMEM, or TP_EINVAL when one does not compile. Their pages
 * are given back to the system once compiled. */
int tw_builtin_crds_load(tp_crds *crds, FILE *errf);

#endif /* TW_BUILTIN_CRDS_H */
