/*
 * tls.c — the serving certificate pair: load, check, swap, watch.
 *
 * Pattern: controller-runtime's certwatcher (docs/admission-protocol.md §5.3). inotify on the
 * directories that hold the files (so kubelet's atomic "..data" symlink swap
 * is seen), re-armed after IN_IGNORED, plus a poll every 10 s. A new pair is
 * served only when both files parse and the key matches the certificate;
 * otherwise the last good pair stays and the log says so, once per change.
 */
#include "webhook/server/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/x509.h>
#include <libgen.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"

#define MAX_CHAIN 8
#define MAX_PEM ((size_t)1 << 20)
#define DEBOUNCE_MS 150 /* quiet time after the last event before re-reading */

/* One loaded pair, shared by every connection that started while it was
 * current. */
struct creds {
	atomic_uint refs;
	gnutls_pcert_st pcert[MAX_CHAIN];
	unsigned npcert;
	gnutls_privkey_t key;
	int64_t not_after;
	char serial[80];
};

struct tw_tls {
	char *cert_path, *key_path;
	pthread_mutex_t lock; /* guards cur */
	struct creds *cur;

	pthread_mutex_t reload_lock; /* one reload at a time; guards the fields below */
	tp_buf last_cert, last_key;  /* bytes of the last attempt, good or bad */
	char last_err[512];          /* "" when the last attempt loaded */
	bool tried;                  /* the last_* fields hold an attempt */

	bool watching;
	pthread_t thread;
	int ino, stop;  /* inotify fd, eventfd that ends the watcher */
	int wd[2];      /* watches on the directories of cert and key */
	unsigned poll_ms;

	tw_linger *linger; /* connections closing while their peer sends (tls_linger.c) */
};

/* -------------------------------------------------------------- creds */

static void creds_free(struct creds *c)
{
	for (unsigned i = 0; i < c->npcert; i++)
		gnutls_pcert_deinit(&c->pcert[i]);
	if (c->key)
		gnutls_privkey_deinit(c->key);
	free(c);
}

static void creds_release(struct creds *c)
{
	if (c && atomic_fetch_sub(&c->refs, 1) == 1)
		creds_free(c);
}

/* The pair's public keys, as DER, must be the same bytes. */
static int key_matches(gnutls_pubkey_t cert_pub, gnutls_privkey_t key)
{
	gnutls_pubkey_t pub = NULL;
	gnutls_datum_t a = { NULL, 0 }, b = { NULL, 0 };
	int same = 0;
	if (gnutls_pubkey_init(&pub) == 0 && gnutls_pubkey_import_privkey(pub, key, 0, 0) == 0 &&
	    gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &a) == 0 &&
	    gnutls_pubkey_export2(cert_pub, GNUTLS_X509_FMT_DER, &b) == 0)
		same = a.size == b.size && !memcmp(a.data, b.data, a.size);
	gnutls_free(a.data);
	gnutls_free(b.data);
	if (pub)
		gnutls_pubkey_deinit(pub);
	return same;
}

/* notAfter and serial of the leaf: 0, or TW_EFAILED when GnuTLS cannot
 * decode it. */
static int read_leaf(struct creds *c)
{
	gnutls_x509_crt_t crt;
	if (gnutls_x509_crt_init(&crt))
		return TW_EFAILED;
	int rc = gnutls_x509_crt_import(crt, &c->pcert[0].cert, GNUTLS_X509_FMT_DER);
	if (rc == 0) {
		unsigned char raw[40];
		size_t n = sizeof(raw);
		c->not_after = (int64_t)gnutls_x509_crt_get_expiration_time(crt);
		if (gnutls_x509_crt_get_serial(crt, raw, &n) == 0) {
			for (size_t i = 0; i < n && 2 * i + 2 < sizeof(c->serial); i++)
				snprintf(c->serial + 2 * i, 3, "%02x", raw[i]);
		}
	}
	gnutls_x509_crt_deinit(crt);
	return rc ? TW_EFAILED : 0;
}

