/*
 * test_certs.c — certs/: generate, check, dev pair, and the certs command.
 * Every test works in a mkdtemp folder of its own, removed at its end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "certs/certs.h"
#include "tests/support/testutil.h"
#include "webhook/cli/commands.h"

#define DAY 86400

static const char *const extra_dns[] = { "extra.example.com" };
static const char *const extra_ips[] = { "10.0.0.7", "fd00::7" };

/* ------------------------------------------------------------ helpers */

static char *tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *d = NULL;
	assert_true(asprintf(&d, "%s/tw-certs-XXXXXX", base && *base ? base : "/tmp") > 0);
	assert_non_null(mkdtemp(d));
	return d;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static void rm_rf(char *d)
{
	assert_int_equal(nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(d);
}

/* dir/name in a static buffer per slot (tests use a few at a time). */
static const char *at(const char *dir, const char *name)
{
	static char buf[8][512];
	static int slot;
	size_t a = strlen(dir), b = strlen(name);
	assert_true(a + b + 2 <= sizeof(buf[0]));
	char tmp[sizeof(buf[0])]; /* dir may be an earlier slot */
	memcpy(tmp, dir, a);
	tmp[a] = '/';
	memcpy(tmp + a + 1, name, b + 1);
	char *p = buf[slot++ % 8];
	memcpy(p, tmp, a + b + 2);
	return p;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static unsigned mode_of(const char *path)
{
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static tw_certs_gen_opts svc_opts(void)
{
	return (tw_certs_gen_opts){ .service = "svc", .namespace_ = "ns", .dns = extra_dns,
				    .ndns = 1, .ips = extra_ips, .nips = 2 };
}

/* A generated pair for svc/ns in a new folder under parent. */
static void gen_into(const char *dir, const tw_certs_gen_opts *o)
{
	char err[1024] = "";
	int rc = tw_certs_generate(dir, o, NULL, err, sizeof(err));
	if (rc)
		print_message("generate: %s\n", err);
	assert_int_equal(rc, TW_CERTS_OK);
}

static int check(const char *crt, const char *key, const char *ca, const char *name,
		 tw_certs_report *rep)
{
	const char *names[1] = { name };
	tw_certs_check_opts o = { .cert_path = crt, .key_path = key, .ca_path = ca,
				  .names = names, .nnames = name ? 1 : 0 };
	return tw_certs_check(&o, rep);
}

static void assert_contains(const char *s, const char *part)
{
	if (!strstr(s, part)) {
		print_message("\"%s\"\n  does not contain \"%s\"\n", s, part);
		fail();
	}
}

static X509 *load_x509(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	assert_non_null(x);
	return x;
}

/* Run the command with stdout captured into out (may be NULL). */
static int run_cmd(char *out, size_t n, int argc, char **argv)
{
	fflush(stdout);
	FILE *cap = tmpfile();
	assert_non_null(cap);
	int saved = dup(1);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(cap), 1) >= 0);
	int rc = tw_cmd_certs(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	if (out) {
		rewind(cap);
		size_t got = fread(out, 1, n - 1, cap);
		out[got] = '\0';
	}
	fclose(cap);
	return rc;
}

#define RUN(out, ...)                                                                  \
	({                                                                              \
		char *argv_[] = { __VA_ARGS__ };                                        \
		run_cmd(out, 16384, (int)(sizeof(argv_) / sizeof(argv_[0])), argv_); \
	})

/* ----------------------------------------------------------- generate */

static void generate_writes_four_files(void **state)
{
	(void)state;
	char *d = tmpdir();
	char out[512];
	snprintf(out, sizeof(out), "%s", at(d, "new/certs"));
	tw_certs_gen_opts o = svc_opts();
	char err[1024] = "", *bundle = NULL;
	assert_int_equal(tw_certs_generate(out, &o, &bundle, err, sizeof(err)), TW_CERTS_OK);
	assert_int_equal(mode_of(out), 0700);
	assert_int_equal(mode_of(at(out, "ca.key")), 0600);
	assert_int_equal(mode_of(at(out, "tls.key")), 0600);
	assert_int_equal(mode_of(at(out, "ca.crt")), 0644);
	assert_int_equal(mode_of(at(out, "tls.crt")), 0644);

	/* caBundle: one line, base64 of ca.crt exactly. */
	assert_non_null(bundle);
	assert_null(strchr(bundle, '\n'));
	size_t len;
	char *pem = tt_read_file(at(out, "ca.crt"), &len);
	unsigned char *dec = malloc(strlen(bundle));
	int n = EVP_DecodeBlock(dec, (unsigned char *)bundle, (int)strlen(bundle));
	assert_true(n >= (int)len && n <= (int)len + 2); /* DecodeBlock keeps padding zeros */
	assert_memory_equal(dec, pem, len);
	free(dec);
	free(pem);
	free(bundle);
	rm_rf(d);
}

static void generate_sets_extensions(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	o.days = 30;
	gen_into(d, &o);
	X509 *ca = load_x509(at(d, "ca.crt")), *leaf = load_x509(at(d, "tls.crt"));
	time_t now = time(NULL);

	assert_int_equal(X509_check_ca(ca), 1);
	assert_true(X509_get_key_usage(ca) & KU_KEY_CERT_SIGN);
	assert_true(X509_get_key_usage(ca) & KU_CRL_SIGN);
	assert_non_null(X509_get0_subject_key_id(ca));
	assert_int_equal(EVP_PKEY_get_bits(X509_get0_pubkey(ca)), 256);

	assert_int_equal(X509_check_ca(leaf), 0);
	assert_int_equal(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
	assert_int_equal(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
	assert_non_null(X509_get0_authority_key_id(leaf));
	assert_int_equal(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf),
					       X509_get0_subject_key_id(ca)), 0);
	assert_true(EVP_PKEY_is_a(X509_get0_pubkey(leaf), "EC"));

	char cn[128];
	X509_NAME_get_text_by_NID(X509_get_subject_name(leaf), NID_commonName, cn, sizeof(cn));
	assert_string_equal(cn, "svc.ns.svc");

	/* notBefore = now - 1 h, notAfter = now + days. */
	int pday, psec;
	assert_true(ASN1_TIME_diff(&pday, &psec, NULL, X509_get0_notBefore(leaf)));
	assert_true(pday == 0 && psec <= -3590 && psec >= -3610);
	assert_true(ASN1_TIME_diff(&pday, &psec, NULL, X509_get0_notAfter(leaf)));
	assert_true(pday == 30 || (pday == 29 && psec > DAY - 10));
	(void)now;

	/* A positive serial of about 128 bits, different for the CA. */
	BIGNUM *s = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
	assert_false(BN_is_negative(s));
	assert_true(BN_num_bits(s) > 96 && BN_num_bits(s) <= 128);
	BN_free(s);
	assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(leaf),
					      X509_get0_serialNumber(ca)), 0);
	X509_free(ca);
	X509_free(leaf);
	rm_rf(d);
}

