/*
 * core/arena.h — the arena's layout, shared inside policy/ only so that the
 * hottest caller (the JSON reader, one node or string per call) can take
 * memory without a call. Everything else goes through tp_arena_alloc; only
 * core/arena.c changes the layout.
 */
#ifndef TP_CORE_ARENA_H
#define TP_CORE_ARENA_H

#include "policy/trainpolicy.h"

#define TP_ARENA_ALIGN 16

struct tp__arena_block {
	struct tp__arena_block *next;
	size_t size; /* bytes of data[] */
	size_t used;
	_Alignas(TP_ARENA_ALIGN) unsigned char data[];
};

struct tp_arena {
	struct tp__arena_block *head; /* newest block first */
	size_t limit;                 /* most bytes of data[] across blocks */
	size_t total;                 /* bytes of data[] across blocks */
	size_t used;                  /* bytes handed out */
};

/* tp_arena_alloc's common case inline: n (> 0, far from SIZE_MAX) fits in
 * the newest block. Otherwise the call, which grows the arena or refuses.
 * 36 -> 14 instructions an allocation, 270 of them in the ClusterTrainingRuntime
 * review of make bench (callgrind). */
static inline void *tp__arena_take(tp_arena *a, size_t n)
{
	struct tp__arena_block *b = a->head;
	size_t need = (n + TP_ARENA_ALIGN - 1) & ~(size_t)(TP_ARENA_ALIGN - 1);
	if (b && need >= n && b->size - b->used >= need) {
		void *p = b->data + b->used;
		b->used += need;
		a->used += need;
		return p;
	}
	return tp_arena_alloc(a, n);
}

#endif
