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
uint64_t tp_hash_str(const char *s);
/* Equal values (tp_json_equal) hash equal, for trees whose objects repeat
 * no member name (what tp_load makes). Visits the whole value. */
uint64_t tp_hash_json(const cJSON *v);

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
int tp_htab_reserve(tp_htab *t, size_t n);
/* Add item (not NULL) under hash: TP_OK or TP_ENOMEM. */
int tp_htab_put(tp_htab *t, uint64_t hash, const void *item);
/* The items under hash, one a call: *pos = 0 before the first; NULL after
 * the last. Items come in the order they were put when they share a hash. */
const void *tp_htab_next(const tp_htab *t, uint64_t hash, size_t *pos);
/* The slot of item old under hash holds now instead (NULL: nothing, and
 * lookups pass over it). False when old is not there. */
bool tp_htab_replace(tp_htab *t, uint64_t hash, const void *old, const void *now);
void tp_htab_free(tp_htab *t);

#endif
