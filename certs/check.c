/*
 * check.c — is a serving pair usable: both parse, the key belongs to the
 * certificate, it is inside its validity, the chain verifies against the CA
 * for TLS server use, and the SAN covers each name the caller expects. The
 * first problem found is the one reported, in that order, because the later
 * checks' messages would only confuse when an earlier one fails.
 */
#include "certs/internal.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY 86400

struct pair {
	X509 *leaf;
	STACK_OF(X509) *rest; /* intermediates after the leaf in the cert file */
	EVP_PKEY *key;
	STACK_OF(X509) *ca;
};

static void pair_free(struct pair *p)
{
	X509_free(p->leaf);
	sk_X509_pop_free(p->rest, X509_free);
	sk_X509_pop_free(p->ca, X509_free);
	EVP_PKEY_free(p->key);
}

static int bad(tw_certs_report *rep, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(tw_certs_report *rep, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	return code;
}

int tw_certs_asn1_time(const ASN1_TIME *t, int64_t *out)
{
	struct tm tm;
	if (!t || !ASN1_TIME_to_tm(t, &tm))
		return TP_EINVAL;
	*out = (int64_t)timegm(&tm);
	return 0;
}

void tw_certs_format_time(int64_t t, char *out, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;
	if (!gmtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, n, "@%lld", (long long)t);
}

/* Every certificate in PEM text; an empty stack when there is none. */
static STACK_OF(X509) *read_certs(const char *text, size_t len)
{
	STACK_OF(X509) *sk = sk_X509_new_null();
	BIO *b = BIO_new_mem_buf(text, (int)len);
	X509 *x;
	while (sk && b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)))
		if (!sk_X509_push(sk, x))
			X509_free(x);
	ERR_clear_error(); /* the loop ends on "no start line" */
	BIO_free(b);
	return sk;
}

/* The PEM text to check: the caller's (pem), or the file's. malloc'd. */
static int load_text(const char *path, const char *pem, char **text, size_t *len,
		     tw_certs_report *rep)
{
	if (!pem)
		return tw_certs_read_file(path, text, len, rep->reason, sizeof(rep->reason));
	*len = strlen(pem);
	if (*len > TW_CERTS_MAX_FILE)
		return bad(rep, TW_CERTS_EBAD, "%s is larger than 1 MiB: not a PEM certificate",
			   path);
	*text = strdup(pem);
	return *text ? TW_CERTS_OK : bad(rep, TW_CERTS_ECRYPTO, "out of memory reading %s", path);
}

static int load_certs(const char *path, const char *pem, STACK_OF(X509) **out,
		      tw_certs_report *rep)
{
	char *text;
	size_t len;
	int rc = load_text(path, pem, &text, &len, rep);
	if (rc)
		return rc;
	*out = read_certs(text, len);
	free(text);
	if (!*out)
		return bad(rep, TW_CERTS_ECRYPTO, "out of memory reading %s", path);
	if (sk_X509_num(*out) == 0)
		return bad(rep, TW_CERTS_EBAD, "%s holds no PEM certificate (no readable "
			   "\"-----BEGIN CERTIFICATE-----\" block): pass a PEM certificate file", path);
	return TW_CERTS_OK;
}

