/*
 * webhook/cli/cluster_reads.h — what validate, review and expand read from
 * the cluster of --kubeconfig and/or --context besides its CRDs: every
 * object the inputs do not hold (runtimes, Namespaces, PriorityClasses,
 * ServiceAccounts, LimitRanges, ResourceQuotas, a TrainJob's runtime
 * snapshot), so that a repository of TrainJobs alone is checked against
 * the cluster it deploys to. The inputs (the store) answer first; a miss is
 * asked of the API server by GET, through the server's own resolver
 * (webhook/cluster/resolver.h): a 404 is "not found", no answer a warning
 * that says what was not checked.
 */
#ifndef TW_CLI_CLUSTER_READS_H
#define TW_CLI_CLUSTER_READS_H

#include "webhook/cli/cli.h"

typedef struct tw_cli_reads tw_cli_reads;

/* With --kubeconfig or --context: *out, and c->opt.lookup reads c->store,
 * then that cluster (TP_OK); or the kubeconfig is unusable
 * (TP_EUNAVAILABLE, said on stderr). Without them: TP_OK, *out NULL and
 * nothing changes. */
int tw_cli_reads_open(tw_cli_reads **out, tw_cli *c);
struct tw_kube_config;
struct tw_kubeapi;
/* Keep the connection the cluster's CRDs were read with (both taken; *kc
 * emptied) for the reads, which would otherwise make their own. */
void tw_cli_reads_keep(struct tw_kube_config *kc, struct tw_kubeapi *api);
/* The flag a cluster's error is about: --context when it was given alone,
 * or the error names the context; else --kubeconfig. */
const char *tw_cli_cluster_flag(const tw_cli *c, const char *err);
/* Let go of everything read (x may be NULL); c->opt.lookup is NULL again. */
void tw_cli_reads_close(tw_cli_reads *x, tw_cli *c);

#endif
