/*
 * webhook/cluster/kube_internal.h — what the files behind kube.h share:
 * kube.c (configs made, copied, freed), kubecreds.c (the state a config's
 * copies share), kubeauth.c (credentials on a handle), kubeexec.c (running
 * a credential plugin), kubeconfig.c and kubeconfig_exec.c (reading
 * kubeconfigs). Not for other files: the public face is kube.h.
 */
#ifndef TW_KUBE_INTERNAL_H
#define TW_KUBE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "policy/trainpolicy.h"
#include "webhook/cluster/kube.h"

/* What a plugin answered (kubeexec.c): a token, or a client certificate
 * and key (PEM), valid until expires (Unix seconds; 0: until a 401). */
typedef struct tw_kube_exec_cred {
	char *token;
	char *cert_pem, *key_pem;
	int64_t expires;
} tw_kube_exec_cred;

/* (kubecreds.c) The shared state of a config and its copies, refcounted;
 * kubeauth.c reads and fills it under its lock. */
struct tw_kube_auth {
	atomic_int refs;
	pthread_mutex_t lock;    /* guards what follows */
	char *file_token;        /* the token file's last good content */
	long long file_read_at;  /* monotonic ms of the last read */
	bool file_read_once;
	tw_kube_exec_cred cred;  /* the plugin's last answer */
	bool have_cred;
};

tw_kube_auth *tw__kube_auth_new(void);
tw_kube_auth *tw__kube_auth_ref(tw_kube_auth *a);
void tw__kube_auth_unref(tw_kube_auth *a);

#define TW_KUBE_EXEC_TIMEOUT_MS 30000

/* (kubeexec.c) Run the plugin once (at most timeout_ms) and read its
 * ExecCredential. 0, or TW_EFAILED with the reason in err: not found (with the
 * install hint), a failure (its exit status and the end of its stderr), a
 * timeout, or an answer that is not an ExecCredential of the asked
 * apiVersion. */
int tw__kube_exec_run(const tw_kube_exec_spec *s, long timeout_ms, tw_kube_exec_cred *out,
		      char *err, size_t errlen);
void tw__kube_exec_cred_free(tw_kube_exec_cred *c);

/* (kubeconfig_exec.c) A kubeconfig user's exec (the object under
 * user.exec, of a file in folder dir; cluster: the context's cluster, for
 * provideClusterInfo) into c->exec. where names the file and the user for
 * messages. 0, or TW_EFAILED with the reason in err. */
int tw__kubeconfig_exec(tw_kube_config *c, const cJSON *exec, const char *dir,
			const cJSON *cluster, const char *where, char *err, size_t errlen);
/* A deep copy of an exec spec (NULL when out of memory), and its free. */
tw_kube_exec_spec *tw__kube_exec_copy(const tw_kube_exec_spec *s);
void tw__kube_exec_free(tw_kube_exec_spec *s);

#endif /* TW_KUBE_INTERNAL_H */
