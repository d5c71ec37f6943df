/*
 * deploycheck_load.c — the objects the checks read: manifest files, the
 * output of kubectl kustomize and helm template (run with the tools
 * tests/deps.sh provides), and finding objects among them.
 */
#include "tests/support/deploycheck.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/deploycheck_internal.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

/* ---------------------------------------------------------- loading */

/* Objects of text appended to arr; false (and a message) on a parse error. */
static bool load_into(cJSON *arr, const char *text, size_t len, const char *name)
{
	tp_docs *docs = NULL;
	tp_load_error err;
	if (tp_load(text, len, NULL, &docs, &err)) {
		fprintf(stderr, "%s: document %d, line %d: %s\n", name, err.doc, err.line, err.msg);
		return false;
	}
	for (size_t i = 0; i < tp_docs_count(docs); i++) {
		cJSON *o = tp_docs_take(docs, i);
		if (o)
			cJSON_AddItemToArray(arr, o);
	}
	tp_docs_free(docs);
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *dc_load_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	cJSON *arr = cJSON_CreateArray();
	char *names[64];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 64) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".yaml") &&
		    strcmp(e->d_name, "kustomization.yaml") && strcmp(e->d_name, "kustomizeconfig.yaml"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		size_t len;
		char *text = tt_read_file(path, &len);
		ok = ok && text && load_into(arr, text, len, path);
		free(text);
		free(names[i]);
	}
	if (!ok) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

const char *dc_tool(const char *name)
{
	static char paths[2][64];
	int i = strcmp(name, "kubectl") != 0;
	snprintf(paths[i], sizeof(paths[i]), DC_TOOLS_DIR "/%s", name);
	if (access(paths[i], X_OK))
		snprintf(paths[i], sizeof(paths[i]), "%s", name);
	return paths[i];
}

/* The first line of cmd's output that starts with prefix, after it; "" if none. */
static void version_line(const char *cmd, const char *prefix, char *out, size_t n)
{
	char *text = NULL;
	out[0] = '\0';
	if (tt_run(cmd, &text, NULL) == 0 && text) {
		size_t plen = strlen(prefix);
		for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0'))
			if (!strncmp(l, prefix, plen)) {
				snprintf(out, n, "%.*s", (int)strcspn(l + plen, "\n"), l + plen);
				break;
			}
	}
	free(text);
}

/* kubectl before 1.28 prints version.Info{..., GitVersion:"v1.20.2", ...}:
 * keep the version alone. */
static void keep_git_version(char *v)
{
	const char *gv = strstr(v, "GitVersion:\"");
	if (gv) {
		gv += strlen("GitVersion:\"");
		size_t n = strcspn(gv, "\"");
		memmove(v, gv, n);
		v[n] = '\0';
	}
}

static dc_tool_state kubectl_state(char *why, size_t n)
{
	char cmd[256], v[512];
	snprintf(cmd, sizeof(cmd), "'%s' version --client 2>/dev/null", dc_tool("kubectl"));
	version_line(cmd, "Kustomize Version: v", v, sizeof(v));
	if (atoi(v) >= 5)
		return DC_TOOL_OK;
	version_line(cmd, "Client Version: ", v, sizeof(v));
	keep_git_version(v);
	if (!v[0]) {
		snprintf(why, n, "no kubectl (%s)", dc_tool("kubectl"));
		return DC_TOOL_ABSENT;
	}
	snprintf(why, n, "%s is kubectl %.40s, whose kustomize cannot render deploy/ (kustomize v5, "
		 "kubectl 1.27 or newer, needed): run sh tests/deps.sh, which puts kubectl 1.32 in "
		 DC_TOOLS_DIR, dc_tool("kubectl"), v);
	return DC_TOOL_OLD;
}

static dc_tool_state helm_state(char *why, size_t n)
{
	char cmd[256], v[64];
	snprintf(cmd, sizeof(cmd), "'%s' version --template 'helm {{.Version}}' 2>/dev/null",
		 dc_tool("helm"));
	version_line(cmd, "helm v", v, sizeof(v));
	if (!v[0]) {
		snprintf(why, n, "no helm (%s)", dc_tool("helm"));
		return DC_TOOL_ABSENT;
	}
	const char *minor = strchr(v, '.');
	if (atoi(v) == 3 && minor && atoi(minor + 1) >= 15)
		return DC_TOOL_OK;
	snprintf(why, n, "%s is helm v%s, not Helm 3.15 or a newer 3 (the chart's kubeVersion): "
		 "run sh tests/deps.sh, which puts Helm 3.17 in " DC_TOOLS_DIR, dc_tool("helm"), v);
	return DC_TOOL_OLD;
}

