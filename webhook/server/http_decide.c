/*
 * webhook/server/http_decide.c — a request's decision: on the connection
 * thread that read it when that cannot block, else on a decider thread
 * (deciders.h).
 *
 * A small body (the API server's reviews are a few KB) is decided where it
 * was read, with lookups limited to the cache: the decision costs tens of
 * microseconds, less than handing it to another thread and back (and a
 * wait for that thread when the deciders are busy). A lookup the cache
 * cannot answer (resolver.h, cache-only) would wait on the API server while
 * every other connection of that thread waits too: such a decision is
 * thrown away, never sent, and the request goes to a decider, which decides
 * it again from the start and may ask. Big bodies always go to a decider.
 *
 * The decision gets an arena of its own, limited to the allowance the
 * request took from the memory budget with its headers; a decision that
 * needs more asks the budget for twice as much and runs again (rare:
 * bodies whose JSON takes more than 8 times their size), and is answered
 * 503 when the budget has no room now, 413 past the most one decision may
 * use. What the answer's log line needs is copied out, and the arena freed,
 * before the answer is queued: nothing of a decision waits for its answer
 * to be sent.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "webhook/admission/expand_api.h"
#include "webhook/server/http_internal.h"

long long tw_http_micros_since(int64_t t0_ns)
{
	return (long long)((tw_mono_ns() - t0_ns) / 1000);
}

static void fail(request *r, int status, const char *msg)
{
	r->status = status;
	r->error = msg;
}

/* /expand is a preview API with its own answers; the rest is admission. */
static int route_answer(const tw_config *cfg, const tw_route *route, const char *body, size_t len,
			tp_arena *arena, tp_buf *out, tw_outcome *oc)
{
	if (route->type == TW_ROUTE_EXPAND)
		return tw_expand_handle(cfg, body, len, arena, out, oc);
	return tw_admission_handle(cfg, route, body, len, arena, out, oc);
}

/* One run of the decision in an arena of r->allow bytes. cache_only: no
 * lookup asks the API server, and *needs_api says whether one had to. */
static int decide_once(request *r, const tw_config *base, tp_arena **arena, bool cache_only,
		       bool *needs_api)
{
	tw_server *s = r->s;
	if (tp_arena_new(arena, r->allow))
		return TP_ENOMEM;
	tw_config cfg = *base;
	tw_resolver rs;
	long long t0_ms = (long long)(r->t0_ns / 1000000);
	/* Lookups (the cache, then the API server) end inside the request's
	 * ?timeout=, and hold nothing once the answer is written. */
	tw_resolver_init(&rs, &s->opt.cluster, cfg.store, *arena,
			 r->deadline_us ? t0_ms + r->deadline_us / 1000 : 0);
	rs.cache_only = cache_only;
	cfg.opt.lookup = &rs.lookup;
	tp_buf_reset(&r->out);
	memset(&r->oc, 0, sizeof(r->oc));
	/* The library's long loops stop at the same ?timeout= (TP_ETIMEDOUT):
	 * a decider is not held deciding what the API server gave up on. */
	tp_deadline dl = { .at_ns = r->t0_ns + (int64_t)r->deadline_us * 1000 };
	tp_deadline *prev = tp_deadline_enter(r->deadline_us ? &dl : NULL);
	int rc = route_answer(&cfg, r->route, r->body.data ? r->body.data : "", r->body.len,
			      *arena, &r->out, &r->oc);
	tp_deadline_leave(prev);
	*needs_api = rs.needs_api;
	tw_resolver_done(&rs);
	return rc == TP_OK && dl.expired ? TP_ETIMEDOUT : rc;
}

/* The outcome's strings into r->kept (they point into the arena). */
static void keep_outcome(request *r)
{
	const char **f[] = { &r->oc.uid,       &r->oc.kind,  &r->oc.namespace_,
			     &r->oc.name,      &r->oc.operation, &r->oc.error,
			     &r->oc.user,      &r->oc.reason,    &r->oc.reason_class };
	size_t at[sizeof(f) / sizeof(*f)];
	tp_buf_reset(&r->kept);
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++) {
		at[i] = r->kept.len;
		if (*f[i] && tp_buf_add(&r->kept, *f[i], strlen(*f[i]) + 1))
			*f[i] = NULL;
	}
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
		if (*f[i])
			*f[i] = r->kept.data + at[i];
}