static int creds_load(const tp_buf *cert, const tp_buf *key, const char *cert_path,
		      const char *key_path, struct creds **out, char *err, size_t errlen)
{
	struct creds *c = calloc(1, sizeof(*c));
	if (!c)
		return snprintf(err, errlen, "out of memory loading the certificate"), TP_ENOMEM;
	gnutls_datum_t d = { (unsigned char *)cert->data, (unsigned)cert->len };
	unsigned n = MAX_CHAIN;
	int rc = gnutls_pcert_list_import_x509_raw(c->pcert, &n, &d, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0) {
		snprintf(err, errlen, "%s holds no readable PEM certificate chain (%s)", cert_path,
			 gnutls_strerror(rc));
		goto fail;
	}
	c->npcert = n;
	d = (gnutls_datum_t){ (unsigned char *)key->data, (unsigned)key->len };
	if ((rc = gnutls_privkey_init(&c->key)) == 0)
		rc = gnutls_privkey_import_x509_raw(c->key, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "%s holds no readable unencrypted PEM private key (%s)",
			 key_path, gnutls_strerror(rc));
		goto fail;
	}
	if (!key_matches(c->pcert[0].pubkey, c->key)) {
		snprintf(err, errlen, "the key in %s does not belong to the certificate in %s",
			 key_path, cert_path);
		goto fail;
	}
	if (read_leaf(c)) {
		snprintf(err, errlen, "%s: the first certificate cannot be decoded", cert_path);
		goto fail;
	}
	atomic_init(&c->refs, 1);
	*out = c;
	return 0;
fail:
	creds_free(c);
	return TW_EFAILED;
}

/* ------------------------------------------------------------- reload */

static int read_all(const char *path, tp_buf *b, char *err, size_t errlen)
{
	tp_buf_reset(b);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno)),
		       TW_EFAILED;
	char chunk[8192];
	ssize_t n;
	int rc = 0;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || tp_buf_add(b, chunk, (size_t)n)) {
			snprintf(err, errlen, "cannot read %s: %s", path,
				 n < 0 ? strerror(errno) : "larger than 1 MiB, not a PEM file");
			rc = TW_EFAILED;
			break;
		}
	}
	close(fd);
	if (!rc && !b->data)
		tp_buf_add(b, "", 0); /* an empty file: data "" so comparisons work */
	return rc;
}

static bool same_bytes(const tp_buf *a, const tp_buf *b)
{
	return a->len == b->len && (a->len == 0 || !memcmp(a->data, b->data, a->len));
}

static void format_time(int64_t t, char *out, size_t n)
{
	struct tm tm;
	time_t tt = (time_t)t;
	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void log_loaded(const struct creds *c, const char *cert_path, bool first)
{
	char when[32];
	format_time(c->not_after, when, sizeof(when));
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_INFO | TW_LOG_ALWAYS,
		     first ? "serving certificate loaded" : "serving certificate reloaded; new "
							    "handshakes use it");
	tw_log_str(&l, "cert", cert_path);
	tw_log_str(&l, "serial", c->serial);
	tw_log_str(&l, "not_after", when);
	tw_log_end(&l);
	if (c->not_after < (int64_t)time(NULL))
		tw_log(TW_LOG_ERROR, "serving certificate %s expired at %s; API servers will refuse "
				     "it: renew it (trainer-webhook certs generate, or cert-manager)",
		       cert_path, when);
}

static void log_broken(tw_tls *t, const char *why)
{
	char serial[80] = "", when[32] = "";
	pthread_mutex_lock(&t->lock);
	if (t->cur) {
		snprintf(serial, sizeof(serial), "%s", t->cur->serial);
		format_time(t->cur->not_after, when, sizeof(when));
	}
	pthread_mutex_unlock(&t->lock);
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_ERROR,
		     "new serving certificate pair is broken; keeping the last good pair: "
		     "write a matching tls.crt and tls.key (PEM) and it is picked up without a "
		     "restart");
	tw_log_str(&l, "error", why);
	tw_log_str(&l, "serial", serial);
	tw_log_str(&l, "not_after", when);
	tw_log_end(&l);
}

static void swap_in(tw_tls *t, struct creds *c)
{
	pthread_mutex_lock(&t->lock);
	struct creds *old = t->cur;
	t->cur = c;
	pthread_mutex_unlock(&t->lock);
	creds_release(old);
	tw_metrics_cert_set(c->not_after);
}

