/*
 * server_proc.c — see server_proc.h.
 */
#include "tests/support/server_proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/testutil.h"

int sp_slow(void)
{
	const char *b = tt_bin();
	return strstr(b, "asan") ? 4 : 1;
}

static void nap_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&t, NULL);
}

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int sp_mkdtemp(char *buf, size_t n, const char *prefix)
{
	snprintf(buf, n, "/tmp/%s-XXXXXX", prefix);
	return mkdtemp(buf) ? 0 : -1;
}

void sp_rmtree(const char *dir)
{
	if (!dir || strncmp(dir, "/tmp/", 5) || strstr(dir, ".."))
		return;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "server_proc: could not remove %s\n", dir);
}

int sp_certs(const char *dir, bool force)
{
	char cmd[700];
	snprintf(cmd, sizeof(cmd),
		 "%s certs generate --service trainer-webhook --namespace test --dns localhost "
		 "--ip 127.0.0.1 --out '%s'%s",
		 tt_bin(), dir, force ? " --force" : "");
	return tt_run(cmd, NULL, NULL);
}

int sp_copy_runtimes(const char *dir)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "cp deploy/runtimes/* '%s'/", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int sp_fixture(const char *prefix, char *tmp, char *certdir, char *rtdir, size_t n)
{
	if (sp_mkdtemp(tmp, n, prefix))
		return -1;
	snprintf(certdir, n, "%s/certs", tmp);
	snprintf(rtdir, n, "%s/runtimes", tmp);
	return mkdir(certdir, 0700) || mkdir(rtdir, 0700) || sp_certs(certdir, false) ||
			       sp_copy_runtimes(rtdir)
		       ? -1
		       : 0;
}

int sp_write(const char *dir, const char *name, const char *text)
{
	char path[400];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t n = strlen(text);
	int rc = fwrite(text, 1, n, f) == n ? 0 : -1;
	return fclose(f) || rc ? -1 : 0;
}

/* ------------------------------------------------------------- process */

static int parse_port(const char *log, const char *key, unsigned short *out)
{
	const char *p = log ? strstr(log, key) : NULL;
	if (!p)
		return -1;
	p = strstr(p, "(port ");
	if (!p)
		return -1;
	*out = (unsigned short)strtoul(p + 6, NULL, 10);
	return *out ? 0 : -1;
}

/* The command line of `serve` under wrapper (NULL: none) into argv. */
static int serve_argv(const char **argv, int max, const char *const *wrapper, const char *cert,
		      const char *key, const char *const *extra)
{
	int n = 0;
	for (int i = 0; wrapper && wrapper[i] && n < max - 16; i++)
		argv[n++] = wrapper[i];
	static const char *const fixed[] = { "serve", "--listen", "127.0.0.1:0", "--metrics-listen",
					     "127.0.0.1:0", "--log-level", "info" };
	argv[n++] = tt_bin();
	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
		argv[n++] = fixed[i];
	if (cert) {
		argv[n++] = "--tls-cert";
		argv[n++] = cert;
		argv[n++] = "--tls-key";
		argv[n++] = key;
	}
	for (int i = 0; extra && extra[i] && n < max - 1; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	return n;
}

int sp_spawn(sp_server *s, const char *certdir, const char *logdir, const char *const *extra)
{
	return sp_spawn_wrapped(s, NULL, certdir, logdir, extra);
}

int sp_spawn_wrapped(sp_server *s, const char *const *wrapper, const char *certdir,
		     const char *logdir, const char *const *extra)
{
	memset(s, 0, sizeof(*s));
	char cert[300], key[300];
	snprintf(cert, sizeof(cert), "%s/tls.crt", certdir ? certdir : "");
	snprintf(key, sizeof(key), "%s/tls.key", certdir ? certdir : "");
	snprintf(s->ca, sizeof(s->ca), "%s/ca.crt", certdir ? certdir : logdir);
	snprintf(s->log_path, sizeof(s->log_path), "%s/serve.log", logdir);
	const char *argv[64];
	serve_argv(argv, 64, wrapper, certdir ? cert : NULL, key, extra);
	int fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(fd);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(fd, 2);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd);
	s->pid = pid;
	return 0;
}

int sp_memcheck_start(sp_server *s, const char *certdir, const char *logdir,
		      const char *const *extra)
{
	if (sp_slow() > 1 || system("command -v valgrind >/dev/null 2>&1") != 0)
		return 1;
	const char *const vg[] = { "valgrind", "-q", "--leak-check=full",
				   "--show-leak-kinds=definite,indirect,possible",
				   "--errors-for-leak-kinds=definite,indirect,possible",
				   "--error-exitcode=99", NULL };
	if (sp_spawn_wrapped(s, vg, certdir, logdir, extra))
		return -1;
	return sp_wait_serving_ms(s, 60000) ? -1 : 0;
}

int sp_memcheck_stop(sp_server *s)
{
	sp_signal(s, SIGTERM);
	int st = sp_wait(s, 60000);
	char *log = sp_log(s);
	bool clean = st == 0 && !strstr(log, "lost in loss record") && !strstr(log, "Invalid ");
	if (!clean)
		fprintf(stderr, "serve under valgrind exited %d:\n%s\n", st, log);
	free(log);
	return clean ? 0 : -1;
}