/* The one way a try's arena is freed: whatever the try ends in (an answer,
 * 504, 413, 503, 500), the outcome the log line and the metrics read after
 * the answer is first copied out of it (the uid and kind a 504 was for);
 * a try thrown away (discard) leaves no outcome at all. Nothing of r points
 * into a freed arena afterwards. */
static void end_try(request *r, tp_arena *arena, bool discard)
{
	if (discard) {
		tp_buf_reset(&r->out);
		memset(&r->oc, 0, sizeof(r->oc));
	} else {
		keep_outcome(r);
	}
	tp_arena_free(arena);
}

/* Decide within the budget, asking for more arena when it runs out. On the
 * connection thread (here), a decision that needed the API server is thrown
 * away: false, and r is as it came, for a decider. */
static bool decide_in_budget(request *r, bool here)
{
	tw_server *s = r->s;
	tw_store_ref *store = tw_server_store_acquire(s);
	if (!store) {
		fail(r, 503, "the runtime store is not loaded yet");
		return true;
	}
	tp_crds *crds = tw_server_crds_acquire(s);
	tw_config cfg = s->opt.base;
	cfg.store = store->store;
	cfg.opt.crds = crds;
	if (s->opt.cluster.kube_minor) /* followed across API-server upgrades */
		cfg.opt.kubernetes_minor = atomic_load(s->opt.cluster.kube_minor);
	cfg.json_only = r->json_body;
	bool decided = true;
	for (;;) {
		tp_arena *arena = NULL;
		bool needs_api = false;
		int rc = decide_once(r, &cfg, &arena, here, &needs_api);
		/* a try that needed the API server is never sent: a decider
		 * decides again, and may ask; one that ran out of arena runs
		 * again when the budget gives more */
		bool again = !needs_api && rc == TP_ENOMEM && arena;
		tw_budget_answer more = again ? tw_budget_more_arena(&s->budget, &r->hold,
								     &r->allow)
					      : TW_BUDGET_NEVER;
		end_try(r, arena, needs_api || (again && more == TW_BUDGET_TAKEN));
		if (again && more == TW_BUDGET_TAKEN)
			continue;
		if (needs_api)
			decided = false;
		else if (again && more != TW_BUDGET_NEVER) {
			r->retry_after = true;
			fail(r, 503, more == TW_BUDGET_PEER
					     ? "this client's requests in flight hold their share of "
					       "the server's memory budget (--memory-budget) and this "
					       "one needs more to decide: retry in a second"
					     : "the server's memory budget (--memory-budget) is taken "
					       "by other requests in flight and this one needs more "
					       "to decide: retry in a second");
		} else if (again) {
			fail(r, 413, "the request needs more memory to decide than one "
				     "request may use (64 MiB, and at most a client's share "
				     "of --memory-budget, 7/16 of it): send a smaller object");
		} else if (rc == TP_ETIMEDOUT) { /* a decision cut short is never an answer */
			fail(r, 504, "the request's ?timeout= passed while it was being decided, "
				     "and the decision was stopped: send a smaller object or "
				     "raise the webhook's timeoutSeconds");
		} else if (rc) {
			fail(r, 500, tp_strerror(rc));
		}
		break;
	}
	tp_crds_unref(crds);
	tw_server_store_release(store);
	return decided;
}

static bool past_timeout(const request *r)
{
	return r->deadline_us && tw_http_micros_since(r->t0_ns) > r->deadline_us;
}

/* here: on the connection thread; false when a decider must decide. */
static bool settle(request *r, bool here)
{
	if (past_timeout(r))
		fail(r, 504, "the request's ?timeout= passed before it could be decided");
	else if (!decide_in_budget(r, here))
		return false;
	if (!r->status && past_timeout(r))
		fail(r, 504, "the request's ?timeout= passed before the answer");
	atomic_store(&r->state, REQ_DECIDED);
	return true;
}

bool tw_http_decide_here(request *r)
{
	return r->body.len <= TW_HTTP_DECIDE_HERE_MAX && settle(r, true);
}

void tw_http_decide(tw_job *job, bool cancelled)
{
	request *r = (request *)((char *)job - offsetof(request, job));
	if (cancelled) {
		fail(r, 503, "the server is shutting down: retry (another replica answers)");
		atomic_store(&r->state, REQ_DECIDED);
	} else {
		settle(r, false);
	}
	MHD_resume_connection(r->conn);
}
