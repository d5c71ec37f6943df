/*
 * store/store.c — the cluster state the validators look things up in: runtimes of
 * both API groups, TrainJobs, JobSets, PriorityClasses, runtime snapshot
 * ConfigMaps, Namespaces, and the ServiceAccounts, LimitRanges and
 * ResourceQuotas of the Pods' namespaces, keyed by (kind, namespace, name).
 *
 * A chained hash table, keyed (core/hash.h), behind one pthread rwlock:
 * admission requests read concurrently (tp_store_rdlock ...
 * tp_store_unlock), the watch or the --runtimes loader writes
 * (put/remove/clear take the write lock inside).
 * Nothing derived from hash order ever leaves this file: the one list it
 * hands out (namespaces_of) is sorted.
 *
 * Each object sits in a counted holder: the store owns one reference, and a
 * caller that must not keep the read lock (a request that may wait on the API
 * server) takes another with tp_store_hold_get. A writer that replaces or
 * removes the object only drops the store's reference; the tree is freed by
 * whoever lets go last.
 */
#include "policy/core/hash.h"
#include "policy/core/internal.h"
#include "policy/store/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define STORE_FIRST_BUCKETS 64
#define DEFAULT_NAMESPACE "default"

struct tp_store_hold {
	atomic_uint refs;
	cJSON *obj; /* malloc'd tree, freed with the last reference */
};

struct entry {
	struct entry *next;
	uint64_t hash;
	tp_kind kind;
	char *ns;   /* "" for cluster-scoped kinds */
	char *name;
	struct tp_store_hold *held; /* the store's reference */
};

struct tp_store {
	pthread_rwlock_t lock;
	struct entry **buckets;
	size_t nbuckets;
	size_t count;
	size_t per_kind[TP_KIND__COUNT];
	_Atomic uint64_t generation;
};

/* The lock lives in the store; readers take it through a const pointer,
 * which is the one place the constness is cast away. */
static pthread_rwlock_t *lock_of(const tp_store *s)
{
	return (pthread_rwlock_t *)&s->lock;
}

/* glibc's default rwlock lets a steady stream of readers starve the
 * writer: under admission load the watch could then never apply an update.
 * Prefer writers. The price: a thread must not take the read lock twice
 * (a waiting writer would block the second rdlock), which the API already
 * asks of callers (tp_options.store is used under the caller's one lock). */
