/*
 * version.c — the release and the commit this binary was built from (the
 * Makefile passes both; only this file reads the commit, so that only it is
 * rebuilt when the commit changes), and the CRDs built in.
 */
#include "webhook/cli/builtin_crds.h"
#include "webhook/cli/version.h"

#ifndef TW_COMMIT
#define TW_COMMIT ""
#endif

const char *tw_version_string(void)
{
	return TW_COMMIT[0] ? TW_VERSION " (" TW_COMMIT ")" : TW_VERSION;
}

void tw_version_print(FILE *out)
{
	fprintf(out, "trainer-webhook %s\n", tw_version_string());
	fprintf(out, "built-in CRDs: %s\n", tw_builtin_crds_source);
}
