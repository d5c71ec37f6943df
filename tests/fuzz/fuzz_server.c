/*
 * fuzz_server.c — the server's request path (webhook/server/http_decide.c)
 * on arbitrary bodies: a request as http.c makes it from its headers (route,
 * Content-Type, ?timeout=, its share of the memory budget), decided by
 * tw_http_decide_here as the connection thread decides it, then its
 * outcome read as tw_http_completed reads it for the metrics and the
 * request log, and its budget given back.
 *
 * The first four bytes are the request's headers, the rest its body:
 *   [0] bits 0-2: the route, of tw_routes' eight that decide; bit 3: /expand
 *       sent as application/json (the admission routes always are); bit 4:
 *       the kubeflow profile, else strict; bit 5: an API server behind the
 *       cache, so that a lookup the cache cannot answer throws the decision
 *       away for a decider; bit 6: --strict-action warn; bit 7: the
 *       built-in CRDs
 *   [1] the decision's first arena: 0 what the server gives
 *       (tw_budget_arena_for), else that many 4 KiB
 *   [2] the memory budget, by its value mod 3: none; one whose client's
 *       share is this request's body and arena (more arena never fits:
 *       413); room, all of it held by other requests (more arena does not
 *       fit now: 503)
 *   [3] ?timeout=: 0 none, else that many 8 µs, which passes before,
 *       during or after the decision (504)
 * tests/fuzz/run.sh gives every seed some of these headers.
 *
 * Invariants: a request decided here has one answer: an error (r->status
 * 413, 500, 503 or 504, with its text; Retry-After only on 503) or the
 * route's own, which fuzz_answer.h accepts; every string of its outcome is
 * readable once the decision's arena is gone (ASan says when not); a
 * request not decided here is as it came; the budget is whole again once
 * the request is freed.
 *
 * Not reached: tw_http_decide (a decider's run, for bodies over
 * TW_HTTP_DECIDE_HERE_MAX and decisions the cache could not make) and
 * tw_http_completed itself, which both call libmicrohttpd on the request's
 * connection, which only a running daemon has. The decision they share,
 * decide_in_budget() in http_decide.c, is the one reached here.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_answer.h"
#include "webhook/cli/builtin_crds.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/server/http_internal.h"

#define FZ_HEADER 4

static tw_server srv;
static tp_crds *crds;
static tw_cluster offline;   /* the store is the whole truth */
static tw_cluster behind;    /* runtimes and PriorityClasses cached, the rest asked */
static const tw_route *routes[8];
static size_t nroutes;
static size_t outcome_bytes; /* read, so that no read is left out */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An API server that is never called: a cache-only decision only asks
 * whether there is one (resolver.h). Nothing listens on port 9. */
static tw_kubeapi *unreachable_api(void)
{
	tw_kube_config kc;
	tw_kubeapi *api = NULL;
	char err[256];
	FZ_ASSERT(tw_kube_config_explicit(&kc, "http://127.0.0.1:9", NULL, NULL, err,
					  sizeof(err)) == 0);
	FZ_ASSERT(tw_kubeapi_new(&kc, &api, err, sizeof(err)) == 0);
	tw_kube_config_free(&kc);
	return api;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	FZ_ASSERT(pthread_mutex_init(&srv.store_lock, NULL) == 0);
	srv.opt.base.opt.now = "2026-08-21T10:15:30Z";
	srv.opt.base.max_body = TW_DEFAULT_MAX_BODY;
	tw_server_set_store(&srv, fz_store_new(0));
	FZ_ASSERT(tp_crds_new(&crds) == TP_OK);
	FZ_ASSERT(tw_builtin_crds_load(crds, stderr) == TP_OK);
	behind.api = unreachable_api();
	behind.cached = 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME | 1u << TP_KIND_TRAINING_RUNTIME |
			1u << TP_KIND_PRIORITY_CLASS;
	for (const tw_route *r = tw_routes; r->path; r++)
		if (r->type != TW_ROUTE_HEALTH && nroutes < sizeof(routes) / sizeof(*routes))
			routes[nroutes++] = r;
	FZ_ASSERT(nroutes == 8);
	return 0;
}

/* The server's settings the first header byte chooses. */
static void configure(uint8_t h)
{
	srv.opt.base.opt.profile = h & 0x10 ? TP_PROFILE_KUBEFLOW : TP_PROFILE_STRICT;
	srv.opt.cluster = h & 0x20 ? behind : offline;
	srv.opt.base.strict_warn = h & 0x40;
	tw_server_set_crds(&srv, h & 0x80 ? crds : NULL);
}

static tw_hold others[8]; /* the other requests in flight (none of a peer) */

/* Holds for other requests, as many as it takes, until what class cls may
 * reach is full but for leave bytes. */
static void others_hold_all_but(tw_budget_class cls, size_t leave)
{
	size_t reach = cls == TW_HOLD_SMALL ? srv.budget.limit
					    : srv.budget.limit - srv.budget.lane;
	size_t rest = reach - leave;
	for (size_t i = 0; rest && i < sizeof(others) / sizeof(*others); i++) {
		size_t n = rest < srv.budget.peer_share ? rest : srv.budget.peer_share;
		others[i].cls = TW_HOLD_SMALL;
		FZ_ASSERT(tw_budget_take(&srv.budget, &others[i], n) == TW_BUDGET_TAKEN);
		rest -= n;
	}
	FZ_ASSERT(rest == 0);
}

