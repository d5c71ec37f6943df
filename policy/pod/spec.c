/*
 * pod/spec.c — a PodTemplateSpec as kube-apiserver checks it
 * (pkg/apis/core/validation ValidatePodTemplateSpec and ValidatePodSpec,
 * v1.32; v1.26 the same texts for these rules): the template's labels, the
 * volumes, the containers, and the Pod-wide fields in ValidatePodSpec's
 * order, those of a few lines here (restartPolicy, dnsPolicy, nodeSelector,
 * readinessGates, tolerations, the names a Pod refers to,
 * activeDeadlineSeconds, overhead), the others in their own files (the
 * securityContext, spec.os, affinity and spreading, DNS, Windows); ephemeral
 * containers have no place in a template. Left to the API server's
 * defaulting or dropped before validation in v1.32: terminationGracePeriod-
 * Seconds (defaulted), resourceClaims (DynamicResourceAllocation is off),
 * hostUsers (UserNamespacesSupport is off), and imagePullSecrets' "only name
 * may be set" (a manifest's LocalObjectReference has nothing else).
 */
#include "policy/pod/members.h"

#include <string.h>

#define LABEL_HINT "use a qualified name as key and a label value of up to 63 characters"

/* s: the member's value when a string. */
static void check_enum(tp_podv *v, const char *s, const char *member, const char *const *ok,
		       const char *supported)
{
	if (!s || !*s)
		return; /* the API server's defaulting fills it in */
	for (; *ok; ok++)
		if (!strcmp(s, *ok))
			return;
	tp__podv_add(v, TP_FIELD_UNSUPPORTED, tp__podv_printf(v, ".%s", member),
		     tp__podv_quote(v, s), NULL, "supported values: %s", supported);
}

/* A name the Pod refers to (DNS-1123 label or subdomain), when set. */
static void check_name(tp_podv *v, const cJSON *m, const char *member, bool subdomain)
{
	const char *s = tp__vstr(m);
	if (!s || !*s)
		return;
	static const char hint[] = "use the object's lower-case name";
	if (!subdomain) {
		tp__pod_dns_label(v, tp__podv_printf(v, ".%s", member), s, hint);
		return;
	}
	const char *msg = tp__check_dns1123_subdomain(s);
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", member),
			     tp__podv_quote(v, s), hint, "%s", msg);
}

static void check_toleration(tp_podv *v, const cJSON *t)
{
	const char *key = tp__mstr(t, "key");
	const char *op = tp__mstr(t, "operator");
	const char *value = tp__mstr(t, "value");
	const char *effect = tp__mstr(t, "effect");
	const char *msg;
	if (!op)
		op = "";
	if (!value)
		value = "";
	if (key && *key && (msg = tp__check_qualified_name(key)))
		tp__podv_add(v, TP_FIELD_INVALID, ".key", tp__podv_quote(v, key), LABEL_HINT, "%s", msg);
	if ((!key || !*key) && strcmp(op, "Exists"))
		tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, op),
			     "give a key, or use operator Exists to tolerate every taint",
			     "operator must be Exists when `key` is empty, which means \"match all "
			     "values and all keys\"");
	if (tp_member(t, "tolerationSeconds") && !cJSON_IsNull(tp_member(t, "tolerationSeconds")) &&
	    (!effect || strcmp(effect, "NoExecute")))
		tp__podv_add(v, TP_FIELD_INVALID, ".effect", tp__podv_quote(v, effect ? effect : ""),
			     "use effect NoExecute with tolerationSeconds",
			     "effect must be 'NoExecute' when `tolerationSeconds` is set");
	if (!*op || !strcmp(op, "Equal")) {
		if ((msg = tp__check_label_value(value)))
			tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, value),
				     LABEL_HINT, "%s", msg);
	} else if (!strcmp(op, "Exists")) {
		if (*value)
			tp__podv_add(v, TP_FIELD_INVALID, ".operator", tp__podv_quote(v, value),
				     "drop the value, or use operator Equal",
				     "value must be empty when `operator` is 'Exists'");
	} else {
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".operator", tp__podv_quote(v, op), NULL,
			     "supported values: \"Equal\", \"Exists\"");
	}
	static const char *const effects[] = { "NoSchedule", "PreferNoSchedule", "NoExecute", NULL };
	if (effect && *effect)
		check_enum(v, effect, "effect", effects,
			   "\"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
}

static void check_tolerations(tp_podv *v, const cJSON *list)
{
	int i = 0;
	for (const cJSON *t = cJSON_IsArray(list) ? list->child : NULL; t; t = t->next, i++) {
		size_t mark = tp__podv_push_index(v, ".tolerations", i);
		check_toleration(v, t);
		tp__podv_pop(v, mark);
	}
}

