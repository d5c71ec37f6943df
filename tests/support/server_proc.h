/*
 * server_proc.h — the real `trainer-webhook serve` as a child process for
 * integration tests, and a small libcurl client to talk to it.
 *
 * Every wait is bounded. The child gets PR_SET_PDEATHSIG(SIGKILL), so a test
 * binary that dies never leaves a server behind; tests still stop it
 * themselves (sp_stop) in their teardown.
 */
#ifndef TT_SERVER_PROC_H
#define TT_SERVER_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <curl/curl.h>

/* Slower under ASan: every wait in the helpers scales with this. */
int sp_slow(void);

/* A fresh folder under /tmp (mkdtemp) into buf; 0 or -1. */
int sp_mkdtemp(char *buf, size_t n, const char *prefix);
/* rm -rf dir (only a folder sp_mkdtemp made). */
void sp_rmtree(const char *dir);
/* `certs generate --service trainer-webhook --namespace test --dns localhost
 * --ip 127.0.0.1 --out dir` (with --force when force); returns the exit status. */
int sp_certs(const char *dir, bool force);
/* Copy every file of deploy/runtimes into dir; 0 or -1. */
int sp_copy_runtimes(const char *dir);
/* A test's folders: a fresh tmp (sp_mkdtemp with prefix), tmp/certs with a
 * pair (sp_certs) and tmp/runtimes with deploy/runtimes' files; each buffer
 * n bytes. 0 or -1. */
int sp_fixture(const char *prefix, char *tmp, char *certdir, char *rtdir, size_t n);
/* Write text to dir/name; 0 or -1. */
int sp_write(const char *dir, const char *name, const char *text);

typedef struct sp_server {
	pid_t pid;                 /* 0: not running */
	int status;                /* exit status once reaped (-1: killed by a signal) */
	char log_path[300];        /* the child's stderr */
	unsigned short port;       /* HTTPS, from the log */
	unsigned short metrics_port; /* from the log, 0 when it does not say */
	char ca[300];              /* certdir/ca.crt: the CA requests trust */
	char host[128];            /* the name requests use and verify ("": localhost);
				      resolved to 127.0.0.1 */
	char source[32];           /* the local address requests come from ("": any) */
} sp_server;

/* Start `serve --tls-cert certdir/tls.crt --tls-key certdir/tls.key --listen
 * 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --log-level info` plus extra
 * (certdir NULL: no --tls-* options, e.g. --manage-certs in extra)
 * (NULL-terminated), stderr to logdir/serve.log. Returns 0 once the log says
 * it is serving; -1 when it exited first (s->status holds the exit status)
 * or did not start in time (then it is killed). */
int sp_start(sp_server *s, const char *certdir, const char *logdir, const char *const *extra);
/* sp_start in two steps: fork and exec only, then wait for the log line. */
int sp_spawn(sp_server *s, const char *certdir, const char *logdir, const char *const *extra);
int sp_wait_serving(sp_server *s);
/* The same with a bound of its own (a server under valgrind starts slowly). */
int sp_wait_serving_ms(sp_server *s, int timeout_ms);
/* sp_spawn with the command line after wrapper (NULL-terminated, e.g.
 * valgrind and its options). */
int sp_spawn_wrapped(sp_server *s, const char *const *wrapper, const char *certdir,
		     const char *logdir, const char *const *extra);
/* serve under valgrind's memcheck (every memory error, and any leak
 * definite, indirect or possible, makes it exit 99), spawned and serving.
 * 1 when it cannot be (valgrind not on PATH, or a sanitizer build: the two
 * do not mix): the caller skips. 0, or -1 when it did not start. */
int sp_memcheck_start(sp_server *s, const char *certdir, const char *logdir,
		      const char *const *extra);
/* SIGTERM a server sp_memcheck_start started and wait for it: 0 when it
 * exited 0 with no report in its log, else -1 with the log on stderr. */
int sp_memcheck_stop(sp_server *s);
/* A loopback TCP port that was free a moment ago (bind port 0, close). */
int sp_free_port(void);
/* Signal the server. */
int sp_signal(const sp_server *s, int sig);
/* Wait at most timeout_ms for the server to exit; its exit status, -1 when
 * it died of a signal, -2 on timeout. */
int sp_wait(sp_server *s, int timeout_ms);
/* SIGTERM, wait, SIGKILL if needed; always reaps. Safe to call twice. */
void sp_stop(sp_server *s);
/* For teardowns: stop the server; -1 (and the reason on stderr) when a
 * server that was running did not exit 0 on SIGTERM, or when its log holds
 * a sanitizer report. */
int sp_stop_checked(sp_server *s);
/* The log so far (malloc'd, "" when empty). */
char *sp_log(const sp_server *s);
/* Poll the log until it contains needle, at most timeout_ms. */
bool sp_log_wait(const sp_server *s, const char *needle, int timeout_ms);
/* How many times needle occurs in the log. */
int sp_log_count(const sp_server *s, const char *needle);

typedef struct sp_resp {
	long status;        /* 0: the transfer failed (see curl_error) */
	char *body;         /* NUL-terminated */
	size_t len;
	char ctype[128];
	long connects;      /* CURLINFO_NUM_CONNECTS */
	char serial[128];   /* the served certificate's serial, lowercase hex without
			       colons or leading zeros (only with SP_CERTINFO) */
	char curl_error[CURL_ERROR_SIZE];
	char connection[32]; /* the Connection: response header, if any */
} sp_resp;

enum {
	SP_NOVERIFY = 1,   /* do not verify the peer (rotation makes a new CA) */
	SP_CERTINFO = 2,   /* read the peer certificate's serial */
	SP_FRESH = 4,      /* a new connection, closed after the transfer */
	SP_SLOW_READ = 8,  /* a 4 KiB receive window, 1 KiB read every 5 ms */
};

/* One HTTPS request to 127.0.0.1:port on handle h (NULL: a new handle just
 * for it). ctype NULL: no Content-Type. Returns 0 or the CURLcode. */
int sp_https(CURL *h, const sp_server *s, const char *method, const char *path,
	     const char *ctype, const char *body, size_t len, int flags, sp_resp *out);
/* Plain HTTP GET to 127.0.0.1:port path. */
int sp_http_get(unsigned short port, const char *path, sp_resp *out);
void sp_resp_free(sp_resp *r);
/* libcurl callbacks filling an sp_resp (userdata): the body, and the
 * Connection header's value. */
size_t sp_curl_body(char *p, size_t sz, size_t n, void *ud);
size_t sp_curl_header(char *p, size_t sz, size_t n, void *ud);

/* Value of the Prometheus sample whose line starts with series (the full
 * "name{labels}" text), 0 when absent. */
double sp_metric(const char *text, const char *series);
/* The same read from s's /metrics now; -1 when it cannot be read. */
double sp_metric_now(const sp_server *s, const char *series);
/* For tt_wait_until: the server (an sp_server) answers /readyz 200. */
bool sp_is_ready(void *server);

/* Base64 decode (standard alphabet); malloc'd, NUL-terminated; NULL on error. */
char *sp_base64_decode(const char *in, size_t *outlen);

#endif
