/*
 * wake.c — a thread's sleep cut short by a kick or a stop (see wake.h).
 */
#include "webhook/cluster/wake.h"

#include "webhook/core/clock.h"

void tw_wake_init(tw_wake *w)
{
	pthread_mutex_init(&w->lock, NULL);
	tw_cond_init_mono(&w->cv);
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
	struct timespec ts = tw_mono_after_ms(ms);
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
