/*
 * webhook/cluster/version.h — the Kubernetes release the cluster runs, read
 * from the API server's /version, for the checks of the Jobs and Pods a
 * TrainJob becomes (tp_options.kubernetes_minor): which fields the
 * cluster's API server knows, and which it drops behind a gate.
 */
#ifndef TW_CLUSTER_VERSION_H
#define TW_CLUSTER_VERSION_H

#include <stdatomic.h>
#include <stddef.h>

#include "webhook/cluster/kubeapi.h"

#define TW_KUBE_VERSION_TIMEOUT_MS 5000
/* A re-read runs in the runtimes' watch thread: kept short, so that a slow
 * answer delays the watch's next round by no more than this. */
#define TW_KUBE_VERSION_REREAD_MS 2000

/* A /version answer ({"major":"1","minor":"32",...,"gitVersion":
 * "v1.32.3"}): *minor. A provider's build ("minor":"32+") counts as its
 * release; without a usable minor, gitVersion's. 0, or TW_EFAILED with why. */
int tw_kube_version_parse(const cJSON *v, int *minor, char *why, size_t whylen);

/* GET /version: *minor and its gitVersion into git ("" when none). 0, or TW_EFAILED
 * with why. */
int tw_kube_version_read(tw_kubeapi *api, long timeout_ms, int *minor, char *git, size_t gitlen,
			 char *why, size_t whylen);

/* The tp_options.kubernetes_minor the server decides with, said in the
 * log: the cluster's (a release outside the supported range is kept, with
 * a warning: a field is judged by the release that added it), or
 * TP_KUBE_MINOR_UNKNOWN with a warning when /version cannot be read (the
 * checks follow the newest supported release, and no field is refused for
 * a release the cluster may well run). */
int tw_kube_version_minor(tw_kubeapi *api, long timeout_ms);

/* Read /version again (the API server came back from a restart, perhaps
 * an upgrade) and store its release in *minor when it reads and differs,
 * said in the log. One that cannot be read keeps *minor as it is, with a
 * warning: an API server that answered a moment ago has not changed its
 * release by failing once. */
void tw_kube_version_reread(tw_kubeapi *api, long timeout_ms, _Atomic int *minor);

#endif /* TW_CLUSTER_VERSION_H */
