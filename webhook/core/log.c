/*
 * log.c — JSON lines on stderr.
 *
 * Values that come from requests (uid, names) are untrusted bytes: they are
 * escaped for JSON and invalid UTF-8 becomes U+FFFD, so every line stays a
 * valid JSON object that a log pipeline can parse.
 */
#include "webhook/core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "webhook/core/clock.h"

static atomic_int log_level = TW_LOG_INFO;
static atomic_int log_fd = 2;

static const char *const level_names[] = { "debug", "info", "warn", "error" };

int tw_log_level_parse(const char *s, tw_log_level *out)
{
	if (!s)
		return TP_EINVAL;
	for (int i = 0; i < 4; i++) {
		if (!strcmp(s, level_names[i])) {
			*out = (tw_log_level)i;
			return 0;
		}
	}
	if (!strcmp(s, "warning")) {
		*out = TW_LOG_WARN;
		return 0;
	}
	return TP_EINVAL;
}

const char *tw_log_level_name(tw_log_level lvl)
{
	return (unsigned)lvl < 4 ? level_names[lvl] : "info";
}

void tw_log_set_level(tw_log_level lvl)
{
	atomic_store(&log_level, (int)lvl);
}

void tw_log_set_fd(int fd)
{
	tw_log_flush(); /* what was batched for the old descriptor goes there */
	atomic_store(&log_fd, fd);
}

bool tw_log_enabled(int lvl)
{
	return (lvl & TW_LOG_ALWAYS) || (lvl & 0xff) >= atomic_load(&log_level);
}

/* Room always kept for a string's closing quote and the line's tail. */
#define LOG_RESERVE 32

/* Append raw bytes; bytes that would eat into the reserve are dropped and the
 * line is marked truncated (every later append is then dropped too). */
static void put(tw_log_line *l, const char *p, size_t n)
{
	if (l->truncated || l->len + n > TW_LOG_LINE_MAX - LOG_RESERVE) {
		l->truncated = true;
		return;
	}
	memcpy(l->buf + l->len, p, n);
	l->len += n;
}

static void puts_raw(tw_log_line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is invalid. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static void put_escaped(tw_log_line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	put(l, "\"", 1);
	if (l->truncated)
		return; /* not even the opening quote fitted */
	const unsigned char *p = (const unsigned char *)s;
	while (*p && !l->truncated) {
		if (*p == '"' || *p == '\\') {
			char e[2] = { '\\', (char)*p };
			put(l, e, 2);
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			char e[6] = { '\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15] };
			put(l, e, 6);
			p++;
		} else {
			size_t n = utf8_len(p);
			if (n)
				put(l, (const char *)p, n);
			else
				put(l, "\\ufffd", 6);
			p += n ? n : 1;
		}
	}
	/* Close the string even when it was cut, so the line stays JSON. */
	l->buf[l->len++] = '"';
}

static void put_time(tw_log_line *l)
{
	struct timespec ts;
	struct tm tm;
	char b[40];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t n = strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(b + n, sizeof(b) - n, ".%03ldZ", ts.tv_nsec / 1000000);
	put(l, "\"", 1);
	puts_raw(l, b);
	put(l, "\"", 1);
}

void tw_log_begin(tw_log_line *l, int lvl, const char *msg)
{
	l->len = 0;
	l->truncated = false;
	l->on = tw_log_enabled(lvl);
	if (!l->on)
		return;
	puts_raw(l, "{\"time\":");
	put_time(l);
	puts_raw(l, ",\"level\":\"");
	puts_raw(l, tw_log_level_name((tw_log_level)(lvl & 0xff)));
	puts_raw(l, "\",\"msg\":");
	put_escaped(l, msg ? msg : "");
}

/* Writes ,"key": and returns true, or rolls the line back to where it was
 * and returns false when the key does not fit whole. */
static bool put_key(tw_log_line *l, const char *key)
{
	if (!l->on || l->truncated)
		return false;
	size_t mark = l->len;
	put(l, ",", 1);
	put_escaped(l, key);
	put(l, ":", 1);
	if (l->truncated)
		l->len = mark;
	return !l->truncated;
}

void tw_log_str(tw_log_line *l, const char *key, const char *val)
{
	size_t mark = l->len;
	if (!val || !put_key(l, key))
		return;
	size_t vmark = l->len;
	put_escaped(l, val);
	if (l->len == vmark)
		l->len = mark; /* no room for the value: drop the key as well */
}

/* A bare token (number, true, false) goes in whole or not at all. */
static void put_token(tw_log_line *l, const char *key, const char *tok)
{
	size_t mark = l->len;
	if (!put_key(l, key))
		return;
	puts_raw(l, tok);
	if (l->truncated)
		l->len = mark;
}

void tw_log_int(tw_log_line *l, const char *key, long long val)
{
	char b[32];
	snprintf(b, sizeof(b), "%lld", val);
	put_token(l, key, b);
}

void tw_log_bool(tw_log_line *l, const char *key, bool val)
{
	put_token(l, key, val ? "true" : "false");
}

/* Request lines are buffered and written in batches (one write per 100 ms
 * under load instead of one per request: a system call off every answer);
 * any other line flushes them first, so the order holds. */
#define BATCH_BYTES ((size_t)64 * 1024)
#define BATCH_MS 100

static pthread_mutex_t batch_lock = PTHREAD_MUTEX_INITIALIZER;
static char batch[BATCH_BYTES];
static size_t batch_len;
static pthread_once_t flusher_once = PTHREAD_ONCE_INIT;

/* The flusher thread, started by the first batched line and joined when the
 * process exits (atexit), so that nothing of it is left behind: a detached
 * thread still running at exit left its thread block to valgrind as
 * "possibly lost" (336 bytes, from pthread_create). Guarded by batch_lock. */
static pthread_cond_t flusher_wake;
static pthread_t flusher_thread;
static bool flusher_started, flusher_stopping;

static void write_all(const char *p, size_t left)
{
	int fd = atomic_load(&log_fd);
	while (left) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* nowhere left to report a broken stderr */
		p += w;
		left -= (size_t)w;
	}
}

/* batch_lock held. */
static void flush_locked(void)
{
	write_all(batch, batch_len);
	batch_len = 0;
}

void tw_log_flush(void)
{
	pthread_mutex_lock(&batch_lock);
	flush_locked();
	pthread_mutex_unlock(&batch_lock);
}

/* Writes the batch every BATCH_MS until the process exits. */
static void *flusher(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&batch_lock);
	while (!flusher_stopping) {
		struct timespec until = tw_mono_after_ms(BATCH_MS);
		pthread_cond_timedwait(&flusher_wake, &batch_lock, &until);
		flush_locked();
	}
	pthread_mutex_unlock(&batch_lock);
	return NULL;
}