/* What http.c makes of the headers (check_budget) and of the body as it
 * arrives and once it is in (charge): the request holds its body and its
 * first arena. Returns the bytes the other requests in flight hold. */
static size_t request_init(request *r, const uint8_t *h, const uint8_t *body, size_t len)
{
	memset(r, 0, sizeof(*r));
	memset(others, 0, sizeof(others));
	r->s = &srv;
	r->route = routes[(h[0] & 7) % nroutes];
	r->json_body = r->route->type != TW_ROUTE_EXPAND || h[0] & 8;
	r->deadline_us = h[3] * 8LL;
	tp_buf_init(&r->body, srv.opt.base.max_body);
	tp_buf_init(&r->out, 0);
	tp_buf_init(&r->kept, 0);
	atomic_init(&r->state, REQ_READING);
	r->length = len;
	r->hold.cls = tw_budget_class_of(len);
	r->allow = h[1] ? (size_t)h[1] * 4096 : tw_budget_arena_for(len);
	size_t need = len + r->allow;
	switch (h[2] % 3) {
	case 0: tw_budget_init(&srv.budget, 0); break;
	case 1: /* a client's share (7/16) is need, give or take a few bytes */
		tw_budget_init(&srv.budget, need * 16 / 7 + 16);
		break;
	default: /* room for twice need in a share, all held by others but need */
		tw_budget_init(&srv.budget, need * 8 + 64);
		others_hold_all_but(r->hold.cls, need);
	}
	size_t held = tw_budget_used(&srv.budget);
	FZ_ASSERT(tw_budget_take(&srv.budget, &r->hold, need) == TW_BUDGET_TAKEN);
	FZ_ASSERT(tp_buf_add(&r->body, body, len) == TP_OK);
	r->t0_ns = tw_mono_ns();
	return held;
}

/* Every string of the outcome, as the request log and the metrics read
 * them after the answer: each byte, up to its NUL. */
static void read_outcome(const tw_outcome *oc)
{
	const char *s[] = { oc->uid,   oc->kind, oc->namespace_, oc->name,	   oc->operation,
			    oc->error, oc->user, oc->reason,	 oc->reason_class };
	for (size_t i = 0; i < sizeof(s) / sizeof(*s); i++)
		outcome_bytes += s[i] ? strlen(s[i]) : 0;
	bool known = !oc->reason_class;
	for (size_t i = 0; i < TW_REASON_CLASSES && !known; i++)
		known = !strcmp(oc->reason_class, tw_reason_classes[i]);
	FZ_ASSERT(known);
}

/* The answer of a request decided here, as http.c's answer_decided sends
 * it: an error answer becomes {"error": "..."} with its status. */
static void check_decided(request *r)
{
	FZ_ASSERT(atomic_load(&r->state) == REQ_DECIDED);
	if (!r->status) {
		FZ_ASSERT(!r->retry_after);
		if (r->route->type == TW_ROUTE_EXPAND)
			fz_check_expand(&r->oc, &r->out);
		else
			fz_check_admission(&r->oc, &r->out);
		return;
	}
	FZ_ASSERT(r->status == 413 || r->status == 500 || r->status == 503 || r->status == 504);
	FZ_ASSERT(r->error && *r->error);
	FZ_ASSERT(!r->retry_after || r->status == 503);
	tp_buf_reset(&r->out);
	tp_arena *prev = tp_arena_enter(NULL);
	FZ_ASSERT(tw_json_error(r->error, &r->out) == TP_OK);
	tp_arena_leave(prev);
	r->oc.error = r->error;
	r->oc.http_status = r->status;
}

/* Thrown away for a decider: nothing of the decision is left. */
static void check_undecided(const request *r)
{
	static const tw_outcome none;
	FZ_ASSERT(atomic_load(&r->state) == REQ_READING);
	FZ_ASSERT(!r->status && !r->error && !r->retry_after);
	FZ_ASSERT(r->out.len == 0);
	FZ_ASSERT(!memcmp(&r->oc, &none, sizeof(none)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < FZ_HEADER)
		return 0;
	request r;
	configure(data[0]);
	size_t held = request_init(&r, data, data + FZ_HEADER, size - FZ_HEADER);
	if (tw_http_decide_here(&r)) {
		check_decided(&r);
		read_outcome(&r.oc);
	} else {
		check_undecided(&r);
	}
	/* request_free: the request's share back, and the others' */
	tw_budget_release(&srv.budget, &r.hold);
	FZ_ASSERT(tw_budget_used(&srv.budget) == held);
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
		tw_budget_release(&srv.budget, &others[i]);
	FZ_ASSERT(tw_budget_used(&srv.budget) == 0);
	tp_buf_free(&r.body);
	tp_buf_free(&r.out);
	tp_buf_free(&r.kept);
	return 0;
}
