/*
 * webhook/core/log.h — one JSON object per line on stderr, with levels.
 *
 * A line is built on the caller's stack and written with a single write(2),
 * so lines from different threads never interleave and logging never takes
 * a lock or calls malloc.
 */
#ifndef TW_LOG_H
#define TW_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum tw_log_level {
	TW_LOG_DEBUG = 0,
	TW_LOG_INFO,
	TW_LOG_WARN,
	TW_LOG_ERROR,
} tw_log_level;

/* OR this into a level for lines that must appear whatever --log-level says
 * (startup, shutdown): the line keeps its level's name. */
#define TW_LOG_ALWAYS 0x100

#define TW_LOG_LINE_MAX 2048

typedef struct tw_log_line {
	char buf[TW_LOG_LINE_MAX];
	size_t len;
	bool on;        /* false: the level is filtered out, every call is a no-op */
	bool truncated; /* some value did not fit */
} tw_log_line;

/* "debug", "info", "warn" (or "warning"), "error". Returns 0 or TP_EINVAL. */
int tw_log_level_parse(const char *s, tw_log_level *out);
const char *tw_log_level_name(tw_log_level lvl);
void tw_log_set_level(tw_log_level lvl);
bool tw_log_enabled(int lvl);
/* Where lines go (default 2, stderr); for tests. */
void tw_log_set_fd(int fd);

/* Build a line: begin, any number of fields, end (which writes it). */
void tw_log_begin(tw_log_line *l, int lvl, const char *msg);
void tw_log_str(tw_log_line *l, const char *key, const char *val); /* NULL val: omitted */
void tw_log_int(tw_log_line *l, const char *key, long long val);
void tw_log_bool(tw_log_line *l, const char *key, bool val);
void tw_log_end(tw_log_line *l);
/* The same for a line that may wait (the access log): written within 100 ms,
 * in batches; any other line, tw_log_flush and the process's exit write it
 * out first. */
void tw_log_end_batched(tw_log_line *l);
void tw_log_flush(void);

/* A line with only a message (printf format). */
void tw_log(int lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tw_logv(int lvl, const char *fmt, va_list ap);

#endif /* TW_LOG_H */
