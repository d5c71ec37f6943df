/*
 * yaml_out.c — cJSON to YAML, for `expand -o yaml`.
 *
 * libyaml's emitter does the quoting of special characters; what it cannot
 * know is that a JSON string like "true", "1" or "null" would read back as a
 * boolean, a number or null. Those are double-quoted here, so the YAML
 * round-trips to the same JSON through any Kubernetes YAML reader.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "webhook/cli/yaml_out.h"

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	return tp_buf_add(data, buffer, size) == TP_OK;
}

/* YAML 1.1 words that resolve to booleans or null (go-yaml v2 reads them so). */
static bool is_reserved_word(const char *s)
{
	static const char *const words[] = { "y", "n", "yes", "no", "on", "off", "true", "false",
					     "null", "~", NULL };
	for (const char *const *w = words; *w; w++)
		if (!strcasecmp(s, *w))
			return true;
	return false;
}

/* Anything starting like a number, a date or a special float is quoted:
 * cheaper than resolving every YAML 1.1 numeric form, and always safe. */
static bool looks_numeric(const char *s)
{
	if (*s == '+' || *s == '-' || *s == '.')
		s++;
	return isdigit((unsigned char)*s) || !strncasecmp(s, "inf", 3) || !strncasecmp(s, "nan", 3);
}

static yaml_scalar_style_t string_style(const char *s)
{
	if (!*s || is_reserved_word(s) || looks_numeric(s))
		return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	if (strchr(s, '\n'))
		return YAML_LITERAL_SCALAR_STYLE;
	return YAML_ANY_SCALAR_STYLE;
}

/* The emit_ steps: 0, or TW_EFAILED when libyaml refuses an event or its
 * write handler (the buffer, tw_yaml_write's TP_ENOMEM) fails. */
static int emit_scalar(yaml_emitter_t *em, const char *text, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	bool plain_ok = style == YAML_ANY_SCALAR_STYLE || style == YAML_PLAIN_SCALAR_STYLE;
	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
					  plain_ok, !plain_ok || style != YAML_ANY_SCALAR_STYLE, style))
		return TW_EFAILED;
	return yaml_emitter_emit(em, &ev) ? 0 : TW_EFAILED;
}

static int emit_node(yaml_emitter_t *em, const cJSON *v);

static int emit_children(yaml_emitter_t *em, const cJSON *v, bool keys)
{
	for (const cJSON *c = v->child; c; c = c->next) {
		if (keys && emit_scalar(em, c->string ? c->string : "",
					string_style(c->string ? c->string : "")))
			return TW_EFAILED;
		if (emit_node(em, c))
			return TW_EFAILED;
	}
	return 0;
}

static int emit_collection(yaml_emitter_t *em, const cJSON *v, bool mapping)
{
	yaml_event_t ev;
	/* Empty collections read better in flow style: {} and []. */
	bool flow = v->child == NULL;
	int ok = mapping ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							       flow ? YAML_FLOW_MAPPING_STYLE
								    : YAML_BLOCK_MAPPING_STYLE)
			 : yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
								flow ? YAML_FLOW_SEQUENCE_STYLE
								     : YAML_BLOCK_SEQUENCE_STYLE);
	if (!ok || !yaml_emitter_emit(em, &ev))
		return TW_EFAILED;
	if (emit_children(em, v, mapping))
		return TW_EFAILED;
	ok = mapping ? yaml_mapping_end_event_initialize(&ev) : yaml_sequence_end_event_initialize(&ev);
	return ok && yaml_emitter_emit(em, &ev) ? 0 : TW_EFAILED;
}

static int emit_number(yaml_emitter_t *em, const cJSON *v)
{
	char num[64];
	long long i;
	double d = v->valuedouble;
	if (d == (double)(i = (long long)d) && d > -9.0e15 && d < 9.0e15)
		snprintf(num, sizeof(num), "%lld", i);
	else
		snprintf(num, sizeof(num), "%.17g", d);
	return emit_scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
}

static int emit_node(yaml_emitter_t *em, const cJSON *v)
{
	if (cJSON_IsObject(v))
		return emit_collection(em, v, true);
	if (cJSON_IsArray(v))
		return emit_collection(em, v, false);
	if (cJSON_IsString(v))
		return emit_scalar(em, v->valuestring, string_style(v->valuestring));
	if (cJSON_IsNumber(v))
		return emit_number(em, v);
	if (cJSON_IsBool(v))
		return emit_scalar(em, cJSON_IsTrue(v) ? "true" : "false", YAML_PLAIN_SCALAR_STYLE);
	return emit_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
}

static int emit_document(yaml_emitter_t *em, const cJSON *obj)
{
	yaml_event_t ev;
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) || !yaml_emitter_emit(em, &ev))
		return TW_EFAILED;
	if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
	    !yaml_emitter_emit(em, &ev))
		return TW_EFAILED;
	if (emit_node(em, obj))
		return TW_EFAILED;
	if (!yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(em, &ev))
		return TW_EFAILED;
	if (!yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(em, &ev))
		return TW_EFAILED;
	return yaml_emitter_flush(em) ? 0 : TW_EFAILED;
}

int tw_yaml_write(const cJSON *obj, tp_buf *out)
{
	yaml_emitter_t em;
	if (!obj || !yaml_emitter_initialize(&em))
		return TP_EINVAL;
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1); /* never fold long lines: commands stay one line */
	yaml_emitter_set_indent(&em, 2);
	int rc = emit_document(&em, obj) ? TP_ENOMEM : TP_OK;
	yaml_emitter_delete(&em);
	return rc;
}
