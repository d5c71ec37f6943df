/*
 * jsonlines.c — the watch stream's line splitter (see jsonlines.h).
 *
 * A line that arrives whole inside one feed is handed out in place; only the
 * pieces of a line split across feeds are copied.
 */
#include "webhook/core/jsonlines.h"

#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"

void tw_jsonlines_init(tw_jsonlines *s, size_t max_line)
{
	memset(s, 0, sizeof(*s));
	s->max = max_line ? max_line : ((size_t)16 << 20);
}

static int keep(tw_jsonlines *s, const char *p, size_t n)
{
	if (n > s->max - s->len)
		return TP_ELIMIT;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n)
			cap *= 2;
		if (cap > s->max)
			cap = s->max;
		char *b = realloc(s->buf, cap);
		if (!b)
			return TP_ENOMEM;
		s->buf = b;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

static int emit(const char *line, size_t len, tw_jsonlines_fn fn, void *arg)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	int rc = i < len ? fn(arg, line + i, len - i) : 0;
	return rc < 0 ? TP_EINVAL : rc; /* a stop must not read as the splitter's error */
}

int tw_jsonlines_feed(tw_jsonlines *s, const char *data, size_t n, tw_jsonlines_fn fn,
		      void *arg)
{
	while (n) {
		const char *nl = memchr(data, '\n', n);
		if (!nl) /* the rest is the start (or middle) of a line */
			return keep(s, data, n);
		size_t part = (size_t)(nl - data);
		int rc;
		if (s->len) {
			if ((rc = keep(s, data, part)))
				return rc;
			size_t len = s->len;
			s->len = 0; /* the buffer is reused only after the callback returns */
			rc = emit(s->buf, len, fn, arg);
		} else if (part > s->max) {
			return TP_ELIMIT;
		} else {
			rc = emit(data, part, fn, arg);
		}
		if (rc)
			return rc;
		data = nl + 1;
		n -= part + 1;
	}
	return 0;
}

size_t tw_jsonlines_pending(const tw_jsonlines *s)
{
	return s->len;
}

void tw_jsonlines_reset(tw_jsonlines *s)
{
	s->len = 0;
}

void tw_jsonlines_free(tw_jsonlines *s)
{
	free(s->buf);
	memset(s, 0, sizeof(*s));
}
