/*
 * webhook/server/deciders.h — the threads that decide admission requests,
 * apart from the threads that serve connections (deciders.c).
 *
 * libmicrohttpd's worker threads each poll many connections; a decision
 * made on one of them (a big object to check, a lookup waiting for the API
 * server) would hold every other connection of that thread until it ended.
 * So a request whose decision may take long (http_decide.c) is suspended
 * there and its decision queued here; the decider resumes the connection
 * with the answer ready.
 */
#ifndef TW_DECIDERS_H
#define TW_DECIDERS_H

#include <stdbool.h>

typedef struct tw_job tw_job;
struct tw_job {
	tw_job *next; /* the queue's link (the pool's) */
	/* Called once on a decider; cancelled when the pool is stopping: then
	 * the job only answers (503), it does not decide. */
	void (*run)(tw_job *job, bool cancelled);
};

typedef struct tw_deciders tw_deciders;

/* n threads. 0, or (nothing started) TP_ENOMEM, or TW_EFAILED when no
 * thread could be created. */
int tw_deciders_start(unsigned n, tw_deciders **out);
/* Queue job (first in, first out). Once the pool is stopping, the job runs
 * cancelled at once on the calling thread. */
void tw_deciders_submit(tw_deciders *d, tw_job *job);
/* Jobs waiting for a decider now. */
unsigned tw_deciders_queued(tw_deciders *d);
/* Run every queued job cancelled, wait for the running ones, join, free. */
void tw_deciders_stop(tw_deciders *d);

#endif /* TW_DECIDERS_H */
