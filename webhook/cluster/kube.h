/*
 * webhook/cluster/kube.h — how to reach the Kubernetes API server: its URL,
 * the bearer token file (re-read for every request: the kubelet rotates it)
 * and the CA.
 */
#ifndef TW_KUBE_H
#define TW_KUBE_H

#include <stddef.h>

#define TW_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define TW_KUBE_TOKEN_MAX 65536

typedef struct tw_kube_config {
	char *server;     /* "https://10.96.0.1:443", "http://127.0.0.1:PORT"; no trailing '/' */
	char *token_file; /* NULL: no Authorization header */
	char *ca_file;    /* NULL: the system's CAs (https) */
} tw_kube_config;

/* In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with
 * sa_dir/token and sa_dir/ca.crt (sa_dir NULL: TW_KUBE_SA_DIR). 0 or -1 with
 * the reason in err. */
int tw_kube_config_in_cluster(tw_kube_config *c, const char *sa_dir, char *err, size_t errlen);
/* Outside a cluster: server is an http:// or https:// URL; token_file and
 * ca_file may be NULL. */
int tw_kube_config_explicit(tw_kube_config *c, const char *server, const char *token_file,
			    const char *ca_file, char *err, size_t errlen);
void tw_kube_config_free(tw_kube_config *c);

/* The token file's content without surrounding whitespace, malloc'd, into
 * *out. 0, or -1 (unreadable, empty, over TW_KUBE_TOKEN_MAX). */
int tw_kube_read_token(const char *path, char **out);

/* The pod's namespace: sa_dir/namespace (sa_dir NULL: TW_KUBE_SA_DIR), as
 * the kubelet mounts it, into out. 0, or -1 when there is none. */
int tw_kube_namespace(const char *sa_dir, char *out, size_t n);

/* (kubeconfig.c) A kubeconfig's current context: server, CA and bearer
 * token (inline data in private temporary files, named in f, removed by
 * tw_kubeconfig_done). 0, or -1 with the reason in err. */
typedef struct tw_kubeconfig_files {
	char ca[64], token[64];
} tw_kubeconfig_files;
int tw_kubeconfig_load(const char *path, tw_kube_config *c, tw_kubeconfig_files *f, char *err,
		       size_t errlen);
void tw_kubeconfig_done(tw_kubeconfig_files *f);

#endif /* TW_KUBE_H */