/* A passphrase prompt would hang a server; an encrypted key fails instead.
 * OpenSSL's pem_password_cb: -1 means "no passphrase", the API's own value. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

static int load_key(const char *path, const char *pem, EVP_PKEY **out, tw_certs_report *rep)
{
	char *text;
	size_t len;
	int rc = load_text(path, pem, &text, &len, rep);
	if (rc)
		return rc;
	BIO *b = BIO_new_mem_buf(text, (int)len);
	*out = b ? PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL) : NULL;
	BIO_free(b);
	bool encrypted = strstr(text, "ENCRYPTED") != NULL;
	OPENSSL_cleanse(text, len);
	free(text);
	char why[128];
	tw_certs_ssl_reason(why, sizeof(why));
	if (!*out && encrypted)
		return bad(rep, TW_CERTS_EBAD, "%s is encrypted: the server needs an unencrypted "
			   "key (openssl pkey -in %s -out NEW)", path, path);
	if (!*out)
		return bad(rep, TW_CERTS_EBAD, "%s holds no readable PEM private key (%s): pass "
			   "the key file", path, why);
	if (!EVP_PKEY_is_a(*out, "EC") && !EVP_PKEY_is_a(*out, "RSA"))
		return bad(rep, TW_CERTS_EBAD, "%s holds a %s key: use an EC (P-256) or RSA key",
			   path, EVP_PKEY_get0_type_name(*out));
	return TW_CERTS_OK;
}

static int load_pair(const tw_certs_check_opts *o, struct pair *p, tw_certs_report *rep)
{
	int rc = load_certs(o->cert_path, o->cert_pem, &p->rest, rep);
	if (rc)
		return rc;
	p->leaf = sk_X509_shift(p->rest);
	if ((rc = load_key(o->key_path, o->key_pem, &p->key, rep)))
		return rc;
	if (EVP_PKEY_eq(X509_get0_pubkey(p->leaf), p->key) != 1) {
		ERR_clear_error();
		return bad(rep, TW_CERTS_EBAD, "%s does not match %s: the key belongs to another "
			   "certificate; pass the key the certificate was issued for",
			   o->key_path, o->cert_path);
	}
	return o->ca_path || o->ca_pem ? load_certs(o->ca_path, o->ca_pem, &p->ca, rep)
				       : TW_CERTS_OK;
}

static void describe(X509 *x, tw_certs_report *rep)
{
	BIO *b = BIO_new(BIO_s_mem());
	if (b && X509_NAME_print_ex(b, X509_get_subject_name(x), 0, XN_FLAG_RFC2253) >= 0) {
		int n = BIO_read(b, rep->subject, (int)sizeof(rep->subject) - 1);
		rep->subject[n > 0 ? n : 0] = '\0';
	}
	BIO_free(b);
	ASN1_INTEGER *sn = X509_get_serialNumber(x);
	BIGNUM *bn = ASN1_INTEGER_to_BN(sn, NULL);
	char *hex = bn ? BN_bn2hex(bn) : NULL;
	if (hex)
		for (size_t i = 0; hex[i] && i + 1 < sizeof(rep->serial); i++)
			rep->serial[i] = (char)(hex[i] >= 'A' && hex[i] <= 'F' ? hex[i] + 32 : hex[i]);
	OPENSSL_free(hex);
	BN_free(bn);
	tw_certs_asn1_time(X509_get0_notBefore(x), &rep->not_before);
	tw_certs_asn1_time(X509_get0_notAfter(x), &rep->not_after);
}

static const char *ip_text(const ASN1_OCTET_STRING *a, char *buf, size_t n)
{
	int len = ASN1_STRING_length(a);
	int af = len == 4 ? AF_INET : len == 16 ? AF_INET6 : -1;
	if (af < 0 || !inet_ntop(af, ASN1_STRING_get0_data(a), buf, (socklen_t)n))
		return "(malformed IP address)";
	return buf;
}

/* The SANs as "a, b, 10.0.0.1", for the report and for messages. */
static void list_names(X509 *x, char *out, size_t n)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	size_t used = 0;
	out[0] = '\0';
	for (int i = 0; gens && i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		char ip[64] = "";
		const char *s = NULL;
		if (g->type == GEN_DNS)
			s = (const char *)ASN1_STRING_get0_data(g->d.dNSName);
		if (g->type == GEN_IPADD)
			s = ip_text(g->d.iPAddress, ip, sizeof(ip));
		if (s && used < n)
			used += (size_t)snprintf(out + used, n - used, "%s%s", used ? ", " : "", s);
	}
	GENERAL_NAMES_free(gens);
	if (!out[0])
		snprintf(out, n, "no subjectAltName");
}