/* Serve the pair in cert/key (taken) unless it is what the last attempt
 * saw. The caller holds reload_lock. 1 a new pair is served, 0 nothing new,
 * TW_EFAILED broken (err; the last good pair stays). rc is the read's result. */
static int consider_locked(tw_tls *t, int rc, tp_buf *cert, tp_buf *key, const char *cert_label,
			   const char *key_label, char *err, size_t errlen)
{
	bool unchanged = same_bytes(cert, &t->last_cert) && same_bytes(key, &t->last_key);
	if (t->tried && unchanged && (rc == 0 || !strcmp(err, t->last_err))) {
		tp_buf_free(cert);
		tp_buf_free(key);
		return 0; /* nothing new since the last attempt */
	}
	struct creds *c = NULL;
	if (!rc)
		rc = creds_load(cert, key, cert_label, key_label, &c, err, errlen);
	tp_buf_free(&t->last_cert);
	tp_buf_free(&t->last_key);
	t->last_cert = *cert;
	t->last_key = *key;
	snprintf(t->last_err, sizeof(t->last_err), "%s", rc ? err : "");
	t->tried = true;
	if (rc)
		return TW_EFAILED;
	bool first = t->cur == NULL;
	swap_in(t, c);
	log_loaded(c, cert_label, first);
	return 1;
}

/* One attempt from the files; the caller holds reload_lock. */
static int reload_locked(tw_tls *t, char *err, size_t errlen)
{
	tp_buf cert = TP_BUF_INIT(MAX_PEM), key = TP_BUF_INIT(MAX_PEM);
	int rc = read_all(t->cert_path, &cert, err, errlen);
	if (!rc)
		rc = read_all(t->key_path, &key, err, errlen);
	return consider_locked(t, rc, &cert, &key, t->cert_path, t->key_path, err, errlen);
}

int tw_tls_set_pem(tw_tls *t, const char *cert, const char *key, const char *source,
		   char *err, size_t errlen)
{
	tp_buf c = TP_BUF_INIT(MAX_PEM), k = TP_BUF_INIT(MAX_PEM);
	int rc = 0;
	if (tp_buf_adds(&c, cert ? cert : "") || tp_buf_adds(&k, key ? key : "")) {
		snprintf(err, errlen, "%s: the pair is larger than 1 MiB", source);
		rc = TW_EFAILED;
	}
	pthread_mutex_lock(&t->reload_lock);
	rc = consider_locked(t, rc, &c, &k, source, source, err, errlen);
	pthread_mutex_unlock(&t->reload_lock);
	if (rc != 0)
		tw_metrics_cert_reload(rc > 0);
	return rc;
}

int tw_tls_serve_pem(void *tls, const char *cert, const char *key, const char *source,
		     char *err, size_t errlen)
{
	return tw_tls_set_pem(tls, cert, key, source, err, errlen);
}

int tw_tls_reload(tw_tls *t)
{
	if (!t->cert_path)
		return 0;
	char err[512] = "";
	pthread_mutex_lock(&t->reload_lock);
	int rc = reload_locked(t, err, sizeof(err));
	pthread_mutex_unlock(&t->reload_lock);
	if (rc != 0)
		tw_metrics_cert_reload(rc > 0);
	if (rc < 0)
		log_broken(t, err);
	return rc;
}

static tw_tls *tls_alloc(void)
{
	tw_tls *t = calloc(1, sizeof(*t));
	if (t && !(t->linger = tw_linger_new())) {
		free(t);
		t = NULL;
	}
	if (!t)
		return NULL;
	tp_buf_init(&t->last_cert, MAX_PEM);
	tp_buf_init(&t->last_key, MAX_PEM);
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->reload_lock, NULL);
	t->ino = t->stop = -1;
	t->wd[0] = t->wd[1] = -1;
	return t;
}

int tw_tls_new(tw_tls **out)
{
	*out = tls_alloc();
	return *out ? 0 : -1;
}

