/*
 * webhook/core/json_read.h — the binary's one JSON reader for what the API
 * server, a watch or a credential plugin sends (json_read.c): the library's
 * (tp_load, JSON only), the reader the admission bodies go through, not a
 * second parser beside it.
 */
#ifndef TW_JSON_READ_H
#define TW_JSON_READ_H

#include <stddef.h>

#include "policy/trainpolicy.h"

/* The one JSON object the len bytes of data hold (data may be NULL when len
 * is 0); NULL when they hold none, more than one, or are not JSON as the API
 * server reads it. The tree is cJSON's (in the current arena when there is
 * one, as tp_load makes it): cJSON_Delete it outside an arena. */
cJSON *tw_json_object(const char *data, size_t len);

/* Any one JSON value (a string, a number, ...) text holds, NUL-terminated,
 * as tw_json_object reads it (the value of a one-member object); NULL when
 * it holds no value or more. cJSON_Delete it outside an arena. */
cJSON *tw_json_value(const char *text);

#endif /* TW_JSON_READ_H */
