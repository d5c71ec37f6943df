/*
 * testutil.c — shared test helpers (see testutil.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/testutil.h"

const char *tt_shared_dir(void)
{
	static char dir[4096];
	static int state; /* 0 unknown, 1 present, 2 absent */
	if (state == 0) {
		const char *env = getenv("TP_SHARED");
		snprintf(dir, sizeof(dir), "%s", env && *env ? env : "../shared");
		struct stat st;
		char probe[4200];
		snprintf(probe, sizeof(probe), "%s/spec/RULES.md", dir);
		state = stat(probe, &st) == 0 ? 1 : 2;
	}
	return state == 1 ? dir : NULL;
}

char *tt_shared_path(const char *rel)
{
	const char *dir = tt_shared_dir();
	if (!dir)
		return NULL;
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, rel);
	return p;
}

char *tt_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			char *p = realloc(buf, cap + 1);
			if (!p) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

cJSON *tt_json(const char *text)
{
	cJSON *j = cJSON_Parse(text);
	if (!j)
		fail_msg("test JSON does not parse near: %.40s", cJSON_GetErrorPtr());
	return j;
}

char *tt_dq(const char *text)
{
	char *s = malloc(strlen(text) + 1);
	assert_non_null(s);
	char *o = s;
	for (const char *p = text; *p; p++) {
		if (p[0] == '\\' && p[1] == '\'')
			*o++ = *++p;
		else
			*o++ = *p == '\'' ? '"' : *p;
	}
	*o = '\0';
	return s;
}

cJSON *tt_jsq(const char *text)
{
	char *s = tt_dq(text);
	cJSON *j = tt_json(s);
	free(s);
	return j;
}

bool tt_has_error(const tp_result *res, const char *path, const char *detail_part)
{
	for (size_t i = 0; i < tp_result_error_count(res); i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		bool path_ok = path ? (e->path && !strcmp(e->path, path)) : e->path == NULL;
		if (path_ok && (!detail_part || (e->detail && strstr(e->detail, detail_part))))
			return true;
	}
	return false;
}

bool tt_has_warning(const tp_result *res, const char *part)
{
	for (size_t i = 0; i < tp_result_warning_count(res); i++)
		if (strstr(tp_result_warning_at(res, i), part))
			return true;
	return false;
}

void tt_dump(const tp_result *res)
{
	for (size_t i = 0; i < tp_result_error_count(res); i++) {
		tp_buf b = TP_BUF_INIT(1 << 20);
		tp_field_error_format(tp_result_error_at(res, i), &b);
		print_message("  error: %s\n", b.data ? b.data : "");
		tp_buf_free(&b);
	}
	for (size_t i = 0; i < tp_result_warning_count(res); i++)
		print_message("  warning: %s\n", tp_result_warning_at(res, i));
}

tp_crds *tt_crds_of(const cJSON *crd)
{
	tp_crds *crds = NULL;
	char why[256] = "";
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	int rc = tp_crds_add(crds, crd, why, sizeof(why));
	if (rc)
		print_message("%s\n", why);
	assert_int_equal(rc, TP_OK);
	return crds;
}

char *tt_result_text(const tp_result *res)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_buf_adds(&b, ""), TP_OK);
	if (!tp_result_ok(res))
		tp_result_format(res, &b);
	for (size_t i = 0; i < tp_result_warning_count(res); i++)
		tp_buf_addf(&b, " | warning: %s", tp_result_warning_at(res, i));
	return b.data;
}

char *tt_validate_text(tp_crds *crds, const cJSON *obj, const cJSON *old)
{
	tp_options opt = { .crds = crds };
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate(&opt, old ? TP_OP_UPDATE : TP_OP_CREATE, obj, old, res), TP_OK);
	char *answer = tt_result_text(res);
	tp_result_free(res);
	return answer;
}

/* ------------------------------------------------------------ processes */

const char *tt_bin(void)
{
	const char *b = getenv("TW_BIN");
	return b && *b ? b : "build/trainer-webhook";
}

int tt_run(const char *cmdline, char **out, char **err)
{
	char dir[] = "/tmp/tt-run-XXXXXX";
	if (!mkdtemp(dir))
		return -1;
	char o[64], e[64];
	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	size_t n = strlen(cmdline) + 2 * sizeof(o) + 32;
	char *full = malloc(n);
	snprintf(full, n, "%s >%s 2>%s </dev/null", cmdline, o, e);
	int st = system(full);
	free(full);
	if (out)
		*out = tt_read_file(o, NULL);
	if (err)
		*err = tt_read_file(e, NULL);
	unlink(o);
	unlink(e);
	rmdir(dir);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

long long tt_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

bool tt_wait_until(bool (*cond)(void *), void *arg, long long ms)
{
	long long end = tt_mono_ms() + ms;
	while (!cond(arg)) {
		if (tt_mono_ms() > end)
			return false;
		tt_sleep_ms(10);
	}
	return true;
}

int tt_count_certs(const char *pem)
{
	int n = 0;
	for (const char *p = pem; p && (p = strstr(p, "-----BEGIN CERTIFICATE-----")); p++)
		n++;
	return n;
}

cJSON *tt_shared_object(const char *rel, tp_kind k)
{
	char *path = tt_shared_path(rel);
	assert_non_null(path);
	size_t len = 0;
	char *text = tt_read_file(path, &len);
	if (!text)
		print_message("cannot read %s\n", rel);
	assert_non_null(text);
	tp_docs *docs = NULL;
	tp_load_error err;
	assert_int_equal(tp_load(text, len, NULL, &docs, &err), TP_OK);
	cJSON *obj = NULL;
	for (size_t i = 0; i < tp_docs_count(docs) && !obj; i++)
		if (tp_kind_of(tp_docs_at(docs, i)->obj) == k)
			obj = tp_docs_take(docs, i);
	if (!obj)
		print_message("no object of kind %s in %s\n", tp_kind_name(k), rel);
	assert_non_null(obj);
	tp_docs_free(docs);
	free(text);
	free(path);
	return obj;
}

char *tt_crd_json(const char *file)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "fixtures/upstream/crds/%s", file);
	char *path = tt_shared_path(rel);
	size_t len = 0;
	char *text = path ? tt_read_file(path, &len) : NULL;
	free(path);
	assert_non_null(text);
	tp_docs *docs = NULL;
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.max_doc_bytes = 16 << 20; /* a CRD with a PodSpec is about 1 MiB */
	assert_int_equal(tp_load(text, len, &lim, &docs, NULL), TP_OK);
	free(text);
	char *json = cJSON_PrintUnformatted(tp_docs_at(docs, 0)->obj);
	tp_docs_free(docs);
	assert_non_null(json);
	return json;
}

static void (*each_source_fn)(const char *path, const char *text);

static int each_source_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	size_t n = strlen(path);
	if (type != FTW_F || n < 2 || (strcmp(path + n - 2, ".c") && strcmp(path + n - 2, ".h")))
		return 0;
	char *text = tt_read_file(path, NULL);
	assert_non_null(text);
	each_source_fn(path, text);
	free(text);
	return 0;
}

void tt_each_source(const char *root, void (*fn)(const char *path, const char *text))
{
	each_source_fn = fn;
	assert_int_equal(nftw(root, each_source_file, 16, FTW_PHYS), 0);
}
