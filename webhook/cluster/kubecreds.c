/*
 * kubecreds.c — what a config and its copies share while they are used
 * (kube_internal.h's struct tw_kube_auth: the token file's last token, an
 * exec plugin's credential), made with the config and freed with its last
 * copy.
 */
#include "webhook/cluster/kube_internal.h"

#include <stdlib.h>
#include <string.h>

tw_kube_auth *tw__kube_auth_new(void)
{
	tw_kube_auth *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	atomic_init(&a->refs, 1);
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

tw_kube_auth *tw__kube_auth_ref(tw_kube_auth *a)
{
	atomic_fetch_add(&a->refs, 1);
	return a;
}

void tw__kube_auth_unref(tw_kube_auth *a)
{
	if (!a || atomic_fetch_sub(&a->refs, 1) != 1)
		return;
	if (a->file_token)
		explicit_bzero(a->file_token, strlen(a->file_token));
	free(a->file_token);
	tw__kube_exec_cred_free(&a->cred);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
