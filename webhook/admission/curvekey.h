/*
 * webhook/admission/curvekey.h — the Flux plugin's CURVE key pair, made with
 * OpenSSL (curvekey.c).
 */
#ifndef TW_CURVEKEY_H
#define TW_CURVEKEY_H

#include <stddef.h>

#include "policy/trainpolicy.h"

/* Each returns 0, or with the reason in err: TW_ECRYPTO when OpenSSL fails,
 * TP_EIO when the file cannot be opened, TW_EFAILED when it holds no such
 * key. */
/* Upstream's pair for a TrainJob: the secret key is the SHA-256 of its
 * metadata.uid, so every reconcile of the same TrainJob writes the same
 * Secret. */
int tw_curvekey_from_uid(const char *uid, tp_curve_key *out, char *err, size_t errlen);
/* The pair of a 32-byte secret key (X25519: public = secret x base point). */
int tw_curvekey_from_secret(const unsigned char *secret, tp_curve_key *out, char *err,
			    size_t errlen);
/* A fresh pair, for a TrainJob without a uid (a manifest not yet applied). */
int tw_curvekey_generate(tp_curve_key *out, char *err, size_t errlen);
/* The pair of an X25519 private key PEM file (`openssl genpkey -algorithm
 * X25519`), for repeatable output. */
int tw_curvekey_read(const char *path, tp_curve_key *out, char *err, size_t errlen);

#endif /* TW_CURVEKEY_H */
