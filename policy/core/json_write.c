/*
 * core/json_write.c — compact JSON text of a cJSON tree, appended to a tp_buf.
 *
 * Byte for byte what cJSON_PrintUnformatted writes (its escapes and its
 * number forms), but straight into the caller's buffer: no intermediate
 * string, no printf for the integers and strings that make up nearly every
 * answer. An AdmissionReview answer took about 9,400 instructions through
 * cJSON_PrintUnformatted and a copy (callgrind).
 */
#include "policy/core/internal.h"
#include "policy/core/scan.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n bytes appended straight when the buffer has room and the limit allows
 * (tp_buf_add's checks, inline: a call for each quote, comma and colon
 * before; tp_json_write 5,190 -> 3,420 instructions for the answer to make
 * bench's TrainJob review, callgrind); else through tp_buf_add. */
static inline int put(tp_buf *out, const char *p, size_t n)
{
	size_t max = out->max ? out->max : TP_BUF_DEFAULT_MAX;
	if (out->len + n < out->cap && out->len + n <= max) {
		memcpy(out->data + out->len, p, n);
		out->len += n;
		out->data[out->len] = '\0';
		return TP_OK;
	}
	return tp_buf_add(out, p, n);
}

static inline int put_char(tp_buf *out, char c)
{
	return put(out, &c, 1);
}

/* Bytes are written as they are up to a control character, quote or
 * backslash: core/scan.h finds the end of each plain run 16 bytes a step,
 * after strlen (a table and a loop a byte before: write_string 1,890 ->
 * 1,290 instructions with its strlen and memcpy for the answer to make
 * bench's TrainJob review, whose warning is 260 bytes; callgrind). */
static int write_string(const char *s, tp_buf *out)
{
	static const char hex[] = "0123456789abcdef";
	const char *stop = s + strlen(s);
	/* most strings need no escape: quotes and text in one append */
	const char *end = (const char *)tp__scan_string((const unsigned char *)s,
							(const unsigned char *)stop);
	size_t len = (size_t)(end - s);
	size_t max = out->max ? out->max : TP_BUF_DEFAULT_MAX;
	if (end == stop && out->len + len + 2 < out->cap && out->len + len + 2 <= max) {
		char *d = out->data + out->len;
		d[0] = '"';
		memcpy(d + 1, s, len);
		d[len + 1] = '"';
		d[len + 2] = '\0';
		out->len += len + 2;
		return TP_OK;
	}
	int rc = put_char(out, '"');
	while (!rc) {
		const char *run = s;
		s = (const char *)tp__scan_string((const unsigned char *)s,
						  (const unsigned char *)stop);
		rc = put(out, run, (size_t)(s - run));
		if (rc || s == stop)
			break;
		unsigned char c = (unsigned char)*s;
		char esc[6] = { '\\', 0 };
		size_t n = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u', esc[2] = '0', esc[3] = '0';
			esc[4] = hex[c >> 4], esc[5] = hex[c & 15];
			n = 6;
		}
		rc = put(out, esc, n);
		s++;
	}
	return rc ? rc : put_char(out, '"');
}

/* cJSON's forms (1.7.15): %1.15g, or %1.17g when that does not read back
 * within cJSON's tolerance (a relative DBL_EPSILON); not a number prints as
 * null. Integers below 1e15 print the same digits without printf. */
static int write_number(const cJSON *v, tp_buf *out)
{
	double d = v->valuedouble;
	char tmp[32];
	if (isnan(d) || isinf(d))
		return tp_buf_add(out, "null", 4);
	if (d == floor(d) && fabs(d) < 1e15 && !(d == 0 && signbit(d))) {
		long long i = (long long)d;
		unsigned long long u = i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i;
		char *p = tmp + sizeof(tmp);
		do
			*--p = (char)('0' + u % 10);
		while (u /= 10);
		if (i < 0)
			*--p = '-';
		return put(out, p, (size_t)(tmp + sizeof(tmp) - p));
	}
	int n = snprintf(tmp, sizeof(tmp), "%1.15g", d);
	double back = strtod(tmp, NULL);
	double scale = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
	if (!(fabs(back - d) <= scale * DBL_EPSILON))
		n = snprintf(tmp, sizeof(tmp), "%1.17g", d);
	return tp_buf_add(out, tmp, (size_t)n);
}

int tp_json_write(const cJSON *v, tp_buf *out)
{
	if (!v)
		return TP_EINVAL;
	switch (v->type & 0xff) {
	case cJSON_NULL:
		return put(out, "null", 4);
	case cJSON_False:
		return put(out, "false", 5);
	case cJSON_True:
		return put(out, "true", 4);
	case cJSON_Number:
		return write_number(v, out);
	case cJSON_String:
		return write_string(v->valuestring ? v->valuestring : "", out);
	case cJSON_Raw:
		return v->valuestring ? tp_buf_adds(out, v->valuestring) : TP_EINVAL;
	case cJSON_Array:
	case cJSON_Object: {
		bool obj = cJSON_IsObject(v);
		int rc = put_char(out, obj ? '{' : '[');
		for (const cJSON *c = v->child; c && !rc; c = c->next) {
			if (c != v->child)
				rc = put_char(out, ',');
			if (!rc && obj)
				rc = write_string(c->string ? c->string : "", out);
			if (!rc && obj)
				rc = put_char(out, ':');
			if (!rc)
				rc = tp_json_write(c, out);
		}
		return rc ? rc : put_char(out, obj ? '}' : ']');
	}
	default:
		return TP_EINVAL;
	}
}
