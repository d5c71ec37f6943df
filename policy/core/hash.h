/*
 * core/hash.h — keyed hashing and a hash table of pointers, for the lookups
 * that would otherwise scan a list or an object once per element
 * (core/index.h builds the lookups of cJSON trees on it). Private to policy/.
 *
 * The hash is SipHash-1-3 under a key drawn once per process, so that no
 * input can be made of keys that collide: a table's cost stays linear
 * whoever writes the object. Nothing iterates a table, so no output ever
 * depends on the key.
 */
#ifndef TP_CORE_HASH_H
#define TP_CORE_HASH_H

#include "policy/trainpolicy.h"

uint64_t tp_hash_bytes(const void *p, size_t n);
uint64_t tp__hash_str(const char *s);

/* The same hash of bytes given in pieces, for keys of several fields or
 * whole trees: tp__hasher_init, tp__hasher_add any number of times, then
 * tp__hasher_end (tp_hash_bytes of the pieces joined). A key of several
 * strings adds each with tp__hasher_add_str, whose NUL keeps ("ab", "c")
 * and ("a", "bc") apart. tp__hasher_init128 and tp__hasher_end128 give
 * SipHash's 128 bits instead, for keys that stand for content (two
 * different inputs that hash equal would be taken for one). */
typedef struct tp_hasher {
	uint64_t v0, v1, v2, v3; /* SipHash's state */
	uint64_t tail;           /* the n % 8 bytes not absorbed yet */
	size_t n;                /* bytes added */
} tp_hasher;

void tp__hasher_init(tp_hasher *h);
void tp__hasher_init128(tp_hasher *h);
void tp__hasher_add(tp_hasher *h, const void *p, size_t n);
void tp__hasher_add_str(tp_hasher *h, const char *s); /* s and its NUL */
uint64_t tp__hasher_end(tp_hasher *h);
void tp__hasher_end128(tp_hasher *h, uint64_t out[2]);

/* Equal values (tp_json_equal) hash equal, for trees whose objects repeat
 * no member name (what tp_load makes). Visits the whole value. */
uint64_t tp__hash_json(const cJSON *v);

/* Open addressing over (hash, item) pairs. Several items may share a hash
 * (or be equal): a lookup walks the candidates and the caller compares. */
typedef struct tp_htab_slot {
	uint64_t hash;
	const void *item; /* NULL: an empty slot */
} tp_htab_slot;

typedef struct tp_htab {
	tp_htab_slot *slots;
	size_t mask;  /* slots - 1 */
	size_t count;
} tp_htab;

#define TP_HTAB_INIT { NULL, 0, 0 }

/* Room for n items without growing. */
int tp__htab_reserve(tp_htab *t, size_t n);
/* Add item (not NULL) under hash: TP_OK or TP_ENOMEM. */
int tp__htab_put(tp_htab *t, uint64_t hash, const void *item);
/* The items under hash, one a call: *pos = 0 before the first; NULL after
 * the last. Items come in the order they were put when they share a hash. */
const void *tp__htab_next(const tp_htab *t, uint64_t hash, size_t *pos);
/* The slot of item old under hash holds now instead (NULL: nothing, and
 * lookups pass over it). False when old is not there. */
bool tp__htab_replace(tp_htab *t, uint64_t hash, const void *old, const void *now);
void tp__htab_free(tp_htab *t);

#endif
