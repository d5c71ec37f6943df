/*
 * kubeconfig.c — a kubeconfig's context as a tw_kube_config, read as kubectl
 * reads it (k8s.io/client-go/tools/clientcmd's loading rules):
 *
 *   - --kubeconfig names one file; else $KUBECONFIG's files, ':'-separated,
 *     those missing skipped, merged: the first file to name a cluster, user
 *     or context, or to set current-context, wins; else ~/.kube/config;
 *   - --context, else current-context, names the context, which names the
 *     cluster and the user;
 *   - a path in an entry (certificate-authority, client-certificate,
 *     client-key, tokenFile, an exec command with a '/') is relative to the
 *     file the entry came from;
 *   - inline data (*-data) wins over the file of the same thing; tokenFile
 *     over token (the file is read again as it changes).
 *
 * Users: client certificates, tokens, exec credential plugins
 * (kubeexec.c). What the webhook cannot do is refused with the reason
 * (auth-provider, basic auth, impersonation, a plugin that needs a
 * terminal), never silently ignored.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webhook/cluster/kube_internal.h"
#include "webhook/core/files.h"
#include "policy/trainpolicy.h"

#define MAX_KUBECONFIG ((size_t)4 << 20)
#define MAX_FILES 16

struct kc_file {
	char *path, *dir;
	tp_docs *docs;
	const cJSON *cfg;
};

struct kc {
	struct kc_file f[MAX_FILES];
	size_t n;
	char label[600]; /* "FILE" or "KUBECONFIG=a:b", for messages */
};

static int kc_fail(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int kc_fail(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return TW_EFAILED;
}

static void kc_close(struct kc *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->f[i].path);
		free(k->f[i].dir);
		tp_docs_free(k->f[i].docs);
	}
	k->n = 0;
}

/* Read one file into k; one that does not exist is skipped when missing_ok. */
static int kc_add(struct kc *k, const char *path, bool missing_ok, char *err, size_t n)
{
	if (missing_ok && access(path, F_OK) && errno == ENOENT)
		return 0;
	if (k->n == MAX_FILES)
		return kc_fail(err, n, "%s: more than %d kubeconfig files", k->label, MAX_FILES);
	tp_buf b = TP_BUF_INIT(0);
	tp_docs *docs = NULL;
	int rc = tw_read_file(path, MAX_KUBECONFIG, &b);
	const char *why = rc == TP_ELIMIT ? "over 4 MiB" : rc ? strerror(errno) : "not YAML";
	if (!rc)
		rc = tp_load(b.data ? b.data : "", b.len, NULL, &docs, NULL);
	tp_buf_free(&b);
	if (rc || tp_docs_count(docs) != 1 || !cJSON_IsObject(tp_docs_at(docs, 0)->obj)) {
		tp_docs_free(docs);
		return kc_fail(err, n, "%s: not a readable kubeconfig (one YAML document): %s", path,
			       why);
	}
	struct kc_file *f = &k->f[k->n++];
	f->path = strdup(path);
	const char *slash = strrchr(path, '/');
	f->dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	f->docs = docs;
	f->cfg = tp_docs_at(docs, 0)->obj;
	if (!f->path || !f->dir)
		return kc_fail(err, n, "out of memory");
	return 0;
}

static int kc_open(struct kc *k, const char *path, char *err, size_t n)
{
	memset(k, 0, sizeof(*k));
	const char *env = getenv("KUBECONFIG");
	if (path) {
		snprintf(k->label, sizeof(k->label), "%s", path);
		return kc_add(k, path, false, err, n);
	}
	if (env && *env) {
		snprintf(k->label, sizeof(k->label), "KUBECONFIG=%s", env);
		char *list = strdup(env), *save = NULL;
		if (!list)
			return kc_fail(err, n, "out of memory");
		int rc = 0;
		for (char *p = strtok_r(list, ":", &save); p && !rc; p = strtok_r(NULL, ":", &save))
			rc = kc_add(k, p, true, err, n);
		free(list);
		if (!rc && !k->n)
			rc = kc_fail(err, n, "%s: none of its files exists", k->label);
		return rc;
	}
	const char *home = getenv("HOME");
	char def[512];
	snprintf(def, sizeof(def), "%s/.kube/config", home && *home ? home : "");
	snprintf(k->label, sizeof(k->label), "%s", def);
	if (access(def, F_OK))
		return kc_fail(err, n, "no kubeconfig: give --kubeconfig FILE or set KUBECONFIG "
				       "(%s does not exist)", def);
	return kc_add(k, def, false, err, n);
}