/* Each tool is asked once per test binary: slot 0 kubectl, 1 helm. */
static dc_tool_state cached(int slot, dc_tool_state (*probe)(char *, size_t), char *why,
			    size_t n)
{
	static int state[2] = { -1, -1 };
	static char text[2][512];
	if (state[slot] < 0)
		state[slot] = probe(text[slot], sizeof(text[slot]));
	snprintf(why, n, "%s", text[slot]);
	return (dc_tool_state)state[slot];
}

dc_tool_state dc_kubectl(char *why, size_t n)
{
	return cached(0, kubectl_state, why, n);
}

dc_tool_state dc_helm(char *why, size_t n)
{
	return cached(1, helm_state, why, n);
}

cJSON *dc_parse(const char *text, const char *name)
{
	cJSON *arr = cJSON_CreateArray();
	if (!load_into(arr, text, strlen(text), name)) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

cJSON *dc_render(const char *dir, char *err, size_t errlen)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "'%s' kustomize '%s'", dc_tool("kubectl"), dir);
	return dc_run_render(cmd, err, errlen);
}

cJSON *dc_run_render(const char *cmd, char *err, size_t errlen)
{
	char *out = NULL, *e = NULL;
	int rc = tt_run(cmd, &out, &e);
	cJSON *arr = NULL;
	if (rc != 0)
		snprintf(err, errlen, "%s: exit %d: %s", cmd, rc, e ? e : "");
	else if (!(arr = dc_parse(out, cmd)))
		snprintf(err, errlen, "%s: output does not parse", cmd);
	free(out);
	free(e);
	return arr;
}

int dc_sandbox_make(dc_sandbox *s, const char *kustomization)
{
	if (sp_mkdtemp(s->dir, sizeof(s->dir), "tw-kustomize"))
		return -1;
	char cmd[512], mine[192];
	snprintf(cmd, sizeof(cmd),
		 "cp -R deploy '%s/deploy' && { [ ! -d charts ] || cp -R charts '%s/charts'; } && "
		 "mkdir '%s/mine'", s->dir, s->dir, s->dir);
	snprintf(mine, sizeof(mine), "%s/mine", s->dir);
	if (tt_run(cmd, NULL, NULL) || sp_write(mine, "kustomization.yaml", kustomization)) {
		fprintf(stderr, "sandbox %s: could not copy deploy/ or write mine/\n", s->dir);
		return -1;
	}
	return 0;
}

cJSON *dc_sandbox_render(const dc_sandbox *s, char *err, size_t errlen)
{
	char mine[192];
	snprintf(mine, sizeof(mine), "%s/mine", s->dir);
	return dc_render(mine, err, errlen);
}

void dc_sandbox_free(dc_sandbox *s)
{
	sp_rmtree(s->dir);
}

cJSON *dc_render_own(const char *kustomization, const char *edit, char *err, size_t errlen)
{
	dc_sandbox s;
	if (dc_sandbox_make(&s, kustomization)) {
		snprintf(err, errlen, "could not make a copy of deploy/");
		return NULL;
	}
	cJSON *objs = NULL;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cd '%s' && %s", s.dir, edit ? edit : "true");
	if (tt_run(cmd, NULL, NULL))
		snprintf(err, errlen, "%s: failed", cmd);
	else
		objs = dc_sandbox_render(&s, err, errlen);
	dc_sandbox_free(&s);
	return objs;
}

const cJSON *dc_find(const cJSON *objs, const char *kind, int nth)
{
	const cJSON *o;
	cJSON_ArrayForEach(o, objs)
	{
		const char *k = tp_get_str(o, "kind");
		if (k && !strcmp(k, kind) && nth-- == 0)
			return o;
	}
	return NULL;
}

const cJSON *dc_find_named(const cJSON *objs, const char *kind, const char *name)
{
	const cJSON *o;
	for (int i = 0; (o = dc_find(objs, kind, i)); i++)
		if (name && !strcmp(tp_meta_name(o), name))
			return o;
	return NULL;
}

int dc_count(const cJSON *objs, const char *kind)
{
	int n = 0;
	while (dc_find(objs, kind, n))
		n++;
	return n;
}

bool dc_str_in(const cJSON *arr, const char *s)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, arr)
		if (cJSON_IsString(it) && !strcmp(it->valuestring, s))
			return true;
	return false;
}

/* The set of strings of arr is exactly the n given. */
bool dc_str_set_is(const cJSON *arr, const char *const *want, int n)
{
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
		return false;
	for (int i = 0; i < n; i++)
		if (!dc_str_in(arr, want[i]))
			return false;
	return true;
}