int sp_wait_serving(sp_server *s)
{
	return sp_wait_serving_ms(s, 10000 * sp_slow());
}

int sp_wait_serving_ms(sp_server *s, int timeout_ms)
{
	long long limit = now_ms() + timeout_ms;
	while (now_ms() < limit) {
		char *log = sp_log(s);
		int ok = parse_port(log, "serving https on", &s->port);
		if (!ok) {
			parse_port(strstr(log, "metrics on"), "metrics on", &s->metrics_port);
			free(log);
			return 0;
		}
		free(log);
		if (sp_wait(s, 0) != -2)
			return -1;
		nap_ms(10);
	}
	sp_stop(s);
	return -1;
}

int sp_start(sp_server *s, const char *certdir, const char *logdir, const char *const *extra)
{
	if (sp_spawn(s, certdir, logdir, extra))
		return -1;
	return sp_wait_serving(s);
}

int sp_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int port = -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &l))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

int sp_signal(const sp_server *s, int sig)
{
	return s->pid > 0 ? kill(s->pid, sig) : -1;
}

int sp_wait(sp_server *s, int timeout_ms)
{
	if (s->pid <= 0)
		return s->status;
	long long limit = now_ms() + timeout_ms;
	for (;;) {
		int st;
		pid_t r = waitpid(s->pid, &st, WNOHANG);
		if (r == s->pid) {
			s->pid = 0;
			s->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
			return s->status;
		}
		if (r < 0) {
			s->pid = 0;
			s->status = -1;
			return -1;
		}
		if (now_ms() >= limit)
			return -2;
		nap_ms(5);
	}
}

void sp_stop(sp_server *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	if (sp_wait(s, 15000 * sp_slow()) == -2) {
		kill(s->pid, SIGKILL);
		int st;
		waitpid(s->pid, &st, 0);
		s->pid = 0;
		s->status = -1;
	}
}

int sp_stop_checked(sp_server *s)
{
	bool running = s->pid > 0;
	sp_stop(s);
	int rc = 0;
	if (running && s->status != 0) {
		fprintf(stderr, "server_proc: the server exited %d on SIGTERM, not 0\n", s->status);
		rc = -1;
	}
	if (s->log_path[0]) {
		char *log = sp_log(s);
		if (strstr(log, "Sanitizer") || strstr(log, "runtime error:")) {
			fprintf(stderr, "server_proc: sanitizer report in the server's log:\n%s\n",
				log);
			rc = -1;
		}
		free(log);
	}
	return rc;
}

char *sp_log(const sp_server *s)
{
	char *t = tt_read_file(s->log_path, NULL);
	return t ? t : strdup("");
}

bool sp_log_wait(const sp_server *s, const char *needle, int timeout_ms)
{
	long long limit = now_ms() + timeout_ms;
	for (;;) {
		char *log = sp_log(s);
		bool found = log && strstr(log, needle);
		free(log);
		if (found)
			return true;
		if (now_ms() >= limit)
			return false;
		nap_ms(10);
	}
}

int sp_log_count(const sp_server *s, const char *needle)
{
	char *log = sp_log(s);
	int n = 0;
	for (const char *p = log; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	free(log);
	return n;
}

/* ---------------------------------------------------------------- HTTP */

size_t sp_curl_body(char *p, size_t sz, size_t n, void *ud)
{
	sp_resp *r = ud;
	size_t add = sz * n;
	char *b = realloc(r->body, r->len + add + 1);
	if (!b)
		return 0;
	memcpy(b + r->len, p, add);
	r->len += add;
	b[r->len] = '\0';
	r->body = b;
	return add;
}

size_t sp_curl_header(char *p, size_t sz, size_t n, void *ud)
{
	sp_resp *r = ud;
	size_t len = sz * n;
	static const char key[] = "connection:";
	if (len > sizeof(key) - 1 && !strncasecmp(p, key, sizeof(key) - 1)) {
		const char *v = p + sizeof(key) - 1;
		while (*v == ' ')
			v++;
		size_t vl = 0;
		while (v + vl < p + len && v[vl] != '\r' && v[vl] != '\n' &&
		       vl + 1 < sizeof(r->connection))
			vl++;
		memcpy(r->connection, v, vl);
		r->connection[vl] = '\0';
	}
	return len;
}

/* "Serial Number:" text from curl's certinfo into lowercase hex without
 * separators or leading zeros. */
static void norm_serial(const char *in, char *out, size_t n)
{
	size_t k = 0;
	for (; *in && k + 1 < n; in++)
		if (isxdigit((unsigned char)*in) && !(k == 0 && *in == '0'))
			out[k++] = (char)tolower((unsigned char)*in);
	out[k] = '\0';
}

static void read_serial(CURL *h, sp_resp *out)
{
	struct curl_certinfo *ci = NULL;
	if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci) || !ci || ci->num_of_certs < 1)
		return;
	for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next)
		if (!strncmp(l->data, "Serial Number:", 14)) {
			const char *v = l->data + 14;
			/* OpenSSL may print "decimal (0xhex)"; take the hex part. */
			const char *hex = strstr(v, "0x");
			norm_serial(hex ? hex + 2 : v, out->serial, sizeof(out->serial));
			return;
		}
}

