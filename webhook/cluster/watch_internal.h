/*
 * webhook/cluster/watch_internal.h — what watch.c (transfers, the thread),
 * watch_objects.c (what arrives: list pages, events, objects) and
 * watch_pace.c (backoff, stats) share; watch.c calls watch_objects.c, both
 * call watch_pace.c. Not for other files: the public face is watch.h.
 */
#ifndef TW_WATCH_INTERNAL_H
#define TW_WATCH_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "webhook/core/clock.h"
#include "webhook/core/jsonlines.h"
#include "webhook/core/keyset.h"
#include "webhook/cluster/watch.h"

/* The start of an error answer is enough to say what went wrong. */
#define ERROR_BODY_MAX 65536

enum mode { MODE_LIST, MODE_WATCH };

/* How a watch stream ended, decided while it ran (by a line, or by the
 * splitter): a name for each outcome, never a bare status that means two
 * things. Positive, so that the line callback's stop never reads as one of
 * the splitter's own negative TP_ errors (jsonlines.h). finished() in
 * watch.c decides what follows each. */
enum watch_end {
	END_NONE = 0,    /* not decided by the stream: the transfer's result says */
	END_GONE,        /* an ERROR event 410: the resourceVersion is too old */
	END_ERROR_EVENT, /* another ERROR event: the API server ended the watch */
	END_MALFORMED,   /* a line that is not {type, object} */
	END_TOO_LONG,    /* a line over max_event */
	END_NO_MEMORY,   /* no memory to hold a line */
};

struct res {
	struct tw_watch *w;
	tw_watch_kind k;
	int idx;
	int metric;           /* metrics slot, -1 without metrics */
	char api_version[96]; /* "trainer.kubeflow.org/v1alpha1", "v1" */
	char resource[160];   /* "trainingruntimes.trainer.kubeflow.org" (logs, readiness) */
	CURL *easy;
	struct curl_slist *headers;
	bool busy;
	enum mode mode;
	char *cont;           /* continue token of the list in progress */
	char rv[128];         /* resourceVersion to watch from */
	uint64_t next_at;     /* monotonic ms: start the next transfer then */
	unsigned backoff;     /* ms, the next delay's ceiling */
	uint64_t started;     /* monotonic ms of this transfer's start */
	uint64_t conn_events; /* events this watch delivered */
	enum watch_end end;
	char end_why[192];    /* what the stream's end was, for the log */
	bool lost;            /* the last attempt failed in transport (no answer, or its
				 connection broke), not by what the API server said */
	atomic_bool fresh;    /* listed, and its watch unbroken since (watch_fresh.h) */
	tp_buf body;          /* a list page, or an error answer */
	tw_jsonlines lines;
	tw_keyset have, seen;
	atomic_bool listed_once;
	long last_logged;     /* status of the last list failure logged (-1: none) */
	char errbuf[CURL_ERROR_SIZE];
};

struct tw_watch {
	tw_watch_opts o;
	tw_kube_config kube;
	CURLM *multi;
	pthread_t thread;
	atomic_bool stop;
	unsigned seed;
	pthread_mutex_t stat_lock;
	tw_watch_stat stat[TW_WATCH_MAX_KINDS];
	struct res res[TW_WATCH_MAX_KINDS];
	size_t n;
	bool relisted_due;    /* a kind listed again this round (the thread's own) */
};

/* Monotonic ms, the binary's one clock (webhook/core/clock.h). */
static inline uint64_t tw__mono_ms(void)
{
	return (uint64_t)tw_mono_ms();
}

static inline int64_t tw__wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* watch_pace.c: wait a jittered, growing delay (why goes to the log); start
 * over from the smallest one; update the kind's stats under their lock. */
void tw__watch_back_off(struct res *s, const char *why);
void tw__watch_backoff_reset(struct res *s);
void tw__watch_stat(struct res *s, void (*fn)(tw_watch_stat *, const struct res *));
/* Mark the kind fresh (a list completed) or stale (its watch broke): its
 * bit in opts.fresh, its stats and its /metrics gauge. */
void tw__watch_set_fresh(struct res *s, bool fresh);

/* watch_objects.c: libcurl's write callback (list pages and watch lines);
 * a list page that arrived whole; forget a list in progress. */
size_t tw__watch_on_data(char *data, size_t size, size_t nmemb, void *arg);
void tw__watch_list_page(struct res *s);
void tw__watch_start_list_over(struct res *s);

#endif /* TW_WATCH_INTERNAL_H */