int tw_tls_open(tw_tls **out, const char *cert_path, const char *key_path, char *err,
		size_t errlen)
{
	tw_tls *t = tls_alloc();
	if (!t)
		return snprintf(err, errlen, "out of memory"), -1;
	t->cert_path = strdup(cert_path);
	t->key_path = strdup(key_path);
	tp_buf_init(&t->last_key, MAX_PEM);
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->reload_lock, NULL);
	t->ino = t->stop = -1;
	t->wd[0] = t->wd[1] = -1;
	int rc = -1;
	if (t->cert_path && t->key_path) {
		pthread_mutex_lock(&t->reload_lock);
		rc = reload_locked(t, err, errlen);
		pthread_mutex_unlock(&t->reload_lock);
	}
	if (rc <= 0) {
		if (!t->cert_path || !t->key_path)
			snprintf(err, errlen, "out of memory");
		tw_tls_close(t);
		return TW_EFAILED;
	}
	tw_metrics_cert_reload(true);
	*out = t;
	return 0;
}

void tw_tls_close(tw_tls *t)
{
	if (!t)
		return;
	tw_tls_unwatch(t);
	tw_linger_free(t->linger);
	creds_release(t->cur);
	tp_buf_free(&t->last_cert);
	tp_buf_free(&t->last_key);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->reload_lock);
	free(t->cert_path);
	free(t->key_path);
	free(t);
}

int64_t tw_tls_not_after(tw_tls *t)
{
	pthread_mutex_lock(&t->lock);
	int64_t v = t->cur ? t->cur->not_after : 0;
	pthread_mutex_unlock(&t->lock);
	return v;
}

bool tw_tls_covers(tw_tls *t, const char *host)
{
	pthread_mutex_lock(&t->lock);
	struct creds *c = t->cur;
	if (c)
		atomic_fetch_add(&c->refs, 1);
	pthread_mutex_unlock(&t->lock);
	if (!c)
		return false;
	gnutls_x509_crt_t crt;
	bool ok = false;
	if (gnutls_x509_crt_init(&crt) == 0) {
		ok = gnutls_x509_crt_import(crt, &c->pcert[0].cert, GNUTLS_X509_FMT_DER) == 0 &&
		     gnutls_x509_crt_check_hostname2(crt, host, GNUTLS_VERIFY_DO_NOT_ALLOW_WILDCARDS) != 0;
		gnutls_x509_crt_deinit(crt);
	}
	creds_release(c);
	return ok;
}

void tw_tls_serial(tw_tls *t, char *out, size_t n)
{
	pthread_mutex_lock(&t->lock);
	snprintf(out, n, "%s", t->cur ? t->cur->serial : "");
	pthread_mutex_unlock(&t->lock);
}

/* ---------------------------------------------------------- MHD hooks */

void tw_tls_conn_started(tw_tls *t, struct MHD_Connection *c, void **socket_context)
{
	tw_tls_conn *conn = calloc(1, sizeof(*conn));
	*socket_context = conn;
	if (!conn)
		return; /* no pair for it: its handshake fails */
	pthread_mutex_lock(&t->lock);
	struct creds *cr = t->cur;
	if (cr)
		atomic_fetch_add(&cr->refs, 1);
	pthread_mutex_unlock(&t->lock);
	conn->creds = cr;
	conn->tls = t;
	const union MHD_ConnectionInfo *si =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const union MHD_ConnectionInfo *fi =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	conn->session = si ? (gnutls_session_t)si->tls_session : NULL;
	conn->fd = fi ? fi->connect_fd : -1;
	conn->mhd = c;
	tw_head_init(&conn->head);
	if (conn->session) {
		tw_tls_recv_register(conn);
		tw_tls_ahead_attach(conn);
	}
}

void tw_tls_conn_closed(void **socket_context)
{
	tw_tls_conn *conn = *socket_context;
	if (conn) {
		tw_tls_recv_unregister(conn);
		if (tw_tls_recv_peer_sending(conn))
			tw_linger_add(conn->tls->linger, conn->fd);
		tw_tls_ahead_free(conn);
		creds_release(conn->creds);
	}
	free(conn);
	*socket_context = NULL;
}

/* GnuTLS's gnutls_certificate_retrieve_function2: -1 means "no certificate",
 * the API's own value, which fails the handshake. */
