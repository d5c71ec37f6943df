/*
 * deploycheck_metrics.c — the monitoring pieces against the server's own
 * /metrics: every metric an alert or a dashboard panel queries is one the
 * server exports (webhook/metrics/: its own, the denials by reason, the
 * process_* every Prometheus client exports), or kube-state-metrics'; and
 * they cover what an operator is paged for and looks at.
 */
#include "tests/support/deploycheck.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/metrics/metrics.h"

/* The server's exposition with every optional family on; false (reported)
 * when it cannot be rendered. */
static bool exposition(tp_buf *m, dc_probs *p)
{
	tw_metrics_reset();
	tw_metrics_watch_enable();
	tw_metrics_certmgr_enable();
	tp_buf_init(m, 0);
	if (tw_metrics_render(m) || !m->data) {
		dc_prob(p, "the server's /metrics could not be rendered");
		tp_buf_free(m);
		return false;
	}
	return true;
}

static bool exported(const char *text, const char *name, size_t len)
{
	static const char *const others[] = {
		/* kube-state-metrics (process_* are the server's own now) */
		"kube_deployment_status_replicas_available", "kube_pod_container_resource_limits",
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (strlen(others[i]) == len && !strncmp(name, others[i], len))
			return true;
	char typed[192];
	snprintf(typed, sizeof(typed), "# TYPE %.*s ", (int)len, name);
	if (strstr(text, typed))
		return true;
	/* a histogram's series: its family is typed histogram */
	static const char *const parts[] = { "_bucket", "_sum", "_count" };
	for (int i = 0; i < 3; i++) {
		size_t pl = strlen(parts[i]);
		if (len > pl && !strncmp(name + len - pl, parts[i], pl)) {
			snprintf(typed, sizeof(typed), "# TYPE %.*s histogram", (int)(len - pl), name);
			return strstr(text, typed) != NULL;
		}
	}
	return false;
}

/* Every metric name of expr (an identifier that starts like one of ours,
 * the process's or kube-state-metrics') is exported, and in a dashboard
 * panel selected by the $namespace variable; how many there were. */
static int check_expr(const char *where, const char *expr, const char *text, bool panel,
		      dc_probs *p)
{
	int n = 0;
	for (const char *q = expr; *q;) {
		size_t len = strspn(q, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_:0123456789");
		if (!len) {
			q++;
			continue;
		}
		bool ours = !strncmp(q, "trainer_webhook_", 16) || !strncmp(q, "process_", 8);
		if ((ours || !strncmp(q, "kube_", 5)) && !isdigit((unsigned char)*q)) {
			n++;
			if (!exported(text, q, len))
				dc_prob(p, "%s: metric %.*s is not one the server (or kube-state-metrics) "
					   "exports", where, (int)len, q);
			if (panel && ours && strncmp(q + len, "{namespace=~\"$namespace\"", 24))
				dc_prob(p, "%s: %.*s not selected by the $namespace variable", where,
					(int)len, q);
		}
		q += len;
	}
	return n;
}

void dc_check_alerts(const cJSON *rule, dc_probs *p)
{
	tp_buf m;
	if (!exposition(&m, p))
		return;
	const cJSON *g, *r;
	int n = 0;
	cJSON_ArrayForEach(g, tp_get_array(rule, "spec.groups"))
		cJSON_ArrayForEach(r, tp_get_array(g, "rules"))
	{
		char where[160];
		snprintf(where, sizeof(where), "PrometheusRule %s", tp_get_str(r, "alert"));
		const char *expr = tp_get_str(r, "expr");
		n += expr ? check_expr(where, expr, m.data, false, p) : 0;
	}
	if (n < 4)
		dc_prob(p, "PrometheusRule: want alerts on the server's metrics, found %d uses", n);
	const char *alerts[] = { "TrainerWebhookCertificateExpiresSoon", "TrainerWebhookLookupErrors",
				 "TrainerWebhookNoReadyReplica" };
	for (size_t i = 0; i < 3; i++) {
		bool found = false;
		cJSON_ArrayForEach(g, tp_get_array(rule, "spec.groups"))
			cJSON_ArrayForEach(r, tp_get_array(g, "rules"))
				found |= tp_get_str(r, "alert") && !strcmp(tp_get_str(r, "alert"), alerts[i]);
		if (!found)
			dc_prob(p, "PrometheusRule: no alert %s", alerts[i]);
	}
	tp_buf_free(&m);
}

/* What the dashboard must show, each a fragment some panel's query holds. */
static const struct {
	const char *what, *part;
} wanted_panels[] = {
	{ "request rate", "rate(trainer_webhook_requests_total" },
	{ "latency quantiles", "histogram_quantile(0.99, sum by (le) (rate("
			       "trainer_webhook_request_duration_seconds_bucket" },
	{ "denials", "verdict=\"denied\"" },
	{ "denials by reason", "sum by (reason) (rate(trainer_webhook_denials_total" },
	{ "error answers by reason", "sum by (reason) (rate(trainer_webhook_error_answers_total" },
	{ "lookups", "rate(trainer_webhook_lookups_total" },
	{ "certificate expiry", "trainer_webhook_certificate_expiry_timestamp_seconds" },
	{ "memory", "process_resident_memory_bytes" },
	{ "the memory limit", "kube_pod_container_resource_limits" },
};

void dc_check_dashboard(const cJSON *cm, dc_probs *p)
{
	const cJSON *data = tp_get_object(cm, "data");
	const cJSON *file = cJSON_GetArrayItem(data, 0);
	cJSON *dash = cJSON_IsString(file) ? cJSON_Parse(file->valuestring) : NULL;
	if (!dash) {
		dc_prob(p, "ConfigMap %s: no dashboard JSON in its data", tp_meta_name(cm));
		return;
	}
	tp_buf m, all = TP_BUF_INIT(0);
	if (!exposition(&m, p)) {
		cJSON_Delete(dash);
		return;
	}
	const cJSON *panel, *t;
	cJSON_ArrayForEach(panel, cJSON_GetObjectItem(dash, "panels"))
	{
		char where[192];
		snprintf(where, sizeof(where), "dashboard panel \"%s\"", tp_get_str(panel, "title"));
		cJSON_ArrayForEach(t, cJSON_GetObjectItem(panel, "targets"))
		{
			const char *expr = tp_get_str(t, "expr");
			if (!expr || !check_expr(where, expr, m.data, true, p))
				dc_prob(p, "%s: a query on none of the server's metrics", where);
			tp_buf_adds(&all, expr ? expr : "");
			tp_buf_addc(&all, '\n');
		}
	}
	tp_buf_addc(&all, '\0');
	for (size_t i = 0; i < sizeof(wanted_panels) / sizeof(wanted_panels[0]); i++)
		if (!strstr(all.data, wanted_panels[i].part))
			dc_prob(p, "dashboard: no panel shows %s (%s)", wanted_panels[i].what,
				wanted_panels[i].part);
	const char *label = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		tp_get_object(cm, "metadata.labels"), "grafana_dashboard"));
	if (!label || strcmp(label, "1"))
		dc_prob(p, "ConfigMap %s: want the label grafana_dashboard: \"1\" Grafana's sidecar "
			   "loads dashboards by", tp_meta_name(cm));
	tp_buf_free(&all);
	tp_buf_free(&m);
	cJSON_Delete(dash);
}
