/*
 * x509.c — building the CA and the serving certificate with OpenSSL 3.
 *
 * ECDSA P-256 keys (small, fast handshakes, accepted by Go's TLS client and
 * GnuTLS). Extensions follow what cert-controller's rotator issues (spec
 * §5.2). SANs are built as GENERAL_NAMEs rather than through an OpenSSL
 * config string, so that a name can never smuggle in another extension.
 */
#include "certs/internal.h"

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <string.h>

EVP_PKEY *tw_certs_new_key(void)
{
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

/* A random positive 128-bit serial (RFC 5280 allows up to 20 octets). */
static int set_serial(X509 *x)
{
	BIGNUM *bn = BN_new();
	int ok = bn != NULL;
	do
		ok = ok && BN_rand(bn, 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
	while (ok && BN_is_zero(bn));
	ok = ok && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : TW_ECRYPTO;
}

static int set_cn(X509_NAME *n, const char *cn, const char *org)
{
	if (org && !X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8,
					       (const unsigned char *)org, -1, -1, 0))
		return TW_ECRYPTO;
	return X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1,
					  -1, 0) ? 0 : TW_ECRYPTO;
}

/* Version, serial, validity, subject, issuer and public key. */
static X509 *new_cert(EVP_PKEY *key, const char *cn, const char *org, X509 *issuer,
		      int64_t not_before, int64_t not_after)
{
	X509 *x = X509_new();
	if (!x)
		return NULL;
	int ok = X509_set_version(x, X509_VERSION_3) && set_serial(x) == 0 &&
		 ASN1_TIME_set(X509_getm_notBefore(x), (time_t)not_before) &&
		 ASN1_TIME_set(X509_getm_notAfter(x), (time_t)not_after) &&
		 set_cn(X509_get_subject_name(x), cn, org) == 0 &&
		 X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer)
						: X509_get_subject_name(x)) &&
		 X509_set_pubkey(x, key);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* One extension from OpenSSL's config syntax; values here are constants. */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
	int ok = e && X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok ? 0 : TW_ECRYPTO;
}

static int add_gen(GENERAL_NAMES *gens, int type, ASN1_STRING *value)
{
	GENERAL_NAME *g = value ? GENERAL_NAME_new() : NULL;
	if (!g) {
		ASN1_STRING_free(value);
		return TW_ECRYPTO;
	}
	GENERAL_NAME_set0_value(g, type, value);
	if (!sk_GENERAL_NAME_push(gens, g)) {
		GENERAL_NAME_free(g);
		return TW_ECRYPTO;
	}
	return 0;
}

static int add_sans(X509 *x, const char *const *dns, size_t ndns, const char *const *ips,
		    size_t nips)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	int ok = gens != NULL;
	for (size_t i = 0; ok && i < ndns; i++) {
		ASN1_IA5STRING *s = ASN1_IA5STRING_new();
		if (s && !ASN1_STRING_set(s, dns[i], -1)) {
			ASN1_IA5STRING_free(s);
			s = NULL;
		}
		ok = add_gen(gens, GEN_DNS, s) == 0;
	}
	for (size_t i = 0; ok && i < nips; i++)
		ok = add_gen(gens, GEN_IPADD, a2i_IPADDRESS(ips[i])) == 0;
	ok = ok && X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_REPLACE) == 1;
	GENERAL_NAMES_free(gens);
	return ok ? 0 : -1;
}

static int sign(X509 *x, EVP_PKEY *key, X509 **out)
{
	if (!X509_sign(x, key, EVP_sha256())) {
		X509_free(x);
		return TW_CERTS_ECRYPTO;
	}
	*out = x;
	return TW_CERTS_OK;
}

int tw_certs_make_ca(EVP_PKEY *key, int64_t not_before, int64_t not_after, X509 **out)
{
	X509 *x = new_cert(key, TW_CERTS_CA_CN, "trainer-webhook", NULL, not_before, not_after);
	if (!x || add_ext(x, NULL, NID_basic_constraints, "critical,CA:TRUE") ||
	    add_ext(x, NULL, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    add_ext(x, NULL, NID_subject_key_identifier, "hash")) {
		X509_free(x);
		return TW_CERTS_ECRYPTO;
	}
	return sign(x, key, out);
}

int tw_certs_make_leaf(EVP_PKEY *key, const char *cn, const char *const *dns, size_t ndns,
		       const char *const *ips, size_t nips, X509 *ca, EVP_PKEY *ca_key,
		       int64_t not_before, int64_t not_after, X509 **out)
{
	X509 *x = new_cert(key, cn, NULL, ca, not_before, not_after);
	if (!x || add_ext(x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
	    add_ext(x, ca, NID_key_usage, "critical,digitalSignature") ||
	    add_ext(x, ca, NID_ext_key_usage, "serverAuth") ||
	    add_ext(x, ca, NID_subject_key_identifier, "hash") ||
	    add_ext(x, ca, NID_authority_key_identifier, "keyid:always") ||
	    add_sans(x, dns, ndns, ips, nips)) {
		X509_free(x);
		return TW_CERTS_ECRYPTO;
	}
	return sign(x, ca_key, out);
}

/* The bytes a memory BIO holds, copied out NUL-terminated. */
static char *bio_text(BIO *b, size_t *len)
{
	char *mem;
	long n = BIO_get_mem_data(b, &mem);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s) {
		memcpy(s, mem, (size_t)n);
		s[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	return s;
}

char *tw_certs_cert_pem(X509 *x, size_t *len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = b && PEM_write_bio_X509(b, x) ? bio_text(b, len) : NULL;
	BIO_free(b);
	return s;
}

char *tw_certs_key_pem(EVP_PKEY *k, size_t *len)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL)
			  ? bio_text(b, len) : NULL;
	BIO_free(b);
	/* BIO_free wipes a memory BIO's buffer, so the caller's copy is the only
	 * one left; callers cleanse it before freeing. */
	return s;
}
