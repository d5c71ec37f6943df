/*
 * internal.h — what policy/ modules share with each other and nobody else,
 * of what core/ implements (what a folder above implements is declared in
 * that folder's header). Not installed; tests may include it to reach
 * internal functions.
 */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include "policy/trainpolicy.h"

/* ------------------------------------------------------------ constants */

#define TP_GROUP_TRAINER   "trainer.kubeflow.org"
#define TP_GROUP_OME       "ome.io"
#define TP_GROUP_JOBSET    "jobset.x-k8s.io"
#define TP_APIVERSION_TRAINER "trainer.kubeflow.org/v1alpha1"
#define TP_APIVERSION_OME     "ome.io/v1beta1"
#define TP_APIVERSION_JOBSET  "jobset.x-k8s.io/v1alpha2"
#define TP_APIVERSION_SCHEDULING "scheduling.k8s.io/v1"

#define TP_LABEL_ANCESTOR   "trainer.kubeflow.org/trainjob-ancestor-step"
#define TP_LABEL_SUPPORT    "trainer.kubeflow.org/support"
#define TP_LABEL_FRAMEWORK  "trainer.kubeflow.org/framework"
#define TP_LABEL_WEBHOOK_VALIDATION "trainer.kubeflow.org/webhook-validation"
#define TP_SUPPORT_DEPRECATED "deprecated"

#define TP_ANCESTOR_TRAINER "trainer"
#define TP_ANCESTOR_DATASET "dataset-initializer"
#define TP_ANCESTOR_MODEL   "model-initializer"

#define TP_CONTAINER_NODE    "node"
#define TP_CONTAINER_DATASET "dataset-initializer"
#define TP_CONTAINER_MODEL   "model-initializer"
#define TP_JOB_LAUNCHER      "launcher"
#define TP_JOB_NODE          "node"

#define TP_DEFAULT_MANAGED_BY "trainer.kubeflow.org/trainjob-controller"
#define TP_MULTIKUEUE         "kueue.x-k8s.io/multikueue"
#define TP_CONTAINER_PORT     29500

#define TP_DEPRECATION_POLICY_URL \
	"https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"

/* Object access (tp_get, tp_get_str, ...) is public: see trainpolicy.h. */

/* Kubernetes name rules (apimachinery validation). Each returns NULL when
 * valid, else the upstream detail message (static string). */
const char *tp__check_dns1035_label(const char *s);
const char *tp__check_dns1123_label(const char *s);
const char *tp__check_dns1123_subdomain(const char *s);
const char *tp__check_label_value(const char *s);
const char *tp__check_qualified_name(const char *s); /* label keys */
/* Every message of IsQualifiedName / IsValidLabelValue for s, in their
 * order (the checks above return the first), into msgs (room for
 * TP_NAME_MSGS_MAX); how many. */
#define TP_NAME_MSGS_MAX 4
size_t tp__qualified_name_msgs(const char *s, const char **msgs);
size_t tp__label_value_msgs(const char *s, const char **msgs);
/* k8s IsDomainPrefixedPath: adds errors at path to res; returns how many. */
int tp__check_domain_prefixed_path(tp_result *res, const char *path, const char *value);

/* s[0..n) without leading and trailing white space as Go's strings.TrimSpace
 * sees it (ASCII and Unicode spaces): the rest is s[*off .. *off + *len). */
void tp__go_trim_space(const char *s, size_t n, size_t *off, size_t *len);

/* ZeroMQ's Z85 of n bytes (n a multiple of 4, else TP_EINVAL), appended. */
int tp__z85_encode(const unsigned char *data, size_t n, tp_buf *out);

/* Strict-profile wording helpers. */
static inline bool tp_strict(const tp_options *opt)
{
	return opt == NULL || opt->profile == TP_PROFILE_STRICT;
}

/* ------------------------------------------------------ shared by rules
 * Small facts several validators and the expansion need (core/runtime_facts.c). */

/* metadata.labels["trainer.kubeflow.org/support"] == "deprecated". */
bool tp__runtime_is_deprecated(const cJSON *runtime);
/* Upstream's deprecation sentence for a runtime of kind k named name
 * ("ClusterTrainingRuntime \"x\" is deprecated and will be removed ..."),
 * written into res as a warning, with prefix ("" or "Referenced "). */
int tp__warn_deprecated(tp_result *res, const char *prefix, tp_kind k, const char *name);
/* A warning that is parts[0..n) end to end, as tp_result_warn(r, "%s%s...")
 * would keep it, without the printf family (a hot path's warnings). */
int tp__result_warn_parts(tp_result *r, const char *const *parts, size_t n);
/* A warning of len bytes already cleaned (tp__warning_clean: the control
 * characters the API server drops a warning for made spaces), copied in
 * without a scan: a text made once per runtime (pod/plan.c). */
int tp__result_warn_clean(tp_result *r, const char *w, size_t len);
void tp__warning_clean(char *w);
/* Upstream's deprecation warning (tp__warn_deprecated) in malloc'd
 * memory, cleaned; NULL when memory ran out. */
char *tp__deprecation_text(const char *prefix, tp_kind k, const char *name);

/* The TrainJob validator (admission/trainjob.c) and defaulter (admission/trainjob_defaults.c)
 * implement the public tp_validate_trainjob and tp_default_trainjob. */

#endif /* TP_INTERNAL_H */
