/*
 * kubeconfig_exec.c — a kubeconfig user's exec credential plugin read into
 * a tw_kube_exec_spec (kubeexec.c runs it), with client-go's rules: the
 * apiVersion client.authentication.k8s.io/v1 or v1beta1; v1 must say its
 * interactiveMode; a command with a '/' is relative to the kubeconfig's
 * folder; provideClusterInfo hands the plugin the cluster's server, CA and
 * the extension client.authentication.k8s.io/exec.
 *
 * A spec is copied with its config (kube.c). Nothing here has a terminal: a plugin with interactiveMode Always is
 * refused with the reason; IfAvailable and Never run with interactive:
 * false, as kubectl runs them without a terminal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/cluster/kube_internal.h"
#include "webhook/core/files.h"

#define EXEC_V1 "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define EXEC_EXTENSION "client.authentication.k8s.io/exec"

static int fail(char *err, size_t n, const char *where, const char *fmt, const char *a,
		const char *b)
{
	char what[600];
	snprintf(what, sizeof(what), fmt, a ? a : "", b ? b : "");
	snprintf(err, n, "%s.exec%s", where, what);
	return TW_EFAILED;
}

/* The run mode; -1 (err set) for one that is missing where required,
 * unknown, or Always. */
static int check_mode(const cJSON *x, const char *api, const char *where, char *err, size_t n)
{
	const char *mode = tp_get_str(x, "interactiveMode");
	if (!mode && !strcmp(api, EXEC_V1))
		return fail(err, n, where, ".interactiveMode: Required value: Never, IfAvailable or "
					   "Always (%s requires it)%s", EXEC_V1, NULL);
	if (mode && strcmp(mode, "Never") && strcmp(mode, "IfAvailable") && strcmp(mode, "Always"))
		return fail(err, n, where, ".interactiveMode: Unsupported value: \"%s\": supported "
					   "values: \"Never\", \"IfAvailable\", \"Always\"%s", mode, NULL);
	if (mode && !strcmp(mode, "Always"))
		return fail(err, n, where, ": the plugin \"%s\" needs an interactive terminal "
					   "(interactiveMode: Always), which trainer-webhook never has: "
					   "log in with it in a terminal first, or use a plugin that "
					   "runs unattended (interactiveMode: Never or IfAvailable)%s",
			    tp_get_str(x, "command"), NULL);
	return 0;
}

/* "command args..." NULL-terminated; the command resolved against dir. */
static char **argv_of(const cJSON *x, const char *dir, char **command)
{
	const char *cmd = tp_get_str(x, "command");
	const cJSON *args = tp_get_array(x, "args");
	size_t n = (size_t)cJSON_GetArraySize(args);
	char **argv = calloc(n + 2, sizeof(*argv));
	if (!argv)
		return NULL;
	bool ok;
	if (strchr(cmd, '/') && cmd[0] != '/')
		ok = asprintf(command, "%s/%s", dir, cmd) >= 0;
	else
		ok = (*command = strdup(cmd)) != NULL;
	ok = ok && (argv[0] = strdup(*command)) != NULL;
	size_t i = 1;
	const cJSON *a;
	cJSON_ArrayForEach(a, args)
	{
		if (ok && cJSON_IsString(a))
			ok = (argv[i++] = strdup(a->valuestring)) != NULL;
	}
	if (!ok) {
		for (size_t k = 0; k < n + 2; k++)
			free(argv[k]);
		free(argv);
		return NULL;
	}
	return argv;
}

/* "NAME=value" for each env entry; NULL when one has no name (bad set). */
static char **env_of(const cJSON *x, bool *bad)
{
	const cJSON *env = tp_get_array(x, "env");
	size_t n = (size_t)cJSON_GetArraySize(env), i = 0;
	char **out = calloc(n + 1, sizeof(*out));
	const cJSON *e;
	*bad = false;
	cJSON_ArrayForEach(e, env)
	{
		const char *name = tp_get_str(e, "name"), *value = tp_get_str(e, "value");
		if (!out || !name || !*name || strchr(name, '=')) {
			*bad = true;
			break;
		}
		if (asprintf(&out[i++], "%s=%s", name, value ? value : "") < 0)
			out[--i] = NULL, *bad = true;
	}
	if (*bad && out) {
		for (size_t k = 0; k < i; k++)
			free(out[k]);
		free(out);
		out = NULL;
	}
	return out;
}