static int lock_init(pthread_rwlock_t *lock)
{
	pthread_rwlockattr_t attr;
	if (pthread_rwlockattr_init(&attr))
		return -1;
#ifdef __GLIBC__
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
	int rc = pthread_rwlock_init(lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return rc;
}

/* ConfigMaps only as runtime snapshots: the one ConfigMap a rule reads, so
 * that offline inputs (validate, review, expand) can hold a TrainJob's
 * snapshot without the store keeping every ConfigMap of a folder. */
static bool is_stored(tp_kind k, const char *name)
{
	if (k == TP_KIND_CONFIGMAP) {
		size_t n = strlen(name), sn = strlen(TP_RUNTIME_SNAPSHOT_SUFFIX);
		return n > sn && !strcmp(name + n - sn, TP_RUNTIME_SNAPSHOT_SUFFIX);
	}
	return tp_kind_is_runtime(k) || k == TP_KIND_TRAINJOB || k == TP_KIND_JOBSET ||
	       k == TP_KIND_PRIORITY_CLASS || k == TP_KIND_NAMESPACE ||
	       k == TP_KIND_SERVICE_ACCOUNT || k == TP_KIND_LIMIT_RANGE ||
	       k == TP_KIND_RESOURCE_QUOTA;
}

/* Namespaced kinds without a namespace live in "default", as the API server
 * would put them; cluster-scoped kinds have none. */
static const char *key_namespace(tp_kind k, const char *ns)
{
	if (tp_kind_is_cluster_scoped(k))
		return "";
	return ns && *ns ? ns : DEFAULT_NAMESPACE;
}

/* Kind, namespace and name (each string with its NUL) under core/hash.h's
 * keyed hash: whoever names objects in the cluster cannot make them share
 * a chain, which every put and lookup of theirs would walk. */
static uint64_t key_hash(tp_kind k, const char *ns, const char *name)
{
	tp_hasher h;
	tp__hasher_init(&h);
	unsigned char kind = (unsigned char)k;
	tp__hasher_add(&h, &kind, 1);
	tp__hasher_add_str(&h, ns);
	tp__hasher_add_str(&h, name);
	return tp__hasher_end(&h);
}

static struct entry **slot_of(const tp_store *s, uint64_t h, tp_kind k, const char *ns,
			      const char *name)
{
	struct entry **pp = &s->buckets[h & (s->nbuckets - 1)];
	for (; *pp; pp = &(*pp)->next) {
		const struct entry *e = *pp;
		if (e->hash == h && e->kind == k && !strcmp(e->ns, ns) && !strcmp(e->name, name))
			break;
	}
	return pp;
}

/* The layer above's per-runtime work (store.h, tp__store_derived). */
static _Atomic(int (*)(const cJSON *)) derived_put;
static _Atomic(void (*)(const cJSON *)) derived_drop;

void tp__store_set_derived(const tp__store_derived *d)
{
	atomic_store(&derived_put, d ? d->put : NULL);
	atomic_store(&derived_drop, d ? d->drop : NULL);
}

void tp_store_hold_release(tp_store_hold *h)
{
	if (h && atomic_fetch_sub(&h->refs, 1) == 1) {
		void (*drop)(const cJSON *) = atomic_load(&derived_drop);
		if (drop)
			drop(h->obj); /* before the tree: nothing derived outlives it */
		cJSON_Delete(h->obj);
		free(h);
	}
}

static void entry_free(struct entry *e)
{
	tp_store_hold_release(e->held);
	free(e->ns);
	free(e->name);
	free(e);
}

int tp_store_new(tp_store **out)
{
	if (!out)
		return TP_EINVAL;
	*out = NULL;
	tp_store *s = calloc(1, sizeof(*s));
	if (!s)
		return TP_ENOMEM;
	s->nbuckets = STORE_FIRST_BUCKETS;
	s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
	if (!s->buckets || lock_init(&s->lock)) {
		free(s->buckets);
		free(s);
		return TP_ENOMEM;
	}
	atomic_init(&s->generation, 0);
	*out = s;
	return TP_OK;
}

void tp_store_free(tp_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct entry *e = s->buckets[i], *n; e; e = n) {
			n = e->next;
			entry_free(e);
		}
	free(s->buckets);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

/* Double the bucket array once the chains average one entry; a failed
 * allocation only leaves the chains longer. */
static void maybe_grow(tp_store *s)
{
	if (s->count < s->nbuckets)
		return;
	size_t n = s->nbuckets * 2;
	struct entry **b = calloc(n, sizeof(*b));
	if (!b)
		return;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct entry *e = s->buckets[i], *next; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	free(s->buckets);
	s->buckets = b;
	s->nbuckets = n;
}

static struct entry *entry_new(tp_kind k, const char *ns, const char *name, cJSON *obj)
{
	struct entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->ns = strdup(ns);
	e->name = strdup(name);
	e->held = malloc(sizeof(*e->held));
	if (!e->ns || !e->name || !e->held) {
		free(e->ns);
		free(e->name);
		free(e->held);
		free(e);
		return NULL;
	}
	atomic_init(&e->held->refs, 1);
	e->held->obj = obj;
	e->kind = k;
	e->hash = key_hash(k, ns, name);
	return e;
}

/*
 * On success the store owns obj. On any error (TP_EINVAL: NULL, nameless,
 * or called inside an arena, whose trees die with the request;
 * TP_EUNSUPPORTED: a kind the store does not keep; TP_ENOMEM) the caller
 * still owns obj and must free it.
 */
int tp_store_put(tp_store *s, cJSON *obj)
{
	if (!s || !obj || tp_arena_current() != NULL)
		return TP_EINVAL;
	tp_kind k = tp_kind_of(obj);
	const char *name = tp_meta_name(obj);
	if (!is_stored(k, name))
		return TP_EUNSUPPORTED;
	if (!*name)
		return TP_EINVAL;
	struct entry *e = entry_new(k, key_namespace(k, tp_meta_namespace(obj)), name, obj);
	if (!e)
		return TP_ENOMEM;
	/* what depends on the runtime alone, once per version (pod/plan.c),
	 * outside the lock; without memory for it each TrainJob works it out */
	int (*put)(const cJSON *) = atomic_load(&derived_put);
	if (put && tp_kind_is_runtime(k))
		put(obj);
	pthread_rwlock_wrlock(&s->lock);
	struct entry **pp = slot_of(s, e->hash, k, e->ns, e->name);
	if (*pp) {
		struct entry *old = *pp;
		e->next = old->next;
		*pp = e;
		entry_free(old);
	} else {
		e->next = *pp;
		*pp = e;
		s->count++;
		s->per_kind[k]++;
		maybe_grow(s);
	}
	atomic_fetch_add(&s->generation, 1);
	pthread_rwlock_unlock(&s->lock);
	return TP_OK;
}

int tp_store_remove(tp_store *s, tp_kind k, const char *ns, const char *name)
{
	if (!s || !name || (unsigned)k >= TP_KIND__COUNT)
		return TP_EINVAL;
	const char *kns = key_namespace(k, ns);
	uint64_t h = key_hash(k, kns, name);
	pthread_rwlock_wrlock(&s->lock);
	struct entry **pp = slot_of(s, h, k, kns, name);
	struct entry *e = *pp;
	if (e) {
		*pp = e->next;
		s->count--;
		s->per_kind[k]--;
		atomic_fetch_add(&s->generation, 1);
	}
	pthread_rwlock_unlock(&s->lock);
	if (!e)
		return TP_ENOTFOUND;
	entry_free(e);
	return TP_OK;
}

void tp_store_clear_kind(tp_store *s, tp_kind k)
{
	if (!s || (unsigned)k >= TP_KIND__COUNT)
		return;
	struct entry *gone = NULL;
	pthread_rwlock_wrlock(&s->lock);
	for (size_t i = 0; i < s->nbuckets; i++)
		for (struct entry **pp = &s->buckets[i]; *pp;) {
			struct entry *e = *pp;
			if (e->kind != k) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			e->next = gone;
			gone = e;
			s->count--;
		}
	s->per_kind[k] = 0;
	atomic_fetch_add(&s->generation, 1);
	pthread_rwlock_unlock(&s->lock);
	/* Free outside the lock: readers need not wait for cJSON_Delete. */
	for (struct entry *n; gone; gone = n) {
		n = gone->next;
		entry_free(gone);
	}
}

void tp_store_rdlock(const tp_store *s)
{
	if (s)
		pthread_rwlock_rdlock(lock_of(s));
}

void tp_store_unlock(const tp_store *s)
{
	if (s)
		pthread_rwlock_unlock(lock_of(s));
}

const cJSON *tp_store_get(const tp_store *s, tp_kind k, const char *ns, const char *name)
{
	if (!s || !name || (unsigned)k >= TP_KIND__COUNT)
		return NULL;
	const char *kns = key_namespace(k, ns);
	const struct entry *e = *slot_of(s, key_hash(k, kns, name), k, kns, name);
	return e ? e->held->obj : NULL;
}

tp_store_hold *tp_store_hold_get(const tp_store *s, tp_kind k, const char *ns,
				 const char *name, const cJSON **obj)
{
	*obj = NULL;
	if (!s || !name || (unsigned)k >= TP_KIND__COUNT)
		return NULL;
	const char *kns = key_namespace(k, ns);
	tp_store_rdlock(s);
	const struct entry *e = *slot_of(s, key_hash(k, kns, name), k, kns, name);
	tp_store_hold *h = e ? e->held : NULL;
	if (h) {
		atomic_fetch_add(&h->refs, 1);
		*obj = h->obj;
	}
	tp_store_unlock(s);
	return h;
}

/* The smallest namespace holding kind/name that sorts after `after`
 * (NULL: the smallest of all). Selection instead of a sort, so that a
 * reader never allocates; the lists are a handful long. */
static const char *next_namespace(const tp_store *s, tp_kind k, const char *name,
				  const char *after)
{
	const char *best = NULL;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (const struct entry *e = s->buckets[i]; e; e = e->next) {
			if (e->kind != k || strcmp(e->name, name))
				continue;
			if (after && strcmp(e->ns, after) <= 0)
				continue;
			if (!best || strcmp(e->ns, best) < 0)
				best = e->ns;
		}
	return best;
}

size_t tp_store_namespaces_of(const tp_store *s, tp_kind k, const char *name, const char **out,
			      size_t max)
{
	if (!s || !name || (unsigned)k >= TP_KIND__COUNT)
		return 0;
	size_t total = 0;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (const struct entry *e = s->buckets[i]; e; e = e->next)
			if (e->kind == k && !strcmp(e->name, name))
				total++;
	const char *prev = NULL;
	for (size_t i = 0; out && i < max && i < total; i++) {
		prev = next_namespace(s, k, name, prev);
		out[i] = prev;
	}
	return total;
}

/* The object of kind k in kns that sorts after `after` by name (NULL: the
 * first), by selection as next_namespace: no reader allocates. */
static const struct entry *next_in(const tp_store *s, tp_kind k, const char *kns,
				   const char *after)
{
	const struct entry *best = NULL;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (const struct entry *e = s->buckets[i]; e; e = e->next) {
			if (e->kind != k || strcmp(e->ns, kns))
				continue;
			if (after && strcmp(e->name, after) <= 0)
				continue;
			if (!best || strcmp(e->name, best->name) < 0)
				best = e;
		}
	return best;
}

size_t tp_store_list(const tp_store *s, tp_kind k, const char *ns, const cJSON **out,
		     size_t max)
{
	if (!s || (unsigned)k >= TP_KIND__COUNT || !s->per_kind[k])
		return 0;
	const char *kns = key_namespace(k, ns);
	size_t total = 0;
	for (size_t i = 0; i < s->nbuckets; i++)
		for (const struct entry *e = s->buckets[i]; e; e = e->next)
			total += e->kind == k && !strcmp(e->ns, kns);
	const struct entry *prev = NULL;
	for (size_t i = 0; out && i < max && i < total; i++) {
		prev = next_in(s, k, kns, prev ? prev->name : NULL);
		out[i] = prev->held->obj;
	}
	return total;
}

/* Like tp_store_get, under the caller's read lock. */
size_t tp_store_count(const tp_store *s, tp_kind k)
{
	if (!s || (unsigned)k >= TP_KIND__COUNT)
		return 0;
	return s->per_kind[k];
}

uint64_t tp_store_generation(const tp_store *s)
{
	return s ? atomic_load(&((tp_store *)s)->generation) : 0;
}
