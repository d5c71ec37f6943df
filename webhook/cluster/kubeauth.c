/*
 * kubeauth.c — a config's credentials on a libcurl handle (see kube.h): how
 * to trust the API server (CA file or PEM, or not at all when the
 * kubeconfig says insecure-skip-tls-verify), the proxy, the client
 * certificate, and the bearer token.
 *
 * What changes while the process runs is shared by a config's copies (the
 * watch's, the lookups', the certificate manager's), under one lock: the
 * token file's last good token (read again after 30 s, at every watch
 * transfer, or after a 401: the kubelet rotates it) and an exec plugin's
 * credential, kept until its expirationTimestamp (or a 401) as kubectl
 * keeps it, so the plugin runs once for all of them.
 */
#include "webhook/cluster/kube_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook/core/clock.h"
#include "webhook/core/log.h"

#define TOKEN_TTL_MS 30000

/* ------------------------------------------------------------ tokens */

/* The token to send from the token file (NULL: none readable). Under lock. */
static const char *file_token(const tw_kube_config *c, int flags)
{
	tw_kube_auth *a = c->auth;
	bool due = !a->file_read_once || (flags & (TW_KUBE_AUTH_REREAD | TW_KUBE_AUTH_REFRESH)) ||
		   tw_mono_ms() - a->file_read_at >= TOKEN_TTL_MS;
	if (!due)
		return a->file_token;
	char *tok = NULL;
	if (tw_kube_read_token(c->token_file, &tok) == 0) {
		free(a->file_token);
		a->file_token = tok;
	} else {
		tw_log(TW_LOG_WARN, "cannot read the token file %s; %s", c->token_file,
		       a->file_token ? "keeping the previous token"
		       : c->token     ? "sending the kubeconfig's token"
				      : "sending no token");
	}
	a->file_read_at = tw_mono_ms();
	a->file_read_once = true;
	return a->file_token;
}

/* The plugin's credential, run again when there is none, it expired, or a
 * 401 asked for a fresh one. Under lock. 0, or -1 with why. */
static int exec_cred(const tw_kube_config *c, int flags, char *err, size_t errlen)
{
	tw_kube_auth *a = c->auth;
	bool expired = a->have_cred && a->cred.expires && (int64_t)time(NULL) >= a->cred.expires;
	if (a->have_cred && !expired && !(flags & TW_KUBE_AUTH_REFRESH))
		return 0;
	tw_kube_exec_cred fresh;
	if (tw__kube_exec_run(c->exec, TW_KUBE_EXEC_TIMEOUT_MS, &fresh, err, errlen))
		return TW_EFAILED;
	tw__kube_exec_cred_free(&a->cred);
	a->cred = fresh;
	a->have_cred = true;
	return 0;
}

static void set_blob(CURL *h, CURLoption opt, const char *pem)
{
	struct curl_blob b = { .data = (void *)pem, .len = strlen(pem), .flags = CURL_BLOB_COPY };
	curl_easy_setopt(h, opt, &b);
}

static void set_client_cert(CURL *h, const char *cert_pem, const char *key_pem,
			    const char *cert_file, const char *key_file)
{
	curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	if (cert_pem)
		set_blob(h, CURLOPT_SSLCERT_BLOB, cert_pem);
	else if (cert_file)
		curl_easy_setopt(h, CURLOPT_SSLCERT, cert_file);
	if (key_pem)
		set_blob(h, CURLOPT_SSLKEY_BLOB, key_pem);
	else if (key_file)
		curl_easy_setopt(h, CURLOPT_SSLKEY, key_file);
}

static int add_bearer(struct curl_slist **hdrs, const char *token)
{
	size_t n = strlen(token) + 32;
	char *h = malloc(n);
	if (!h)
		return TW_EFAILED;
	snprintf(h, n, "Authorization: Bearer %s", token);
	struct curl_slist *l = curl_slist_append(*hdrs, h);
	explicit_bzero(h, n);
	free(h);
	if (!l)
		return TW_EFAILED;
	*hdrs = l;
	return 0;
}

static void set_trust(const tw_kube_config *c, CURL *h)
{
	if (c->ca_pem)
		set_blob(h, CURLOPT_CAINFO_BLOB, c->ca_pem);
	else if (c->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	if (c->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (c->proxy)
		curl_easy_setopt(h, CURLOPT_PROXY, c->proxy);
}

int tw_kube_auth_apply(const tw_kube_config *c, CURL *h, struct curl_slist **hdrs, int flags,
		       char *err, size_t errlen)
{
	set_trust(c, h);
	if (!c->auth) {
		snprintf(err, errlen, "the API-server configuration was not made by tw_kube_config_*");
		return TW_EFAILED;
	}
	int rc = 0;
	pthread_mutex_lock(&c->auth->lock);
	if (c->exec) {
		rc = exec_cred(c, flags, err, errlen);
		const tw_kube_exec_cred *x = &c->auth->cred;
		if (!rc && (x->cert_pem || x->key_pem))
			set_client_cert(h, x->cert_pem, x->key_pem, NULL, NULL);
		if (!rc && x->token && add_bearer(hdrs, x->token))
			rc = TP_ENOMEM, snprintf(err, errlen, "out of memory");
	} else {
		if (c->cert_pem || c->cert_file || c->key_pem || c->key_file)
			set_client_cert(h, c->cert_pem, c->key_pem, c->cert_file, c->key_file);
		const char *tok = c->token_file ? file_token(c, flags) : NULL;
		if (!tok)
			tok = c->token;
		if (tok && add_bearer(hdrs, tok))
			rc = TP_ENOMEM, snprintf(err, errlen, "out of memory");
	}
	pthread_mutex_unlock(&c->auth->lock);
	return rc;
}

bool tw_kube_auth_refreshable(const tw_kube_config *c)
{
	return c->token_file || c->exec;
}

void tw_kube_auth_unauthorized(const tw_kube_config *c)
{
	if (!c->exec || !c->auth)
		return;
	pthread_mutex_lock(&c->auth->lock);
	c->auth->have_cred = false;
	pthread_mutex_unlock(&c->auth->lock);
}
