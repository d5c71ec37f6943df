/*
 * webhook/server/crds_follow.h — the cluster's CRDs, watched by name, compiled
 * into the server on every change (crds_follow.c).
 */
#ifndef TW_CRDS_FOLLOW_H
#define TW_CRDS_FOLLOW_H

#include "webhook/server/server.h"
#include "webhook/cluster/watch.h"
#include "policy/trainpolicy.h"

#define TW_CRDS_FOLLOW_MAX 8

typedef struct tw_crds_follow tw_crds_follow;

tw_crds_follow *tw_crds_follow_new(tw_server *srv);
/* The watch kinds that feed it (out has room for TW_CRDS_FOLLOW_MAX);
 * returns how many. Free the follower only after that watch stopped. */
size_t tw_crds_follow_kinds(tw_crds_follow *f, tw_watch_kind *out);
void tw_crds_follow_free(tw_crds_follow *f);

#endif /* TW_CRDS_FOLLOW_H */