/* The first entry of list named name across the files, and its file. */
static const cJSON *kc_find(const struct kc *k, const char *list, const char *name,
			    const struct kc_file **file)
{
	for (size_t i = 0; name && i < k->n; i++) {
		const cJSON *e = tp_find_named(tp_get_array(k->f[i].cfg, list), "name", name);
		if (e) {
			*file = &k->f[i];
			return e;
		}
	}
	return NULL;
}

/* The names of every context, for a message. */
static void context_names(const struct kc *k, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < k->n; i++) {
		const cJSON *c;
		cJSON_ArrayForEach(c, tp_get_array(k->f[i].cfg, "contexts"))
		{
			const char *nm = tp_get_str(c, "name");
			int w = nm ? snprintf(out + len, n - len, "%s%s", len ? ", " : "", nm) : 0;
			if (w > 0 && (size_t)w < n - len)
				len += (size_t)w;
		}
	}
	if (!len)
		snprintf(out, n, "none");
}

/* ------------------------------------------------------------ values */

/* A path of an entry, relative to its file's folder; malloc'd (NULL: none). */
static char *resolve(const struct kc_file *f, const char *p)
{
	char *out = NULL;
	if (!p || !*p)
		return NULL;
	if (p[0] == '/')
		return strdup(p);
	return asprintf(&out, "%s/%s", f->dir, p) < 0 ? NULL : out;
}

/* base64 *-data into PEM text; -1 when it is not base64. */
static int decode(const char *b64, char **out)
{
	*out = NULL;
	if (!b64)
		return 0;
	tp_buf b = TP_BUF_INIT(MAX_KUBECONFIG);
	if (tp_base64_decode(b64, strlen(b64), &b) || tp_buf_addc(&b, '\0')) {
		tp_buf_free(&b);
		return TW_EFAILED;
	}
	*out = b.data;
	return 0;
}

static int cluster_into(tw_kube_config *c, const cJSON *e, const struct kc_file *f, char *err,
			size_t n)
{
	const char *name = tp_get_str(e, "name");
	const cJSON *cl = tp_get_object(e, "cluster");
	const char *server = tp_get_str(cl, "server");
	if (!server || !*server)
		return kc_fail(err, n, "%s: clusters[%s].cluster.server: Required value: the API "
				       "server's URL", f->path, name);
	if (tp_get_str(cl, "tls-server-name"))
		return kc_fail(err, n, "%s: clusters[%s].cluster.tls-server-name is not supported: "
				       "give a server URL whose host the certificate names", f->path, name);
	char why[256];
	if (tw_kube_config_explicit(c, server, NULL, NULL, why, sizeof(why)))
		return kc_fail(err, n, "%s: clusters[%s].cluster.server: Invalid value: \"%s\": %s",
			       f->path, name, server, why);
	if (decode(tp_get_str(cl, "certificate-authority-data"), &c->ca_pem))
		return kc_fail(err, n, "%s: clusters[%s].cluster.certificate-authority-data: Invalid "
				       "value: not base64", f->path, name);
	if (!c->ca_pem)
		c->ca_file = resolve(f, tp_get_str(cl, "certificate-authority"));
	c->insecure = tp_get_true(cl, "insecure-skip-tls-verify");
	const char *proxy = tp_get_str(cl, "proxy-url");
	c->proxy = proxy && *proxy ? strdup(proxy) : NULL;
	return 0;
}

/* What the webhook does not do, said with what to use instead. */
static int refused(const cJSON *u, const char *where, char *err, size_t n)
{
	const char *ap = tp_get_str(u, "auth-provider.name");
	if (tp_get(u, "auth-provider"))
		return kc_fail(err, n, "%s.auth-provider (%s) is not supported (kubectl dropped "
				       "auth providers in 1.26): use the provider's exec credential "
				       "plugin (gke-gcloud-auth-plugin, kubelogin, ...)", where,
			       ap ? ap : "unnamed");
	if (tp_get(u, "username") || tp_get(u, "password"))
		return kc_fail(err, n, "%s.username/password: basic authentication is not supported "
				       "(Kubernetes removed it in 1.19): use a token, a client "
				       "certificate or an exec plugin", where);
	if (tp_get(u, "as") || tp_get(u, "as-uid") || tp_get(u, "as-groups") ||
	    tp_get(u, "as-user-extra"))
		return kc_fail(err, n, "%s.as: impersonation is not supported: use a context whose "
				       "user is the identity itself", where);
	return 0;
}

