/*
 * webhook/core/jsonlines.h — splits a byte stream (a Kubernetes watch: one
 * JSON object per line) into lines, however the bytes arrive: a line may span
 * many feeds and one feed may hold many lines. Lines are bounded; a longer one
 * is an error.
 */
#ifndef TW_JSONLINES_H
#define TW_JSONLINES_H

#include <stddef.h>

/* Called once per complete, non-blank line (without its '\n' or '\r'). 0
 * goes on; a positive value of the caller's own stops the feed and is
 * returned by tw_jsonlines_feed as it is. Never negative: the splitter's own
 * failures are the negative TP_ codes, so the two never mix (a callback that
 * returns one anyway gets TP_EINVAL back). */
typedef int (*tw_jsonlines_fn)(void *arg, const char *line, size_t len);

typedef struct tw_jsonlines {
	char *buf; /* the unfinished line (malloc'd) */
	size_t len, cap;
	size_t max; /* longest accepted line in bytes */
} tw_jsonlines;

void tw_jsonlines_init(tw_jsonlines *s, size_t max_line);
/* 0, fn's positive stop, or the splitter's own failure: TP_ELIMIT (a line
 * longer than max), TP_ENOMEM. */
int tw_jsonlines_feed(tw_jsonlines *s, const char *data, size_t n, tw_jsonlines_fn fn,
		      void *arg);
/* Bytes of an unfinished line held (a stream that ends here lost them). */
size_t tw_jsonlines_pending(const tw_jsonlines *s);
/* Forget the unfinished line (a new stream starts); memory kept. */
void tw_jsonlines_reset(tw_jsonlines *s);
void tw_jsonlines_free(tw_jsonlines *s);

#endif /* TW_JSONLINES_H */
