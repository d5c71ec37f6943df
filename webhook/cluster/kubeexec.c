/*
 * kubeexec.c — one run of an exec credential plugin (a kubeconfig's
 * user.exec: EKS's aws, GKE's gke-gcloud-auth-plugin, AKS's kubelogin), the
 * way client-go runs it (k8s.io/client-go/plugin/pkg/client/auth/exec):
 *
 *   - our environment plus the user's env entries, and
 *     KUBERNETES_EXEC_INFO: an ExecCredential of the asked apiVersion whose
 *     spec says interactive: false (and spec.cluster with
 *     provideClusterInfo); standard input is /dev/null: nothing here can
 *     answer a prompt, so a plugin that insists on one
 *     (interactiveMode: Always) is refused earlier, by kubeconfig.c;
 *   - the answer on standard output, an ExecCredential whose status holds a
 *     token or a client certificate and key, and maybe an
 *     expirationTimestamp until which it is kept (kubeauth.c);
 *   - a plugin that does not answer within the time limit is killed.
 *
 * posix_spawn rather than fork: the server runs it from one of its threads.
 */
#include "webhook/cluster/kube_internal.h"
#include "webhook/core/json_read.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "webhook/core/clock.h"

extern char **environ;

#define MAX_STDOUT ((size_t)1 << 20)
#define STDERR_TAIL 400

void tw__kube_exec_cred_free(tw_kube_exec_cred *c)
{
	if (c->token)
		explicit_bzero(c->token, strlen(c->token));
	if (c->key_pem)
		explicit_bzero(c->key_pem, strlen(c->key_pem));
	free(c->token);
	free(c->cert_pem);
	free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------ environment */

/* Whether env entry e ("NAME=value") sets name (length n). */
static bool sets(const char *e, const char *name, size_t n)
{
	return !strncmp(e, name, n) && e[n] == '=';
}

static bool overridden(const char *e, char **env)
{
	const char *eq = strchr(e, '=');
	size_t n = eq ? (size_t)(eq - e) : strlen(e);
	if (sets(e, "KUBERNETES_EXEC_INFO", 20))
		return true;
	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], e, n) && env[i][n] == '=')
			return true;
	return false;
}

/* Ours less what the user sets, then the user's, then the exec info.
 * Borrowed strings but the last (info); NULL when out of memory. */
static char **environment(const tw_kube_exec_spec *s, char *info)
{
	size_t n = 0, m = 0;
	while (environ && environ[n])
		n++;
	while (s->env && s->env[m])
		m++;
	char **envp = calloc(n + m + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!overridden(environ[i], s->env))
			envp[k++] = environ[i];
	for (size_t i = 0; i < m; i++)
		envp[k++] = s->env[i];
	envp[k] = info;
	return envp;
}

/* KUBERNETES_EXEC_INFO=<ExecCredential JSON>, malloc'd. */
static char *exec_info(const tw_kube_exec_spec *s)
{
	char *v = NULL;
	if (asprintf(&v, "KUBERNETES_EXEC_INFO={\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\","
			 "\"spec\":{\"interactive\":false%s%s}}",
		     s->api_version, s->cluster_info ? ",\"cluster\":" : "",
		     s->cluster_info ? s->cluster_info : "") < 0)
		return NULL;
	return v;
}

/* ------------------------------------------------------------ the child */

struct child {
	pid_t pid;
	int out, errfd; /* read ends */
};

static int spawn(const tw_kube_exec_spec *s, char **envp, struct child *ch, char *err, size_t n)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC))
		return snprintf(err, n, "%s: cannot make a pipe: %s", s->where, strerror(errno)),
		       TW_EFAILED;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]), close(po[1]);
		return snprintf(err, n, "%s: cannot make a pipe: %s", s->where, strerror(errno)),
		       TW_EFAILED;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawnattr_init(&at);
	/* The server blocks its signals in every thread and ignores SIGPIPE: the
	 * plugin gets the defaults back. */
	sigset_t none, def;
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGHUP);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	int rc = posix_spawnp(&ch->pid, s->command, &fa, &at, s->argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(po[1]);
	close(pe[1]);
	if (rc) {
		close(po[0]);
		close(pe[0]);
		if (rc == ENOENT)
			snprintf(err, n, "%s: the credential plugin \"%s\" was not found (PATH, or "
					 "the path given)%s%s", s->where, s->command,
				 s->install_hint ? "; " : ": install it", s->install_hint ? s->install_hint : "");
		else
			snprintf(err, n, "%s: cannot run the credential plugin \"%s\": %s", s->where,
				 s->command, strerror(rc));
		return TW_EFAILED;
	}
	ch->out = po[0];
	ch->errfd = pe[0];
	return 0;
}

/* Read both pipes until they close or the time is up; false on timeout.
 * *big: standard output went past the limit. */
static bool collect(struct child *ch, long timeout_ms, tp_buf *out, bool *big, char *tail,
		    size_t tailn)
{
	long long end = tw_mono_ms() + timeout_ms;
	size_t tlen = 0;
	struct pollfd p[2] = { { ch->out, POLLIN, 0 }, { ch->errfd, POLLIN, 0 } };
	while (p[0].fd >= 0 || p[1].fd >= 0) {
		long long left = end - tw_mono_ms();
		if (left <= 0)
			return false;
		if (poll(p, 2, (int)left) < 0 && errno != EINTR)
			return false;
		char buf[4096];
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t r = read(p[i].fd, buf, sizeof(buf));
			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				p[i].fd = -1; /* poll skips negative descriptors */
				continue;
			}
			if (i == 0) {
				*big |= tp_buf_add(out, buf, (size_t)r) != 0; /* refused below */
				continue;
			}
			for (ssize_t k = 0; k < r; k++) { /* keep the end of stderr */
				if (tlen + 1 >= tailn) {
					memmove(tail, tail + tailn / 2, tlen - tailn / 2);
					tlen -= tailn / 2;
				}
				tail[tlen++] = buf[k];
			}
			tail[tlen] = '\0';
		}
	}
	return true;
}

