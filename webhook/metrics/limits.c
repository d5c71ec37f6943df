/*
 * limits.c — the server's limits on hostile load: the memory budget of the
 * requests in flight (its size, its use, the requests answered at once for
 * it: server/budget.c) and the requests refused for their HTTP framing, by
 * status (server/http_head.c).
 */
#include <stdatomic.h>
#include <string.h>

#include "webhook/metrics/metrics.h"

static const int malformed_codes[] = { 400, 411, 413, 414, 431, 501, 505 };
#define MALFORMED_CODES (sizeof(malformed_codes) / sizeof(*malformed_codes))

static struct {
	atomic_int_fast64_t budget_bytes, budget_held, budget_conns;
	atomic_uint_fast64_t budget_refused;
	atomic_uint_fast64_t malformed[MALFORMED_CODES];
} lim;

#define ADD(v, n) atomic_fetch_add_explicit(&(v), (n), memory_order_relaxed)
#define GET(v) atomic_load_explicit(&(v), memory_order_relaxed)

void tw_metrics_limits_reset(void)
{
	memset(&lim, 0, sizeof(lim)); /* atomics of integer type: zero bytes are zero */
}

void tw_metrics_budget_set(uint64_t limit)
{
	atomic_store(&lim.budget_bytes, (int_fast64_t)limit);
}

void tw_metrics_budget_held(int64_t delta)
{
	ADD(lim.budget_held, delta);
}

void tw_metrics_budget_conns(int64_t delta)
{
	ADD(lim.budget_conns, delta);
}

void tw_metrics_budget_refused(void)
{
	ADD(lim.budget_refused, 1);
}

void tw_metrics_malformed(int status)
{
	for (size_t i = 0; i < MALFORMED_CODES; i++)
		if (malformed_codes[i] == status)
			ADD(lim.malformed[i], 1);
}

int tw_metrics_render_limits(tp_buf *o)
{
	int rc = tp_buf_adds(o, "# HELP trainer_webhook_malformed_requests_total Requests refused "
				"for their HTTP framing (RFC 9112) and closed, by status.\n"
				"# TYPE trainer_webhook_malformed_requests_total counter\n");
	for (size_t i = 0; i < MALFORMED_CODES && !rc; i++)
		rc = tp_buf_addf(o, "trainer_webhook_malformed_requests_total{code=\"%d\"} %llu\n",
				 malformed_codes[i], (unsigned long long)GET(lim.malformed[i]));
	return rc ? rc : tp_buf_addf(
		o,
		"# HELP trainer_webhook_memory_budget_bytes Memory the requests in flight and the "
		"open connections may hold together (bodies, decisions, connections; "
		"--memory-budget, 0: no limit).\n"
		"# TYPE trainer_webhook_memory_budget_bytes gauge\n"
		"trainer_webhook_memory_budget_bytes %lld\n"
		"# HELP trainer_webhook_memory_budget_used_bytes Memory of the budget held by the "
		"requests in flight and the open connections now.\n"
		"# TYPE trainer_webhook_memory_budget_used_bytes gauge\n"
		"trainer_webhook_memory_budget_used_bytes %lld\n"
		"# HELP trainer_webhook_memory_budget_connections_bytes Of which the open "
		"connections hold (48 KiB each).\n"
		"# TYPE trainer_webhook_memory_budget_connections_bytes gauge\n"
		"trainer_webhook_memory_budget_connections_bytes %lld\n"
		"# HELP trainer_webhook_memory_budget_refused_total Requests answered at once "
		"because what they needed of the memory budget did not fit.\n"
		"# TYPE trainer_webhook_memory_budget_refused_total counter\n"
		"trainer_webhook_memory_budget_refused_total %llu\n",
		(long long)GET(lim.budget_bytes), (long long)GET(lim.budget_held),
		(long long)GET(lim.budget_conns), (unsigned long long)GET(lim.budget_refused));
}
