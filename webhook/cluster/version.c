/*
 * version.c — the cluster's Kubernetes release, from GET /version (see
 * version.h), read when the server starts. Reading it is never a reason to
 * refuse anything: a version that cannot be read, or one the checks do not
 * know, is a warning in the log and checks that say nothing they cannot
 * stand behind.
 */
#include "webhook/cluster/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/core/log.h"

/* Leading digits of s (at most 4) as a number, or -1; *rest after them. */
static int number(const char *s, const char **rest)
{
	int n = 0, digits = 0;
	for (; s && *s >= '0' && *s <= '9' && digits < 4; s++, digits++)
		n = n * 10 + (*s - '0');
	*rest = s;
	return digits ? n : -1;
}

/* "v1.32.3-eks-1234": 32, or -1. */
static int minor_of_git(const char *git)
{
	const char *rest;
	if (!git || *git != 'v' || number(git + 1, &rest) != 1 || *rest != '.')
		return -1;
	int n = number(rest + 1, &rest);
	return *rest == '\0' || *rest == '.' || *rest == '-' || *rest == '+' ? n : -1;
}

int tw_kube_version_parse(const cJSON *v, int *minor, char *why, size_t whylen)
{
	const char *major = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "major"));
	const char *min = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "minor"));
	const char *git = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "gitVersion"));
	const char *rest;
	int n = major && !strcmp(major, "1") ? number(min, &rest) : -1;
	if (n >= 0 && *rest && strcmp(rest, "+"))
		n = -1;
	if (n < 0)
		n = minor_of_git(git);
	if (n < 0) {
		snprintf(why, whylen, "no Kubernetes 1.N in major \"%s\", minor \"%s\", gitVersion "
			 "\"%s\"", major ? major : "", min ? min : "", git ? git : "");
		return -1;
	}
	*minor = n;
	return 0;
}

int tw_kube_version_read(tw_kubeapi *api, long timeout_ms, int *minor, char *git, size_t gitlen,
			 char *why, size_t whylen)
{
	cJSON *v = NULL;
	git[0] = '\0';
	if (tw_kubeapi_get_json(api, "/version", timeout_ms, &v, why, whylen))
		return -1;
	if (!v) {
		snprintf(why, whylen, "GET /version: HTTP 404");
		return -1;
	}
	const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "gitVersion"));
	snprintf(git, gitlen, "%s", g ? g : "");
	int rc = tw_kube_version_parse(v, minor, why, whylen);
	cJSON_Delete(v);
	return rc;
}

int tw_kube_version_minor(tw_kubeapi *api, long timeout_ms)
{
	char git[128], why[512] = "", checks[16], supported[32];
	int minor = 0;
	snprintf(checks, sizeof(checks), "1.%d", TP_KUBE_MINOR_NEWEST);
	snprintf(supported, sizeof(supported), "1.%d to 1.%d", TP_KUBE_MINOR_OLDEST,
		 TP_KUBE_MINOR_NEWEST);
	tw_log_line l;
	if (tw_kube_version_read(api, timeout_ms, &minor, git, sizeof(git), why, sizeof(why))) {
		tw_log_begin(&l, TW_LOG_WARN | TW_LOG_ALWAYS,
			     "cannot read the cluster's Kubernetes version: the Jobs and Pods are "
			     "checked as the newest supported release checks them, and no field is "
			     "refused for a release the cluster may not run");
		tw_log_str(&l, "checks", checks);
		tw_log_str(&l, "why", why);
		tw_log_end(&l);
		return TP_KUBE_MINOR_UNKNOWN;
	}
	static const char *const said[] = {
		"the Jobs and Pods are checked as the cluster's Kubernetes checks them",
		"the cluster's Kubernetes is newer than the releases the checks know: its fields "
		"are allowed, the rest is checked as the newest supported release checks it",
		"the cluster's Kubernetes is older than the releases the checks know: fields newer "
		"than it are refused, the rest is checked as the newest supported release checks it",
	};
	bool known = minor >= TP_KUBE_MINOR_OLDEST && minor <= TP_KUBE_MINOR_NEWEST;
	if (known)
		snprintf(checks, sizeof(checks), "1.%d", minor);
	tw_log_begin(&l, (known ? TW_LOG_INFO : TW_LOG_WARN) | TW_LOG_ALWAYS,
		     said[known ? 0 : minor > TP_KUBE_MINOR_NEWEST ? 1 : 2]);
	tw_log_str(&l, "kubernetes", git);
	tw_log_str(&l, "checks", checks);
	if (!known)
		tw_log_str(&l, "supported", supported);
	tw_log_end(&l);
	return minor;
}