static void generate_rejects_bad_input(void **state)
{
	(void)state;
	char *d = tmpdir();
	char err[1024];
	tw_certs_gen_opts o = svc_opts();
	o.service = "Bad_Name";
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EINVAL);
	assert_contains(err, "--service \"Bad_Name\" must be a DNS-1123 label");
	o = svc_opts();
	o.namespace_ = "a.b";
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EINVAL);
	assert_contains(err, "--namespace \"a.b\"");
	const char *bad_ip[] = { "10.0.0.300" };
	o = svc_opts();
	o.ips = bad_ip;
	o.nips = 1;
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EINVAL);
	assert_contains(err, "--ip \"10.0.0.300\" is not an IPv4 or IPv6 address");
	const char *bad_dns[] = { "a..b" };
	o = svc_opts();
	o.dns = bad_dns;
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EINVAL);
	assert_contains(err, "--dns \"a..b\"");
	o = svc_opts();
	o.days = TW_CERTS_MAX_DAYS + 1;
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EINVAL);
	assert_contains(err, "--days 3651 is out of range");
	assert_int_equal(access(at(d, "ca.crt"), F_OK), -1); /* nothing was written */
	rm_rf(d);
}

static void generate_refuses_then_force_replaces(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	gen_into(d, &o);
	size_t n1, n2;
	char *before = tt_read_file(at(d, "tls.crt"), &n1);
	char err[1024] = "";
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EEXIST);
	assert_contains(err, "/ca.crt already exists");
	assert_contains(err, "--force");
	char *same = tt_read_file(at(d, "tls.crt"), &n2);
	assert_true(n1 == n2 && !memcmp(before, same, n1));
	free(same);

	/* Only one file left behind is enough to refuse. */
	assert_int_equal(unlink(at(d, "ca.crt")), 0);
	assert_int_equal(tw_certs_generate(d, &o, NULL, err, sizeof(err)), TW_CERTS_EEXIST);
	assert_contains(err, "/ca.key already exists");

	o.force = true;
	gen_into(d, &o);
	char *after = tt_read_file(at(d, "tls.crt"), &n2);
	assert_false(n1 == n2 && !memcmp(before, after, n1));
	assert_int_equal(mode_of(at(d, "tls.key")), 0600);
	assert_int_equal(mode_of(at(d, "ca.crt")), 0644);
	tw_certs_report rep;
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "ca.crt"), "svc.ns.svc",
			       &rep), TW_CERTS_OK);
	/* No temporary file is left in the folder. */
	DIR *dir = opendir(d);
	struct dirent *e;
	int files = 0;
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			files++, assert_true(e->d_name[0] != '.');
	closedir(dir);
	assert_int_equal(files, 4);
	free(before);
	free(after);
	rm_rf(d);
}

