/*
 * webhook/cluster/wake.h — a background thread's sleep that a watch event or
 * a stop cuts short (wake.c): the certificate manager's and the
 * registrar's loops sleep until the next look is due, and wake at once
 * when an object they keep changes.
 */
#ifndef TW_WAKE_H
#define TW_WAKE_H

#include <pthread.h>
#include <stdbool.h>

#include "webhook/cluster/watch.h"

typedef struct tw_wake {
	pthread_mutex_t lock; /* guards kick, stop */
	pthread_cond_t cv;    /* on the monotonic clock */
	bool kick, stop;
} tw_wake;

void tw_wake_init(tw_wake *w);
void tw_wake_destroy(tw_wake *w);
/* Cut the current (or next) sleep short. */
void tw_wake_kick(tw_wake *w);
/* From now on every sleep ends at once and returns false. */
void tw_wake_stop(tw_wake *w);
bool tw_wake_stopping(tw_wake *w);
/* Sleep until kicked, stopped, or ms passed. False when stopping. */
bool tw_wake_wait(tw_wake *w, long long ms);
/* A watch sink that kicks w on every event (the objects are dropped). */
tw_watch_sink tw_wake_sink(tw_wake *w);

#endif /* TW_WAKE_H */
