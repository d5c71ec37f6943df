/*
 * kubeconfig.c — a kubeconfig file's current context as a tw_kube_config,
 * for the offline commands' --kubeconfig: the cluster's server and CA, the
 * user's bearer token. Inline data (certificate-authority-data, token) go to
 * private temporary files (0600), removed again by tw_kubeconfig_done.
 * Client certificates and exec plugins are not supported: said so, by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webhook/cluster/kube.h"
#include "webhook/core/files.h"

#define MAX_KUBECONFIG ((size_t)4 << 20)

static int kc_fail(char *err, size_t n, const char *fmt, const char *a, const char *b)
{
	snprintf(err, n, fmt, a, b ? b : "");
	return -1;
}

/* The entry of list (clusters, users, contexts) whose name is name. */
static const cJSON *named(const cJSON *cfg, const char *list, const char *name)
{
	return name ? tp_find_named(tp_get_array(cfg, list), "name", name) : NULL;
}

/* Write bytes to a fresh private file; its path into path (64 bytes). */
static int private_file(const void *data, size_t n, char *path)
{
	snprintf(path, 64, "/tmp/tw-kubeconfig-XXXXXX");
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	bool ok = write(fd, data, n) == (ssize_t)n;
	close(fd);
	if (!ok)
		unlink(path);
	return ok ? 0 : -1;
}

static int inline_file(const char *b64, bool decode, char *path)
{
	tp_buf b = TP_BUF_INIT(1 << 20);
	int rc = decode ? tp_base64_decode(b64, strlen(b64), &b) : tp_buf_adds(&b, b64);
	rc = rc ? -1 : private_file(b.data ? b.data : "", b.len, path);
	tp_buf_free(&b);
	return rc;
}

int tw_kubeconfig_load(const char *path, tw_kube_config *c, tw_kubeconfig_files *f, char *err,
		       size_t errlen)
{
	memset(f, 0, sizeof(*f));
	tp_buf b = TP_BUF_INIT(0);
	tp_docs *docs = NULL;
	if (tw_read_file(path, MAX_KUBECONFIG, &b) ||
	    tp_load(b.data ? b.data : "", b.len, NULL, &docs, NULL) || tp_docs_count(docs) != 1) {
		tp_buf_free(&b);
		tp_docs_free(docs);
		return kc_fail(err, errlen, "%s: not a readable kubeconfig (YAML)", path, NULL);
	}
	tp_buf_free(&b);
	const cJSON *cfg = tp_docs_at(docs, 0)->obj;
	const cJSON *ctx = named(cfg, "contexts", tp_get_str(cfg, "current-context"));
	const cJSON *cl = named(cfg, "clusters", tp_get_str(ctx, "context.cluster"));
	const cJSON *user = named(cfg, "users", tp_get_str(ctx, "context.user"));
	int rc = -1;
	const char *server = tp_get_str(cl, "cluster.server");
	if (!ctx || !server)
		kc_fail(err, errlen, "%s: no current-context with a cluster server%s", path, NULL);
	else if (tp_get(user, "user.client-certificate-data") || tp_get(user, "user.client-certificate") ||
		 tp_get(user, "user.exec") || tp_get(user, "user.auth-provider"))
		kc_fail(err, errlen, "%s: the user of the current context authenticates by client "
				     "certificate or a plugin; give a context with a token%s", path, NULL);
	else {
		const char *ca_data = tp_get_str(cl, "cluster.certificate-authority-data");
		const char *token = tp_get_str(user, "user.token");
		const char *ca = tp_get_str(cl, "cluster.certificate-authority");
		const char *token_file = tp_get_str(user, "user.tokenFile");
		if (ca_data && !inline_file(ca_data, true, f->ca))
			ca = f->ca;
		if (token && !inline_file(token, false, f->token))
			token_file = f->token;
		if ((ca_data && !f->ca[0]) || (token && !f->token[0]))
			kc_fail(err, errlen, "%s: cannot write the context's CA or token to a temporary "
					     "file%s", path, NULL);
		else
			rc = tw_kube_config_explicit(c, server, token_file, ca, err, errlen);
	}
	tp_docs_free(docs);
	if (rc)
		tw_kubeconfig_done(f);
	return rc;
}

void tw_kubeconfig_done(tw_kubeconfig_files *f)
{
	if (f->ca[0])
		unlink(f->ca);
	if (f->token[0])
		unlink(f->token);
	f->ca[0] = f->token[0] = '\0';
}