/* The last non-empty line of text, in place. */
static const char *last_line(char *text)
{
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		text[--n] = '\0';
	char *nl = strrchr(text, '\n');
	return nl ? nl + 1 : text;
}

/* ------------------------------------------------------------ the answer */

/* RFC 3339 ("2024-05-01T10:00:00Z", fractions and offsets allowed) as Unix
 * seconds; -1 means it is not one. */
static int64_t rfc3339(const char *s)
{
	struct tm tm = { 0 };
	const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	if (!p)
		return -1;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	int64_t t = (int64_t)timegm(&tm);
	if (*p == 'Z' && !p[1])
		return t;
	int hh, mm;
	char sign;
	if (sscanf(p, "%c%2d:%2d", &sign, &hh, &mm) == 3 && (sign == '+' || sign == '-') &&
	    strlen(p) == 6)
		return t - (sign == '+' ? 1 : -1) * (int64_t)(hh * 3600 + mm * 60);
	return -1;
}

static char *dup_str(const cJSON *o, const char *key)
{
	const char *v = tp_get_str(o, key);
	return v && *v ? strdup(v) : NULL;
}

static int read_answer(const tw_kube_exec_spec *s, const tp_buf *b, tw_kube_exec_cred *out,
		       char *err, size_t n)
{
	memset(out, 0, sizeof(*out));
	cJSON *ec = tw_json_object(b->data, b->len);
	const char *kind = tp_get_str(ec, "kind"), *av = tp_get_str(ec, "apiVersion");
	const cJSON *st = tp_get_object(ec, "status");
	int rc = TW_EFAILED;
	if (!ec || !kind || strcmp(kind, "ExecCredential"))
		snprintf(err, n, "%s: the plugin \"%s\" did not print an ExecCredential (JSON) on "
				 "its standard output", s->where, s->command);
	else if (!av || strcmp(av, s->api_version))
		snprintf(err, n, "%s: the plugin \"%s\" answered apiVersion \"%s\" where \"%s\" was "
				 "asked: set the kubeconfig's exec.apiVersion to what it speaks",
			 s->where, s->command, av ? av : "", s->api_version);
	else if (!st)
		snprintf(err, n, "%s: the plugin \"%s\" answered an ExecCredential without status",
			 s->where, s->command);
	else {
		out->token = dup_str(st, "token");
		out->cert_pem = dup_str(st, "clientCertificateData");
		out->key_pem = dup_str(st, "clientKeyData");
		const char *exp = tp_get_str(st, "expirationTimestamp");
		int64_t t = exp ? rfc3339(exp) : 0;
		out->expires = t > 0 ? t : 0;
		if (!!out->cert_pem != !!out->key_pem)
			snprintf(err, n, "%s: the plugin \"%s\" answered status.%s without status.%s: "
					 "both or neither", s->where, s->command,
				 out->cert_pem ? "clientCertificateData" : "clientKeyData",
				 out->cert_pem ? "clientKeyData" : "clientCertificateData");
		else if (!out->token && !out->cert_pem)
			snprintf(err, n, "%s: the plugin \"%s\" answered neither status.token nor "
					 "status.clientCertificateData and clientKeyData", s->where,
				 s->command);
		else if (t < 0)
			snprintf(err, n, "%s: the plugin \"%s\" answered status.expirationTimestamp "
					 "\"%s\", which is not RFC 3339", s->where, s->command, exp);
		else
			rc = 0;
	}
	cJSON_Delete(ec);
	if (rc)
		tw__kube_exec_cred_free(out);
	return rc;
}

int tw__kube_exec_run(const tw_kube_exec_spec *s, long timeout_ms, tw_kube_exec_cred *out,
		      char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	char *info = exec_info(s);
	char **envp = info ? environment(s, info) : NULL;
	struct child ch = { 0 };
	if (!envp || spawn(s, envp, &ch, err, errlen)) {
		if (!envp)
			snprintf(err, errlen, "out of memory");
		free(envp);
		free(info);
		return TW_EFAILED;
	}
	free(envp);
	free(info);
	tp_buf b = TP_BUF_INIT(MAX_STDOUT);
	char tail[STDERR_TAIL] = "";
	bool big = false;
	bool done = collect(&ch, timeout_ms, &b, &big, tail, sizeof(tail));
	close(ch.out);
	close(ch.errfd);
	if (!done)
		kill(ch.pid, SIGKILL);
	int status = 0;
	while (waitpid(ch.pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = TW_EFAILED;
	if (!done)
		snprintf(err, errlen, "%s: the credential plugin \"%s\" did not answer within %ld s "
				      "(killed)", s->where, s->command, timeout_ms / 1000);
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		snprintf(err, errlen, "%s: the credential plugin \"%s\" failed (%s %d)%s%s", s->where,
			 s->command, WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
			 tail[0] ? ": " : "", last_line(tail));
	else if (big)
		snprintf(err, errlen, "%s: the credential plugin \"%s\" printed more than 1 MiB",
			 s->where, s->command);
	else
		rc = read_answer(s, &b, out, err, errlen);
	tp_buf_free(&b);
	return rc;
}
