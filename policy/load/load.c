/*
 * load/load.c — tp_load: YAML or JSON bytes into Kubernetes objects.
 *
 * The dispatcher, above the parsers: the hard limits checked before any
 * parsing (total size, NUL bytes, UTF-8), the choice between the JSON fast
 * path (load/json.c) and libyaml (load/yaml.c), and the public face of the
 * result. What happens to each parsed document (it must be a mapping; kind:
 * List is expanded into its items) is load/common.c's, below the parsers.
 */
#include "policy/load/load.h"
#include "policy/core/scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1024 * 1024)

void tp_load_limits_default(tp_load_limits *l)
{
	if (!l)
		return;
	l->max_doc_bytes = 3 * MIB;
	l->max_total_bytes = 64 * MIB;
	l->max_depth = 100;
	l->max_aliases = 100;
	l->max_docs = 10000;
	l->positions = false;
	l->json_only = false;
	l->skip = NULL;
	l->read_to = NULL;
	l->read_arg = NULL;
}

/* A zero field keeps its default, so callers may set only what they mean. */
static void limits_resolve(tp_load_limits *out, const tp_load_limits *in)
{
	tp_load_limits_default(out);
	if (!in)
		return;
	if (in->max_doc_bytes)
		out->max_doc_bytes = in->max_doc_bytes;
	if (in->max_total_bytes)
		out->max_total_bytes = in->max_total_bytes;
	if (in->max_depth > 0)
		out->max_depth = in->max_depth;
	if (in->max_aliases)
		out->max_aliases = in->max_aliases;
	if (in->max_docs)
		out->max_docs = in->max_docs;
	out->positions = in->positions;
	out->json_only = in->json_only;
	out->skip = in->skip;
	out->read_to = in->read_to;
	out->read_arg = in->read_arg;
}

