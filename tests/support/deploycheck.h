/*
 * deploycheck.h — the Kubernetes manifests under deploy/ checked against the
 * server they install: every webhook path is a route of the route table with
 * the kind its rule names, the Service reaches the port `serve --listen`
 * opens, probes, RBAC (exactly what the server does, verb by verb), the
 * certificate mode (managed: the Secret, the configurations and the Service
 * the flags name; files: a read-only Secret where --tls-cert points),
 * security context, replicas, PodDisruptionBudget, shutdown.
 *
 * Every checker collects problems instead of asserting, so that tests can
 * also show it catches broken manifests.
 */
#ifndef TT_DEPLOYCHECK_H
#define TT_DEPLOYCHECK_H

#include <stdbool.h>

#include "policy/trainpolicy.h"

typedef struct dc_probs {
	int n;
	tp_buf text;
} dc_probs;

void dc_probs_init(dc_probs *p);
void dc_prob(dc_probs *p, const char *fmt, ...) TP_PRINTF(2, 3);
bool dc_probs_has(const dc_probs *p, const char *part);

/* Every *.yaml of dir (kustomize's own files left out), parsed; NULL on a
 * read or parse error (printed). */
cJSON *dc_load_files(const char *dir);
/* `kubectl kustomize dir`, parsed; NULL (and why in err) on failure. */
cJSON *dc_render(const char *dir, char *err, size_t errlen);
/* kubectl with kustomize on PATH. */
bool dc_have_kubectl(void);

const cJSON *dc_find(const cJSON *objs, const char *kind, int nth);
const cJSON *dc_find_named(const cJSON *objs, const char *kind, const char *name);
int dc_count(const cJSON *objs, const char *kind);
bool dc_str_in(const cJSON *arr, const char *s);
/* The value after flag in the Deployment's container args, or NULL. */
const char *dc_arg(const cJSON *objs, const char *flag);

/* Everything above, on one rendering of the install. */
void dc_check_all(const cJSON *objs, dc_probs *p);

#endif
