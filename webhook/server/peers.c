/*
 * webhook/server/peers.c — the peers whose requests hold memory now
 * (peers.h): open addressing over pointers to entries, so that an entry a
 * request holds never moves while the table changes around it.
 */
#include "webhook/server/peers.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"

struct tw_peers {
	pthread_mutex_t lock;
	tw_peer **slots; /* NULL: empty */
	size_t mask;     /* slots - 1 */
	size_t count, max;
};

tw_peers *tw_peers_new(size_t max)
{
	tw_peers *t = calloc(1, sizeof(*t));
	size_t n = 16;
	while (n < 2 * max) /* at most half full: probes stay short */
		n *= 2;
	if (!t || !(t->slots = calloc(n, sizeof(*t->slots)))) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->mask = n - 1;
	t->max = max;
	return t;
}

void tw_peers_free(tw_peers *t)
{
	if (!t)
		return;
	for (size_t i = 0; i <= t->mask; i++)
		free(t->slots[i]);
	free(t->slots);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* sa's address as 16 bytes (IPv4 mapped into IPv6): false for another family. */
static bool address_of(const struct sockaddr *sa, unsigned char out[16])
{
	if (sa && sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return true;
	}
	if (sa && sa->sa_family == AF_INET) {
		static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		memcpy(out, mapped, 12);
		memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	return false;
}

static size_t home_of(const tw_peers *t, const unsigned char addr[16])
{
	return (size_t)tp_hash_bytes(addr, 16) & t->mask;
}

tw_peer *tw_peers_get(tw_peers *t, const struct sockaddr *sa)
{
	unsigned char addr[16];
	if (!t || !address_of(sa, addr))
		return NULL;
	pthread_mutex_lock(&t->lock);
	size_t i = home_of(t, addr);
	while (t->slots[i] && memcmp(t->slots[i]->addr, addr, 16))
		i = (i + 1) & t->mask;
	tw_peer *p = t->slots[i];
	if (!p && t->count < t->max && (p = calloc(1, sizeof(*p)))) {
		memcpy(p->addr, addr, 16);
		atomic_init(&p->held, 0);
		t->slots[i] = p;
		t->count++;
	}
	if (p)
		p->refs++;
	pthread_mutex_unlock(&t->lock);
	return p;
}

/* Take the entry at slot i out, and move up the entries after it that
 * would no longer be found (linear probing's deletion: no tombstones). */
static void remove_at(tw_peers *t, size_t i)
{
	t->slots[i] = NULL;
	for (size_t j = (i + 1) & t->mask; t->slots[j]; j = (j + 1) & t->mask) {
		size_t home = home_of(t, t->slots[j]->addr);
		/* j's entry stays when its home lies cyclically in (i, j] */
		bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			t->slots[i] = t->slots[j];
			t->slots[j] = NULL;
			i = j;
		}
	}
}

void tw_peers_put(tw_peers *t, tw_peer *p)
{
	if (!t || !p)
		return;
	pthread_mutex_lock(&t->lock);
	if (--p->refs == 0) {
		size_t i = home_of(t, p->addr);
		while (t->slots[i] != p)
			i = (i + 1) & t->mask;
		remove_at(t, i);
		t->count--;
		free(p);
	}
	pthread_mutex_unlock(&t->lock);
}

size_t tw_peers_count(tw_peers *t)
{
	pthread_mutex_lock(&t->lock);
	size_t n = t->count;
	pthread_mutex_unlock(&t->lock);
	return n;
}
