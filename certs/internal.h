/*
 * internal.h — what the files of certs/ share; not for callers outside certs/.
 */
#ifndef TW_CERTS_INTERNAL_H
#define TW_CERTS_INTERNAL_H

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "certs/certs.h"

#define TW_CERTS_MAX_FILE ((size_t)1 << 20) /* no PEM pair is larger than 1 MiB */

/* err helpers: format into err (may be NULL) and return code. */
int tw_certs_fail(char *err, size_t errlen, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The first queued OpenSSL error as text (or "unknown reason"); clears the queue. */
const char *tw_certs_ssl_reason(char *buf, size_t n);

/* ------------------------------------------------------------ timing.c */

/* The managed certificates' defaults, in seconds: a year, ten years, an hour. */
#define TW_CERTS_DEFAULT_VALIDITY ((int64_t)TW_CERTS_DEFAULT_DAYS * 86400)
#define TW_CERTS_DEFAULT_CA_VALIDITY ((int64_t)TW_CERTS_CA_DAYS * 86400)
#define TW_CERTS_DEFAULT_OVERLAP ((int64_t)3600)

/* How far before now a certificate with `left` seconds to live starts: a
 * tenth of that, at most an hour (cert-controller backdates by an hour), so
 * that a clock slightly behind ours still accepts it. */
int64_t tw_certs_backdate(int64_t left);
/* A certificate valid [nb, na] comes due at tw_certs_due_at: a fifth of its
 * life before its end (at least a second: times are whole seconds). */
bool tw_certs_due(int64_t nb, int64_t na, int64_t now);
int64_t tw_certs_due_at(int64_t nb, int64_t na);
/* The policy's durations, defaults filled in. */
int64_t tw_certs_validity(const tw_certs_policy *p);
int64_t tw_certs_ca_validity(const tw_certs_policy *p);
int64_t tw_certs_overlap(const tw_certs_policy *p);

/* ------------------------------------------------------------- files.c */

/* Whole file into *data (malloc'd, NUL-terminated). TW_CERTS_EIO when missing,
 * unreadable or larger than TW_CERTS_MAX_FILE. */
int tw_certs_read_file(const char *path, char **data, size_t *len, char *err, size_t errlen);
/* Create dir and missing parents with mode 0700. */
int tw_certs_mkdir(const char *dir, char *err, size_t errlen);
/* True when dir/name exists (any type, dangling symlinks too). */
bool tw_certs_exists(const char *dir, const char *name);
/* Write data to a new temporary file in dir, created with mode (O_EXCL: the
 * mode is set at creation, never changed later) and synced. *tmp: malloc'd path. */
int tw_certs_stage(const char *dir, const char *name, const char *data, size_t len,
		   unsigned mode, char **tmp, char *err, size_t errlen);
/* Move tmp to dir/name: replacing (rename) when force, else refusing an
 * existing file (TW_CERTS_EEXIST). tmp is gone afterwards either way. */
int tw_certs_publish(const char *tmp, const char *dir, const char *name, bool force,
		     char *err, size_t errlen);
/* Flush the folder's entries to disk after renames. */
void tw_certs_sync_dir(const char *dir);

/* ---------------------------------------------------------------- x509.c */

/* A fresh ECDSA P-256 key. */
EVP_PKEY *tw_certs_new_key(void);
/* A self-signed CA valid from not_before to not_after. */
int tw_certs_make_ca(EVP_PKEY *key, int64_t not_before, int64_t not_after, X509 **out);
/* A serving certificate for key with CN cn and the given SANs, signed by ca. */
int tw_certs_make_leaf(EVP_PKEY *key, const char *cn, const char *const *dns, size_t ndns,
		       const char *const *ips, size_t nips, X509 *ca, EVP_PKEY *ca_key,
		       int64_t not_before, int64_t not_after, X509 **out);
/* PEM text of a certificate or a private key (PKCS#8), malloc'd. */
char *tw_certs_cert_pem(X509 *x, size_t *len);
char *tw_certs_key_pem(EVP_PKEY *k, size_t *len);

/* ------------------------------------------------------------- check.c */

/* An ASN1_TIME as Unix seconds (TP_EINVAL when it is none). */
int tw_certs_asn1_time(const ASN1_TIME *t, int64_t *out);
/* t as "2026-01-01T00:00:00Z". */
void tw_certs_format_time(int64_t t, char *out, size_t n);

#endif /* TW_CERTS_INTERNAL_H */
