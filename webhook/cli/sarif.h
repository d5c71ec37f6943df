/*
 * webhook/cli/sarif.h — `validate -o sarif`: SARIF 2.1.0 for code scanning
 * (sarif.c), one rule per kind of finding, locations relative to the
 * repository.
 */
#ifndef TW_SARIF_H
#define TW_SARIF_H

#include <stdio.h>

#include "policy/trainpolicy.h"

/* The report (report.h) as a SARIF log; version is the tool's. */
void tw_sarif_print(const cJSON *report, const char *version, FILE *out);

/* The repository a path is in (the nearest folder above the working
 * directory holding .git), else the working directory: "/abs/root" into
 * out. */
void tw_sarif_root(char *out, size_t n);

/* path relative to root, percent-encoded as a URI reference, into out;
 * false when path is not under root (out then holds a file:// URI). */
bool tw_sarif_uri(const char *root, const char *path, char *out, size_t n);

#endif /* TW_SARIF_H */