static int check_times(const tw_certs_check_opts *o, int64_t now, tw_certs_report *rep)
{
	char when[40];
	rep->days_left = (rep->not_after - now) / DAY;
	if (rep->not_after <= now) {
		rep->days_left = -((now - rep->not_after) / DAY) - 1;
		tw_certs_format_time(rep->not_after, when, sizeof(when));
		return bad(rep, TW_CERTS_EBAD, "%s expired on %s: renew it (trainer-webhook certs "
			   "generate --force, or cert-manager)", o->cert_path, when);
	}
	if (rep->not_before > now) {
		tw_certs_format_time(rep->not_before, when, sizeof(when));
		return bad(rep, TW_CERTS_EBAD, "%s is not valid before %s: check the clock of "
			   "this machine and of the machine that issued it", o->cert_path, when);
	}
	rep->expiring_soon = rep->days_left < TW_CERTS_WARN_DAYS;
	return TW_CERTS_OK;
}

/* Signature errors mean "another CA"; other errors keep OpenSSL's words. */
static bool wrong_issuer(int e)
{
	return e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
	       e == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
	       e == X509_V_ERR_CERT_SIGNATURE_FAILURE ||
	       e == X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE ||
	       e == X509_V_ERR_AKID_SKID_MISMATCH;
}

static int check_chain(const tw_certs_check_opts *o, struct pair *p, int64_t now,
		       tw_certs_report *rep)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int rc = store && ctx ? TW_CERTS_OK : TW_CERTS_ECRYPTO;
	for (int i = 0; !rc && i < sk_X509_num(p->ca); i++)
		if (!X509_STORE_add_cert(store, sk_X509_value(p->ca, i)))
			rc = TW_CERTS_ECRYPTO;
	if (!rc && !X509_STORE_CTX_init(ctx, store, p->leaf, p->rest))
		rc = TW_CERTS_ECRYPTO;
	if (rc) {
		bad(rep, rc, "out of memory verifying %s", o->cert_path);
	} else {
		X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
		X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), (time_t)now);
		if (X509_verify_cert(ctx) != 1) {
			int e = X509_STORE_CTX_get_error(ctx);
			const char *why = X509_verify_cert_error_string(e);
			rc = wrong_issuer(e)
				     ? bad(rep, TW_CERTS_EBAD, "%s is not signed by %s: %s; pass the "
					   "CA that issued it, or generate the pair again",
					   o->cert_path, o->ca_path, why)
				     : bad(rep, TW_CERTS_EBAD, "%s does not verify against %s: %s "
					   "(certificate %d in the chain)", o->cert_path, o->ca_path,
					   why, X509_STORE_CTX_get_error_depth(ctx));
		}
	}
	ERR_clear_error();
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return rc;
}

/* SAN only, as Go's client does: a CN-only certificate fails (docs/admission-protocol.md §1.1). */
static int check_names(const tw_certs_check_opts *o, X509 *leaf, tw_certs_report *rep)
{
	for (size_t i = 0; i < o->nnames; i++) {
		const char *n = o->names[i];
		bool ip = tw_certs_is_ip(n);
		int ok = ip ? X509_check_ip_asc(leaf, n, 0)
			    : X509_check_host(leaf, n, 0, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL);
		if (ok != 1)
			return bad(rep, TW_CERTS_EBAD, "%s does not cover %s \"%s\" (it covers: %s): "
				   "generate it with --%s %s", o->cert_path, ip ? "IP address" :
				   "DNS name", n, rep->names, ip ? "ip" : "dns", n);
	}
	return TW_CERTS_OK;
}

int tw_certs_check(const tw_certs_check_opts *o, tw_certs_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	struct pair p = { 0 };
	int64_t now = o->now ? o->now : (int64_t)time(NULL);
	int rc = load_pair(o, &p, rep);
	if (!rc) {
		describe(p.leaf, rep);
		list_names(p.leaf, rep->names, sizeof(rep->names));
		rc = check_times(o, now, rep);
	}
	if (!rc && p.ca)
		rc = check_chain(o, &p, now, rep);
	if (!rc)
		rc = check_names(o, p.leaf, rep);
	pair_free(&p);
	return rc;
}

int tw_certs_not_after(const char *path, int64_t *out)
{
	tw_certs_report rep = { 0 };
	STACK_OF(X509) *sk = NULL;
	int rc = load_certs(path, NULL, &sk, &rep);
	if (!rc && tw_certs_asn1_time(X509_get0_notAfter(sk_X509_value(sk, 0)), out))
		rc = TW_CERTS_EBAD;
	sk_X509_pop_free(sk, X509_free);
	return rc;
}
