/*
 * deploycheck.h — the Kubernetes manifests under deploy/ checked against the
 * server they install: the webhook configurations are shipped empty and
 * what the server fills them with covers every route of the route table with
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
#include <stddef.h>

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
/* Where tests/deps.sh installs kubectl and helm when the PATH's are missing
 * or too old (relative to the repository, where the tests run). */
#define DC_TOOLS_DIR ".tools/bin"
/* The tool the tests run: DC_TOOLS_DIR/name when it is there, else name
 * (the PATH's). */
const char *dc_tool(const char *name);

typedef enum { DC_TOOL_OK, DC_TOOL_ABSENT, DC_TOOL_OLD } dc_tool_state;
/* Whether dc_tool("kubectl") renders deploy/ (kustomize v5) and
 * dc_tool("helm") is Helm 3.15 or a newer 3; otherwise why not, in why. */
dc_tool_state dc_kubectl(char *why, size_t n);
dc_tool_state dc_helm(char *why, size_t n);

/* In a cmocka test: skip it without the tool (dc_kubectl or dc_helm), fail
 * it when the tool is too old, saying what to run. */
#define DC_REQUIRE(tool_state)                                            \
	do {                                                              \
		char why_[512];                                           \
		switch (tool_state(why_, sizeof(why_))) {                 \
		case DC_TOOL_OK:                                          \
			break;                                            \
		case DC_TOOL_ABSENT:                                      \
			print_message("%s: skipped\n", why_);            \
			skip();                                           \
			break;                                            \
		default:                                                  \
			fail_msg("%s", why_);                             \
		}                                                         \
	} while (0)

/* `kubectl kustomize dir`, parsed; NULL (and why in err) on failure. */
cJSON *dc_render(const char *dir, char *err, size_t errlen);
/* The objects a shell command prints (YAML documents), parsed; NULL (and why
 * in err) when it fails or its output does not parse. */
cJSON *dc_run_render(const char *cmd, char *err, size_t errlen);
/* The objects of YAML or JSON text (name: for messages); NULL on a parse error. */
cJSON *dc_parse(const char *text, const char *name);

/* A copy of deploy/ (and charts/) in a fresh folder, with a kustomization of
 * one's own in its mine/ that reaches them as ../deploy and ../charts:
 * overrides are rendered there, never in the tree. */
typedef struct dc_sandbox {
	char dir[128];
} dc_sandbox;
int dc_sandbox_make(dc_sandbox *s, const char *kustomization); /* 0 or -1 */
/* `kubectl kustomize` of its mine/, as dc_render. */
cJSON *dc_sandbox_render(const dc_sandbox *s, char *err, size_t errlen);
void dc_sandbox_free(dc_sandbox *s);
/* A sandbox's render, the sandbox gone: kustomization as mine/, after the
 * shell command edit (NULL: none) run in the copy. NULL (and why) on failure. */
cJSON *dc_render_own(const char *kustomization, const char *edit, char *err, size_t errlen);

const cJSON *dc_find(const cJSON *objs, const char *kind, int nth);
const cJSON *dc_find_named(const cJSON *objs, const char *kind, const char *name);
int dc_count(const cJSON *objs, const char *kind);
bool dc_str_in(const cJSON *arr, const char *s);
/* The value after flag in the Deployment's container args, or NULL. */
const char *dc_arg(const cJSON *objs, const char *flag);

/* The ClusterRole that reads the cluster (configurations false) or the one
 * that writes the webhook configurations (true), told apart by their rules,
 * whatever their names; NULL when there is none. */
const cJSON *dc_cluster_role(const cJSON *objs, bool configurations);
/* The Role whose rules name resource ("secrets", "endpointslices"), or NULL. */
const cJSON *dc_role_for(const cJSON *objs, const char *resource);
/* The webhooks the server fills the configurations with (hooks[0]
 * validating, hooks[1] mutating) against its route table and the install's
 * Service: every admission route once, rules of its kind, upstream's
 * selectors, the JobSet hook's matchCondition, failurePolicy Fail, timeout 5. */
void dc_check_hooks(const cJSON *objs, const cJSON *const hooks[2], dc_probs *p);

/* Everything above, on one rendering of the install. */
void dc_check_all(const cJSON *objs, dc_probs *p);

/* Every namespaced object of the install in ns, and the Namespace itself. */
void dc_check_namespace(const cJSON *objs, const char *ns, dc_probs *p);
/* dc_check_all, and the cert-manager overlay's own names: the Issuer the
 * Certificate uses, its Secret as the Deployment mounts it, the DNS names
 * of the Service where it is, the inject-ca-from annotations naming the
 * Certificate where it is; none of the managed mode left. */
void dc_check_cert_manager(const cJSON *objs, dc_probs *p);
/* No string of objs (an install under a namePrefix, nameSuffix or
 * namespace) names an object or namespace of defaults (the same install
 * without them), as a whole or as a word of a longer string, outside labels,
 * images and alert prose. */
void dc_check_names_follow(const cJSON *defaults, const cJSON *objs, dc_probs *p);

/* kustomize's render and the chart's hold the same objects (by kind,
 * namespace and name), field for field, once the labels only Helm sets
 * (helm.sh/chart, app.kubernetes.io/managed-by, instance, version) are put
 * aside; each difference is a problem naming the object and the field. */
void dc_compare_renders(const cJSON *kustomize, const cJSON *chart, dc_probs *p);

/* The PrometheusRule's alerts query metrics the server exports (or
 * kube-state-metrics'), and the three an operator is paged by are there. */
void dc_check_alerts(const cJSON *rule, dc_probs *p);
/* The dashboard ConfigMap: labelled for Grafana's sidecar; every panel
 * queries exported metrics, selected by the $namespace variable; request
 * rate, latency quantiles, denials by route and by reason, error answers by
 * reason, lookups, certificate expiry and memory against the limit are all
 * shown. */
void dc_check_dashboard(const cJSON *cm, dc_probs *p);

#endif
