/*
 * fakeapi.h — a fake Kubernetes API server for the watch's tests: plain HTTP
 * on 127.0.0.1 (a free port), paged lists of the four watched resources, and
 * watch streams the test writes as it goes (events, drops, clean ends, 410).
 * It checks the bearer token and records what the client asked for.
 *
 * Resources are numbered as in webhook/watch.h (TW_WATCH_*).
 */
#ifndef TT_FAKEAPI_H
#define TT_FAKEAPI_H

#include <stdbool.h>

#define FA_RESOURCES 4

typedef struct fa_server fa_server;

typedef struct fa_stats {
	unsigned lists;          /* list requests answered 200 */
	unsigned continued;      /* ... of which carried a continue token */
	unsigned watches;        /* watch requests answered 200 */
	unsigned unauthorized;   /* requests refused with 401 */
	unsigned gone;           /* watch requests answered 410 */
	bool watch_open;         /* a watch stream is being served */
	bool list_waiting;       /* a list request is held */
	char last_watch_rv[128]; /* resourceVersion= of the last watch */
	char last_token[256];    /* bearer token of the last request */
	char last_query[512];    /* the last request's query, "k=v&..." */
} fa_stats;

/* 0 or -1. */
int fa_start(fa_server **out);
unsigned short fa_port(const fa_server *f);
/* Ends every stream (as dropped), joins the server's threads, frees. */
void fa_stop(fa_server *f);

/* The token requests must carry (NULL: any). */
void fa_set_token(fa_server *f, const char *token);
/* What a list of resource r returns: items_json is a JSON array of objects;
 * rv the list's resourceVersion. */
void fa_set_objects(fa_server *f, int r, const char *items_json, const char *rv);
/* At most n items per page (0: only ?limit= decides). */
void fa_set_page(fa_server *f, int r, unsigned n);
/* Hold list requests of r until released. */
void fa_hold_list(fa_server *f, int r, bool hold);
/* The next watch request of r is answered 410 Gone. */
void fa_gone_next_watch(fa_server *f, int r);

/* Append to r's watch stream: one JSON line (without '\n'); a drop (the
 * connection breaks); a clean end. Queued until a watch stream takes them. */
void fa_push(fa_server *f, int r, const char *line);
void fa_drop(fa_server *f, int r);
void fa_end(fa_server *f, int r);

void fa_get_stats(fa_server *f, int r, fa_stats *out);

#endif /* TT_FAKEAPI_H */
