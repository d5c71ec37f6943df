/*
 * denials.c — trainer_webhook_denials_total{route, reason}: denied verdicts
 * by route and by the class of their first finding (outcome.c's
 * tw_reason_classes: a field error's type, or "request"), so a dashboard
 * shows why writes are refused without a label per message. At most
 * routes x 11 series, and only those that happened are shown.
 */
#include <stdatomic.h>
#include <string.h>

#include "webhook/metrics/metrics.h"

#define MAX_ROUTES 32

static atomic_uint_fast64_t denials[MAX_ROUTES][TW_REASON_CLASSES];

static int class_slot(const char *cls)
{
	for (int i = 0; cls && i < TW_REASON_CLASSES; i++)
		if (!strcmp(tw_reason_classes[i], cls))
			return i;
	return TW_REASON_CLASSES - 2; /* "other" */
}

void tw_metrics_denial(const tw_route *route, const char *reason_class)
{
	ptrdiff_t r = route ? route - tw_routes : -1;
	if (r < 0 || r >= MAX_ROUTES)
		return;
	atomic_fetch_add_explicit(&denials[r][class_slot(reason_class)], 1, memory_order_relaxed);
}

void tw_metrics_denials_reset(void)
{
	memset(denials, 0, sizeof(denials));
}

int tw_metrics_render_denials(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_denials_total Denied verdicts, by route and "
				"by the kind of their first finding (a field error's type, or "
				"request).\n"
				"# TYPE trainer_webhook_denials_total counter\n");
	for (int r = 0; tw_routes[r].path && r < MAX_ROUTES && !rc; r++)
		for (int c = 0; c < TW_REASON_CLASSES && !rc; c++) {
			uint64_t v = atomic_load_explicit(&denials[r][c], memory_order_relaxed);
			if (v)
				rc = tp_buf_addf(o, "trainer_webhook_denials_total{route=\"%s\","
						    "reason=\"%s\"} %llu\n", tw_routes[r].path,
						 tw_reason_classes[c], (unsigned long long)v);
		}
	return rc;
}
