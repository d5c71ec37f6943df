/*
 * webhook/cluster/watch_pace.c — when a watched kind tries again, and what
 * its stats say: the jittered, growing backoff after a failure, its reset
 * after a success, whether its cache is fresh, and the stats updated under
 * their lock. Both watch.c (transfers) and watch_objects.c (what arrives)
 * pace a kind; neither calls the other for it.
 */
#include "webhook/cluster/watch_internal.h"

#include <stdlib.h>

#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

static void st_backoff(tw_watch_stat *t, const struct res *s)
{
	(void)s;
	t->backoffs++;
}

static void st_fresh(tw_watch_stat *t, const struct res *s)
{
	t->fresh = atomic_load(&((struct res *)s)->fresh);
}

/* Wait a random time in [backoff/2, backoff], then double the ceiling. */
void tw__watch_back_off(struct res *s, const char *why)
{
	tw_watch *w = s->w;
	unsigned half = s->backoff / 2;
	unsigned delay = half + (half ? (unsigned)rand_r(&w->seed) % (half + 1) : 0);
	s->next_at = tw__mono_ms() + delay;
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_WARN, "watch: retrying after a backoff");
	tw_log_str(&l, "resource", s->resource);
	tw_log_str(&l, "reason", why);
	tw_log_int(&l, "delay_ms", delay);
	tw_log_end(&l);
	s->backoff = s->backoff * 2 > w->o.backoff_max_ms ? w->o.backoff_max_ms : s->backoff * 2;
	tw__watch_stat(s, st_backoff);
}

void tw__watch_backoff_reset(struct res *s)
{
	s->backoff = s->w->o.backoff_min_ms;
}

void tw__watch_stat(struct res *s, void (*fn)(tw_watch_stat *, const struct res *))
{
	pthread_mutex_lock(&s->w->stat_lock);
	fn(&s->w->stat[s->idx], s);
	pthread_mutex_unlock(&s->w->stat_lock);
}

void tw__watch_set_fresh(struct res *s, bool fresh)
{
	/* Fresh is set after the list's objects are in the store, stale as soon
	 * as the break is seen: a reader that finds the bit set may trust the
	 * cache. */
	if (s->w->o.fresh && s->k.fresh_bit)
		tw_fresh_set(s->w->o.fresh, s->k.fresh_bit, fresh);
	atomic_store(&s->fresh, fresh);
	tw__watch_stat(s, st_fresh);
	if (s->metric >= 0)
		tw_metrics_watch_stale(s->metric, !fresh);
}
