/*
 * webhook/server/server.c — the HTTPS daemon's lifecycle: libmicrohttpd
 * start-up on the listening socket (listen.c), the connection limits, and
 * graceful drain. What requests read (store, CRDs, readiness) is state.c;
 * what they are answered with is http.c.
 *
 * libmicrohttpd runs a pool of worker threads, each with its own poll() loop
 * over the shared listen socket; a connection stays on the thread that
 * accepted it. Decisions that may take long run on the deciders
 * (deciders.h) while the connection waits suspended (http_decide.c says
 * which); the daemon is stopped only after them, since libmicrohttpd cannot
 * stop with a connection suspended.
 */
#include "webhook/server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "webhook/core/log.h"
#include "webhook/core/clock.h"
#include "webhook/metrics/metrics.h"
#include "webhook/server/http.h"
#include "webhook/server/listen.h"
#include "webhook/admission/admission.h"

/* ------------------------------------------------------------- daemon */

/* The memory a wave of connections left in malloc's heaps goes back to
 * the system once it has ebbed: when the open connections fall to a
 * quarter of their most since the last trim, and that most was a wave (64
 * or more). Never on the path of the API server's few kept connections. */
#define TW_SERVER_TRIM_WAVE 64u

static void connection_closed(tw_server *s)
{
	unsigned now = atomic_fetch_sub(&s->conns, 1) - 1, peak = atomic_load(&s->conns_peak);
	if (peak >= TW_SERVER_TRIM_WAVE && now <= peak / 4 &&
	    atomic_compare_exchange_strong(&s->conns_peak, &peak, now))
		malloc_trim(0);
}

static void connection_started(tw_server *s)
{
	unsigned now = atomic_fetch_add(&s->conns, 1) + 1, peak = atomic_load(&s->conns_peak);
	while (now > peak && !atomic_compare_exchange_weak(&s->conns_peak, &peak, now))
		;
}

/* A connection's own memory (its pool, its TLS session) is held against
 * the budget while it is open (budget.h). */
static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	tw_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		tw_budget_conn_open(&s->budget);
		connection_started(s);
		tw_tls_conn_started(s->opt.tls, c, socket_context);
	} else {
		tw_tls_conn_closed(socket_context);
		tw_budget_conn_close(&s->budget);
		connection_closed(s);
	}
}

static void refused(void);

/* A connection is accepted only when the budget has room for it: closed
 * at once, before its handshake, when connections hold their half. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	(void)addr;
	(void)len;
	tw_server *s = cls;
	if (tw_budget_conn_fits(&s->budget))
		return MHD_YES;
	refused();
	return MHD_NO;
}

/* A flood of refused connections is counted, and said at most every 10 s. */
static void refused(void)
{
	static atomic_llong last_ms, since;
	tw_metrics_connection_refused();
	atomic_fetch_add(&since, 1);
	long long now = tw_mono_ms(), prev = atomic_load(&last_ms);
	if (now - prev < 10000 || !atomic_compare_exchange_strong(&last_ms, &prev, now))
		return;
	tw_log(TW_LOG_WARN, "%lld connection(s) closed at once in the last 10 s: over "
	       "--max-connections, --max-connections-per-peer or the connections' half "
	       "of --memory-budget", (long long)atomic_exchange(&since, 0));
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char msg[512];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!strncmp(msg, "Server reached connection limit", 31)) {
		refused(); /* libmicrohttpd's words for both limits */
		return;
	}
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	/* Mostly clients that fail the TLS handshake or break HTTP: theirs to fix,
	 * so a warning, not an error. */
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_WARN, "libmicrohttpd");
	tw_log_str(&l, "detail", msg);
	tw_log_end(&l);
}

/* libmicrohttpd's per-connection pool holds the request headers and a read
 * buffer, and is zeroed between keep-alive requests: 16 KiB fits the API
 * server's headers with room to spare (bodies are copied out as they come)
 * and costs a quarter of the default's memset per request. */
#define TW_SERVER_CONN_POOL ((size_t)16 * 1024)

