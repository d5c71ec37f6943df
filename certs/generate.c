/*
 * generate.c — a CA and a serving certificate for a Service, written as the
 * four files of a kubernetes.io/tls secret plus ca.key (docs/admission-protocol.md §5.2).
 */
#include "certs/internal.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_NAMES 64
#define DAY 86400
#define CN_MAX 64 /* ub-common-name (RFC 5280) */

enum { F_CA_CRT, F_CA_KEY, F_TLS_KEY, F_TLS_CRT, F_COUNT };

/* Publication order: the CA first, and the serving key before its
 * certificate, so that a watcher that sees tls.crt change finds its key. */
static const struct {
	const char *name;
	unsigned mode;
} files[F_COUNT] = {
	{ "ca.crt", 0644 }, { "ca.key", 0600 }, { "tls.key", 0600 }, { "tls.crt", 0644 },
};

/* The names of one certificate, in SAN order. */
struct names {
	char *own[4]; /* the Service forms, malloc'd */
	const char *dns[MAX_NAMES];
	size_t ndns;
	char cn[CN_MAX + 1];
};

static void names_free(struct names *n)
{
	tw_certs_service_names_free(n->own);
}

static int add_dns(struct names *n, const char *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < n->ndns; i++)
		if (!strcmp(n->dns[i], s))
			return TW_CERTS_OK; /* a repeated --dns adds nothing */
	if (n->ndns == MAX_NAMES)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL,
				     "more than %d DNS names: pass fewer --dns", MAX_NAMES);
	n->dns[n->ndns++] = s;
	return TW_CERTS_OK;
}

static int service_names(struct names *n, const char *svc, const char *ns, char *err,
			 size_t errlen)
{
	if (tw_certs_service_names(svc, ns, n->own))
		return tw_certs_fail(err, errlen, TW_CERTS_ECRYPTO, "out of memory");
	for (int i = 0; i < 4; i++)
		add_dns(n, n->own[i], err, errlen);
	/* The name the API server dials; a CN longer than 64 cannot be encoded,
	 * and clients match the SAN anyway, so the bare service name stands in. */
	snprintf(n->cn, sizeof(n->cn), "%s", strlen(n->own[2]) <= CN_MAX ? n->own[2] : svc);
	return TW_CERTS_OK;
}

static int check_opts(const tw_certs_gen_opts *o, char *err, size_t errlen)
{
	const char *why;
	if (!o->service != !o->namespace_)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL,
				     "--service and --namespace go together: pass both");
	if (o->service && (why = tw_certs_check_label(o->service)))
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL, "--service \"%s\" %s",
				     o->service, why);
	if (o->namespace_ && (why = tw_certs_check_label(o->namespace_)))
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL, "--namespace \"%s\" %s",
				     o->namespace_, why);
	for (size_t i = 0; i < o->ndns; i++)
		if ((why = tw_certs_check_dns(o->dns[i])))
			return tw_certs_fail(err, errlen, TW_CERTS_EINVAL, "--dns \"%s\" %s",
					     o->dns[i], why);
	for (size_t i = 0; i < o->nips; i++)
		if (!tw_certs_is_ip(o->ips[i]))
			return tw_certs_fail(err, errlen, TW_CERTS_EINVAL,
					     "--ip \"%s\" is not an IPv4 or IPv6 address "
					     "(e.g. 10.0.0.1 or fd00::1)", o->ips[i]);
	if (o->days < 0 || o->days > TW_CERTS_MAX_DAYS)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL,
				     "--days %d is out of range: pass 1 to %d", o->days,
				     TW_CERTS_MAX_DAYS);
	if (!o->service && !o->ndns && !o->nips)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL,
				     "no name for the certificate: pass --service and --namespace");
	if (o->nips > MAX_NAMES)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL,
				     "more than %d IP addresses: pass fewer --ip", MAX_NAMES);
	return TW_CERTS_OK;
}

static int collect_names(const tw_certs_gen_opts *o, struct names *n, char *err, size_t errlen)
{
	int rc = o->service ? service_names(n, o->service, o->namespace_, err, errlen)
			    : TW_CERTS_OK;
	for (size_t i = 0; !rc && i < o->ndns; i++)
		rc = add_dns(n, o->dns[i], err, errlen);
	if (!rc && !o->service)
		snprintf(n->cn, sizeof(n->cn), "%s", o->ndns ? o->dns[0] : o->ips[0]);
	return rc;
}

static void pems_free(char *pem[F_COUNT], size_t len[F_COUNT])
{
	for (int i = 0; i < F_COUNT; i++) {
		if (pem[i])
			OPENSSL_cleanse(pem[i], len[i]); /* keys: leave no copy in freed memory */
		free(pem[i]);
		pem[i] = NULL;
	}
}