/* -------------------------------------------------------------- check */

static void check_passes_for_each_name(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	gen_into(d, &o);
	static const char *const names[] = { "svc", "svc.ns", "svc.ns.svc",
					     "svc.ns.svc.cluster.local", "extra.example.com",
					     "10.0.0.7", "fd00::7", "fd00:0::7" };
	tw_certs_report rep;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int rc = check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "ca.crt"), names[i], &rep);
		if (rc)
			print_message("%s: %s\n", names[i], rep.reason);
		assert_int_equal(rc, TW_CERTS_OK);
		assert_string_equal(rep.reason, "");
	}
	assert_string_equal(rep.subject, "CN=svc.ns.svc");
	assert_string_equal(rep.names, "svc, svc.ns, svc.ns.svc, svc.ns.svc.cluster.local, "
				       "extra.example.com, 10.0.0.7, fd00::7");
	assert_in_range(rep.days_left, 364, 365); /* whole days, rounded down */
	assert_false(rep.expiring_soon);
	int64_t na = 0;
	assert_int_equal(tw_certs_not_after(at(d, "tls.crt"), &na), TW_CERTS_OK);
	assert_int_equal(na, rep.not_after);
	assert_true(na > (int64_t)time(NULL) + 364 * DAY);
	rm_rf(d);
}

static void check_fails_for_another_key_or_ca(void **state)
{
	(void)state;
	char *d = tmpdir();
	char a[512], b[512];
	snprintf(a, sizeof(a), "%s", at(d, "a"));
	snprintf(b, sizeof(b), "%s", at(d, "b"));
	tw_certs_gen_opts o = svc_opts();
	gen_into(a, &o);
	gen_into(b, &o);
	tw_certs_report rep;
	assert_int_equal(check(at(a, "tls.crt"), at(b, "tls.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "b/tls.key does not match");
	assert_contains(rep.reason, "a/tls.crt");
	/* The CA key is of the right type but is not the serving key either. */
	assert_int_equal(check(at(a, "tls.crt"), at(a, "ca.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "does not match");

	assert_int_equal(check(at(a, "tls.crt"), at(a, "tls.key"), at(b, "ca.crt"), NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "a/tls.crt is not signed by");
	assert_contains(rep.reason, "b/ca.crt: unable to get local issuer certificate");
	/* The CA is not a serving certificate: purpose sslserver refuses it. */
	assert_int_equal(check(at(a, "ca.crt"), at(a, "ca.key"), at(a, "ca.crt"), NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "does not verify against");
	rm_rf(d);
}

static void check_fails_for_uncovered_names(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	gen_into(d, &o);
	tw_certs_report rep;
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "ca.crt"),
			       "other.example.com", &rep), TW_CERTS_EBAD);
	assert_contains(rep.reason, "does not cover DNS name \"other.example.com\" (it covers: svc, "
				    "svc.ns, svc.ns.svc,");
	assert_contains(rep.reason, "--dns other.example.com");
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), NULL, "10.0.0.8", &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "does not cover IP address \"10.0.0.8\"");
	/* A sub-name of a covered one is not covered (no wildcard was issued). */
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), NULL, "x.svc.ns.svc", &rep),
			 TW_CERTS_EBAD);
	rm_rf(d);
}