/* atexit: stop the flusher, join it, write what is left. */
static void flusher_end(void)
{
	pthread_mutex_lock(&batch_lock);
	bool started = flusher_started;
	flusher_stopping = true;
	pthread_cond_signal(&flusher_wake);
	pthread_mutex_unlock(&batch_lock);
	if (started)
		pthread_join(flusher_thread, NULL);
	tw_log_flush(); /* nothing buffered is lost when the process ends */
}

static void flusher_start(void)
{
	tw_cond_init_mono(&flusher_wake);
	atexit(flusher_end);
	/* Without the thread, lines wait for the next unbatched line or exit. */
	pthread_mutex_lock(&batch_lock);
	flusher_started = !pthread_create(&flusher_thread, NULL, flusher, NULL);
	pthread_mutex_unlock(&batch_lock);
}

static void finish_line(tw_log_line *l)
{
	/* put() leaves LOG_RESERVE bytes, so the tail always fits. */
	const char *tail = l->truncated ? ",\"truncated\":true}\n" : "}\n";
	size_t n = strlen(tail);
	memcpy(l->buf + l->len, tail, n);
	l->len += n;
}

void tw_log_end(tw_log_line *l)
{
	if (!l->on)
		return;
	finish_line(l);
	pthread_mutex_lock(&batch_lock);
	flush_locked();
	write_all(l->buf, l->len);
	pthread_mutex_unlock(&batch_lock);
}

void tw_log_end_batched(tw_log_line *l)
{
	if (!l->on)
		return;
	finish_line(l);
	pthread_once(&flusher_once, flusher_start);
	pthread_mutex_lock(&batch_lock);
	if (batch_len + l->len > BATCH_BYTES)
		flush_locked();
	if (l->len > BATCH_BYTES)
		write_all(l->buf, l->len);
	else {
		memcpy(batch + batch_len, l->buf, l->len);
		batch_len += l->len;
	}
	pthread_mutex_unlock(&batch_lock);
}

void tw_logv(int lvl, const char *fmt, va_list ap)
{
	if (!tw_log_enabled(lvl))
		return;
	char msg[1024];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	tw_log_line l;
	tw_log_begin(&l, lvl, msg);
	tw_log_end(&l);
}

void tw_log(int lvl, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tw_logv(lvl, fmt, ap);
	va_end(ap);
}
