/*
 * webhook/core/duration.c — Go's time.Duration text read into microseconds:
 * the API server's ?timeout= and serve's duration flags.
 */
#include "webhook/core/duration.h"

#include <stddef.h>
#include <string.h>

/* Go's time.Duration text as the API server writes it ("10s", "1m30s",
 * "500ms"): one or more <digits>[.<digits>]<unit>, nothing else (no sign,
 * no exponent, no "inf"). Microseconds; -1 means it does not read, is
 * zero, or is over max_us. */
long long tw_parse_go_duration_max(const char *s, long long max_us)
{
	static const struct {
		const char *unit;
		long long us;
	} units[] = { { "ms", 1000 }, { "us", 1 }, { "\xc2\xb5s", 1 }, { "ns", 0 },
		      { "h", 3600000000LL }, { "m", 60000000 }, { "s", 1000000 } };
	const long long limit = max_us;
	if (!s || !*s)
		return -1;
	long long total = 0;
	while (*s) {
		long long whole = 0, frac = 0, scale = 1;
		const char *start = s;
		for (; *s >= '0' && *s <= '9'; s++)
			if ((whole = whole * 10 + (*s - '0')) > limit)
				return -1;
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++)
				if (scale < 1000000000LL)
					frac = frac * 10 + (*s - '0'), scale *= 10;
		if (s == start || (s - start == 1 && *start == '.'))
			return -1;
		size_t i = 0;
		while (i < sizeof(units) / sizeof(units[0]) &&
		       strncmp(s, units[i].unit, strlen(units[i].unit)))
			i++;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		if (units[i].us && whole > limit / units[i].us)
			return -1; /* no overflow on the way to the limit */
		total += whole * units[i].us + frac * units[i].us / scale;
		s += strlen(units[i].unit);
		if (total > limit)
			return -1;
	}
	return total > 0 ? total : -1;
}

long long tw_parse_go_duration(const char *s)
{
	return tw_parse_go_duration_max(s, 3600000000LL * 24);
}