/* ------------------------------------------------------ whole-input checks */

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one:
 * overlong forms, surrogates and code points past U+10FFFF are refused. */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned c = p[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* No NUL byte, valid UTF-8, from *from up to end (a sequence may run past
 * it: *from ends after it). Offsets in the messages are 0-based byte
 * offsets, as hexdump and cmp show them. */
static int check_range(tp_loader *ld, size_t *from, size_t end)
{
	const unsigned char *p = (const unsigned char *)ld->data;
	size_t len = ld->len, i = *from;
	while (i < end) {
		i = (size_t)(tp__scan_ascii(p + i, p + end) - p);
		if (i == end)
			break;
		if (p[i] == 0)
			return tp__load_fail(ld, TP_EPARSE, 0, 0, 0,
					     "binary data: NUL byte at offset %zu", i);
		size_t n = utf8_seq(p + i, len - i);
		if (n == 0) {
			int line, col;
			tp__load_position(ld->data, i, &line, &col);
			return tp__load_fail(ld, TP_EPARSE, 0, 0, 0,
					     "invalid UTF-8 at byte %zu (line %d)", i, line);
		}
		i += n;
	}
	*from = i;
	return TP_OK;
}

/* One linear pass over the input; in steps when the caller follows the
 * reading (tp_load_limits.read_to). */
static int check_bytes(tp_loader *ld)
{
	size_t len = ld->len, from = 0;
	size_t step = ld->lim.read_to ? TP_LOAD_READ_STEP : len;
	while (from < len) {
		int rc = check_range(ld, &from, len - from > step ? from + step : len);
		if (rc)
			return rc;
		if (ld->lim.read_to)
			ld->lim.read_to(ld->lim.read_arg, ld->data, from);
	}
	return TP_OK;
}

static size_t skip_bom(const char *d, size_t len)
{
	return len >= 3 && !memcmp(d, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

/* JSON when the first meaningful byte opens an object or array, the same
 * sniff Kubernetes' YAMLOrJSONDecoder uses. */
static bool looks_like_json(const char *d, size_t len, size_t start)
{
	size_t i = start;
	while (i < len && tp__scan_is_ws((unsigned char)d[i]))
		i++;
	return i < len && (d[i] == '{' || d[i] == '[');
}

/* ------------------------------------------------------------- public API */

static void docs_clear(tp_docs *d)
{
	if (!d->in_arena)
		for (size_t i = 0; i < d->n; i++)
			cJSON_Delete(d->v[i].obj);
	d->n = 0;
}

int tp_load(const char *data, size_t len, const tp_load_limits *limits, tp_docs **out,
	    tp_load_error *err)
{
	tp_load_error scratch;
	if (!err)
		err = &scratch;
	memset(err, 0, sizeof(*err));
	if (out)
		*out = NULL;
	tp_loader ld = { .data = data, .len = len, .err = err };
	if (!out || (!data && len)) {
		return tp__load_fail(&ld, TP_EINVAL, 0, 0, 0, "no input given");
	}
	limits_resolve(&ld.lim, limits);
	if (len > ld.lim.max_total_bytes)
		return tp__load_fail(&ld, TP_ELIMIT, 0, 0, 0,
				     "the input is %zu bytes, over the limit of %zu bytes",
				     len, ld.lim.max_total_bytes);
	tp_json_init();
	ld.docs = calloc(1, sizeof(*ld.docs));
	if (!ld.docs)
		return tp__load_fail(&ld, TP_ENOMEM, 0, 0, 0, "out of memory");
	ld.docs->in_arena = tp_arena_current() != NULL;
	if (ld.lim.positions && !(ld.pos = ld.docs->pos = tp__pos_new())) {
		free(ld.docs);
		return tp__load_fail(&ld, TP_ENOMEM, 0, 0, 0, "out of memory");
	}
	if (!data)
		data = ld.data = "";

	int rc = check_bytes(&ld);
	if (!rc) {
		size_t start = skip_bom(data, len);
		bool json = looks_like_json(data, len, start);
		if (!json && ld.lim.json_only)
			rc = tp__load_fail(&ld, TP_EPARSE, 1, 1, 1, "not JSON: a JSON object starts "
					   "with '{' (send YAML as YAML, not as application/json)");
		else
			rc = json ? tp__load_json(&ld, start) : tp__load_yaml(&ld, start);
	}
	free(ld.scan_own);
	if (!rc && ld.nonempty == 0)
		rc = tp__load_fail(&ld, TP_EPARSE, 0, 0, 0,
				   "no YAML or JSON document found (the input is empty)");
	if (rc) {
		tp_docs_free(ld.docs);
		return rc;
	}
	*out = ld.docs;
	return TP_OK;
}

size_t tp_docs_count(const tp_docs *d)
{
	return d ? d->n : 0;
}

const tp_doc *tp_docs_at(const tp_docs *d, size_t i)
{
	return d && i < d->n ? &d->v[i] : NULL;
}

cJSON *tp_docs_take(tp_docs *d, size_t i)
{
	if (!d || i >= d->n)
		return NULL;
	cJSON *o = d->v[i].obj;
	d->v[i].obj = NULL;
	return o;
}

void tp_docs_free(tp_docs *d)
{
	if (!d)
		return;
	docs_clear(d);
	tp__pos_free(d->pos);
	free(d->v);
	free(d);
}

int tp_load_error_format(const tp_load_error *err, const char *name, tp_buf *out)
{
	if (!err || !out)
		return TP_EINVAL;
	int rc = TP_OK;
	if (name && *name)
		rc = tp_buf_addf(out, "%s: ", name);
	if (!rc && err->doc > 0)
		rc = tp_buf_addf(out, "document %d", err->doc);
	if (!rc && err->line > 0)
		rc = tp_buf_addf(out, "%sline %d", err->doc > 0 ? ", " : "", err->line);
	if (!rc && err->line > 0 && err->column > 0)
		rc = tp_buf_addf(out, ", column %d", err->column);
	if (!rc && (err->doc > 0 || err->line > 0))
		rc = tp_buf_adds(out, ": ");
	if (!rc)
		rc = tp_buf_adds(out, err->msg[0] ? err->msg : tp_strerror(err->code));
	return rc;
}
