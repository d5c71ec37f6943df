/*
 * pod/security.c — a namespace's Pod Security policy as
 * pod-security-admission reads it (api/helpers.go: ParseLevel,
 * ParseVersion, PolicyToEvaluate; v1.32, unchanged since v1.25): the
 * enforce, audit and warn labels with their -version, over the defaults, a
 * warn level that follows a stricter enforce one, and the fallbacks for
 * labels it cannot parse (enforce: restricted, audit and warn: privileged,
 * a version: latest). Also the public evaluation of one Pod template.
 */
#include "policy/pod/pod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "pod-security.kubernetes.io/"
#define LEVELS_MSG "must be one of privileged, baseline, restricted"
#define VERSION_MSG "must be \"latest\" or \"v1.x\""

static const char *const level_names[] = { "privileged", "baseline", "restricted" };

static int parse_level(const char *s, tp_psa_level *out)
{
	for (int i = 0; i < 3; i++)
		if (s && !strcmp(s, level_names[i])) {
			*out = (tp_psa_level)i;
			return TP_OK;
		}
	return TP_EINVAL;
}

/* "latest" or ^v1\.([0-9]|[1-9][0-9]*)$ */
static int parse_version(const char *s, int *minor)
{
	if (s && !strcmp(s, "latest")) {
		*minor = TP_PSA_LATEST;
		return TP_OK;
	}
	if (!s || strncmp(s, "v1.", 3) || !s[3] || (s[3] == '0' && s[4]))
		return TP_EINVAL;
	long n = 0;
	for (const char *p = s + 3; *p; p++) {
		if (*p < '0' || *p > '9' || n > 100000000)
			return TP_EINVAL;
		n = n * 10 + (*p - '0');
	}
	*minor = (int)n;
	return TP_OK;
}

int tp_psa_parse(const char *s, tp_psa_lv *out, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	if (!s || !out)
		return TP_EINVAL;
	char level[16];
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	tp_psa_lv lv = { TP_PSA_PRIVILEGED, TP_PSA_LATEST };
	if (n >= sizeof(level) || (memcpy(level, s, n), level[n] = '\0', parse_level(level, &lv.level))) {
		if (why)
			snprintf(why, whylen, "level \"%.*s\": %s", (int)(n < 64 ? n : 64), s,
				 LEVELS_MSG);
		return TP_EINVAL;
	}
	if (colon && parse_version(colon + 1, &lv.minor)) {
		if (why)
			snprintf(why, whylen, "version \"%.64s\": %s", colon + 1, VERSION_MSG);
		return TP_EINVAL;
	}
	*out = lv;
	return TP_OK;
}

int tp_psa_format(const tp_psa_lv *lv, char *buf, size_t n)
{
	if (!lv || !buf || (unsigned)lv->level > TP_PSA_RESTRICTED)
		return TP_EINVAL;
	int len = lv->minor == TP_PSA_LATEST
			  ? snprintf(buf, n, "%s:latest", level_names[lv->level])
			  : snprintf(buf, n, "%s:v1.%d", level_names[lv->level], lv->minor);
	return len < 0 || (size_t)len >= n ? TP_ELIMIT : TP_OK;
}

/* One label: its value, or NULL when the namespace has none. */
static const char *label(const cJSON *labels, const char *mode, bool version)
{
	char key[64];
	snprintf(key, sizeof(key), PREFIX "%s%s", mode, version ? "-version" : "");
	const cJSON *v = tp_member(labels, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* appendErr: the field error of a label that does not parse, as a warning. */
static int bad_label(tp_result *res, const char *ns, const char *mode, bool version,
		     const char *value, const char *fallback)
{
	if (!res)
		return TP_OK;
	return tp_result_warn(res,
			      "Namespace \"%s\": metadata.labels[" PREFIX "%s%s]: Invalid value: "
			      "\"%s\": %s; Pod Security reads it as %s",
			      ns, mode, version ? "-version" : "", value,
			      version ? VERSION_MSG : LEVELS_MSG, fallback);
}

/* One mode's level and version; *set when its level label is there and
 * parses. A bad level takes bad_level. */
static int read_mode(const cJSON *labels, const char *mode, tp_psa_level bad_level,
		     tp_psa_lv *lv, bool *set, bool *version_set, const char *ns, tp_result *res)
{
	int rc = TP_OK;
	const char *l = label(labels, mode, false), *v = label(labels, mode, true);
	*set = *version_set = false;
	if (l) {
		if (!parse_level(l, &lv->level)) {
			*set = true;
		} else {
			lv->level = bad_level;
			rc = bad_label(res, ns, mode, false, l, level_names[bad_level]);
		}
	}
	if (v && !rc) {
		*version_set = true;
		if (parse_version(v, &lv->minor)) {
			lv->minor = TP_PSA_LATEST;
			rc = bad_label(res, ns, mode, true, v, "latest");
		}
	}
	return rc;
}

int tp_psa_policy_of(const cJSON *labels, const tp_psa_policy *defaults, const char *ns,
		     tp_psa_policy *out, tp_result *res)
{
	static const tp_psa_policy privileged = {
		{ TP_PSA_PRIVILEGED, TP_PSA_LATEST },
		{ TP_PSA_PRIVILEGED, TP_PSA_LATEST },
		{ TP_PSA_PRIVILEGED, TP_PSA_LATEST },
	};
	if (!out)
		return TP_EINVAL;
	*out = defaults ? *defaults : privileged;
	if (!cJSON_IsObject(labels) || !labels->child)
		return TP_OK;
	if (!ns)
		ns = "";
	bool enforce_set, warn_set, audit_set, unused, warn_version;
	int rc = read_mode(labels, "enforce", TP_PSA_RESTRICTED, &out->enforce, &enforce_set,
			   &unused, ns, res);
	if (!rc)
		rc = read_mode(labels, "audit", TP_PSA_PRIVILEGED, &out->audit, &audit_set, &unused,
			       ns, res);
	if (!rc)
		rc = read_mode(labels, "warn", TP_PSA_PRIVILEGED, &out->warn, &warn_set,
			       &warn_version, ns, res);
	/* a warn label that is there but bad still counts as set (fails open) */
	bool has_warn = label(labels, "warn", false) != NULL;
	if (!rc && !has_warn && enforce_set && out->enforce.level > out->warn.level) {
		out->warn.level = out->enforce.level;
		if (!warn_version)
			out->warn.minor = out->enforce.minor;
	}
	return rc;
}

int tp_psa_check_template(const tp_psa_lv *lv, const cJSON *pod_template, tp_buf *detail,
			  bool *allowed)
{
	if (!lv || !detail || !allowed)
		return TP_EINVAL;
	tp_arena *a;
	if (tp_arena_new(&a, 0))
		return TP_ENOMEM;
	int rc = tp__psa_evaluate(lv->level, lv->minor, tp_member(pod_template, "metadata"),
				  tp_member(pod_template, "spec"), a, detail, allowed);
	tp_arena_free(a);
	return rc;
}
