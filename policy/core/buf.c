/*
 * core/buf.c — a growable byte buffer with a hard limit, always NUL-terminated.
 */
#include "policy/trainpolicy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tp_buf_init(tp_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

static int buf_reserve(tp_buf *b, size_t extra)
{
	size_t max = b->max ? b->max : TP_BUF_DEFAULT_MAX;
	if (extra > max - b->len || b->len > max)
		return TP_ELIMIT;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return TP_OK;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return TP_ENOMEM;
	b->data = p;
	b->cap = cap;
	return TP_OK;
}

int tp_buf_reserve(tp_buf *b, size_t n)
{
	return buf_reserve(b, n);
}

int tp_buf_add(tp_buf *b, const void *p, size_t n)
{
	int rc = buf_reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return TP_OK;
}

int tp_buf_adds(tp_buf *b, const char *s)
{
	return tp_buf_add(b, s, strlen(s));
}

int tp_buf_addc(tp_buf *b, char c)
{
	return tp_buf_add(b, &c, 1);
}

int tp_buf_vaddf(tp_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return TP_EINVAL;
	int rc = buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return TP_OK;
}

int tp_buf_addf(tp_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = tp_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void tp_buf_reset(tp_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void tp_buf_free(tp_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int tp_buf_add_quoted(tp_buf *b, const char *s)
{
	int rc = tp_buf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && !rc; p++) {
		switch (*p) {
		case '"': rc = tp_buf_adds(b, "\\\""); break;
		case '\\': rc = tp_buf_adds(b, "\\\\"); break;
		case '\n': rc = tp_buf_adds(b, "\\n"); break;
		case '\t': rc = tp_buf_adds(b, "\\t"); break;
		case '\r': rc = tp_buf_adds(b, "\\r"); break;
		default:
			rc = *p < 0x20 || *p == 0x7f ? tp_buf_addf(b, "\\x%02x", *p)
						     : tp_buf_addc(b, (char)*p);
		}
	}
	return rc ? rc : tp_buf_addc(b, '"');
}
