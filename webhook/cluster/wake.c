/*
 * wake.c — a thread's sleep cut short by a kick or a stop (see wake.h).
 */
#include "webhook/cluster/wake.h"

#include <time.h>

void tw_wake_init(tw_wake *w)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	w->kick = w->stop = false;
}

void tw_wake_destroy(tw_wake *w)
{
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->lock);
}

static void set(tw_wake *w, bool stop)
{
	pthread_mutex_lock(&w->lock);
	if (stop)
		w->stop = true;
	else
		w->kick = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->lock);
}

void tw_wake_kick(tw_wake *w)
{
	set(w, false);
}

void tw_wake_stop(tw_wake *w)
{
	set(w, true);
}

bool tw_wake_stopping(tw_wake *w)
{
	pthread_mutex_lock(&w->lock);
	bool stop = w->stop;
	pthread_mutex_unlock(&w->lock);
	return stop;
}

bool tw_wake_wait(tw_wake *w, long long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->lock);
	while (!w->kick && !w->stop)
		if (pthread_cond_timedwait(&w->cv, &w->lock, &ts))
			break;
	w->kick = false;
	bool go_on = !w->stop;
	pthread_mutex_unlock(&w->lock);
	return go_on;
}

static void sink_put(void *arg, cJSON *obj)
{
	cJSON_Delete(obj);
	tw_wake_kick(arg);
}

static void sink_del(void *arg, const char *ns, const char *name)
{
	(void)ns, (void)name;
	tw_wake_kick(arg);
}

tw_watch_sink tw_wake_sink(tw_wake *w)
{
	return (tw_watch_sink){ sink_put, sink_del, w };
}
