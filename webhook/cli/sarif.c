/*
 * sarif.c — SARIF 2.1.0 as GitHub code scanning reads it: every kind of
 * finding is a rule (findings.h's table: id, description, help, level), each
 * result names its rule by id and index, and its location is relative to the
 * repository (uriBaseId %SRCROOT%, whose absolute URI originalUriBaseIds
 * gives), so that an upload from any folder of a checkout points at the
 * right file.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "webhook/cli/findings.h"
#include "webhook/cli/sarif.h"

#define ROOT_ID "%SRCROOT%"
/* TW_HOME: the project's repository, the Makefile's PROJECT_REPO (its one
 * place), the driver's informationUri. */

void tw_sarif_root(char *out, size_t n)
{
	char dir[PATH_MAX];
	if (!getcwd(dir, sizeof(dir))) {
		snprintf(out, n, "/");
		return;
	}
	snprintf(out, n, "%s", dir);
	for (;;) {
		char git[PATH_MAX + 8];
		struct stat st;
		snprintf(git, sizeof(git), "%s/.git", dir);
		if (!stat(git, &st)) {
			snprintf(out, n, "%s", dir);
			return;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return; /* no repository: the working directory */
		*slash = '\0';
	}
}

/* Percent-encoding of what is not unreserved (RFC 3986) or '/'. */
static void encode(const char *s, char *out, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t k = 0;
	for (; *s && k + 4 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    strchr("-._~/", c)) {
			out[k++] = (char)c;
		} else {
			out[k++] = '%';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		}
	}
	out[k] = '\0';
}

bool tw_sarif_uri(const char *root, const char *path, char *out, size_t n)
{
	char abs[PATH_MAX], cwd[PATH_MAX];
	if (!realpath(path, abs)) {
		if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
			snprintf(abs, sizeof(abs), "%s", path);
		else
			snprintf(abs, sizeof(abs), "%.2000s/%.2000s", cwd, path);
	}
	size_t rl = strlen(root);
	if (!strncmp(abs, root, rl) && abs[rl] == '/') {
		encode(abs + rl + 1, out, n);
		return true;
	}
	char enc[PATH_MAX * 3];
	encode(abs, enc, sizeof(enc));
	snprintf(out, n, "file://%s", enc);
	return false;
}

static cJSON *rules_array(void)
{
	cJSON *rules = cJSON_CreateArray();
	for (size_t i = 0; i < tw_finding_rule_count(); i++) {
		const tw_finding_rule *fr = tw_finding_rule_at(i);
		cJSON *r = cJSON_CreateObject();
		cJSON_AddItemToArray(rules, r);
		cJSON_AddStringToObject(r, "id", fr->id);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "shortDescription"), "text", fr->name);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "fullDescription"), "text", fr->name);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "help"), "text", fr->help);
		cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "defaultConfiguration"), "level",
					fr->level);
	}
	return rules;
}

static const char *str(const cJSON *o, const char *k)
{
	const char *s = tp_get_str(o, k);
	return s ? s : "";
}

static int num(const cJSON *o, const char *k)
{
	long long v = 0;
	tp_get_int(o, k, &v);
	return v > 0 ? (int)v : 1;
}

static void result(cJSON *results, const char *root, const char *file, const cJSON *f,
		   const char *level)
{
	const char *rule = str(f, "rule");
	int idx = tw_finding_rule_index(rule);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddItemToArray(results, r);
	cJSON_AddStringToObject(r, "ruleId", rule);
	if (idx >= 0)
		cJSON_AddNumberToObject(r, "ruleIndex", idx);
	cJSON_AddStringToObject(r, "level", level);
	tp_buf text = TP_BUF_INIT(0);
	tw_finding_line(f, &text);
	cJSON_AddStringToObject(cJSON_AddObjectToObject(r, "message"), "text", text.data ? text.data : "");
	tp_buf_free(&text);
	cJSON *loc = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "locations"), loc);
	cJSON *phys = cJSON_AddObjectToObject(loc, "physicalLocation");
	cJSON *art = cJSON_AddObjectToObject(phys, "artifactLocation");
	char uri[PATH_MAX * 3];
	bool rel = strcmp(file, "-") ? tw_sarif_uri(root, file, uri, sizeof(uri)) : false;
	cJSON_AddStringToObject(art, "uri", strcmp(file, "-") ? uri : "stdin");
	if (rel)
		cJSON_AddStringToObject(art, "uriBaseId", ROOT_ID);
	cJSON *region = cJSON_AddObjectToObject(phys, "region");
	cJSON_AddNumberToObject(region, "startLine", num(f, "line"));
	cJSON_AddNumberToObject(region, "startColumn", num(f, "column"));
}

void tw_sarif_print(const cJSON *report, const char *version, FILE *out)
{
	char root[PATH_MAX], rooturi[PATH_MAX * 3];
	tw_sarif_root(root, sizeof(root));
	cJSON *log = cJSON_CreateObject();
	cJSON_AddStringToObject(log, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	cJSON_AddStringToObject(log, "version", "2.1.0");
	cJSON *run = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(log, "runs"), run);
	cJSON *driver = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "tool"), "driver");
	cJSON_AddStringToObject(driver, "name", "trainer-webhook");
	cJSON_AddStringToObject(driver, "version", version ? version : "");
	cJSON_AddStringToObject(driver, "informationUri", TW_HOME);
	cJSON_AddItemToObject(driver, "rules", rules_array());
	encode(root, rooturi, sizeof(rooturi));
	char base[PATH_MAX * 3 + 16];
	snprintf(base, sizeof(base), "file://%s%s", rooturi, strcmp(root, "/") ? "/" : "");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(run,
		"originalUriBaseIds"), ROOT_ID), "uri", base);
	cJSON *results = cJSON_AddArrayToObject(run, "results");
	const cJSON *obj, *f;
	cJSON_ArrayForEach(obj, tp_get_array(report, "objects")) {
		cJSON_ArrayForEach(f, tp_get_array(obj, "errors"))
			result(results, root, str(obj, "file"), f, "error");
		cJSON_ArrayForEach(f, tp_get_array(obj, "warnings"))
			result(results, root, str(obj, "file"), f, "warning");
	}
	cJSON_ArrayForEach(obj, tp_get_array(report, "unreadable"))
		result(results, root, str(obj, "file"), obj, "error");
	char *t = cJSON_Print(log);
	if (t)
		fprintf(out, "%s\n", t);
	cJSON_free(t);
	cJSON_Delete(log);
}
