/*
 * pod/probes.c — a container's probes and lifecycle hooks as kube-apiserver
 * checks them (pkg/apis/core/validation v1.32: validateLivenessProbe,
 * validateReadinessProbe, validateStartupProbe, validateProbe,
 * validateLifecycle, validateHandler and its actions, ValidatePortNumOrName).
 *
 * What the API server's defaulting fills in counts as filled in
 * (pkg/apis/core/v1 SetDefaults_Probe, SetDefaults_HTTPGetAction): a probe's
 * 0 timeoutSeconds, periodSeconds, successThreshold and failureThreshold,
 * an httpGet's empty path and scheme. v1.32's gates at their defaults:
 * PodLifecycleSleepAction on (a sleep hook is kept and checked against the
 * Pod's terminationGracePeriodSeconds), PodLifecycleSleepActionAllowZero
 * off (a zero sleep is refused), ProbeTerminationGracePeriod GA. The same
 * texts in v1.26, which had no sleep hook yet (it came in v1.29).
 */
#include "policy/pod/members.h"

#include <string.h>

#define NONNEG "must be greater than or equal to 0"
#define PORT_HINT "use a port between 1 and 65535, or the name of one of the container's ports"

/* The handlers a probe and a lifecycle hook may hold, in the order
 * validateHandler looks at them: the first present one counts, any other
 * is "more than 1". */
static const char *const probe_kinds[] = { "exec", "httpGet", "tcpSocket", "grpc", NULL };
static const char *const hook_kinds[] = { "exec", "httpGet", "tcpSocket", "sleep", NULL };

/* ValidatePortNumOrName at the current path plus ".port": a number is a
 * port number, a string (an IntOrString's, named true) a port name; absent
 * is the number 0. */
static void check_port(tp_podv *v, const cJSON *action, bool named)
{
	const cJSON *port = tp_member(action, "port");
	if (cJSON_IsString(port)) {
		if (!named)
			return; /* grpc's port is a number: the schema's to report */
		tp__pod_port_name(v, ".port", port->valuestring, PORT_HINT);
		return;
	}
	long long n = 0;
	if (port && !tp_json_is_int(port, &n))
		return; /* the schema's to report */
	if (n < 1 || n > 65535)
		tp__podv_add(v, TP_FIELD_INVALID, ".port", tp__podv_int(v, n), PORT_HINT,
			     "must be between 1 and 65535, inclusive");
}

/* IsHTTPHeaderName: [-A-Za-z0-9]+. */
static bool header_name_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* validateHTTPGetAction; upstream names the headers' list, not the item. */
static void check_http_get(tp_podv *v, const cJSON *get)
{
	check_port(v, get, true);
	const char *scheme = tp__mstr(get, "scheme");
	if (scheme && *scheme && strcmp(scheme, "HTTP") && strcmp(scheme, "HTTPS"))
		tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".scheme", tp__podv_quote(v, scheme),
			     "use HTTP or HTTPS", "supported values: \"HTTP\", \"HTTPS\"");
	const cJSON *headers = tp__marr(get, "httpHeaders");
	for (const cJSON *h = headers ? headers->child : NULL; h; h = h->next) {
		const char *name = tp__mstr(h, "name");
		if (!header_name_ok(name ? name : ""))
			tp__podv_add(v, TP_FIELD_INVALID, ".httpHeaders",
				     tp__podv_quote(v, name ? name : ""),
				     "use letters, digits and '-' (\"X-Request-Id\")",
				     "a valid HTTP header must consist of alphanumeric characters or "
				     "'-' (e.g. 'X-Header-Name', regex used for validation is "
				     "'[-A-Za-z0-9]+')");
	}
}

/* validateSleepAction with AllowPodLifecycleSleepActionZeroValue off. */
static void check_sleep(tp_podv *v, const cJSON *sleep, long long grace)
{
	long long s = 0;
	const cJSON *secs = tp_member(sleep, "seconds");
	if (secs && !tp_json_is_int(secs, &s))
		return;
	if (s <= 0 || s > grace)
		tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_int(v, s),
			     tp__podv_printf(v, "sleep from 1 to %lld seconds, or raise the Pod's "
						"terminationGracePeriodSeconds", grace),
			     "must be greater than 0 and less than terminationGracePeriodSeconds "
			     "(%lld). Enable AllowPodLifecycleSleepActionZeroValue feature gate for "
			     "zero sleep.",
			     grace);
}

