/*
 * webhook/admission/sshkey.h — the MPI SSH key pair the binary makes
 * (sshkey.c).
 */
#ifndef TW_SSHKEY_H
#define TW_SSHKEY_H

#include "policy/trainpolicy.h"

typedef struct tw_sshkey {
	char *private_pem; /* "-----BEGIN EC PRIVATE KEY-----\n..." */
	char *public_line; /* "ecdsa-sha2-nistp521 AAAA..." */
} tw_sshkey;

/* Each returns 0, or with the reason in err: TW_ECRYPTO when OpenSSL fails,
 * TP_EIO when the file cannot be opened, TW_EFAILED when it holds no such
 * key. A fresh ECDSA P-521 pair. */
int tw_sshkey_generate(tw_sshkey *out, char *err, size_t errlen);
/* The pair of a PEM private key file (P-521 only), for repeatable output. */
int tw_sshkey_read(const char *path, tw_sshkey *out, char *err, size_t errlen);
void tw_sshkey_free(tw_sshkey *k);

static inline tp_ssh_key tw_sshkey_view(const tw_sshkey *k)
{
	tp_ssh_key v = { k->private_pem, k->public_line };
	return v;
}

#endif /* TW_SSHKEY_H */
