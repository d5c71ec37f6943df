/*
 * pod/resources.c — a container's ResourceRequirements as kube-apiserver
 * checks them (pkg/apis/core/validation validateResourceRequirements,
 * validateContainerResourceName, ValidateResourceQuantityValue; v1.32
 * texts, where v1.26 said "must be less than or equal to cpu limit" and
 * "must be equal to <name> limit" without the limit's value): resource
 * names, quantities not negative, whole numbers for extended resources,
 * hugepages in whole pages and beside cpu or memory, each request at most
 * its limit, and an extended resource (one outside kubernetes.io,
 * "nvidia.com/gpu") or hugepages with a limit equal to its request. Go
 * walks the maps in random order; the JSON order here.
 */
#include "policy/core/quantity.h"
#include "policy/pod/pod.h"

#include <string.h>

#define HUGEPAGES "hugepages-"
#define NEGATIVE "must be greater than or equal to 0"
#define NAME_HINT \
	"use cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource " \
	"with a domain (nvidia.com/gpu)"

static bool has_prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* helper.IsNativeResource: no domain, or the kubernetes.io one. */
static bool is_native(const char *name)
{
	return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

static bool is_hugepages(const char *name)
{
	return has_prefix(name, HUGEPAGES);
}

/* helper.IsOvercommitAllowed: a request may be below its limit. */
static bool overcommit_allowed(const char *name)
{
	return is_native(name) && !is_hugepages(name);
}

static bool is_cpu_or_memory(const char *name)
{
	return !strcmp(name, "cpu") || !strcmp(name, "memory");
}

/* helper.IsStandardResourceName: the quota names too. */
static bool is_standard_resource(const char *name)
{
	static const char *const names[] = {
		"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
		"requests.ephemeral-storage", "limits.cpu", "limits.memory",
		"limits.ephemeral-storage", "pods", "resourcequotas", "services",
		"replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims",
		"storage", "requests.storage", "services.nodeports", "services.loadbalancers",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return is_hugepages(name) || has_prefix(name, "requests.hugepages-");
}

/* helper.IsExtendedResourceName. */
static bool is_extended(tp_podv *v, const char *name)
{
	if (is_native(name) || has_prefix(name, "requests."))
		return false;
	const char *quota = tp__podv_printf(v, "requests.%s", name);
	return quota && !tp__check_qualified_name(quota);
}

static void bad_name(tp_podv *v, const char *name, const char *msg)
{
	tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, name), NAME_HINT, "%s", msg);
}

/* validateContainerResourceName, at the current path (limits[x]). */
static void check_name(tp_podv *v, const char *name)
{
	bool domain = strchr(name, '/') != NULL;
	if (!domain && (!strcmp(name, "cpu") || !strcmp(name, "memory")))
		return; /* the common case, said at once */
	const char *msg = tp__check_qualified_name(name);
	if (msg)
		bad_name(v, name, msg);
	else if (!domain && !is_standard_resource(name))
		bad_name(v, name, "must be a standard resource type or fully qualified");
	if (!domain) {
		if (strcmp(name, "ephemeral-storage") && !is_hugepages(name))
			bad_name(v, name, "must be a standard resource for containers");
	} else if (!is_native(name) && !is_extended(v, name)) {
		bad_name(v, name, "doesn't follow extended resource name standard");
	}
}

static bool integral(const tp_quantity *q)
{
	if (q->scale >= 0)
		return true;
	int64_t p = 1;
	for (int32_t s = q->scale; s < 0; s++)
		p *= 10;
	return q->value % p == 0;
}

static const char *text(tp_podv *v, const tp_quantity *q)
{
	char buf[TP_QUANTITY_MAX_TEXT];
	if (tp__quantity_format(q, buf, sizeof(buf)))
		return "?";
	return tp__podv_printf(v, "%s", buf);
}

/* ValidateResourceQuantityValue and the hugepage size rule, at the current
 * path. */
static void check_value(tp_podv *v, const char *name, const tp_quantity *q)
{
	tp_quantity zero = { 0, 0, TP_QFMT_DECIMAL_SI };
	if (tp__quantity_cmp(q, &zero) < 0)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, text(v, q)),
			     "use a quantity of 0 or more", NEGATIVE);
	if (is_extended(v, name) && !integral(q))
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, text(v, q)),
			     "extended resources are counted in whole units", "must be an integer");
	if (!is_hugepages(name))
		return;
	tp_quantity page;
	int64_t size = 0, n = 0;
	bool ok = !tp__quantity_parse(name + strlen(HUGEPAGES), &page) && integral(&page) &&
		  !tp__quantity_ceil(&page, &size) && size > 0 && !tp__quantity_ceil(q, &n) &&
		  n % size == 0;
	if (!ok)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, text(v, q)),
			     "give hugepages in whole pages of the size the resource names",
			     "%s is not positive integer multiple of %s", text(v, q), name);
}

/* One request against the limits, at resources (reqPath / limPath). */
static void check_request(tp_podv *v, const char *name, const tp_quantity *q,
			  const cJSON *limits)
{
	const cJSON *lim = tp_member(limits, name);
	tp_quantity l;
	if (lim && !tp__quantity_from_json(lim, &l)) {
		int c = tp__quantity_cmp(q, &l);
		if (c && !overcommit_allowed(name))
			tp__podv_add(v, TP_FIELD_INVALID, ".requests", tp__podv_quote(v, text(v, q)),
				     tp__podv_printf(v, "set requests[%s] and limits[%s] to the "
							"same quantity", name, name),
				     "must be equal to %s limit of %s", name, text(v, &l));
		else if (c > 0)
			tp__podv_add(v, TP_FIELD_INVALID, ".requests", tp__podv_quote(v, text(v, q)),
				     tp__podv_printf(v, "request at most %s of %s, or raise its "
							"limit", text(v, &l), name),
				     "must be less than or equal to %s limit of %s", name,
				     text(v, &l));
	} else if (!lim && !overcommit_allowed(name)) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".limits", NULL,
			     tp__podv_printf(v, "set limits[%s] to %s, equal to its request", name,
					     text(v, q)),
			     "Limit must be set for non overcommitable resources");
	}
}

/* Walk one list (limits or requests); *cpu_mem and *huge say what it holds. */
static void check_list(tp_podv *v, const cJSON *list, bool requests, const cJSON *limits,
		       bool *cpu_mem, bool *huge)
{
	for (const cJSON *it = list ? list->child : NULL; it; it = it->next) {
		tp_quantity q;
		size_t mark = tp__podv_push_key(v, requests ? ".requests" : ".limits", it->string);
		check_name(v, it->string);
		/* a value that is no quantity never gets here: decoding refuses it,
		 * and the schema layer says so */
		bool parsed = !tp__quantity_from_json(it, &q);
		if (parsed)
			check_value(v, it->string, &q);
		tp__podv_pop(v, mark);
		if (parsed && requests)
			check_request(v, it->string, &q, limits);
		*cpu_mem |= is_cpu_or_memory(it->string);
		*huge |= is_hugepages(it->string);
	}
}

int tp__pod_check_resources(tp_podv *v, const cJSON *resources)
{
	const cJSON *limits = tp__mobj(resources, "limits");
	const cJSON *requests = tp__mobj(resources, "requests");
	bool cpu_mem = false, huge = false;
	check_list(v, limits, false, NULL, &cpu_mem, &huge);
	check_list(v, requests, true, limits, &cpu_mem, &huge);
	if (huge && !cpu_mem)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, NULL, NULL,
			     "request or limit cpu or memory beside hugepages",
			     "HugePages require cpu or memory");
	return v->rc;
}