static void check_action(tp_podv *v, const char *kind, const cJSON *action, long long grace)
{
	if (!strcmp(kind, "exec")) {
		const cJSON *cmd = tp__marr(action, "command");
		if (!cmd || !cmd->child)
			tp__podv_add(v, TP_FIELD_REQUIRED, ".command", NULL,
				     "give the command to run", "%s", "");
	} else if (!strcmp(kind, "httpGet")) {
		check_http_get(v, action);
	} else if (!strcmp(kind, "sleep")) {
		check_sleep(v, action, grace);
	} else { /* tcpSocket, grpc */
		check_port(v, action, strcmp(kind, "grpc") != 0);
	}
}

/* validateHandler at the current path: exactly one handler of kinds. */
static void check_handler(tp_podv *v, const cJSON *h, const char *const *kinds, long long grace)
{
	const char *const *kinds_start = kinds;
	int n = 0;
	for (; *kinds; kinds++) {
		const cJSON *action = tp__mobj(h, *kinds);
		if (!action)
			continue;
		size_t mark = tp__podv_push_member(v, *kinds);
		if (n++)
			tp__podv_add(v, TP_FIELD_FORBIDDEN, NULL, NULL, "keep one handler",
				     "may not specify more than 1 handler type");
		else
			check_action(v, *kinds, action, grace);
		tp__podv_pop(v, mark);
	}
	if (!n)
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     kinds_start == probe_kinds
				     ? "give the probe one of exec, httpGet, tcpSocket or grpc"
				     : "give the hook one of exec, httpGet, tcpSocket or sleep",
			     "must specify a handler type");
}

/* validateProbe and what each kind of probe adds. */
static void check_probe(tp_podv *v, const cJSON *probe, const char *member, long long grace)
{
	static const char *const counts[] = { "initialDelaySeconds", "timeoutSeconds",
					      "periodSeconds", "successThreshold",
					      "failureThreshold" };
	const cJSON *p = tp__vobj(probe);
	if (!p)
		return;
	size_t mark = tp__podv_push_member(v, member);
	check_handler(v, p, probe_kinds, grace);
	for (int k = 0; k < 5; k++) {
		long long n;
		if (tp__mint(p, counts[k], &n) && n < 0)
			tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", counts[k]),
				     tp__podv_int(v, n), "use 0 or more", NONNEG);
	}
	long long tg;
	bool has_tg = tp__mint(p, "terminationGracePeriodSeconds", &tg);
	if (has_tg && tg <= 0)
		tp__podv_add(v, TP_FIELD_INVALID, ".terminationGracePeriodSeconds",
			     tp__podv_int(v, tg), "use 1 or more, or leave it to the Pod's",
			     "must be greater than 0");
	if (!strcmp(member, "readinessProbe")) {
		if (has_tg)
			tp__podv_add(v, TP_FIELD_INVALID, ".terminationGracePeriodSeconds",
				     tp__podv_int(v, tg), "drop it: a failing readiness probe "
							"kills nothing",
				     "must not be set for readinessProbes");
	} else {
		long long st = 1; /* defaulted from 0 */
		if (tp__mint(p, "successThreshold", &st) && st != 1 && st != 0)
			tp__podv_add(v, TP_FIELD_INVALID, ".successThreshold", tp__podv_int(v, st),
				     "leave successThreshold at 1", "must be 1");
	}
	tp__podv_pop(v, mark);
}

/* The Pod's terminationGracePeriodSeconds, 30 when unset (SetDefaults_PodSpec). */
long long tp__pod_grace_period(const cJSON *spec)
{
	long long g = 30;
	tp__mint(spec, "terminationGracePeriodSeconds", &g);
	return g;
}

int tp__pod_check_probes(tp_podv *v, const cJSON *c, long long grace)
{
	tp_pod_cm m;
	tp__pod_cm_fill(&m, c);
	return tp__pod_check_cm_probes(v, &m, grace);
}

int tp__pod_check_cm_probes(tp_podv *v, const tp_pod_cm *c, long long grace)
{
	const cJSON *lc = tp__vobj(c->lifecycle);
	if (lc) {
		static const char *const hooks[] = { "postStart", "preStop" };
		size_t mark = tp__podv_push(v, ".lifecycle");
		for (int k = 0; k < 2; k++) {
			const cJSON *h = tp__mobj(lc, hooks[k]);
			if (!h)
				continue;
			size_t inner = tp__podv_push_member(v, hooks[k]);
			check_handler(v, h, hook_kinds, grace);
			tp__podv_pop(v, inner);
		}
		tp__podv_pop(v, mark);
	}
	check_probe(v, c->liveness_probe, "livenessProbe", grace);
	check_probe(v, c->readiness_probe, "readinessProbe", grace);
	check_probe(v, c->startup_probe, "startupProbe", grace);
	return v->rc;
}
