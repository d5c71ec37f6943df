/*
 * webhook/cli/crds.h — CustomResourceDefinitions from files and folders
 * (--crds), compiled for the schema checks (crds.c).
 */
#ifndef TW_CRDS_H
#define TW_CRDS_H

#include <stddef.h>
#include <stdio.h>

#include "policy/trainpolicy.h"

/* Every CustomResourceDefinition in the files under path (a file, a folder,
 * or "-") compiled into crds; other objects beside them are ignored.
 * Problems are reported on errf (may be NULL): TP_EIO for an unreadable
 * file, TP_EINVAL for a CRD that does not compile, TP_ENOTFOUND when path
 * holds no CRD at all. *added (may be NULL) grows by the CRDs added. */
int tw_crds_load(tp_crds *crds, const char *path, FILE *errf, size_t *added);

#endif /* TW_CRDS_H */