/* spec.cluster for provideClusterInfo (client-go's Cluster), as JSON text. */
static char *cluster_info(const cJSON *cl, const char *dir)
{
	cJSON *o = cJSON_CreateObject();
	const char *server = tp_get_str(cl, "server");
	const char *ca = tp_get_str(cl, "certificate-authority-data");
	const char *ca_file = tp_get_str(cl, "certificate-authority");
	const char *proxy = tp_get_str(cl, "proxy-url");
	tp_buf pem = TP_BUF_INIT(1 << 20), b64 = TP_BUF_INIT(0);
	if (!ca && ca_file) { /* client-go hands the plugin the file's content */
		char path[1024];
		snprintf(path, sizeof(path), "%s%s%s", ca_file[0] == '/' ? "" : dir,
			 ca_file[0] == '/' ? "" : "/", ca_file);
		if (!tw_read_file(path, 1 << 20, &pem) && !tp_base64_encode(pem.data, pem.len, &b64))
			ca = b64.data;
	}
	cJSON_AddStringToObject(o, "server", server ? server : "");
	if (ca)
		cJSON_AddStringToObject(o, "certificate-authority-data", ca);
	if (tp_get_true(cl, "insecure-skip-tls-verify"))
		cJSON_AddBoolToObject(o, "insecure-skip-tls-verify", true);
	if (proxy)
		cJSON_AddStringToObject(o, "proxy-url", proxy);
	const cJSON *ext = tp_find_named(tp_get_array(cl, "extensions"), "name", EXEC_EXTENSION);
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(ext, "extension");
	if (cfg)
		cJSON_AddItemToObject(o, "config", cJSON_Duplicate(cfg, 1));
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	tp_buf_free(&pem);
	tp_buf_free(&b64);
	return text;
}

int tw__kubeconfig_exec(tw_kube_config *c, const cJSON *x, const char *dir, const cJSON *cluster,
			const char *where, char *err, size_t n)
{
	const char *api = tp_get_str(x, "apiVersion");
	const char *cmd = tp_get_str(x, "command");
	if (!api)
		return fail(err, n, where, ".apiVersion: Required value: %s (or %s)", EXEC_V1,
			    EXEC_V1BETA1);
	if (strcmp(api, EXEC_V1) && strcmp(api, EXEC_V1BETA1))
		return fail(err, n, where, ".apiVersion: Unsupported value: \"%s\": supported "
					   "values: \"%s\", \"" EXEC_V1BETA1 "\"", api, EXEC_V1);
	if (!cmd || !*cmd)
		return fail(err, n, where, ".command: Required value: the plugin to run%s%s", NULL,
			    NULL);
	if (check_mode(x, api, where, err, n))
		return TW_EFAILED;
	tw_kube_exec_spec *s = calloc(1, sizeof(*s));
	bool bad_env = false;
	if (!s)
		return snprintf(err, n, "out of memory"), TP_ENOMEM;
	c->exec = s;
	s->api_version = strdup(api);
	s->argv = argv_of(x, dir, &s->command);
	s->env = env_of(x, &bad_env);
	const char *hint = tp_get_str(x, "installHint");
	s->install_hint = hint ? strdup(hint) : NULL;
	if (asprintf(&s->where, "%s.exec", where) < 0)
		s->where = NULL;
	if (tp_get_true(x, "provideClusterInfo"))
		s->cluster_info = cluster_info(cluster, dir);
	if (bad_env)
		return fail(err, n, where, ".env: Invalid value: every entry needs a name (without "
					   "'=') and a value%s%s", NULL, NULL);
	if (!s->api_version || !s->argv || !s->env || !s->where ||
	    (tp_get_true(x, "provideClusterInfo") && !s->cluster_info))
		return snprintf(err, n, "out of memory"), TP_ENOMEM;
	return 0;
}

/* ------------------------------------------------------------ copies */

static void free_list(char **l)
{
	for (size_t i = 0; l && l[i]; i++)
		free(l[i]);
	free(l);
}

static char **copy_list(char **l, bool *ok)
{
	size_t n = 0;
	while (l && l[n])
		n++;
	char **out = calloc(n + 1, sizeof(*out));
	*ok = out != NULL;
	for (size_t i = 0; *ok && i < n; i++)
		*ok = (out[i] = strdup(l[i])) != NULL;
	return out;
}

void tw__kube_exec_free(tw_kube_exec_spec *s)
{
	if (!s)
		return;
	free(s->api_version);
	free(s->command);
	free_list(s->argv);
	free_list(s->env);
	free(s->install_hint);
	free(s->cluster_info);
	free(s->where);
	free(s);
}

static bool copy_str(char **dst, const char *src)
{
	return !src || (*dst = strdup(src)) != NULL;
}

tw_kube_exec_spec *tw__kube_exec_copy(const tw_kube_exec_spec *s)
{
	tw_kube_exec_spec *d = calloc(1, sizeof(*d));
	bool ok = d != NULL, ok_argv = false, ok_env = false;
	if (ok) {
		d->argv = copy_list(s->argv, &ok_argv);
		d->env = copy_list(s->env, &ok_env);
		ok = ok_argv && ok_env && copy_str(&d->api_version, s->api_version) &&
		     copy_str(&d->command, s->command) && copy_str(&d->install_hint, s->install_hint) &&
		     copy_str(&d->cluster_info, s->cluster_info) && copy_str(&d->where, s->where);
	}
	if (!ok) {
		tw__kube_exec_free(d);
		return NULL;
	}
	return d;
}
