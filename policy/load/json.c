/*
 * load/json.c — the JSON fast path of tp_load: the stream of documents.
 *
 * Each value is read by load/json_value.c in one pass, straight from the
 * caller's bytes (RFC 8259 as the API server reads it, limits checked as it
 * goes). Like Kubernetes' YAMLOrJSONDecoder (a json.Decoder stream), the
 * input may hold several JSON objects one after another; each is one
 * document. Any other text after a value is an error.
 */
#include "policy/load/load.h"
#include "policy/core/scan.h"

#include <stdio.h>
#include <string.h>

static size_t skip_ws(const tp_loader *ld, size_t i)
{
	const unsigned char *d = (const unsigned char *)ld->data;
	return (size_t)(tp__scan_ws(d + i, d + ld->len) - d);
}

/* Fail with the line and column of byte offset off. */
static int fail_at(tp_loader *ld, int code, int doc, size_t off, const char *msg)
{
	int line, col;
	tp__load_position(ld->data, off, &line, &col);
	return tp__load_fail(ld, code, doc, line, col, "%s", msg);
}

/* ------------------------------------------------------------- documents */

static int not_an_object(tp_loader *ld, int doc, size_t off, const cJSON *root)
{
	return fail_at(ld, TP_EPARSE, doc, off,
		       cJSON_IsArray(root) ? "the document is an array, not a Kubernetes object (a mapping)"
					   : "the document is a scalar, not a Kubernetes object (a mapping)");
}

/* One value starting at *pos; *pos moves past it. */
static int load_one(tp_loader *ld, int doc, size_t *pos)
{
	size_t from = *pos;
	cJSON *root = NULL;
	int rc = tp__json_value(ld, doc, pos, &root);
	if (rc)
		return rc;
	if (!cJSON_IsObject(root))
		rc = not_an_object(ld, doc, from, root);
	if (!rc && ld->pos)
		rc = tp__pos_json(ld->pos, ld->data, from, *pos, root);
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	int line, col;
	tp__load_position(ld->data, from, &line, &col);
	return tp__load_add(ld, root, doc, line);
}

int tp__load_json(tp_loader *ld, size_t start)
{
	size_t pos = skip_ws(ld, start);
	for (int doc = 1; pos < ld->len; doc++) {
		char c = ld->data[pos];
		if (doc > 1 && c != '{' && c != '[')
			return fail_at(ld, TP_EPARSE, doc - 1, pos,
				       "unexpected text after the JSON document");
		int rc = load_one(ld, doc, &pos);
		if (rc)
			return rc;
		pos = skip_ws(ld, pos);
	}
	return TP_OK;
}
