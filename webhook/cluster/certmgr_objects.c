/*
 * webhook/cluster/certmgr_objects.c — the objects the certificate manager
 * keeps right (see certmgr.h): the Secret's keys and annotation, read and
 * written with its resourceVersion; the caBundle of every webhook of both
 * configurations. A 409 is reported, never retried here: the loop in
 * certmgr.c reads everything again.
 */
#include "webhook/cluster/certmgr_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

#define CALL_TIMEOUT_MS 10000

static char *b64(const char *s)
{
	tp_buf b = TP_BUF_INIT(0);
	if (tp_base64_encode(s, strlen(s), &b)) {
		tp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* data[key] of a Secret, decoded; malloc'd, NULL when absent or not base64. */
static char *secret_value(const cJSON *secret, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tp_get(secret, "data"), key);
	if (!cJSON_IsString(v))
		return NULL;
	tp_buf b = TP_BUF_INIT(0);
	if (tp_base64_decode(v->valuestring, strlen(v->valuestring), &b)) {
		tp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

static int64_t parse_time(const char *s)
{
	struct tm tm = { 0 };
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	return end && !*end ? (int64_t)timegm(&tm) : 0;
}

static void format_time(int64_t t, char *out, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* GET path into *obj (malloc'd tree, NULL on 404). -1 on anything else,
 * with why. */
int tw__certmgr_get(tw_certmgr *m, const char *path, cJSON **obj, char *why, size_t n)
{
	return tw_kubeapi_get_json(m->api, path, CALL_TIMEOUT_MS, obj, why, n);
}

/* PUT or POST obj. 0 done, 1 conflict (409), -1 failed (why). */
static int write_object(tw_certmgr *m, const char *method, const char *path, const cJSON *obj,
			char *why, size_t n)
{
	return tw_kubeapi_write_json(m->api, method, path, obj, CALL_TIMEOUT_MS, why, n);
}

/* ------------------------------------------------------------ webhooks */

/* Does every webhook of cfg carry bundle64? */
static bool carries(const cJSON *cfg, const char *bundle64)
{
	const cJSON *wh;
	cJSON_ArrayForEach(wh, tp_get_array(cfg, "webhooks"))
	{
		const char *cb = tp_get_str(wh, "clientConfig.caBundle");
		if (!cb || strcmp(cb, bundle64))
			return false;
	}
	return true;
}

static void set_bundle(cJSON *cfg, const char *bundle64)
{
	cJSON *wh;
	cJSON_ArrayForEach(wh, cJSON_GetObjectItemCaseSensitive(cfg, "webhooks"))
	{
		cJSON *cc = cJSON_GetObjectItemCaseSensitive(wh, "clientConfig");
		if (!cJSON_IsObject(cc))
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(cc, "caBundle");
		cJSON_AddStringToObject(cc, "caBundle", bundle64);
	}
}

static bool cfg_path(tw_certmgr *m, int i, char *out, size_t n)
{
	return tw_kube_path(out, n, "admissionregistration.k8s.io", "v1", cfg_plural[i], NULL,
			    m->cfg_name[i]);
}

/* The configurations as they are now (NULL: not configured or absent). */
int tw__certmgr_read_configs(tw_certmgr *m, cJSON *cfg[NCFG], char *why, size_t n)
{
	char path[512];
	for (int i = 0; i < NCFG; i++) {
		cfg[i] = NULL;
		if (!m->cfg_name[i])
			continue;
		if (!cfg_path(m, i, path, sizeof(path))) {
			snprintf(why, n, "%s name \"%s\" is not a valid name", cfg_kind_name[i],
				 m->cfg_name[i]);
			return TW_EFAILED;
		}
		if (tw__certmgr_get(m, path, &cfg[i], why, n))
			return TW_EFAILED;
	}
	return 0;
}

bool tw__certmgr_published(tw_certmgr *m, cJSON *cfg[NCFG], const char *ca_crt)
{
	char *want = b64(ca_crt ? ca_crt : "");
	bool ok = want != NULL;
	for (int i = 0; ok && i < NCFG; i++)
		if (m->cfg_name[i])
			ok = cfg[i] && carries(cfg[i], want);
	free(want);
	return ok;
}

/* Put the bundle into every webhook that lacks it. ROUND_DONE when both
 * carry it (ready), else a reason in why. */
enum round tw__certmgr_publish(tw_certmgr *m, cJSON *cfg[NCFG], const char *ca_crt, char *why,
			       size_t n)
{
	char *want = b64(ca_crt);
	if (!want)
		return snprintf(why, n, "out of memory"), ROUND_FAILED;
	enum round r = ROUND_DONE;
	char path[512];
	for (int i = 0; i < NCFG && r == ROUND_DONE; i++) {
		if (!m->cfg_name[i])
			continue;
		if (!cfg[i]) {
			snprintf(why, n, "%s \"%s\" does not exist: apply deploy/ (it holds both "
				 "webhook configurations)", cfg_kind_name[i], m->cfg_name[i]);
			r = ROUND_FAILED;
			break;
		}
		if (carries(cfg[i], want))
			continue;
		set_bundle(cfg[i], want);
		cfg_path(m, i, path, sizeof(path));
		int w = write_object(m, "PUT", path, cfg[i], why, n);
		if (w > 0) {
			tw_log(TW_LOG_INFO, "managed certificates: %s %s changed meanwhile; "
			       "reading it again", cfg_kind_name[i], m->cfg_name[i]);
			r = ROUND_AGAIN;
		} else if (w < 0) {
			r = ROUND_FAILED;
		} else {
			tw_metrics_cabundle_written();
			tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: wrote the CA "
			       "bundle into %s %s", cfg_kind_name[i], m->cfg_name[i]);
		}
	}
	free(want);
	return r;
}

/* ------------------------------------------------------------ the Secret */

void tw__certmgr_read_secret(const cJSON *sec, tw_certs_managed *in)
{
	memset(in, 0, sizeof(*in));
	in->ca_crt = secret_value(sec, "ca.crt");
	in->ca_key = secret_value(sec, "ca.key");
	in->ca_next_key = secret_value(sec, "ca-next.key");
	in->tls_crt = secret_value(sec, "tls.crt");
	in->tls_key = secret_value(sec, "tls.key");
	/* An annotation key holds '/' and '.', so it is read directly, not
	 * through a dotted tp_get path. */
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(tp_get(sec, "metadata.annotations"),
							    TW_CERTMGR_CA_ADDED);
	in->ca_added_at = cJSON_IsString(ann) ? parse_time(ann->valuestring) : 0;
}

static int set_data(cJSON *data, const char *key, const char *value)
{
	char *v = b64(value ? value : "");
	if (!v)
		return TW_EFAILED;
	cJSON_DeleteItemFromObjectCaseSensitive(data, key);
	bool ok = cJSON_AddStringToObject(data, key, v) != NULL;
	free(v);
	return ok ? 0 : TW_EFAILED;
}

static cJSON *child_object(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (cJSON_IsObject(o))
		return o;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	return cJSON_AddObjectToObject(parent, key);
}

/* The Secret to write: what exists (resourceVersion included) with our four
 * keys and the annotation, or a new one. NULL when out of memory. */
static cJSON *secret_to_write(tw_certmgr *m, const cJSON *old, const tw_certs_managed *out)
{
	cJSON *sec = old ? cJSON_Duplicate(old, 1) : cJSON_CreateObject();
	if (!sec)
		return NULL;
	if (!old) {
		cJSON_AddStringToObject(sec, "apiVersion", "v1");
		cJSON_AddStringToObject(sec, "kind", "Secret");
		cJSON_AddStringToObject(sec, "type", "Opaque");
	}
	cJSON *meta = child_object(sec, "metadata");
	if (!old) {
		cJSON_AddStringToObject(meta, "name", m->secret);
		cJSON_AddStringToObject(meta, "namespace", m->ns);
	}
	cJSON *ann = child_object(meta, "annotations");
	cJSON *data = child_object(sec, "data");
	cJSON_DeleteItemFromObjectCaseSensitive(data, "ca-next.key"); /* only during a rotation */
	char when[32];
	format_time(out->ca_added_at, when, sizeof(when));
	cJSON_DeleteItemFromObjectCaseSensitive(ann, TW_CERTMGR_CA_ADDED);
	if (!meta || !ann || !data || !cJSON_AddStringToObject(ann, TW_CERTMGR_CA_ADDED, when) ||
	    set_data(data, "ca.crt", out->ca_crt) || set_data(data, "ca.key", out->ca_key) ||
	    set_data(data, "tls.crt", out->tls_crt) || set_data(data, "tls.key", out->tls_key) ||
	    (out->ca_next_key && set_data(data, "ca-next.key", out->ca_next_key))) {
		cJSON_Delete(sec);
		return NULL;
	}
	return sec;
}

enum round tw__certmgr_write_secret(tw_certmgr *m, const cJSON *old, const tw_certs_managed *out,
				    const tw_certs_plan *plan, char *why, size_t n)
{
	char path[512];
	tw_kube_path(path, sizeof(path), "", "v1", "secrets", m->ns, old ? m->secret : NULL);
	cJSON *sec = secret_to_write(m, old, out);
	if (!sec)
		return snprintf(why, n, "out of memory"), ROUND_FAILED;
	int w = write_object(m, old ? "PUT" : "POST", path, sec, why, n);
	cJSON_Delete(sec);
	if (w > 0) {
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: another replica wrote "
		       "Secret %s/%s first; reading it again", m->ns, m->secret);
		return ROUND_AGAIN;
	}
	if (w < 0)
		return ROUND_FAILED;
	m->last_write = (int64_t)time(NULL);
	tw_metrics_cert_secret_written();
	if (plan->new_ca)
		tw_metrics_cert_rotated(true);
	if (plan->new_leaf)
		tw_metrics_cert_rotated(false);
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_INFO | TW_LOG_ALWAYS, "managed certificates: wrote the Secret");
	tw_log_str(&l, "secret", m->secret);
	tw_log_bool(&l, "new_ca", plan->new_ca);
	tw_log_bool(&l, "new_serving_certificate", plan->new_leaf);
	tw_log_str(&l, "why", plan->why);
	tw_log_end(&l);
	return ROUND_DONE;
}
