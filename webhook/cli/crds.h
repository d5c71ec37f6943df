/*
 * webhook/cli/crds.h — CustomResourceDefinitions from files and folders
 * (--crds), compiled for the schema checks (crds.c).
 */
#ifndef TW_CRDS_H
#define TW_CRDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/trainpolicy.h"

/* Every CustomResourceDefinition in the files under path (a file, a folder,
 * or "-") compiled into crds; other objects beside them are ignored.
 * Problems are reported on errf (may be NULL): TP_EIO for an unreadable
 * file, TP_EINVAL for a CRD that does not compile, TP_ENOTFOUND when path
 * holds no CRD at all. *added (may be NULL) grows by the CRDs added. */
int tw_crds_load(tp_crds *crds, const char *path, FILE *errf, size_t *added);

/* The CustomResourceDefinitions in text (YAML or JSON, one document or
 * several) compiled into crds; name is the text's name in messages on errf
 * (may be NULL). mapped: text is a private file mapping nothing writes (the
 * binary's own pages), given back as the loader reads past them and all at
 * the end. TP_OK, TP_EIO when the text does not load, TP_EINVAL when a CRD
 * does not compile, TP_ENOMEM. *added (may be NULL) grows by the CRDs
 * added. */
int tw_crds_add_text(tp_crds *crds, const char *name, const char *text, size_t len, bool mapped,
		     FILE *errf, size_t *added);

/* The whole pages inside [p, p + n) of a private file mapping nothing
 * writes: gone from the resident set (read again from the file if
 * touched). */
void tw_crds_give_back(const char *p, size_t n);

#endif /* TW_CRDS_H */