/* validateReadinessGates: each conditionType a qualified name. */
static void check_readiness_gates(tp_podv *v, const cJSON *list)
{
	int i = 0;
	for (const cJSON *g = cJSON_IsArray(list) ? list->child : NULL; g; g = g->next, i++) {
		const char *type = tp__mstr(g, "conditionType");
		const char *msg = tp__check_qualified_name(type ? type : "");
		if (!msg)
			continue;
		size_t mark = tp__podv_push_index(v, ".readinessGates", i);
		tp__podv_add(v, TP_FIELD_INVALID, ".conditionType", tp__podv_quote(v, type ? type : ""),
			     "name the condition with a qualified name (\"example.com/ready\")", "%s",
			     msg);
		tp__podv_pop(v, mark);
	}
}

/* ValidateRuntimeClassName: any string given, "" too, is a subdomain. */
static void check_runtime_class(tp_podv *v, const cJSON *m)
{
	const char *s = tp__vstr(m);
	const char *msg = s ? tp__check_dns1123_subdomain(s) : NULL;
	if (msg)
		tp__podv_add(v, TP_FIELD_INVALID, ".runtimeClassName", tp__podv_quote(v, s),
			     "use a RuntimeClass's name (\"nvidia\")", "%s", msg);
}

/* validateOverhead: ValidateContainerResourceRequirements of limits that
 * are the overhead, so upstream's path has ".limits" in it. */
static void check_overhead(tp_podv *v, const cJSON *m)
{
	const cJSON *overhead = tp__vobj(m);
	if (!overhead)
		return;
	/* read-only views, nothing allocated: the overhead named "limits" */
	cJSON limits = *overhead;
	limits.next = limits.prev = NULL;
	limits.string = "limits";
	cJSON reqs = { .type = cJSON_Object, .child = &limits };
	size_t mark = tp__podv_push(v, ".overhead");
	tp__pod_check_resources(v, &reqs);
	tp__podv_pop(v, mark);
}

/* The Pod spec's members s (read once, pod/members.h). */
static int check_spec_fields(tp_podv *v, const tp_pod_sm *s)
{
	static const char *const restart[] = { "Always", "OnFailure", "Never", NULL };
	static const char *const dns[] = { "ClusterFirstWithHostNet", "ClusterFirst", "Default",
					   "None", NULL };
	check_enum(v, tp__vstr(s->restart_policy), "restartPolicy", restart,
		   "\"Always\", \"OnFailure\", \"Never\"");
	check_enum(v, tp__vstr(s->dns_policy), "dnsPolicy", dns,
		   "\"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"");
	tp__pod_check_labels(v, ".nodeSelector", s->node_selector);
	tp__pod_check_pod_security_context(v, s);
	tp__pod_check_affinity(v, s);
	tp__pod_check_dns_config(v, s);
	check_readiness_gates(v, s->readiness_gates);
	tp__pod_check_scheduling(v, s);
	tp__pod_check_host_process(v, s);
	check_name(v, s->service_account_name, "serviceAccountName", true);
	check_name(v, s->node_name, "nodeName", true);
	long long ads;
	if (s->active_deadline_seconds && tp_json_is_int(s->active_deadline_seconds, &ads) &&
	    (ads < 1 || ads > 2147483647LL))
		tp__podv_add(v, TP_FIELD_INVALID, ".activeDeadlineSeconds", tp__podv_int(v, ads),
			     "use a number of seconds from 1 to 2147483647",
			     "must be between 1 and 2147483647, inclusive");
	check_name(v, s->hostname, "hostname", false);
	check_name(v, s->subdomain, "subdomain", false);
	check_tolerations(v, s->tolerations);
	tp__pod_check_host_aliases(v, s);
	check_name(v, s->priority_class_name, "priorityClassName", true);
	check_runtime_class(v, s->runtime_class_name);
	tp__pod_check_preemption(v, s);
	check_overhead(v, s->overhead);
	tp__pod_check_os(v, s);
	return v->rc;
}

int tp__pod_check_spec_fields(tp_podv *v, const cJSON *spec)
{
	tp_pod_sm s;
	tp__pod_sm_fill(&s, spec);
	return check_spec_fields(v, &s);
}

int tp__pod_check_template(tp_podv *v, const cJSON *tmpl)
{
	/* the Pod spec's members read once for all its checks */
	tp_pod_sm s;
	tp__pod_sm_fill(&s, tp__mobj(tmpl, "spec"));
	return tp__pod_check_template_sm(v, tmpl, &s);
}

int tp__pod_check_template_sm(tp_podv *v, const cJSON *tmpl, const tp_pod_sm *s)
{
	/* upstream: fldPath.Child("labels"), without "metadata" */
	tp__pod_check_labels(v, ".labels", tp_get(tmpl, "metadata.labels"));
	tp__pod_check_pod_annotations(v, tmpl);
	size_t mark = tp__podv_push(v, ".spec");
	tp_nameset volumes;
	tp__nameset_init(&volumes, v->arena);
	tp__pod_check_volumes(v, s->volumes, &volumes);
	tp__pod_check_sm_containers(v, s, &volumes);
	check_spec_fields(v, s);
	const cJSON *eph = tp__varr(s->ephemeral_containers);
	if (eph && eph->child)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".ephemeralContainers", NULL,
			     "drop ephemeralContainers: they are added to running Pods only",
			     "ephemeral containers not allowed in pod template");
	tp__podv_pop(v, mark);
	return v->rc;
}