int tw_tls_cert_callback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn,
			 int nreqs, const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
			 gnutls_pcert_st **pcert, unsigned int *pcert_length,
			 gnutls_privkey_t *privkey)
{
	(void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
	/* libmicrohttpd sets the session pointer to its connection. */
	struct MHD_Connection *mc = gnutls_session_get_ptr(session);
	const union MHD_ConnectionInfo *ci =
		mc ? MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
	const tw_tls_conn *conn = ci ? ci->socket_context : NULL;
	struct creds *c = conn ? conn->creds : NULL;
	if (!c)
		return -1; /* no pair: fail this handshake rather than serve nothing */
	/* gnutls does not free what a retrieve_function2 returns; the connection's
	 * reference keeps it alive until the connection closes. */
	*pcert = c->pcert;
	*pcert_length = c->npcert;
	*privkey = c->key;
	return 0;
}

/* ------------------------------------------------------------ watcher */

#define WATCH_MASK                                                                   \
	(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_DELETE | IN_ATTRIB | \
	 IN_DELETE_SELF | IN_MOVE_SELF)

static void arm_watch(tw_tls *t, int i)
{
	if (t->wd[i] >= 0)
		return;
	char *copy = strdup(i == 0 ? t->cert_path : t->key_path);
	if (!copy)
		return;
	/* A folder that is gone now is retried on the next event or poll. */
	t->wd[i] = inotify_add_watch(t->ino, dirname(copy), WATCH_MASK);
	free(copy);
}

/* Read every queued event; forget a watch the kernel dropped (IN_IGNORED:
 * the folder was deleted or moved) so that arm_watch adds it again. */
static void drain_events(tw_tls *t)
{
	_Alignas(struct inotify_event) char buf[4096];
	ssize_t n;
	while ((n = read(t->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			for (int i = 0; i < 2; i++)
				if ((ev->mask & IN_IGNORED) && t->wd[i] == ev->wd)
					t->wd[i] = -1;
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* After an event, wait until the folder has been quiet for DEBOUNCE_MS (a
 * writer replacing cert then key) or stop was asked. Returns false on stop. */
static bool settle(tw_tls *t)
{
	for (int rounds = 0; rounds < 20; rounds++) {
		struct pollfd p[2] = { { t->ino, POLLIN, 0 }, { t->stop, POLLIN, 0 } };
		int r = poll(p, 2, DEBOUNCE_MS);
		if (r > 0 && (p[1].revents & POLLIN))
			return false;
		if (r <= 0)
			return true;
		drain_events(t);
	}
	return true;
}

static void *watch_main(void *arg)
{
	tw_tls *t = arg;
	for (;;) {
		arm_watch(t, 0);
		arm_watch(t, 1);
		struct pollfd p[2] = { { t->ino, POLLIN, 0 }, { t->stop, POLLIN, 0 } };
		int r = poll(p, 2, (int)t->poll_ms);
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0 && (p[1].revents & POLLIN))
			break;
		if (r > 0 && (p[0].revents & POLLIN)) {
			drain_events(t);
			if (!settle(t))
				break;
		}
		tw_tls_reload(t); /* an event, or the poll interval passed */
	}
	return NULL;
}

int tw_tls_watch(tw_tls *t, unsigned poll_ms)
{
	if (!t->cert_path)
		return 0; /* a pair from memory: whoever sets it keeps it current */
	t->poll_ms = poll_ms ? poll_ms : TW_TLS_POLL_MS;
	t->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	t->stop = eventfd(0, EFD_CLOEXEC);
	if (t->ino < 0 || t->stop < 0 || pthread_create(&t->thread, NULL, watch_main, t)) {
		tw_log(TW_LOG_ERROR, "cannot watch the certificate files (%s); they will not be "
				     "reloaded: restart the server after a rotation",
		       strerror(errno));
		if (t->ino >= 0)
			close(t->ino);
		if (t->stop >= 0)
			close(t->stop);
		t->ino = t->stop = -1;
		return TW_EFAILED;
	}
	t->watching = true;
	return 0;
}

void tw_tls_unwatch(tw_tls *t)
{
	if (!t->watching)
		return;
	uint64_t one = 1;
	if (write(t->stop, &one, sizeof(one)) < 0)
		tw_log(TW_LOG_ERROR, "cannot stop the certificate watcher: %s", strerror(errno));
	pthread_join(t->thread, NULL);
	close(t->ino);
	close(t->stop);
	t->ino = t->stop = -1;
	t->wd[0] = t->wd[1] = -1;
	t->watching = false;
}
