/*
 * admission/trainjob_defaults.c — upstream's TrainJobDefaulter (§2.3): it only stamps
 * spec.runtimePatches[].time, so that a controller can tell which manager's
 * patch changed last.
 */
#include "policy/core/deadline.h"
#include "policy/core/index.h"
#include "policy/core/internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* The one place the library reads the wall clock (reading it is not I/O). */
static void utc_now(char *out, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, n, "1970-01-01T00:00:00Z");
}

static bool time_unset(const cJSON *patch)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(patch, "time");
	return !t || cJSON_IsNull(t);
}

/* Replace (or add) patch.time with a string copy of value. */
static int set_time(cJSON *patch, const char *value)
{
	cJSON *s = cJSON_CreateString(value);
	if (!s)
		return TP_ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(patch, "time"))
		return cJSON_ReplaceItemInObjectCaseSensitive(patch, "time", s) ? TP_OK : TP_ENOMEM;
	if (!cJSON_AddItemToObject(patch, "time", s)) {
		cJSON_Delete(s);
		return TP_ENOMEM;
	}
	return TP_OK;
}

/* Copy old.time into patch (an old time absent means absent now too). */
static int keep_old_time(cJSON *patch, const cJSON *old)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(old, "time");
	if (!t || cJSON_IsNull(t)) {
		cJSON_DeleteItemFromObjectCaseSensitive(patch, "time");
		return TP_OK;
	}
	cJSON *c = cJSON_Duplicate(t, true);
	if (!c)
		return TP_ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(patch, "time"))
		return cJSON_ReplaceItemInObjectCaseSensitive(patch, "time", c) ? TP_OK : TP_ENOMEM;
	if (!cJSON_AddItemToObject(patch, "time", c)) {
		cJSON_Delete(c);
		return TP_ENOMEM;
	}
	return TP_OK;
}

/* old_patches: the old object's patches by manager (empty on CREATE). */
static int default_patch(cJSON *patch, const tp_index *old_patches, const char *now)
{
	if (!cJSON_IsObject(patch))
		return TP_OK; /* the schema reports it; nothing to stamp */
	const cJSON *old = tp__index_named(old_patches, tp_get_str(patch, "manager"));
	if (!old)
		return time_unset(patch) ? set_time(patch, now) : TP_OK;
	if (tp_json_equal_except(patch, old, "time"))
		return keep_old_time(patch, old);
	return set_time(patch, now);
}

int tp_default_trainjob(const tp_options *opt, tp_operation op, const cJSON *obj,
			const cJSON *old_obj, cJSON **out)
{
	if (!obj || !out)
		return TP_EINVAL;
	*out = NULL;
	char clock[32];
	const char *now = opt && opt->now ? opt->now : NULL;
	if (!now) {
		utc_now(clock, sizeof(clock));
		now = clock;
	}
	cJSON *copy = cJSON_Duplicate(obj, true);
	if (!copy)
		return TP_ENOMEM;
	cJSON *patches = (cJSON *)tp_get_array(copy, "spec.runtimePatches");
	/* The mutating route sees runtimePatches before the schema limits them:
	 * each patch's old self is found through an index (a scan each made
	 * 100,000 patches quadratic on UPDATE). */
	tp_index old;
	int rc = tp__index_items(&old, op == TP_OP_UPDATE ? tp_get_array(old_obj,
				"spec.runtimePatches") : NULL, "manager");
	if (op == TP_OP_CREATE || op == TP_OP_UPDATE)
		for (cJSON *p = patches ? patches->child : NULL; p && !rc; p = p->next)
			if (!(rc = tp__tick(1)))
				rc = default_patch(p, &old, now);
	tp__index_free(&old);
	rc = tp__deadline_status(rc);
	if (rc) {
		cJSON_Delete(copy);
		return rc;
	}
	*out = copy;
	return TP_OK;
}
