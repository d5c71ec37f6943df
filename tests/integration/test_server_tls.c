/*
 * test_server_tls.c — what the server negotiates: TLS 1.2 and 1.3 only,
 * AES-128-GCM chosen by the server even when the client would rather have
 * AES-256-GCM (webhook/server/tls.h says why), and the other AEAD suites still
 * served to a client that offers nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

static char tmp[256], certdir[300];
static sp_server srv;

static int setup(void **state)
{
	(void)state;
	if (sp_mkdtemp(tmp, sizeof(tmp), "tw-tls"))
		return -1;
	snprintf(certdir, sizeof(certdir), "%s/certs", tmp);
	if (mkdir(certdir, 0700) || sp_certs(certdir, false))
		return -1;
	return sp_start(&srv, certdir, tmp, (const char *const[]){ NULL });
}

static int teardown(void **state)
{
	(void)state;
	int rc = sp_stop_checked(&srv);
	sp_rmtree(tmp);
	return rc ? -1 : 0;
}

/* One handshake with the given versions and suites (NULL: OpenSSL's
 * defaults). The suite's name in out, "" when the handshake failed. */
static void handshake(int min, int max, const char *tls13, const char *tls12, char *out,
		      size_t n)
{
	out[0] = '\0';
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	assert_non_null(ctx);
	assert_int_equal(SSL_CTX_set_min_proto_version(ctx, min), 1);
	assert_int_equal(SSL_CTX_set_max_proto_version(ctx, max), 1);
	if (tls13)
		assert_int_equal(SSL_CTX_set_ciphersuites(ctx, tls13), 1);
	if (tls12)
		assert_int_equal(SSL_CTX_set_cipher_list(ctx, tls12), 1);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(srv.port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	SSL *ssl = SSL_new(ctx);
	assert_non_null(ssl);
	SSL_set_fd(ssl, fd);
	if (SSL_connect(ssl) == 1)
		snprintf(out, n, "%s %s", SSL_get_version(ssl), SSL_get_cipher_name(ssl));
	ERR_clear_error();
	SSL_free(ssl);
	close(fd);
	SSL_CTX_free(ctx);
}

static void server_prefers_aes128(void **state)
{
	(void)state;
	char got[128];
	/* OpenSSL's own order puts AES-256 first, as the bench's client does. */
	handshake(TLS1_3_VERSION, TLS1_3_VERSION,
		  "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256",
		  NULL, got, sizeof(got));
	assert_string_equal(got, "TLSv1.3 TLS_AES_128_GCM_SHA256");
	handshake(TLS1_2_VERSION, TLS1_2_VERSION, NULL,
		  "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256", got, sizeof(got));
	assert_string_equal(got, "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256");
}

static void other_aead_suites_still_served(void **state)
{
	(void)state;
	char got[128];
	handshake(TLS1_3_VERSION, TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384", NULL, got, sizeof(got));
	assert_string_equal(got, "TLSv1.3 TLS_AES_256_GCM_SHA384");
	handshake(TLS1_3_VERSION, TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256", NULL, got,
		  sizeof(got));
	assert_string_equal(got, "TLSv1.3 TLS_CHACHA20_POLY1305_SHA256");
	handshake(TLS1_2_VERSION, TLS1_2_VERSION, NULL, "ECDHE-ECDSA-AES256-GCM-SHA384", got,
		  sizeof(got));
	assert_string_equal(got, "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384");
}

static void old_versions_and_cbc_refused(void **state)
{
	(void)state;
	char got[128];
	/* A TLS 1.2 client with only CBC suites: no AEAD, no handshake. */
	handshake(TLS1_2_VERSION, TLS1_2_VERSION, NULL, "ECDHE-ECDSA-AES128-SHA256", got,
		  sizeof(got));
	assert_string_equal(got, "");
	/* At most TLS 1.1 (OpenSSL may refuse to offer it at all at its
	 * security level: either way, no session). */
	handshake(TLS1_VERSION, TLS1_1_VERSION, NULL, "DEFAULT:@SECLEVEL=0", got, sizeof(got));
	assert_string_equal(got, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(server_prefers_aes128),
		cmocka_unit_test(other_aead_suites_still_served),
		cmocka_unit_test(old_versions_and_cbc_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
