/*
 * tls_linger.c — the lingering close of connections whose peer may still
 * be sending (tls.h): one thread, started at the first such close, holds
 * their sockets until the peer ends or a bound passes.
 *
 * libmicrohttpd closes a connection right after an answer given before the
 * body (it reads none of it): gnutls_bye sends the close_notify, and
 * close() follows on a socket with the body's first bytes unread, which
 * makes the kernel send a reset. The peer's next write fails; a client that
 * reports that failure rather than the answer already in its buffer (Go's
 * transport may) loses the 413 or 503 that told it why. Here the write side
 * is shut instead (the peer reads the answer, the close_notify and the
 * end), and a duplicate of the socket outlives libmicrohttpd's close.
 *
 * The bounds keep it from holding anything long. The peer needs one round
 * trip after the answer arrives to read it and stop writing: 2 s covers a
 * slow network many times (nginx's lingering_time of 30 s is for browsers
 * on slow links). What the peer sends meanwhile is read and thrown away, up
 * to 16 MiB (over five times the API server's 3 MiB, the biggest body the
 * server takes by default), so that a peer that writes its whole body
 * before it reads gets to its end and its close: a peer's end comes after
 * all it has written, and a socket that stopped reading would never see it
 * (the peer's writes wait behind a window of zero, its close behind them)
 * and would hold its place for the whole 2 s. Past 16 MiB the rest stays
 * in the socket's buffers (the peer's writes wait, they do not fail) and
 * costs no more reads until the peer ends or the 2 s pass.
 *
 * At most 64 sockets linger at once, each an extra descriptor beside
 * --max-connections. Past that the one nearest its time bound is closed to
 * make room: its peer has had the longest to read its answer, the newest
 * has had none (closing the newest at once lost its answer to a reset
 * whenever more than 64 peers were refused within 2 s).
 */
#include "webhook/server/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "webhook/core/clock.h"

struct lingering {
	int fd;          /* the duplicate: the socket lives until it is closed */
	long long until; /* monotonic ms */
	size_t read;     /* bytes read and thrown away */
	bool fresh;      /* put here since the thread last polled: not in its poll */
};

struct tw_linger {
	pthread_mutex_t lock; /* guards everything below */
	bool started, stopping;
	pthread_t thread;
	int wake; /* eventfd: a socket was added, or stop */
	int n;
	struct lingering s[TW_LINGER_MAX];
};

tw_linger *tw_linger_new(void)
{
	tw_linger *l = calloc(1, sizeof(*l));
	if (l) {
		pthread_mutex_init(&l->lock, NULL);
		l->wake = -1;
	}
	return l;
}

/* Wake the thread: a socket was added, or it is to stop. */
static void ring(const tw_linger *l)
{
	uint64_t one = 1;
	ssize_t rc = write(l->wake, &one, sizeof(one));
	(void)rc; /* an eventfd refuses only when its count is full: awake anyway */
}

/* Read what the peer sent since, up to the bound. True when it has ended
 * (its FIN, a reset) and the socket can go. */
static bool drain(struct lingering *g)
{
	char buf[16384];
	while (g->read < TW_LINGER_BYTES) {
		ssize_t n = recv(g->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			g->read += (size_t)n;
			continue;
		}
		return n == 0 || (errno != EAGAIN && errno != EINTR);
	}
	return false; /* past the bound: only its end is waited on */
}

/* One round over the sockets after poll: close those whose peer ended or
 * whose time is up. From the last down, so that a removal (the last slot
 * moves into the one freed) never skips one. */
static void settle(tw_linger *l, const struct pollfd *p, int n)
{
	long long now = tw_mono_ms();
	for (int i = n - 1; i >= 0; i--) {
		struct lingering *g = &l->s[i];
		if (g->fresh)
			continue; /* p[i] was another socket's, since closed for it */
		bool done = now >= g->until || (p[i].revents & (POLLHUP | POLLERR | POLLRDHUP));
		if (!done && (p[i].revents & POLLIN))
			done = drain(g);
		if (!done)
			continue;
		close(g->fd);
		*g = l->s[--l->n];
	}
}

static void *linger_main(void *arg)
{
	tw_linger *l = arg;
	struct pollfd p[TW_LINGER_MAX + 1];
	pthread_mutex_lock(&l->lock);
	while (!l->stopping) {
		int n = l->n;
		long long now = tw_mono_ms(), next = now + TW_LINGER_MS;
		for (int i = 0; i < n; i++) {
			l->s[i].fresh = false;
			bool reading = l->s[i].read < TW_LINGER_BYTES;
			p[i] = (struct pollfd){ .fd = l->s[i].fd, .events = reading ? POLLIN : POLLRDHUP };
			if (l->s[i].until < next)
				next = l->s[i].until;
		}
		p[n] = (struct pollfd){ .fd = l->wake, .events = POLLIN };
		pthread_mutex_unlock(&l->lock);
		poll(p, (nfds_t)n + 1, n ? (int)(next > now ? next - now : 0) : -1);
		if (p[n].revents & POLLIN) {
			uint64_t v;
			ssize_t rc = read(l->wake, &v, sizeof(v));
			(void)rc; /* only to clear it: every socket is looked at below */
		}
		pthread_mutex_lock(&l->lock);
		settle(l, p, n); /* sockets added meanwhile are fresh, untouched */
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Under the lock: the thread, at the first socket. */
static bool start_locked(tw_linger *l)
{
	if (l->started)
		return true;
	l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->wake >= 0 && pthread_create(&l->thread, NULL, linger_main, l) == 0)
		return l->started = true;
	if (l->wake >= 0)
		close(l->wake);
	l->wake = -1;
	return false; /* no lingering: connections close at once, as before */
}

/* Under the lock: a free slot, or the one nearest its time bound, closed
 * (slots are added in time order, and the thread's removals move the last
 * into the freed one, so the oldest is looked for, not assumed first). */
static struct lingering *slot_locked(tw_linger *l)
{
	if (l->n < TW_LINGER_MAX)
		return &l->s[l->n++];
	struct lingering *old = &l->s[0];
	for (int i = 1; i < l->n; i++)
		if (l->s[i].until < old->until)
			old = &l->s[i];
	close(old->fd);
	return old;
}

void tw_linger_add(tw_linger *l, int fd)
{
	if (!l || fd < 0)
		return;
	pthread_mutex_lock(&l->lock);
	int copy = -1;
	if (!l->stopping && start_locked(l))
		copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (copy >= 0) {
		/* after gnutls_bye's close_notify: the peer reads the answer,
		 * then the end of the stream */
		shutdown(copy, SHUT_WR);
		*slot_locked(l) = (struct lingering){
			.fd = copy, .until = tw_mono_ms() + TW_LINGER_MS, .fresh = true
		};
		ring(l);
	}
	pthread_mutex_unlock(&l->lock);
}

int tw_linger_held(tw_linger *l)
{
	pthread_mutex_lock(&l->lock);
	int n = l->n;
	pthread_mutex_unlock(&l->lock);
	return n;
}

void tw_linger_free(tw_linger *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	bool started = l->started;
	pthread_mutex_unlock(&l->lock);
	if (started) {
		ring(l);
		pthread_join(l->thread, NULL);
		close(l->wake);
	}
	for (int i = 0; i < l->n; i++)
		close(l->s[i].fd);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