static void check_reports_validity(void **state)
{
	(void)state;
	char *d = tmpdir();
	int64_t now = (int64_t)time(NULL);
	tw_certs_gen_opts o = svc_opts();
	o.not_before = 1735689600 - 30 * DAY; /* expired on 2025-01-01T00:00:00Z */
	o.not_after = 1735689600;
	gen_into(d, &o);
	tw_certs_report rep;
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "ca.crt"), "svc", &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "/tls.crt expired on 2025-01-01T00:00:00Z");
	assert_true(rep.days_left < 0);

	o.force = true;
	o.not_before = now + 2 * DAY;
	o.not_after = now + 30 * DAY;
	gen_into(d, &o);
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "is not valid before");

	o.not_before = now - DAY;
	o.not_after = now + 10 * DAY + 60;
	gen_into(d, &o);
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "ca.crt"), NULL, &rep),
			 TW_CERTS_OK);
	assert_int_equal(rep.days_left, 10);
	assert_true(rep.expiring_soon);
	rm_rf(d);
}

static void check_fails_for_bad_files(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	gen_into(d, &o);
	tw_certs_report rep;
	assert_int_equal(check(at(d, "missing.crt"), at(d, "tls.key"), NULL, NULL, &rep),
			 TW_CERTS_EIO);
	assert_contains(rep.reason, "cannot open");
	assert_contains(rep.reason, "missing.crt: No such file or directory");
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "nope.crt"), NULL, &rep),
			 TW_CERTS_EIO);
	assert_contains(rep.reason, "nope.crt");
	assert_int_equal(check(d, at(d, "tls.key"), NULL, NULL, &rep), TW_CERTS_EIO);
	assert_contains(rep.reason, "Is a directory");

	write_text(at(d, "garbage"), "hello\n-----BEGIN CERTIFICATE-----\nnot base64!\n");
	assert_int_equal(check(at(d, "garbage"), at(d, "tls.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "garbage holds no PEM certificate");
	assert_int_equal(check(at(d, "tls.crt"), at(d, "garbage"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "garbage holds no readable PEM private key");
	/* A certificate where the key should be, and an empty file. */
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.crt"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "holds no readable PEM private key");
	write_text(at(d, "empty"), "");
	assert_int_equal(check(at(d, "empty"), at(d, "tls.key"), NULL, NULL, &rep), TW_CERTS_EBAD);
	int64_t t;
	assert_int_equal(tw_certs_not_after(at(d, "empty"), &t), TW_CERTS_EBAD);
	assert_int_equal(tw_certs_not_after(at(d, "missing"), &t), TW_CERTS_EIO);

	/* A truncated certificate. */
	size_t len;
	char *pem = tt_read_file(at(d, "tls.crt"), &len);
	pem[len / 2] = '\0';
	write_text(at(d, "half.crt"), pem);
	free(pem);
	assert_int_equal(check(at(d, "half.crt"), at(d, "tls.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);

	/* A key of a type the server does not serve. */
	EVP_PKEY *ed = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	assert_non_null(ed);
	FILE *f = fopen(at(d, "ed.key"), "w");
	assert_non_null(f);
	assert_true(PEM_write_PrivateKey(f, ed, NULL, NULL, 0, NULL, NULL));
	fclose(f);
	EVP_PKEY_free(ed);
	assert_int_equal(check(at(d, "tls.crt"), at(d, "ed.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "holds a ED25519 key: use an EC (P-256) or RSA key");

	/* An encrypted key fails rather than prompting for a passphrase. */
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	f = fopen(at(d, "enc.key"), "w");
	assert_non_null(f);
	assert_true(PEM_write_PKCS8PrivateKey(f, k, EVP_aes_128_cbc(), NULL, 0, NULL, "secret"));
	fclose(f);
	EVP_PKEY_free(k);
	assert_int_equal(check(at(d, "tls.crt"), at(d, "enc.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "enc.key is encrypted");
	rm_rf(d);
}

static void check_accepts_rsa_key(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	gen_into(d, &o);
	/* An RSA pair made here: self-signed, SAN svc.ns.svc. */
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	X509 *x = X509_new();
	assert_non_null(k);
	X509_set_version(x, X509_VERSION_3);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 40 * DAY);
	X509_set_pubkey(x, k);
	X509V3_CTX ctx;
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_nconf_nid(NULL, &ctx, NID_subject_alt_name, "DNS:svc.ns.svc");
	X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	assert_true(X509_sign(x, k, EVP_sha256()));
	FILE *f = fopen(at(d, "rsa.crt"), "w");
	PEM_write_X509(f, x);
	fclose(f);
	f = fopen(at(d, "rsa.key"), "w");
	PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(k);
	tw_certs_report rep;
	assert_int_equal(check(at(d, "rsa.crt"), at(d, "rsa.key"), NULL, "svc.ns.svc", &rep),
			 TW_CERTS_OK);
	assert_int_equal(check(at(d, "rsa.crt"), at(d, "tls.key"), NULL, NULL, &rep),
			 TW_CERTS_EBAD);
	assert_contains(rep.reason, "does not match");
	rm_rf(d);
}

/* ----------------------------------------------------------------- dev */

static void serial_of(const char *dir, char *out, size_t n)
{
	tw_certs_report rep;
	assert_int_equal(check(at(dir, "tls.crt"), at(dir, "tls.key"), at(dir, "ca.crt"),
			       "localhost", &rep), TW_CERTS_OK);
	snprintf(out, n, "%s", rep.serial);
	assert_true(strlen(out) > 20);
}

static void ensure_dev_creates_keeps_and_repairs(void **state)
{
	(void)state;
	char *d = tmpdir();
	char dev[512];
	snprintf(dev, sizeof(dev), "%s", at(d, "dev"));
	char err[1024] = "", s1[80], s2[80];
	assert_int_equal(tw_certs_ensure_dev(dev, err, sizeof(err)), TW_CERTS_DEV_CREATED);
	serial_of(dev, s1, sizeof(s1));
	tw_certs_report rep;
	assert_int_equal(check(at(dev, "tls.crt"), at(dev, "tls.key"), NULL, "127.0.0.1", &rep), 0);
	assert_int_equal(check(at(dev, "tls.crt"), at(dev, "tls.key"), NULL, "::1", &rep), 0);
	assert_string_equal(rep.subject, "CN=localhost");

	assert_int_equal(tw_certs_ensure_dev(dev, err, sizeof(err)), TW_CERTS_DEV_KEPT);
	serial_of(dev, s2, sizeof(s2));
	assert_string_equal(s1, s2);

	write_text(at(dev, "tls.crt"), "broken\n");
	assert_int_equal(tw_certs_ensure_dev(dev, err, sizeof(err)), TW_CERTS_DEV_REPLACED);
	assert_contains(err, "tls.crt holds no PEM certificate");
	assert_contains(err, "generated a new one");
	serial_of(dev, s2, sizeof(s2));
	assert_string_not_equal(s1, s2);

	/* Only the key left: replaced too. */
	assert_int_equal(unlink(at(dev, "tls.crt")), 0);
	assert_int_equal(tw_certs_ensure_dev(dev, err, sizeof(err)), TW_CERTS_DEV_REPLACED);
	assert_contains(err, "cannot open");
	serial_of(dev, s1, sizeof(s1));

	/* Less than a day left: replaced. */
	static const char *const lh[] = { "localhost" }, *const ips[] = { "127.0.0.1", "::1" };
	int64_t now = (int64_t)time(NULL);
	tw_certs_gen_opts o = { .dns = lh, .ndns = 1, .ips = ips, .nips = 2, .force = true,
				.not_before = now - DAY,
				.not_after = now + 3600 };
	gen_into(dev, &o);
	assert_int_equal(tw_certs_ensure_dev(dev, err, sizeof(err)), TW_CERTS_DEV_REPLACED);
	assert_contains(err, "in less than a day");
	serial_of(dev, s1, sizeof(s1));
	rm_rf(d);
}

/* -------------------------------------------------------------- GnuTLS */

static void gnutls_accepts_the_pair(void **state)
{
	(void)state;
	char *d = tmpdir();
	tw_certs_gen_opts o = svc_opts();
	gen_into(d, &o);
	gnutls_certificate_credentials_t cred;
	assert_int_equal(gnutls_certificate_allocate_credentials(&cred), 0);
	int rc = gnutls_certificate_set_x509_key_file(cred, at(d, "tls.crt"), at(d, "tls.key"),
						      GNUTLS_X509_FMT_PEM);
	if (rc < 0)
		print_message("gnutls: %s\n", gnutls_strerror(rc));
	assert_true(rc >= 0);
	gnutls_certificate_free_credentials(cred);

	/* The chain verifies for a TLS server named svc.ns.svc, as the API server
	 * would check it, and the IPv6 SAN matches. */
	gnutls_x509_trust_list_t tl;
	assert_int_equal(gnutls_x509_trust_list_init(&tl, 0), 0);
	assert_int_equal(gnutls_x509_trust_list_add_trust_file(tl, at(d, "ca.crt"), NULL,
								 GNUTLS_X509_FMT_PEM, 0, 0), 1);
	gnutls_datum_t data;
	assert_int_equal(gnutls_load_file(at(d, "tls.crt"), &data), 0);
	gnutls_x509_crt_t crt;
	assert_int_equal(gnutls_x509_crt_init(&crt), 0);
	assert_int_equal(gnutls_x509_crt_import(crt, &data, GNUTLS_X509_FMT_PEM), 0);
	gnutls_typed_vdata_st vd[2] = {
		{ GNUTLS_DT_DNS_HOSTNAME, (unsigned char *)"svc.ns.svc", 0 },
		{ GNUTLS_DT_KEY_PURPOSE_OID, (unsigned char *)GNUTLS_KP_TLS_WWW_SERVER, 0 },
	};
	unsigned status = 1;
	assert_int_equal(gnutls_x509_trust_list_verify_crt2(tl, &crt, 1, vd, 2, 0, &status, NULL),
			 0);
	assert_int_equal(status, 0);
	vd[0].data = (unsigned char *)"other.example.com";
	assert_int_equal(gnutls_x509_trust_list_verify_crt2(tl, &crt, 1, vd, 2, 0, &status, NULL),
			 0);
	assert_true(status & GNUTLS_CERT_UNEXPECTED_OWNER);
	unsigned char v6[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
	assert_int_not_equal(gnutls_x509_crt_check_ip(crt, v6, 16, 0), 0);
	gnutls_x509_crt_deinit(crt);
	gnutls_free(data.data);
	gnutls_x509_trust_list_deinit(tl, 1);
	rm_rf(d);
}

/* --------------------------------------------------------------- names */

static void name_rules(void **state)
{
	(void)state;
	assert_null(tw_certs_check_label("trainer-webhook"));
	assert_null(tw_certs_check_label("0abc"));
	assert_non_null(tw_certs_check_label(""));
	assert_non_null(tw_certs_check_label("-a"));
	assert_non_null(tw_certs_check_label("a.b"));
	assert_non_null(tw_certs_check_label("aB"));
	char long_label[65];
	memset(long_label, 'a', 64);
	long_label[64] = '\0';
	assert_non_null(tw_certs_check_label(long_label));
	long_label[63] = '\0';
	assert_null(tw_certs_check_label(long_label));
	assert_null(tw_certs_check_dns("webhook.example.com"));
	assert_null(tw_certs_check_dns("*.example.com"));
	assert_non_null(tw_certs_check_dns("*"));
	assert_non_null(tw_certs_check_dns("a.*.com"));
	assert_non_null(tw_certs_check_dns("a."));
	assert_non_null(tw_certs_check_dns("a,DNS:evil.com"));
	assert_true(tw_certs_is_ip("10.1.2.3"));
	assert_true(tw_certs_is_ip("::1"));
	assert_false(tw_certs_is_ip("10.1.2"));
	assert_false(tw_certs_is_ip("localhost"));
}

static void long_names_keep_a_valid_cn(void **state)
{
	(void)state;
	char *d = tmpdir();
	char svc[64], ns[64];
	memset(svc, 's', 63);
	memset(ns, 'n', 63);
	svc[63] = ns[63] = '\0';
	tw_certs_gen_opts o = { .service = svc, .namespace_ = ns };
	gen_into(d, &o);
	char full[200];
	snprintf(full, sizeof(full), "%s.%s.svc", svc, ns);
	tw_certs_report rep;
	assert_int_equal(check(at(d, "tls.crt"), at(d, "tls.key"), at(d, "ca.crt"), full, &rep),
			 TW_CERTS_OK);
	/* The CN cannot hold 131 characters: the service name stands in. */
	assert_int_equal(strncmp(rep.subject, "CN=sss", 6), 0);
	assert_int_equal(strlen(rep.subject), 3 + 63);
	rm_rf(d);
}

/* ------------------------------------------------------------- command */

static void cmd_generate_and_check(void **state)
{
	(void)state;
	char *d = tmpdir();
	char out[16384];
	char *dir = strdup(at(d, "o"));
	assert_int_equal(RUN(out, "certs", "generate", "--service", "trainer-webhook",
			     "--namespace=kubeflow-system", "--dns", "a.example.com", "--ip",
			     "::1", "--days", "90", "--out", dir), TW_EXIT_OK);
	/* stdout is the caBundle and a newline, nothing else. */
	size_t n = strlen(out);
	assert_true(n > 100 && out[n - 1] == '\n' && !memchr(out, '\n', n - 1));
	assert_null(strchr(out, ' '));

	char crt[600], key[600], ca[600];
	snprintf(crt, sizeof(crt), "%s/tls.crt", dir);
	snprintf(key, sizeof(key), "%s/tls.key", dir);
	snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
	assert_int_equal(RUN(out, "certs", "check", "--tls-cert", crt, "--tls-key", key, "--ca",
			     ca, "--dns", "trainer-webhook.kubeflow-system.svc", "--dns",
			     "a.example.com", "--ip", "::1"), TW_EXIT_OK);
	assert_contains(out, "ok: CN=trainer-webhook.kubeflow-system.svc, ");
	assert_true(strstr(out, ", 89 days left, names: trainer-webhook, ") ||
		    strstr(out, ", 90 days left, names: trainer-webhook, "));

	/* Refused without --force (exit 1), replaced with it. */
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--out", dir), TW_EXIT_DENIED);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--out", dir, "--force"), TW_EXIT_OK);
	/* Now the names differ: check says so with exit 1. */
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-cert", crt, "--tls-key", key, "--dns",
			     "a.example.com"), TW_EXIT_DENIED);
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-cert", crt, "--tls-key", ca),
			 TW_EXIT_DENIED);
	/* An unreadable file is bad input: exit 2. */
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-cert", "no-such-file", "--tls-key",
			     key), TW_EXIT_USAGE);
	assert_int_equal(RUN(out, "certs", "--help"), TW_EXIT_OK);
	assert_contains(out, "certs generate --service NAME");
	assert_int_equal(RUN(out, "certs", "check", "-h"), TW_EXIT_OK);
	free(dir);
	rm_rf(d);
}

static void cmd_usage_errors_exit_2(void **state)
{
	(void)state;
	char *d = tmpdir();
	char *o = strdup(at(d, "o"));
	assert_int_equal(RUN(NULL, "certs"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "make"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--namespace", "n", "--out", o),
			 TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--out", o),
			 TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n"),
			 TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "S", "--namespace", "n",
			     "--out", o), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n-",
			     "--out", o), TW_EXIT_USAGE);
	static const char *const bad_days[] = { "0", "3651", "abc", "10x", "-5", "" };
	for (size_t i = 0; i < sizeof(bad_days) / sizeof(bad_days[0]); i++)
		assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace",
				     "n", "--days", (char *)bad_days[i], "--out", o),
				 TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--ip", "1.2.3", "--out", o), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--dns", "UPPER.example", "--out", o), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--out"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--out", o, "extra"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "generate", "--service", "s", "--namespace", "n",
			     "--out", o, "--tls-cert", "x"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-cert", "x"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-key", "x"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-cert", "x", "--tls-key", "y",
			     "--ip", "nope"), TW_EXIT_USAGE);
	assert_int_equal(RUN(NULL, "certs", "check", "--tls-cert", "x", "--tls-key", "y",
			     "--out", o), TW_EXIT_USAGE);
	/* None of these wrote anything. */
	assert_int_equal(access(o, F_OK), -1);
	free(o);
	rm_rf(d);
}

int main(void)
{
	umask(022); /* the modes asserted below are those of a usual umask */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(generate_writes_four_files),
		cmocka_unit_test(generate_sets_extensions),
		cmocka_unit_test(generate_rejects_bad_input),
		cmocka_unit_test(generate_refuses_then_force_replaces),
		cmocka_unit_test(check_passes_for_each_name),
		cmocka_unit_test(check_fails_for_another_key_or_ca),
		cmocka_unit_test(check_fails_for_uncovered_names),
		cmocka_unit_test(check_reports_validity),
		cmocka_unit_test(check_fails_for_bad_files),
		cmocka_unit_test(check_accepts_rsa_key),
		cmocka_unit_test(ensure_dev_creates_keeps_and_repairs),
		cmocka_unit_test(gnutls_accepts_the_pair),
		cmocka_unit_test(name_rules),
		cmocka_unit_test(long_names_keep_a_valid_cn),
		cmocka_unit_test(cmd_generate_and_check),
		cmocka_unit_test(cmd_usage_errors_exit_2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
