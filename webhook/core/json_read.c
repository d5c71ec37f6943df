/*
 * json_read.c — one JSON object through the library's reader. The callers
 * bound what they read before it gets here (the API client's body limits, a
 * watch's line limit, a plugin's output limit), so the reader's own byte
 * limits are the input's length; its depth is cJSON's (1000), which these
 * callers had before, not the 100 the loader takes for a user's files.
 */
#include "webhook/core/json_read.h"

#include <string.h>

cJSON *tw_json_object(const char *data, size_t len)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.json_only = true;
	lim.max_doc_bytes = lim.max_total_bytes = len ? len : 1;
	lim.max_depth = 1000;
	lim.max_docs = 1;
	tp_load_error err = { 0 };
	tp_docs *docs = NULL;
	cJSON *obj = NULL;
	if (!tp_load(data ? data : "", len, &lim, &docs, &err) && tp_docs_count(docs) == 1)
		obj = tp_docs_take(docs, 0);
	tp_docs_free(docs);
	return obj;
}

cJSON *tw_json_value(const char *text)
{
	tp_buf b = TP_BUF_INIT(0);
	cJSON *obj = NULL;
	if (!tp_buf_adds(&b, "{\"v\":") && !tp_buf_adds(&b, text) && !tp_buf_adds(&b, "}"))
		obj = tw_json_object(b.data, b.len);
	cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, "v");
	cJSON_Delete(obj);
	tp_buf_free(&b);
	return v;
}