static struct MHD_Daemon *start_daemon(tw_server *s, int fd)
{
	/* poll(), not epoll. libmicrohttpd 0.9.75's epoll loop marks a
	 * connection read-ready and clears the mark only when a TLS record read
	 * returns EAGAIN; gnutls_handshake() returning EAGAIN leaves it set, so a
	 * peer that connects and says nothing (or half a ClientHello) keeps the
	 * connection on the ready list and epoll_wait() at a zero timeout: 500
	 * idle and 100 half-handshake peers held both cores (5.98 s of CPU in
	 * 3 s). The poll() loop asks the kernel each round: 0.00 s for the same
	 * peers (test_server_idle). Its cost is one pollfd per connection and
	 * round, nothing at the few connections the API server keeps.
	 *
	 * The daemon's timeout is the handshake timeout; a connection's first
	 * request moves it to the idle timeout (http.c, conn_in_use), so the
	 * silent peers of a flood sit in libmicrohttpd's sorted timeout list and
	 * only the API server's connections in the per-connection one. */
	unsigned flags = MHD_USE_TLS | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem pool[] = {
		{ s->opt.threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END,
		  (intptr_t)s->opt.threads, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	return MHD_start_daemon(
		flags, 0, accept_policy, s, tw_http_access, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
		NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_HTTPS_CERT_CALLBACK,
		tw_tls_cert_callback, MHD_OPTION_HTTPS_PRIORITIES, TW_TLS_PRIORITIES,
		MHD_OPTION_CONNECTION_TIMEOUT, s->opt.handshake_timeout_s,
		MHD_OPTION_CONNECTION_LIMIT, s->opt.max_conns ? s->opt.max_conns : 1024u,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->opt.max_per_peer,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		TW_SERVER_CONN_POOL, MHD_OPTION_NOTIFY_COMPLETED, tw_http_completed, s,
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s, MHD_OPTION_ARRAY, pool,
		MHD_OPTION_END);
}

/* Memory that requests give back goes back to the system. glibc raises its
 * mmap threshold to the size of the largest block freed (up to 32 MiB), so
 * after one 3 MiB body every later body and arena block came from the heaps
 * of the threads that made them, and stayed there: 262 MiB resident after
 * 30 bodies of 2.9 MB had been answered. A fixed threshold keeps blocks of
 * 128 KiB and more in mmap (freed at once), and the heaps are trimmed past
 * 128 KiB free at their top. */
#define TW_SERVER_MMAP_THRESHOLD (128 * 1024)

static void malloc_gives_back(void)
{
	mallopt(M_MMAP_THRESHOLD, TW_SERVER_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, TW_SERVER_MMAP_THRESHOLD);
}

int tw_server_start(const tw_server_opts *o, tw_server **out, char *err, size_t errlen)
{
	tw_server *s = calloc(1, sizeof(*s));
	if (!s) {
		tp_store_free(o->store);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	pthread_mutex_init(&s->store_lock, NULL);
	s->opt = *o;
	s->opt.store = NULL;
	/* Store and gate are in place before the port opens: no request ever
	 * finds the server up but without its store. */
	if (o->store)
		tw_server_set_store(s, o->store);
	tw_server_set_crds(s, o->crds);
	s->opt.base.opt.crds = NULL; /* each request takes the current set */
	for (int i = 0; i < TW_READY__COUNT; i++) {
		s->ready[i] = o->ready[i];
		s->ready_arg[i] = o->ready_arg[i];
	}
	if (!s->opt.base.max_body)
		s->opt.base.max_body = TW_DEFAULT_MAX_BODY;
	if (!s->opt.threads)
		s->opt.threads = 1;
	if (!s->opt.deciders)
		s->opt.deciders = 4;
	tw_budget_init(&s->budget, s->opt.memory_budget);
	tw_metrics_budget_set(s->opt.memory_budget);
	if (!s->opt.read_timeout_s)
		s->opt.read_timeout_s = TW_SERVER_READ_TIMEOUT_S;
	/* every peer with memory held has a request in flight on a connection */
	if (!(s->peers = tw_peers_new(s->opt.max_conns ? s->opt.max_conns : 1024u))) {
		snprintf(err, errlen, "out of memory");
		tw_server_free(s);
		return TP_ENOMEM;
	}
	malloc_gives_back();
	int rc = tw_deciders_start(s->opt.deciders, &s->deciders);
	if (rc) {
		snprintf(err, errlen, "cannot start %u decision threads", s->opt.deciders);
		tw_server_free(s);
		return rc;
	}
	if (!s->opt.handshake_timeout_s)
		s->opt.handshake_timeout_s = TW_SERVER_HANDSHAKE_TIMEOUT_S;
	if (!s->opt.idle_timeout_s)
		s->opt.idle_timeout_s = TW_SERVER_IDLE_TIMEOUT_S;
	int fd;
	if ((rc = tw_listen_socket(o->listen, &fd, &s->port, err, errlen))) {
		tw_server_free(s);
		return rc;
	}
	if (!tw_tls_recv_active())
		tw_log(TW_LOG_ERROR | TW_LOG_ALWAYS, "the HTTP framing check is not in the path of "
		       "requests (this binary's gnutls_record_recv is not the one libmicrohttpd "
		       "calls): malformed requests reach libmicrohttpd's lenient parser; build "
		       "with the Makefile (dynamic linking)");
	s->daemon = start_daemon(s, fd);
	if (!s->daemon) {
		close(fd);
		snprintf(err, errlen,
			 "libmicrohttpd could not start the HTTPS server on %s (see its message "
			 "above); check --threads and the certificate",
			 o->listen);
		tw_server_free(s);
		return TW_EFAILED;
	}
	*out = s;
	return 0;
}

unsigned short tw_server_port(const tw_server *s)
{
	return s->port;
}

/* Wait until no request has been in flight for two checks in a row (a
 * request whose headers were being read at the first check shows up by the
 * second), or until grace_ms passed. Returns the requests still in flight. */
static int wait_idle(tw_server *s, unsigned grace_ms)
{
	long long t0 = tw_mono_ms();
	int quiet = 0;
	while (tw_mono_ms() - t0 < (long long)grace_ms) {
		if (atomic_load(&s->in_flight) == 0) {
			if (++quiet >= 3)
				return 0;
		} else {
			quiet = 0;
		}
		struct timespec step = { 0, 20 * 1000 * 1000 };
		nanosleep(&step, NULL);
	}
	return atomic_load(&s->in_flight);
}

/* The deciders first: a decision still running ends and resumes its
 * connection, queued ones are answered 503; then the daemon. */
static void stop_daemon(tw_server *s)
{
	tw_deciders_stop(s->deciders);
	s->deciders = NULL;
	if (s->daemon)
		MHD_stop_daemon(s->daemon);
	s->daemon = NULL;
}

void tw_server_drain(tw_server *s, unsigned grace_ms)
{
	if (!s->daemon)
		return;
	/* libmicrohttpd's threads may still poll the listening socket for a
	 * while: closing it now lets a poll() loop see an invalid (or reused)
	 * descriptor. shutdown() stops it listening at once (new connections
	 * are refused, so clients go to another replica); close() waits until
	 * the threads are gone. Only then do answers say "Connection: close":
	 * a client told to reconnect before the port stopped listening could
	 * land in the accept queue that shutdown() resets. */
	MHD_socket fd = MHD_quiesce_daemon(s->daemon);
	if (fd != MHD_INVALID_SOCKET)
		shutdown(fd, SHUT_RDWR);
	atomic_store(&s->draining, true);
	int left = wait_idle(s, grace_ms);
	tw_log_line l;
	tw_log_begin(&l, (left ? TW_LOG_WARN : TW_LOG_INFO) | TW_LOG_ALWAYS,
		     left ? "shutdown grace period over; closing requests still in flight "
			    "(raise --shutdown-grace if this is routine)"
			  : "requests in flight finished; closing connections");
	tw_log_int(&l, "in_flight", left);
	tw_log_end(&l);
	stop_daemon(s);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
}

void tw_server_free(tw_server *s)
{
	if (!s)
		return;
	stop_daemon(s);
	tw_server_store_release(s->store);
	tp_crds_unref(s->crds);
	tw_peers_free(s->peers);
	pthread_mutex_destroy(&s->store_lock);
	free(s);
}
