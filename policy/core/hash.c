/*
 * core/hash.c — SipHash-1-3 (Aumasson and Bernstein's design, one
 * compression round a word and three at the end) under a per-process key,
 * whole or in pieces, with 64 or 128 bits out; the hash of a JSON value
 * built on it; and the pointer table of core/hash.h.
 */
#include "policy/core/hash.h"
#include "policy/core/deadline.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* ------------------------------------------------------------ the key */

static uint64_t key[2];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static atomic_bool key_ready; /* key is set: a hash skips pthread_once's call */

static void key_init(void)
{
	if (getrandom(key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
		/* No entropy yet (early boot): the clock and where this process
		 * was loaded are still unknown to whoever writes the input. */
		key[0] = (uint64_t)tp_monotonic_ns() ^ (uint64_t)(uintptr_t)&key;
		key[1] = (uint64_t)(uintptr_t)&key_init * 0x9e3779b97f4a7c15ull ^ key[0] << 17;
	}
	atomic_store_explicit(&key_ready, true, memory_order_release);
}

/* ------------------------------------------------------------ SipHash */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static inline void round1(tp_hasher *s)
{
	s->v0 += s->v1;
	s->v1 = ROTL(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = ROTL(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = ROTL(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = ROTL(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = ROTL(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = ROTL(s->v2, 32);
}

static inline void absorb(tp_hasher *s, uint64_t m)
{
	s->v3 ^= m;
	round1(s);
	s->v0 ^= m;
}

/* n (4 or 8) bytes as a little-endian word: one load once inlined (a loop
 * of byte loads cost the short names of a schema lookup 162 instructions
 * a hash). On a big-endian machine the bytes land high, and the swap
 * brings them low in their order. */
static inline uint64_t load(const unsigned char *p, size_t n)
{
	uint64_t m = 0;
	memcpy(&m, p, n);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	m = __builtin_bswap64(m);
#endif
	return m;
}

/* n < 8 bytes (a string's last, or what fills a tail) as a little-endian
 * word, in at most three loads (two that may overlap: the same bytes land
 * in the same places). */
static inline uint64_t rest(const unsigned char *p, size_t n)
{
	if (n >= 4)
		return load(p, 4) | load(p + n - 4, 4) << (8 * (n - 4));
	if (n == 0)
		return 0;
	return (uint64_t)p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) |
	       (uint64_t)p[n - 1] << (8 * (n - 1));
}

/* wide: 0, or SipHash-128's 0xee */
static inline void start(tp_hasher *s, uint64_t wide)
{
	if (!atomic_load_explicit(&key_ready, memory_order_acquire))
		pthread_once(&key_once, key_init);
	s->v0 = key[0] ^ 0x736f6d6570736575ull;
	s->v1 = key[1] ^ 0x646f72616e646f6dull ^ wide;
	s->v2 = key[0] ^ 0x6c7967656e657261ull;
	s->v3 = key[1] ^ 0x7465646279746573ull;
	s->tail = 0;
	s->n = 0;
}

/* The last word (the length and the bytes left over), then the three
 * finishing rounds; fin is 0xff, or 0xee for the first of 128 bits. */
static inline uint64_t finish(tp_hasher *s, uint64_t fin)
{
	absorb(s, (uint64_t)s->n << 56 | s->tail);
	s->v2 ^= fin;
	round1(s);
	round1(s);
	round1(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t tp_hash_bytes(const void *p, size_t n)
{
	tp_hasher s;
	start(&s, 0);
	const unsigned char *b = p;
	size_t words = n / 8;
	for (size_t i = 0; i < words; i++)
		absorb(&s, load(b + 8 * i, 8));
	s.tail = rest(b + 8 * words, n % 8);
	s.n = n;
	return finish(&s, 0xff);
}

uint64_t tp__hash_str(const char *s)
{
	return tp_hash_bytes(s, strlen(s));
}

/* ------------------------------------------------------------ in pieces */

void tp__hasher_init(tp_hasher *h)
{
	start(h, 0);
}

void tp__hasher_init128(tp_hasher *h)
{
	start(h, 0xee);
}

void tp__hasher_add(tp_hasher *h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t have = h->n % 8;
	h->n += n;
	if (have) { /* the tail's word first */
		size_t take = n < 8 - have ? n : 8 - have;
		h->tail |= rest(b, take) << (8 * have);
		if (have + take < 8)
			return;
		b += take;
		n -= take;
		absorb(h, h->tail);
	}
	for (; n >= 8; n -= 8, b += 8)
		absorb(h, load(b, 8));
	h->tail = rest(b, n);
}

void tp__hasher_add_str(tp_hasher *h, const char *s)
{
	tp__hasher_add(h, s, strlen(s) + 1);
}

uint64_t tp__hasher_end(tp_hasher *h)
{
	return finish(h, 0xff);
}

void tp__hasher_end128(tp_hasher *h, uint64_t out[2])
{
	out[0] = finish(h, 0xee);
	h->v1 ^= 0xdd;
	round1(h);
	round1(h);
	round1(h);
	out[1] = h->v0 ^ h->v1 ^ h->v2 ^ h->v3;
}

/* ------------------------------------------------------------ JSON */

/* Two hashes into one, in order. */
static uint64_t pair(uint64_t a, uint64_t b)
{
	uint64_t w[2] = { a, b };
	return tp_hash_bytes(w, sizeof(w));
}

uint64_t tp__hash_json(const cJSON *v)
{
	if (!v)
		return 0;
	int type = v->type & 0xff;
	uint64_t h = 0;
	switch (type) {
	case cJSON_Number: {
		double d = v->valuedouble == 0 ? 0.0 : v->valuedouble; /* -0 == 0 */
		if (isnan(d))
			d = NAN;
		h = tp_hash_bytes(&d, sizeof(d));
		break;
	}
	case cJSON_String:
	case cJSON_Raw:
		h = v->valuestring ? tp__hash_str(v->valuestring) : tp__hash_str("");
		break;
	case cJSON_Array:
		for (const cJSON *c = v->child; c; c = c->next)
			h = pair(h, tp__hash_json(c));
		break;
	case cJSON_Object:
		/* members in any order: a sum of each member's hash */
		for (const cJSON *c = v->child; c; c = c->next)
			h += pair(tp__hash_str(c->string ? c->string : ""), tp__hash_json(c));
		break;
	}
	tp__charge(1);
	return pair((uint64_t)type, h);
}

/* ------------------------------------------------------------ table */

/* What a removed item leaves: lookups walk on past it (a run of slots
 * must not break), a rehash drops it. */
static const char tombstone;
#define TOMB ((const void *)&tombstone)

int tp__htab_reserve(tp_htab *t, size_t n)
{
	size_t want = 16;
	while (want < 2 * n) /* at most half full: short probe runs */
		want *= 2;
	if (t->slots && want <= t->mask + 1)
		return TP_OK;
	tp_htab_slot *s = calloc(want, sizeof(*s));
	if (!s)
		return TP_ENOMEM;
	/* Slots in order: items of one hash keep their order, as a run never
	 * wraps past the end before it starts (wrapped runs are re-put last). */
	tp_htab old = *t;
	t->slots = s;
	t->mask = want - 1;
	t->count = 0;
	size_t start = 0;
	if (old.slots)
		while (start <= old.mask && old.slots[start].item)
			start++; /* the first empty slot: no run crosses it */
	for (size_t k = 0; old.slots && k <= old.mask; k++) {
		const tp_htab_slot *o = &old.slots[(start + k) & old.mask];
		if (o->item && o->item != TOMB)
			tp__htab_put(t, o->hash, o->item);
	}
	free(old.slots);
	return TP_OK;
}

int tp__htab_put(tp_htab *t, uint64_t hash, const void *item)
{
	if (!t->slots || 2 * (t->count + 1) > t->mask + 1) {
		int rc = tp__htab_reserve(t, t->count + 1 > 8 ? 2 * (t->count + 1) : 8);
		if (rc)
			return rc;
	}
	size_t i = hash & t->mask;
	while (t->slots[i].item) {
		i = (i + 1) & t->mask;
		tp__charge(1);
	}
	t->slots[i] = (tp_htab_slot){ hash, item };
	t->count++;
	return TP_OK;
}

const void *tp__htab_next(const tp_htab *t, uint64_t hash, size_t *pos)
{
	if (!t->slots)
		return NULL;
	/* *pos counts the slots already walked from the hash's home slot. */
	for (size_t i = *pos; i <= t->mask; i++) {
		const tp_htab_slot *s = &t->slots[(hash + i) & t->mask];
		tp__charge(1);
		if (!s->item)
			return NULL;
		if (s->hash == hash && s->item != TOMB) {
			*pos = i + 1;
			return s->item;
		}
	}
	return NULL;
}

bool tp__htab_replace(tp_htab *t, uint64_t hash, const void *old, const void *now)
{
	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		tp_htab_slot *s = &t->slots[(hash + i) & t->mask];
		tp__charge(1);
		if (!s->item)
			return false;
		if (s->item == old) {
			s->item = now ? now : TOMB;
			return true;
		}
	}
	return false;
}

void tp__htab_free(tp_htab *t)
{
	free(t->slots);
	*t = (tp_htab)TP_HTAB_INIT;
}
