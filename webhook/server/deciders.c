/*
 * webhook/server/deciders.c — a fixed pool of threads over one first-in,
 * first-out queue of jobs (deciders.h).
 */
#include "webhook/server/deciders.h"

#include <pthread.h>
#include <stdlib.h>

#include "policy/trainpolicy.h"

struct tw_deciders {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	tw_job *head, *tail; /* the queue */
	unsigned queued;
	bool stopping;
	unsigned n;
	pthread_t *threads;
};

/* The next job, or NULL once stopping with nothing queued; lock held. */
static tw_job *next_locked(tw_deciders *d)
{
	while (!d->head && !d->stopping)
		pthread_cond_wait(&d->wake, &d->lock);
	tw_job *j = d->head;
	if (j) {
		d->head = j->next;
		if (!d->head)
			d->tail = NULL;
		d->queued--;
	}
	return j;
}

static void *decider(void *arg)
{
	tw_deciders *d = arg;
	pthread_mutex_lock(&d->lock);
	for (tw_job *j; (j = next_locked(d)) != NULL;) {
		bool cancelled = d->stopping;
		pthread_mutex_unlock(&d->lock);
		j->run(j, cancelled);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int tw_deciders_start(unsigned n, tw_deciders **out)
{
	tw_deciders *d = calloc(1, sizeof(*d));
	if (!d || !(d->threads = calloc(n ? n : 1, sizeof(pthread_t)))) {
		free(d);
		return TP_ENOMEM;
	}
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	for (; d->n < (n ? n : 1); d->n++)
		if (pthread_create(&d->threads[d->n], NULL, decider, d))
			break;
	if (!d->n) {
		tw_deciders_stop(d);
		return TW_EFAILED;
	}
	*out = d;
	return 0;
}

void tw_deciders_submit(tw_deciders *d, tw_job *job)
{
	job->next = NULL;
	pthread_mutex_lock(&d->lock);
	bool stopping = d->stopping;
	if (!stopping) {
		if (d->tail)
			d->tail->next = job;
		else
			d->head = job;
		d->tail = job;
		d->queued++;
		pthread_cond_signal(&d->wake);
	}
	pthread_mutex_unlock(&d->lock);
	if (stopping)
		job->run(job, true);
}

unsigned tw_deciders_queued(tw_deciders *d)
{
	pthread_mutex_lock(&d->lock);
	unsigned n = d->queued;
	pthread_mutex_unlock(&d->lock);
	return n;
}

void tw_deciders_stop(tw_deciders *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	pthread_cond_broadcast(&d->wake);
	pthread_mutex_unlock(&d->lock);
	for (unsigned i = 0; i < d->n; i++)
		pthread_join(d->threads[i], NULL);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->wake);
	free(d->threads);
	free(d);
}