/* Keys and certificates, as the PEM text of the four files. */
static int make_pems(const tw_certs_gen_opts *o, const struct names *n, char *pem[F_COUNT],
		     size_t len[F_COUNT])
{
	int64_t now = (int64_t)time(NULL);
	int64_t nb = o->not_before ? o->not_before : now - 3600;
	int64_t na = o->not_after ? o->not_after
				  : now + (int64_t)(o->days ? o->days : TW_CERTS_DEFAULT_DAYS) * DAY;
	EVP_PKEY *ca_key = tw_certs_new_key(), *key = tw_certs_new_key();
	X509 *ca = NULL, *leaf = NULL;
	int rc = ca_key && key ? TW_CERTS_OK : TW_CERTS_ECRYPTO;
	if (!rc)
		rc = tw_certs_make_ca(ca_key, now - 3600, now + (int64_t)TW_CERTS_CA_DAYS * DAY, &ca);
	if (!rc)
		rc = tw_certs_make_leaf(key, n->cn, n->dns, n->ndns, o->ips, o->nips, ca, ca_key,
					nb, na, &leaf);
	if (!rc) {
		pem[F_CA_CRT] = tw_certs_cert_pem(ca, &len[F_CA_CRT]);
		pem[F_CA_KEY] = tw_certs_key_pem(ca_key, &len[F_CA_KEY]);
		pem[F_TLS_KEY] = tw_certs_key_pem(key, &len[F_TLS_KEY]);
		pem[F_TLS_CRT] = tw_certs_cert_pem(leaf, &len[F_TLS_CRT]);
		for (int i = 0; i < F_COUNT; i++)
			if (!pem[i])
				rc = TW_CERTS_ECRYPTO;
	}
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(key);
	return rc;
}

/* Without force, refuse before writing anything. */
static int refuse_existing(const char *dir, char *err, size_t errlen)
{
	for (int i = 0; i < F_COUNT; i++)
		if (tw_certs_exists(dir, files[i].name))
			return tw_certs_fail(err, errlen, TW_CERTS_EEXIST,
					     "%s/%s already exists; nothing was written: pass "
					     "--force to replace the four files, or choose another "
					     "--out", dir, files[i].name);
	return TW_CERTS_OK;
}

/* Stage all four, then move them into place, so that a failure while
 * writing leaves the old files (or none) rather than a mixed set. */
static int write_files(const char *dir, char *pem[F_COUNT], size_t len[F_COUNT], bool force,
		       char *err, size_t errlen)
{
	char *tmp[F_COUNT] = { NULL };
	int rc = TW_CERTS_OK;
	for (int i = 0; !rc && i < F_COUNT; i++)
		rc = tw_certs_stage(dir, files[i].name, pem[i], len[i], files[i].mode, &tmp[i], err,
				    errlen);
	for (int i = 0; i < F_COUNT; i++) {
		if (tmp[i] && !rc)
			rc = tw_certs_publish(tmp[i], dir, files[i].name, force, err, errlen);
		else if (tmp[i])
			remove(tmp[i]);
		free(tmp[i]);
	}
	tw_certs_sync_dir(dir);
	return rc;
}

static int encode_bundle(const char *pem, size_t len, char **out)
{
	char *b = malloc(4 * ((len + 2) / 3) + 1);
	if (!b)
		return TW_CERTS_ECRYPTO;
	EVP_EncodeBlock((unsigned char *)b, (const unsigned char *)pem, (int)len);
	*out = b;
	return TW_CERTS_OK;
}

int tw_certs_generate(const char *dir, const tw_certs_gen_opts *o, char **ca_bundle,
		      char *err, size_t errlen)
{
	struct names n = { 0 };
	char *pem[F_COUNT] = { NULL };
	size_t len[F_COUNT] = { 0 };
	int rc = check_opts(o, err, errlen);
	if (!rc)
		rc = collect_names(o, &n, err, errlen);
	if (!rc && !o->force)
		rc = refuse_existing(dir, err, errlen);
	if (!rc && (rc = make_pems(o, &n, pem, len)))
		tw_certs_fail(err, errlen, rc, "cannot create the certificates: OpenSSL failed (%s)",
			      tw_certs_ssl_reason((char[128]){ 0 }, 128));
	if (!rc)
		rc = tw_certs_mkdir(dir, err, errlen);
	if (!rc)
		rc = write_files(dir, pem, len, o->force, err, errlen);
	if (!rc && ca_bundle && encode_bundle(pem[F_CA_CRT], len[F_CA_CRT], ca_bundle))
		rc = tw_certs_fail(err, errlen, TW_CERTS_ECRYPTO, "out of memory");
	pems_free(pem, len);
	names_free(&n);
	return rc;
}