/* SP_SLOW_READ: a 4 KiB receive window, and 5 ms between 1 KiB reads, so
 * the server's sends meet a full pipe. */
static int small_window(void *ud, curl_socket_t fd, curlsocktype purpose)
{
	(void)ud, (void)purpose;
	int n = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &n, sizeof(n));
	return CURL_SOCKOPT_OK;
}

static size_t slow_body(char *p, size_t sz, size_t n, void *ud)
{
	struct timespec t = { 0, 5 * 1000 * 1000 };
	nanosleep(&t, NULL);
	return sp_curl_body(p, sz, n, ud);
}

int sp_https(CURL *h, const sp_server *s, const char *method, const char *path,
	     const char *ctype, const char *body, size_t len, int flags, sp_resp *out)
{
	memset(out, 0, sizeof(*out));
	CURL *own = NULL;
	if (!h && !(h = own = curl_easy_init()))
		return CURLE_FAILED_INIT;
	char url[512], hdr[160];
	const char *host = s->host[0] ? s->host : "localhost";
	snprintf(url, sizeof(url), "https://%s:%u%s", host, s->port, path);
	char resolve[200];
	snprintf(resolve, sizeof(resolve), "%s:%u:127.0.0.1", host, s->port);
	struct curl_slist *res = curl_slist_append(NULL, resolve);
	struct curl_slist *hs = curl_slist_append(NULL, "Expect:");
	if (ctype) {
		snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype);
		hs = curl_slist_append(hs, hdr);
	}
	curl_easy_reset(h);
	if (s->source[0]) /* another peer than the test's other connections */
		curl_easy_setopt(h, CURLOPT_INTERFACE, s->source);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_RESOLVE, res);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_CAINFO, s->ca);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, (flags & SP_NOVERIFY) ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, (flags & SP_NOVERIFY) ? 0L : 2L);
	curl_easy_setopt(h, CURLOPT_CERTINFO, (flags & SP_CERTINFO) ? 1L : 0L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 20000L * sp_slow());
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L * sp_slow());
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sp_curl_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, sp_curl_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, out->curl_error);
	if (flags & SP_SLOW_READ) {
		curl_easy_setopt(h, CURLOPT_SOCKOPTFUNCTION, small_window);
		curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 1024L);
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, slow_body);
	}
	if (flags & SP_FRESH) {
		curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
	}
	if (!strcmp(method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else if (strcmp(method, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
		if (body) {
			curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
			curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
		}
	}
	CURLcode rc = curl_easy_perform(h);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
		curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &out->connects);
		char *ct = NULL;
		if (!curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) && ct)
			snprintf(out->ctype, sizeof(out->ctype), "%s", ct);
		if (flags & SP_CERTINFO)
			read_serial(h, out);
	}
	if (!out->body)
		out->body = calloc(1, 1);
	/* The handle keeps pointers to these lists until the next reset. */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_RESOLVE, NULL);
	curl_slist_free_all(hs);
	curl_slist_free_all(res);
	if (own)
		curl_easy_cleanup(own);
	return (int)rc;
}

int sp_http_get(unsigned short port, const char *path, sp_resp *out)
{
	memset(out, 0, sizeof(*out));
	CURL *h = curl_easy_init();
	if (!h)
		return CURLE_FAILED_INIT;
	char url[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L * sp_slow());
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sp_curl_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, out->curl_error);
	CURLcode rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
	if (!out->body)
		out->body = calloc(1, 1);
	curl_easy_cleanup(h);
	return (int)rc;
}

void sp_resp_free(sp_resp *r)
{
	free(r->body);
	r->body = NULL;
}

double sp_metric(const char *text, const char *series)
{
	size_t n = strlen(series);
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, series, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

double sp_metric_now(const sp_server *s, const char *series)
{
	sp_resp m;
	if (sp_http_get(s->metrics_port, "/metrics", &m))
		return -1;
	double v = sp_metric(m.body, series);
	sp_resp_free(&m);
	return v;
}

bool sp_is_ready(void *server)
{
	sp_resp r;
	sp_https(NULL, server, "GET", "/readyz", NULL, NULL, 0, SP_FRESH, &r);
	bool ok = r.status == 200;
	sp_resp_free(&r);
	return ok;
}

char *sp_base64_decode(const char *in, size_t *outlen)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in);
	char *out = malloc(n / 4 * 3 + 4);
	if (!out)
		return NULL;
	size_t k = 0;
	unsigned acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i] == '=')
			break;
		const char *p = strchr(tbl, in[i]);
		if (!p || !in[i]) {
			free(out);
			return NULL;
		}
		acc = (acc << 6) | (unsigned)(p - tbl);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[k] = '\0';
	if (outlen)
		*outlen = k;
	return out;
}
