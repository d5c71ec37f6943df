/*
 * webhook/cluster/kube.h — how to reach the Kubernetes API server: its URL,
 * how to trust it (a CA file or PEM), and who we are to it: a bearer token
 * (inline, or a file re-read because the kubelet rotates it), a client
 * certificate (files or PEM), or an exec credential plugin
 * (client.authentication.k8s.io, kubeauth.c). A config comes from the pod's
 * service account (kube.c), explicit flags (kube.c) or a kubeconfig
 * (kubeconfig.c); libcurl handles get it from tw_kube_auth_apply.
 */
#ifndef TW_KUBE_H
#define TW_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

#define TW_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define TW_KUBE_TOKEN_MAX 65536

/* An exec credential plugin as a kubeconfig's user.exec names it. */
typedef struct tw_kube_exec_spec {
	char *api_version;    /* client.authentication.k8s.io/v1 or /v1beta1 */
	char *command;        /* resolved against the kubeconfig's folder when it holds a '/' */
	char **argv;          /* command, its args, NULL */
	char **env;           /* "NAME=value" added to ours, NULL-terminated */
	char *install_hint;   /* said when the command is not found (may be NULL) */
	char *cluster_info;   /* provideClusterInfo: spec.cluster's JSON (NULL: not given) */
	char *where;          /* "users[alice].user.exec of FILE", for messages */
} tw_kube_exec_spec;

/* What changes while a config is used (the token file's last token, the
 * plugin's cached credential), shared by a config's copies (kubeauth.c). */
typedef struct tw_kube_auth tw_kube_auth;

typedef struct tw_kube_config {
	char *server;     /* "https://10.96.0.1:443", "http://127.0.0.1:PORT"; no trailing '/' */
	char *token_file; /* NULL: none; else re-read (a fresh token wins over token) */
	char *ca_file;    /* NULL: ca_pem, else the system's CAs (https) */
	/* From a kubeconfig (all NULL/false otherwise). */
	char *token;      /* an inline bearer token */
	char *ca_pem;     /* certificate-authority-data, decoded; wins over ca_file */
	char *cert_file, *key_file; /* client certificate and key, PEM files */
	char *cert_pem, *key_pem;   /* the same inline (client-*-data); win over the files */
	char *proxy;      /* proxy-url */
	bool insecure;    /* insecure-skip-tls-verify */
	tw_kube_exec_spec *exec; /* NULL: no plugin */
	char *origin;     /* where it came from, for messages (NULL: flags) */
	tw_kube_auth *auth; /* shared state, made with the config, kept by copies */
} tw_kube_config;

/* In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with
 * sa_dir/token and sa_dir/ca.crt (sa_dir NULL: TW_KUBE_SA_DIR). 0 or TW_EFAILED with
 * the reason in err. */
int tw_kube_config_in_cluster(tw_kube_config *c, const char *sa_dir, char *err, size_t errlen);
/* Outside a cluster: server is an http:// or https:// URL; token_file and
 * ca_file may be NULL. */
int tw_kube_config_explicit(tw_kube_config *c, const char *server, const char *token_file,
			    const char *ca_file, char *err, size_t errlen);
/* A copy of src into dst sharing src's credential state (one plugin run, one
 * token read for both). 0, or TP_ENOMEM. */
int tw_kube_config_copy(tw_kube_config *dst, const tw_kube_config *src);
void tw_kube_config_free(tw_kube_config *c);

/* The token file's content without surrounding whitespace, malloc'd, into
 * *out. 0, or TW_EFAILED (unreadable, empty, over TW_KUBE_TOKEN_MAX). */
int tw_kube_read_token(const char *path, char **out);

/* The pod's namespace: sa_dir/namespace (sa_dir NULL: TW_KUBE_SA_DIR), as
 * the kubelet mounts it, into out. 0, or TW_EFAILED when there is none. */
int tw_kube_namespace(const char *sa_dir, char *out, size_t n);

/* (kubeconfig.c) A kubeconfig's context as a config, the way kubectl reads
 * it: path (--kubeconfig) is one file; without it, $KUBECONFIG's files
 * (':'-separated, missing ones skipped) merged, the first file to set a
 * value winning, else ~/.kube/config. context NULL: current-context.
 * Relative paths in an entry are relative to its file. 0, or TW_EFAILED with the
 * reason (file and field) in err. */
int tw_kubeconfig_load(const char *path, const char *context, tw_kube_config *c, char *err,
		       size_t errlen);

/* (kubeauth.c) Put c's credentials on a libcurl handle: the CA, the client
 * certificate, and an "Authorization: Bearer" header appended to *hdrs.
 * flags: TW_KUBE_AUTH_REREAD reads the token file now (else at most every
 * 30 s); TW_KUBE_AUTH_REFRESH after a 401: the token file re-read and the
 * plugin run again. 0, or TW_EFAILED with why in err (a plugin that failed; nothing
 * usable to send). */
enum { TW_KUBE_AUTH_REREAD = 1, TW_KUBE_AUTH_REFRESH = 2 };
int tw_kube_auth_apply(const tw_kube_config *c, CURL *h, struct curl_slist **hdrs, int flags,
		       char *err, size_t errlen);
/* Whether a 401 may be cured by reading the credential again (a token file
 * or a plugin). */
bool tw_kube_auth_refreshable(const tw_kube_config *c);
/* A 401 came back: the plugin's cached credential is dropped (it runs again
 * on the next tw_kube_auth_apply). */
void tw_kube_auth_unauthorized(const tw_kube_config *c);

#endif /* TW_KUBE_H */
