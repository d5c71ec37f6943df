/*
 * webhook/core/duration.h — Go's time.Duration text ("10s", "1m30s",
 * "500ms"), as the API server writes ?timeout= and as serve's flags take
 * durations (duration.c).
 */
#ifndef TW_DURATION_H
#define TW_DURATION_H

/* The text in microseconds, or -1 when it does not read, is zero, or is
 * over 24 hours. */
long long tw_parse_go_duration(const char *s);
/* The same grammar, up to max_us (certificate validities run to years). */
long long tw_parse_go_duration_max(const char *s, long long max_us);

#endif /* TW_DURATION_H */
