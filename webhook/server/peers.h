/*
 * webhook/server/peers.h — the peers (client addresses) whose requests hold
 * memory now, each with what they hold together: the per-peer share of the
 * memory budget (budget.h) is counted here.
 *
 * A request finds its peer once, when its headers arrive, and keeps it until
 * it completes; what it takes and gives back between is one atomic add on
 * the peer. The table is hashed with the library's keyed hash, so no set of
 * addresses can be chosen to collide; it holds at most one entry per
 * request in flight, and a peer leaves it with its last request.
 */
#ifndef TW_PEERS_H
#define TW_PEERS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct tw_peer {
	unsigned char addr[16]; /* IPv6, or an IPv4 address mapped into it */
	unsigned refs;          /* requests of this peer in flight (the table's lock) */
	atomic_size_t held;     /* bytes they hold together */
} tw_peer;

typedef struct tw_peers tw_peers;

/* A table for up to max peers at once; NULL when out of memory. */
tw_peers *tw_peers_new(size_t max);
void tw_peers_free(tw_peers *t);
/* The peer of address sa (a reference: give it back with tw_peers_put);
 * NULL for an address that is neither IPv4 nor IPv6, when max peers are in
 * the table, or out of memory. */
tw_peer *tw_peers_get(tw_peers *t, const struct sockaddr *sa);
void tw_peers_put(tw_peers *t, tw_peer *p);
/* How many peers are in the table (tests, metrics). */
size_t tw_peers_count(tw_peers *t);

#endif /* TW_PEERS_H */
