/*
 * webhook/cli/version.h — what --version says (version.c): the release,
 * the commit it was built from, and the CRDs built in.
 */
#ifndef TW_CLI_VERSION_H
#define TW_CLI_VERSION_H

#include <stdio.h>

/* "0.4.0 (cada370)", or "0.4.0" when built without git. */
const char *tw_version_string(void);

/* --version's lines: the release and commit, then the built-in CRDs. */
void tw_version_print(FILE *out);

#endif /* TW_CLI_VERSION_H */
