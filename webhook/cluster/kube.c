/*
 * kube.c — the API server's address and credentials (see kube.h): made
 * from the pod's service account or flags, copied, freed.
 */
#include "webhook/cluster/kube_internal.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(char *err, size_t n, const char *msg, const char *what)
{
	snprintf(err, n, "%s%s%s", msg, what ? ": " : "", what ? what : "");
	return TW_EFAILED;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int tw_kube_config_explicit(tw_kube_config *c, const char *server, const char *token_file,
			    const char *ca_file, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (!server || (strncmp(server, "https://", 8) && strncmp(server, "http://", 7)))
		return fail(err, errlen, "the API server URL must start with https:// or http://",
			    server);
	size_t n = strlen(server);
	while (n > 8 && server[n - 1] == '/')
		n--;
	c->server = strndup(server, n);
	c->token_file = dup_or_null(token_file);
	c->ca_file = dup_or_null(ca_file);
	c->auth = tw__kube_auth_new();
	if (!c->server || (token_file && !c->token_file) || (ca_file && !c->ca_file) || !c->auth) {
		tw_kube_config_free(c);
		return fail(err, errlen, "out of memory", NULL);
	}
	return 0;
}

/* dst->field = a copy of src->field; false when that copy failed. */
#define COPY(field) ((dst->field = dup_or_null(src->field)) || !src->field)

int tw_kube_config_copy(tw_kube_config *dst, const tw_kube_config *src)
{
	memset(dst, 0, sizeof(*dst));
	bool ok = COPY(server) && COPY(token_file) && COPY(ca_file) && COPY(token) &&
		  COPY(ca_pem) && COPY(cert_file) && COPY(key_file) && COPY(cert_pem) &&
		  COPY(key_pem) && COPY(proxy) && COPY(origin);
	dst->insecure = src->insecure;
	if (ok && src->exec)
		ok = (dst->exec = tw__kube_exec_copy(src->exec)) != NULL;
	dst->auth = src->auth ? tw__kube_auth_ref(src->auth) : tw__kube_auth_new();
	if (!ok || !dst->auth) {
		tw_kube_config_free(dst);
		return TP_ENOMEM;
	}
	return 0;
}

int tw_kube_config_in_cluster(tw_kube_config *c, const char *sa_dir, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !*host || !port || !*port)
		return fail(err, errlen, "not in a cluster: KUBERNETES_SERVICE_HOST and "
					 "KUBERNETES_SERVICE_PORT are not set; give --kubeconfig FILE "
					 "(or --context NAME), or --kube-server",
			    NULL);
	for (const char *p = port; *p; p++)
		if (!isdigit((unsigned char)*p))
			return fail(err, errlen, "KUBERNETES_SERVICE_PORT is not a port", port);
	if (!sa_dir)
		sa_dir = TW_KUBE_SA_DIR;
	bool v6 = strchr(host, ':') != NULL;
	char *url = NULL, *tok = NULL, *ca = NULL;
	if (asprintf(&url, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0)
		url = NULL;
	if (asprintf(&tok, "%s/token", sa_dir) < 0)
		tok = NULL;
	if (asprintf(&ca, "%s/ca.crt", sa_dir) < 0)
		ca = NULL;
	int rc = url && tok && ca ? tw_kube_config_explicit(c, url, tok, ca, err, errlen)
				  : fail(err, errlen, "out of memory", NULL);
	free(url);
	free(tok);
	free(ca);
	return rc;
}

/* A secret's bytes are wiped before they go back to the allocator. */
static void free_secret(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

void tw_kube_config_free(tw_kube_config *c)
{
	if (!c)
		return;
	free(c->server);
	free(c->token_file);
	free(c->ca_file);
	free_secret(c->token);
	free(c->ca_pem);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_pem);
	free_secret(c->key_pem);
	free(c->proxy);
	free(c->origin);
	tw__kube_exec_free(c->exec);
	tw__kube_auth_unref(c->auth);
	memset(c, 0, sizeof(*c));
}

int tw_kube_read_token(const char *path, char **out)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return TW_EFAILED;
	char *buf = malloc(TW_KUBE_TOKEN_MAX + 1);
	size_t len = 0;
	ssize_t r = 0;
	while (buf && len <= TW_KUBE_TOKEN_MAX &&
	       ((r = read(fd, buf + len, TW_KUBE_TOKEN_MAX + 1 - len)) > 0 ||
		(r < 0 && errno == EINTR)))
		len += r > 0 ? (size_t)r : 0;
	close(fd);
	if (!buf || r < 0 || len > TW_KUBE_TOKEN_MAX) {
		free(buf);
		return TW_EFAILED;
	}
	while (len && isspace((unsigned char)buf[len - 1]))
		len--;
	size_t i = 0;
	while (i < len && isspace((unsigned char)buf[i]))
		i++;
	/* A header value: no control characters (a newline would split it). */
	for (size_t k = i; k < len; k++)
		if ((unsigned char)buf[k] < 0x20 || buf[k] == 0x7f)
			len = i; /* refuse */
	if (i == len) {
		free(buf);
		return TW_EFAILED;
	}
	memmove(buf, buf + i, len - i);
	buf[len - i] = '\0';
	*out = buf;
	return 0;
}

int tw_kube_namespace(const char *sa_dir, char *out, size_t n)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/namespace", sa_dir ? sa_dir : TW_KUBE_SA_DIR);
	char *ns = NULL;
	/* The same rules as a token: one line, no control characters. */
	if (tw_kube_read_token(path, &ns))
		return TW_EFAILED;
	int rc = strlen(ns) < n ? 0 : -1;
	if (!rc)
		snprintf(out, n, "%s", ns);
	free(ns);
	return rc;
}
