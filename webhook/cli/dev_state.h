/*
 * webhook/cli/dev_state.h — `serve --dev`'s private folder (dev_state.c):
 * the development CA and serving pair, the example runtimes and the sample
 * AdmissionReview the binary carries, written where only this user reads
 * them, never into the folder serve was started from.
 */
#ifndef TW_CLI_DEV_STATE_H
#define TW_CLI_DEV_STATE_H

#include <limits.h>
#include <stddef.h>

typedef struct tw_dev_state {
	char dir[PATH_MAX];      /* the folder (mode 0700) */
	char runtimes[PATH_MAX]; /* dir/runtimes: the example runtimes */
	char certs[PATH_MAX];    /* dir/certs: ca.crt, ca.key, tls.crt, tls.key */
	char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX];
	char sample[PATH_MAX];   /* dir/admissionreview-trainjob.json */
} tw_dev_state;

/* Choose the folder: $XDG_STATE_HOME/trainer-webhook/dev, else
 * ~/.local/state/trainer-webhook/dev, else (no home, or one that cannot be
 * written) a fresh $TMPDIR/trainer-webhook-dev.XXXXXX; create it with mode
 * 0700 and write the examples into it (runtimes replaced each time, so that
 * they are this binary's). The certificates are the caller's
 * (tw_certs_ensure_dev on st->certs). 0, or TP_EIO (a file or folder that
 * cannot be made) or TW_EFAILED (a folder not this user's) with why in err. */
int tw_dev_state_open(tw_dev_state *st, char *err, size_t errlen);

/* The example runtimes built in (deploy/runtimes/ when built): how many,
 * and the name and text of the i-th. */
size_t tw_dev_runtimes_count(void);
const char *tw_dev_runtime(size_t i, const char **name, size_t *len);

#endif /* TW_CLI_DEV_STATE_H */
