/*
 * webhook/server/budget.h — how much memory the requests in flight may hold
 * together (budget.c), and where the default comes from: the container's
 * memory limit (cgroup.c).
 *
 * A request takes its share when its headers arrive, before one byte of its
 * body is read: the body (its Content-Length) and an allowance for deciding
 * it (the arena its decision may use). What does not fit is answered at once
 * (503 and Retry-After) instead of read, so a crowd of big bodies can no
 * longer carry the process past its limit into an OOM kill.
 */
#ifndef TW_BUDGET_H
#define TW_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tw_budget {
	size_t limit;        /* bytes; 0: no budget (every take succeeds) */
	atomic_size_t used;  /* bytes held by requests now */
} tw_budget;

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

void tw_budget_init(tw_budget *b, size_t limit);
/* Take n bytes: true when they fit under the limit (then give them back
 * with tw_budget_give), false when they do not (nothing taken). */
bool tw_budget_take(tw_budget *b, size_t n);
void tw_budget_give(tw_budget *b, size_t n);
size_t tw_budget_used(const tw_budget *b);
/* The first arena allowance for a body of len bytes. */
size_t tw_budget_arena_for(size_t len);
/* A decision that ran out of its allowance *allow, of the *held bytes its
 * request holds: take more (twice as much, up to TW_BUDGET_ARENA_MAX) and
 * update both. 1 when taken, 0 when the budget has no room now, -1 when it
 * never could (past TW_BUDGET_ARENA_MAX, or more than the whole budget). */
int tw_budget_more_arena(tw_budget *b, size_t *allow, size_t *held);

/* The container's memory limit in bytes, from cgroup v2's memory.max or
 * v1's memory.limit_in_bytes of the process's own cgroup (the smallest on
 * its way up to the root). root prefixes /proc and /sys (tests; "" for the
 * real ones). 0 with *out set, -1 when no limit is set or none can be read. */
int tw_cgroup_memory_limit(const char *root, uint64_t *out);
/* The default budget: half the container's limit (the rest is the binary,
 * its caches, TLS and connection buffers, and malloc's slack); without a
 * limit, half the machine's memory, at most 1 GiB. source says which. */
size_t tw_budget_default(const char *root, char *source, size_t n);

#endif /* TW_BUDGET_H */
