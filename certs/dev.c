/*
 * dev.c — the pair `serve --dev` runs on: made once for localhost and kept
 * across restarts, so that a browser or curl trusting dir/ca.crt keeps
 * working; made again when it is broken or about to expire.
 */
#include "certs/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DAY 86400

static const char *const dev_dns[] = { "localhost" };
static const char *const dev_ips[] = { "127.0.0.1", "::1" };
static const char *const dev_names[] = { "localhost", "127.0.0.1", "::1" };

/* True when the pair in dir passes the check with more than a day left;
 * otherwise why says what is wrong with it. */
static bool check_in(const char *dir, const char *crt, const char *key, const char *ca,
		     char *why, size_t n)
{
	tw_certs_check_opts o = {
		.cert_path = crt, .key_path = key,
		.ca_path = tw_certs_exists(dir, "ca.crt") ? ca : NULL,
		.names = dev_names, .nnames = sizeof(dev_names) / sizeof(dev_names[0]),
	};
	tw_certs_report rep;
	if (tw_certs_check(&o, &rep) != TW_CERTS_OK) {
		snprintf(why, n, "%s", rep.reason);
		return false;
	}
	if (rep.not_after - (int64_t)time(NULL) <= DAY) {
		char when[40];
		tw_certs_format_time(rep.not_after, when, sizeof(when));
		snprintf(why, n, "%s/tls.crt expires on %s, in less than a day", dir, when);
		return false;
	}
	return true;
}

static bool usable(const char *dir, char *why, size_t n)
{
	char *crt = NULL, *key = NULL, *ca = NULL;
	bool ok = false;
	if (asprintf(&crt, "%s/tls.crt", dir) < 0 || asprintf(&key, "%s/tls.key", dir) < 0 ||
	    asprintf(&ca, "%s/ca.crt", dir) < 0)
		snprintf(why, n, "out of memory");
	else
		ok = check_in(dir, crt, key, ca, why, n);
	free(crt);
	free(key);
	free(ca);
	return ok;
}

int tw_certs_ensure_dev(const char *dir, char *err, size_t errlen)
{
	bool present = tw_certs_exists(dir, "tls.crt") || tw_certs_exists(dir, "tls.key");
	char why[1024] = "";
	if (present && usable(dir, why, sizeof(why)))
		return TW_CERTS_DEV_KEPT;
	tw_certs_gen_opts o = {
		.dns = dev_dns, .ndns = 1, .ips = dev_ips, .nips = 2,
		.force = true, /* the dev folder is ours: replace a broken pair and its CA */
	};
	int rc = tw_certs_generate(dir, &o, NULL, err, errlen);
	if (rc)
		return rc;
	if (!present)
		return TW_CERTS_DEV_CREATED;
	tw_certs_fail(err, errlen, 0, "the dev certificate pair in %s was unusable (%s); "
		      "generated a new one", dir, why);
	return TW_CERTS_DEV_REPLACED;
}
