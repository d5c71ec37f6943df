/*
 * version.c — the cluster's Kubernetes release, from GET /version (see
 * version.h), read when the server starts and again whenever the runtimes'
 * watch lists anew (an API server that restarted may have been upgraded,
 * and one unreachable at the start has a release to tell once it answers).
 * Reading it is never a reason to
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

/* "v1.32.3-eks-1234": 32; -1 means it is no such text. */
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
		return TW_EFAILED;
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
		return TW_EFAILED;
	if (!v) {
		snprintf(why, whylen, "GET /version: HTTP 404");
		return TW_EFAILED;
	}
	const char *g = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "gitVersion"));
	snprintf(git, gitlen, "%s", g ? g : "");
	int rc = tw_kube_version_parse(v, minor, why, whylen);
	cJSON_Delete(v);
	return rc;
}

/* "1.32", or "unknown" for TP_KUBE_MINOR_UNKNOWN. */
static void release_text(int minor, char *out, size_t n)
{
	if (minor == TP_KUBE_MINOR_UNKNOWN)
		snprintf(out, n, "unknown");
	else
		snprintf(out, n, "1.%d", minor);
}

/* Say in the log which release the checks follow now that the cluster's is
 * minor (gitVersion git); was: the one before (NULL at the start). */
static void say_release(int minor, const char *git, const char *was)
{
	static const char *const said[] = {
		"the Jobs and Pods are checked as the cluster's Kubernetes checks them",
		"the cluster's Kubernetes is newer than the releases the checks know: its fields "
		"are allowed, the rest is checked as the newest supported release checks it",
		"the cluster's Kubernetes is older than the releases the checks know: fields newer "
		"than it are refused, the rest is checked as the newest supported release checks it",
	};
	char checks[16], supported[32];
	bool known = minor >= TP_KUBE_MINOR_OLDEST && minor <= TP_KUBE_MINOR_NEWEST;
	release_text(known ? minor : TP_KUBE_MINOR_NEWEST, checks, sizeof(checks));
	snprintf(supported, sizeof(supported), "1.%d to 1.%d", TP_KUBE_MINOR_OLDEST,
		 TP_KUBE_MINOR_NEWEST);
	tw_log_line l;
	tw_log_begin(&l, (known ? TW_LOG_INFO : TW_LOG_WARN) | TW_LOG_ALWAYS,
		     said[known ? 0 : minor > TP_KUBE_MINOR_NEWEST ? 1 : 2]);
	tw_log_str(&l, "kubernetes", git);
	tw_log_str(&l, "checks", checks);
	if (was)
		tw_log_str(&l, "was", was);
	if (!known)
		tw_log_str(&l, "supported", supported);
	tw_log_end(&l);
}

int tw_kube_version_minor(tw_kubeapi *api, long timeout_ms)
{
	char git[128], why[512] = "", checks[16];
	int minor = 0;
	if (tw_kube_version_read(api, timeout_ms, &minor, git, sizeof(git), why, sizeof(why))) {
		release_text(TP_KUBE_MINOR_NEWEST, checks, sizeof(checks));
		tw_log_line l;
		tw_log_begin(&l, TW_LOG_WARN | TW_LOG_ALWAYS,
			     "cannot read the cluster's Kubernetes version: the Jobs and Pods are "
			     "checked as the newest supported release checks them, and no field is "
			     "refused for a release the cluster may not run");
		tw_log_str(&l, "checks", checks);
		tw_log_str(&l, "why", why);
		tw_log_end(&l);
		return TP_KUBE_MINOR_UNKNOWN;
	}
	say_release(minor, git, NULL);
	return minor;
}

void tw_kube_version_reread(tw_kubeapi *api, long timeout_ms, _Atomic int *minor)
{
	char git[128], why[512] = "", was[16];
	int old = atomic_load(minor), now = 0;
	release_text(old, was, sizeof(was));
	if (tw_kube_version_read(api, timeout_ms, &now, git, sizeof(git), why, sizeof(why))) {
		tw_log_line l;
		tw_log_begin(&l, TW_LOG_WARN, "cannot read the cluster's Kubernetes version again: "
			     "the checks keep the release they had");
		tw_log_str(&l, "kubernetes", was);
		tw_log_str(&l, "why", why);
		tw_log_end(&l);
		return;
	}
	if (now == old)
		return;
	atomic_store(minor, now);
	say_release(now, git, was);
}