static int user_into(tw_kube_config *c, const cJSON *e, const struct kc_file *f,
		     const cJSON *cluster, char *err, size_t n)
{
	const char *name = tp_get_str(e, "name");
	const cJSON *u = tp_get_object(e, "user");
	char where[400];
	snprintf(where, sizeof(where), "%s: users[%s].user", f->path, name ? name : "");
	if (refused(u, where, err, n))
		return TW_EFAILED;
	if (tp_get(u, "exec"))
		return tw__kubeconfig_exec(c, tp_get_object(u, "exec"), f->dir, cluster, where, err,
					   n);
	if (decode(tp_get_str(u, "client-certificate-data"), &c->cert_pem) ||
	    decode(tp_get_str(u, "client-key-data"), &c->key_pem))
		return kc_fail(err, n, "%s.client-%s-data: Invalid value: not base64", where,
			       c->cert_pem ? "key" : "certificate");
	if (!c->cert_pem)
		c->cert_file = resolve(f, tp_get_str(u, "client-certificate"));
	if (!c->key_pem)
		c->key_file = resolve(f, tp_get_str(u, "client-key"));
	if (!!(c->cert_pem || c->cert_file) != !!(c->key_pem || c->key_file))
		return kc_fail(err, n, "%s: a client certificate needs its key (client-certificate "
				       "and client-key, or their -data forms)", where);
	const char *tok = tp_get_str(u, "token");
	c->token = tok && *tok ? strdup(tok) : NULL;
	c->token_file = resolve(f, tp_get_str(u, "tokenFile"));
	return 0;
}

int tw_kubeconfig_load(const char *path, const char *context, tw_kube_config *c, char *err,
		       size_t errlen)
{
	memset(c, 0, sizeof(*c));
	struct kc k;
	if (kc_open(&k, path, err, errlen)) {
		kc_close(&k);
		return TW_EFAILED;
	}
	const char *ctx_name = context;
	for (size_t i = 0; !ctx_name && i < k.n; i++) {
		const char *cur = tp_get_str(k.f[i].cfg, "current-context");
		ctx_name = cur && *cur ? cur : NULL;
	}
	const struct kc_file *fc = NULL, *fl = NULL, *fu = NULL;
	const cJSON *ctx = kc_find(&k, "contexts", ctx_name, &fc);
	const char *cl_name = tp_get_str(ctx, "context.cluster");
	const char *us_name = tp_get_str(ctx, "context.user");
	const cJSON *cl = kc_find(&k, "clusters", cl_name, &fl);
	const cJSON *us = kc_find(&k, "users", us_name, &fu);
	char names[256];
	int rc = TW_EFAILED;
	if (!ctx) {
		context_names(&k, names, sizeof(names));
		kc_fail(err, errlen, ctx_name ? "%s: no context \"%s\" (contexts: %s)"
					      : "%s: no current-context%s: give --context (contexts: %s)",
			k.label, ctx_name ? ctx_name : "", names);
	} else if (!cl) {
		kc_fail(err, errlen, "%s: contexts[%s].context.cluster names \"%s\", which no file "
				     "defines", fc->path, ctx_name, cl_name ? cl_name : "");
	} else if (us_name && *us_name && !us) {
		kc_fail(err, errlen, "%s: contexts[%s].context.user names \"%s\", which no file "
				     "defines", fc->path, ctx_name, us_name);
	} else if (!cluster_into(c, cl, fl, err, errlen) &&
		   (!us || !user_into(c, us, fu, tp_get_object(cl, "cluster"), err, errlen))) {
		rc = asprintf(&c->origin, "%s, context %s", k.label, ctx_name) < 0
			     ? (c->origin = NULL, kc_fail(err, errlen, "out of memory"))
			     : 0;
	}
	kc_close(&k);
	if (rc)
		tw_kube_config_free(c);
	return rc;
}
