/*
 * webhook/server/budget.h — how much memory the requests in flight and the
 * open connections may hold together (budget.c), who may hold which part of
 * it, and where the default comes from: the container's memory limit
 * (cgroup.c).
 *
 * Memory is charged for what is there, never for what a peer announces: a
 * request's body as its bytes arrive, its decision's arena once the body is
 * in, a connection's own buffers and TLS state while it is open. What does
 * not fit is answered at once (503 and Retry-After; 413 for what could never
 * fit) or, for a connection, closed at accept, so that no crowd of peers,
 * silent or busy, carries the process past its limit into an OOM kill, and
 * none can lock the budget by announcing bodies it never sends.
 *
 * Three parts keep one kind of holder from starving another:
 *   - the lane, an eighth of the budget, is for small requests only (bodies
 *     of at most TW_BUDGET_SMALL_MAX: every review the API server sends
 *     about an ordinary object), so big bodies never take the last of it;
 *   - connections may hold at most half of the budget;
 *   - the requests of one peer (one address) may hold at most a quarter,
 *     so one address cannot take what every other is waiting for.
 */
#ifndef TW_BUDGET_H
#define TW_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "webhook/server/peers.h"

/* What a decision's arena may use at first, from the body's size: a body
 * parsed into JSON nodes and checked against its CRD takes about 7 times
 * its size (a TrainJob of 2.9 MB: 20.6 MB), a list of small objects up to
 * 14 times (measured); 8 times, and once more for the arena's block
 * rounding, covers most shapes, and a decision that needs more asks again
 * (tw_budget_more_arena). At least 256 KiB: what a small review with a
 * looked-up runtime uses, a fraction of a real budget. */
#define TW_BUDGET_ARENA_FACTOR 9
#define TW_BUDGET_ARENA_MIN ((size_t)256 * 1024)
/* The most one decision may use, budget or not (the arena's own bound). */
#define TW_BUDGET_ARENA_MAX ((size_t)64 * 1024 * 1024)
/* Requests of at most this many bytes may use the lane: 32 KiB, several
 * times the API server's usual review (1 to 5 KB; an UPDATE of a large
 * runtime with its managedFields, some 20 KB). */
#define TW_BUDGET_SMALL_MAX ((size_t)32 * 1024)
/* What one open connection holds, charged while it is open: libmicrohttpd's
 * pool (16 KiB, server.c), GnuTLS's session with its record buffers, and
 * malloc's slack between them (measured: 682 peers halfway through their
 * handshakes took 48 KiB of VmRSS each). Once past its handshake a
 * connection holds less (300 kept alive after one review each: 30 KiB
 * each), which leaves room for the at most TW_TLS_AHEAD (4 KiB) bytes it
 * may keep read ahead between two reads (tls_ahead.c). */
#define TW_BUDGET_CONN_COST ((size_t)48 * 1024)

typedef enum tw_budget_class {
	TW_HOLD_SMALL, /* a request of at most TW_BUDGET_SMALL_MAX bytes */
	TW_HOLD_LARGE, /* any other request: never the lane */
} tw_budget_class;

typedef enum tw_budget_answer {
	TW_BUDGET_TAKEN = 0,
	TW_BUDGET_BUSY,  /* not now: others hold the rest (503, Retry-After) */
	TW_BUDGET_PEER,  /* not now: this peer's requests hold its share (503) */
	TW_BUDGET_NEVER, /* never: more than its class may ever hold (413) */
} tw_budget_answer;

typedef struct tw_budget {
	size_t limit;           /* bytes; 0: no budget (every take succeeds) */
	size_t lane;            /* of which only small requests may use */
	size_t conn_max;        /* of which connections may hold at most */
	size_t peer_share;      /* what one peer's requests may hold together */
	atomic_size_t used;     /* bytes held now, by everyone */
	atomic_size_t conn_used; /* of which by connections */
} tw_budget;

/* What one request took, its peer's share counted too when it has one.
 * Give it back with tw_budget_release. */
typedef struct tw_hold {
	tw_budget_class cls;
	tw_peer *peer; /* NULL: no share counted (no address) */
	size_t held;
} tw_hold;

void tw_budget_init(tw_budget *b, size_t limit);
/* Take n bytes more for h (nothing taken unless TW_BUDGET_TAKEN). */
tw_budget_answer tw_budget_take(tw_budget *b, tw_hold *h, size_t n);
/* Would n bytes more for h fit now? What tw_budget_take would answer,
 * nothing taken: a request whose whole need does not fit beside what is
 * held now is answered before its body is read, not halfway through it. */
tw_budget_answer tw_budget_fits_now(const tw_budget *b, const tw_hold *h, size_t n);
/* Give back everything h holds. */
void tw_budget_release(tw_budget *b, tw_hold *h);
/* Could a holder of class cls ever hold n bytes (with nothing else held)?
 * TW_BUDGET_TAKEN (nothing is taken) or TW_BUDGET_NEVER. */
tw_budget_answer tw_budget_could(const tw_budget *b, tw_budget_class cls, size_t n);
/* The most a holder of class cls may ever hold (with a budget): the limit
 * a TW_BUDGET_NEVER enforced, which its 413 states. */
size_t tw_budget_most(const tw_budget *b, tw_budget_class cls);
size_t tw_budget_used(const tw_budget *b);
/* The class of a request whose body is len bytes. */
tw_budget_class tw_budget_class_of(size_t len);
/* The first arena allowance for a body of len bytes. */
size_t tw_budget_arena_for(size_t len);
/* A decision that ran out of its allowance *allow: take more for h (twice
 * as much, up to TW_BUDGET_ARENA_MAX) and update *allow. TW_BUDGET_NEVER
 * past TW_BUDGET_ARENA_MAX or more than its class may hold. */
tw_budget_answer tw_budget_more_arena(tw_budget *b, tw_hold *h, size_t *allow);
/* A new connection: true when its TW_BUDGET_CONN_COST fits (connections
 * hold at most half the budget, and never the lane). Nothing is taken:
 * open and close count it while it lives (a few connections accepted at
 * once may pass the bound by their cost, never more). */
bool tw_budget_conn_fits(const tw_budget *b);
void tw_budget_conn_open(tw_budget *b);
void tw_budget_conn_close(tw_budget *b);
/* How many connections a budget of limit bytes holds (0: no budget). */
unsigned tw_budget_max_conns(size_t limit);

/* The container's memory limit in bytes, from cgroup v2's memory.max or
 * v1's memory.limit_in_bytes of the process's own cgroup (the smallest on
 * its way up to the root). root prefixes /proc and /sys (tests; "" for the
 * real ones). 0 with *out set, -1 when no limit is set or none can be read. */
int tw_cgroup_memory_limit(const char *root, uint64_t *out);
/* The default budget: half the container's limit (the rest is the binary,
 * its caches and malloc's slack); without a limit, half the machine's
 * memory, at most 1 GiB. source says which. */
size_t tw_budget_default(const char *root, char *source, size_t n);

#endif /* TW_BUDGET_H */
