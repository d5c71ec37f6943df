/*
 * core/arena.c — the per-request memory pool, and the cJSON hooks that route a
 * thread's cJSON nodes into it.
 *
 * A request parses its body, validates, builds its answer and then drops the
 * whole arena: one free per block instead of one per JSON node. Blocks grow
 * geometrically; tp_arena_reset folds them into one block of the working
 * size, so a worker thread's arena settles and stops calling malloc at all.
 */
#include "policy/core/arena.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN TP_ARENA_ALIGN
#define ARENA_FIRST_BLOCK (16 * 1024)
#define ARENA_MAX_GROWTH (1024 * 1024)
#define ARENA_DEFAULT_LIMIT ((size_t)64 * 1024 * 1024)

static struct tp__arena_block *block_new(size_t size)
{
	struct tp__arena_block *b = malloc(sizeof(*b) + size);
	if (!b)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

int tp_arena_new(tp_arena **out, size_t limit)
{
	if (!out)
		return TP_EINVAL;
	tp_arena *a = calloc(1, sizeof(*a));
	if (!a)
		return TP_ENOMEM;
	a->limit = limit ? limit : ARENA_DEFAULT_LIMIT;
	*out = a;
	return TP_OK;
}

void tp_arena_free(tp_arena *a)
{
	if (!a)
		return;
	for (struct tp__arena_block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

/* Working sizes up to this settle into one block at reset; past it the
 * arena goes back to its first block, so that one rare large request does
 * not pin its memory in every pooled arena. */
#define ARENA_SETTLE_MAX (256 * 1024)

void tp_arena_reset(tp_arena *a)
{
	if (!a || !a->head)
		return;
	/* A request that outgrew the first block took a second one with
	 * malloc, and so would every request like it after a reset that kept
	 * only the first. One block of the total takes their place instead:
	 * a review of a 19 KB runtime (150 env entries per container) then
	 * takes no malloc, 514,581 -> 512,844 instructions (callgrind; make
	 * bench's reviews fit the first block either way). */
	struct tp__arena_block *keep = NULL;
	if (a->head->next && a->total <= ARENA_SETTLE_MAX)
		keep = block_new(a->total);
	if (!keep) /* one block already, too large to keep, or no memory */
		for (keep = a->head; keep->next;)
			keep = keep->next; /* the oldest block: the smallest */
	for (struct tp__arena_block *b = a->head, *n; b && b != keep; b = n) {
		n = b->next;
		free(b);
	}
	keep->used = 0;
	a->head = keep;
	a->total = keep->size;
	a->used = 0;
}

void *tp_arena_alloc(tp_arena *a, size_t n)
{
	if (!a)
		return NULL;
	if (n == 0)
		n = 1;
	size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (need < n)
		return NULL; /* overflow */
	struct tp__arena_block *b = a->head;
	if (!b || b->size - b->used < need) {
		size_t size = b ? b->size * 2 : ARENA_FIRST_BLOCK;
		if (size > ARENA_MAX_GROWTH)
			size = ARENA_MAX_GROWTH;
		if (size < need)
			size = need;
		if (a->total + size > a->limit)
			return NULL;
		struct tp__arena_block *nb = block_new(size);
		if (!nb)
			return NULL;
		nb->next = a->head;
		a->head = nb;
		a->total += size;
		b = nb;
	}
	void *p = b->data + b->used;
	b->used += need;
	a->used += need;
	return p;
}

char *tp_arena_strndup(tp_arena *a, const char *s, size_t n)
{
	char *p = tp_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *tp_arena_strdup(tp_arena *a, const char *s)
{
	return s ? tp_arena_strndup(a, s, strlen(s)) : NULL;
}

/* Formatted once into a stack buffer, copied when it fits (nearly every
 * message does): half the printf work of measuring first. */
char *tp_arena_vprintf(tp_arena *a, const char *fmt, va_list ap)
{
	char tmp[256];
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, cp);
	va_end(cp);
	if (n < 0)
		return NULL;
	char *p = tp_arena_alloc(a, (size_t)n + 1);
	if (p && (size_t)n < sizeof(tmp))
		memcpy(p, tmp, (size_t)n + 1);
	else if (p)
		vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *tp_arena_printf(tp_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = tp_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return p;
}

size_t tp_arena_used(const tp_arena *a)
{
	return a ? a->used : 0;
}

bool tp_arena_owns(const tp_arena *a, const void *p)
{
	if (!a || !p)
		return false;
	const unsigned char *q = p;
	for (const struct tp__arena_block *b = a->head; b; b = b->next)
		if (q >= b->data && q < b->data + b->size)
			return true;
	return false;
}

/* ------------------------------------------------------------ cJSON hooks */

static _Thread_local tp_arena *current_arena;

static void *hook_malloc(size_t n)
{
	return current_arena ? tp_arena_alloc(current_arena, n) : malloc(n);
}

/* Arena memory is released with its arena; anything else goes back to libc.
 * A tree made in an arena must never be cJSON_Delete'd after tp_arena_leave. */
static void hook_free(void *p)
{
	if (current_arena && tp_arena_owns(current_arena, p))
		return;
	free(p);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void install_hooks(void)
{
	cJSON_Hooks h = { .malloc_fn = hook_malloc, .free_fn = hook_free };
	cJSON_InitHooks(&h);
}

void tp_json_init(void)
{
	pthread_once(&hooks_once, install_hooks);
}

tp_arena *tp_arena_enter(tp_arena *a)
{
	tp_json_init();
	tp_arena *prev = current_arena;
	current_arena = a;
	return prev;
}

void tp_arena_leave(tp_arena *previous)
{
	current_arena = previous;
}

tp_arena *tp_arena_current(void)
{
	return current_arena;
}
