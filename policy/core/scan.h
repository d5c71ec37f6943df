/*
 * core/scan.h — the byte scans under the loaders and the JSON writer: where
 * whitespace ends, where the plain run of a string ends (to read it or to
 * write it without escapes), where the first NUL or non-ASCII byte is.
 *
 * 16 bytes a step with SSE2, which x86-64 always has (no CPU check needed);
 * elsewhere a word or a byte a step. The last bytes of an input always go a
 * byte at a time, so tests on x86-64 exercise both ways. Figures are
 * callgrind's, for the 5.5 KB ClusterTrainingRuntime review of make bench.
 */
#ifndef TP_CORE_SCAN_H
#define TP_CORE_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline bool tp__scan_is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

#if defined(__SSE2__)
static inline __m128i tp__scan_load16(const unsigned char *s)
{
	return _mm_loadu_si128((const __m128i *)(const void *)s);
}

static inline int tp__scan_first(unsigned mask)
{
	return __builtin_ctz(mask);
}
#endif

/* The first byte of [s, end) that is not JSON whitespace, or end. A
 * pretty-printed document is mostly a line break and its indentation (61%
 * of that review, 19 bytes a run): 66 -> 30 instructions a run. */
static inline const unsigned char *tp__scan_ws(const unsigned char *s, const unsigned char *end)
{
#if defined(__SSE2__)
	for (; end - s >= 16; s += 16) {
		__m128i v = tp__scan_load16(s);
		__m128i ws = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
				     _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
			_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
				     _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
		unsigned other = ~(unsigned)_mm_movemask_epi8(ws) & 0xffffu;
		if (other)
			return s + tp__scan_first(other);
	}
#else
	/* runs of spaces a word at a time */
	while (end - s >= 8 && s[0] == ' ') {
		uint64_t w;
		memcpy(&w, s, sizeof(w));
		if (w != 0x2020202020202020ULL)
			break;
		s += 8;
	}
#endif
	while (s < end && tp__scan_is_ws(*s))
		s++;
	return s;
}

/* The first byte of [s, end) that ends a plain run inside a JSON string (a
 * quote, a backslash or a control character), or end. Strings of that
 * review average 13 bytes: most end in one step. */
static inline const unsigned char *tp__scan_string(const unsigned char *s, const unsigned char *end)
{
#if defined(__SSE2__)
	for (; end - s >= 16; s += 16) {
		__m128i v = tp__scan_load16(s);
		/* v <= 0x1f, unsigned: min(v, 0x1f) == v */
		__m128i stop = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
				     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
			_mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v));
		unsigned m = (unsigned)_mm_movemask_epi8(stop);
		if (m)
			return s + tp__scan_first(m);
	}
#endif
	while (s < end && *s >= 0x20 && *s != '"' && *s != '\\')
		s++;
	return s;
}

#if defined(__SSE2__)
/* v's bytes with the high bit set where v's byte is NUL or past ASCII. */
static inline __m128i tp__scan_not_ascii(__m128i v)
{
	return _mm_or_si128(v, _mm_cmpeq_epi8(v, _mm_setzero_si128()));
}
#endif

/* The first byte of [s, end) that is NUL or past ASCII, or end: the rest
 * needs no UTF-8 decoding. tp_load's own instructions 9,890 -> 4,020 (a
 * word a step before); 64 bytes a step, one test for the four 16-byte
 * parts, until a part holds such a byte: 1,700 -> 1,010 for the
 * 2.1 KB compact ClusterTrainingRuntime review the lead measures. */
static inline const unsigned char *tp__scan_ascii(const unsigned char *s, const unsigned char *end)
{
#if defined(__SSE2__)
	for (; end - s >= 64; s += 64) {
		__m128i any = _mm_or_si128(
			_mm_or_si128(tp__scan_not_ascii(tp__scan_load16(s)),
				     tp__scan_not_ascii(tp__scan_load16(s + 16))),
			_mm_or_si128(tp__scan_not_ascii(tp__scan_load16(s + 32)),
				     tp__scan_not_ascii(tp__scan_load16(s + 48))));
		if (_mm_movemask_epi8(any))
			break; /* the loop below finds which byte */
	}
	for (; end - s >= 16; s += 16) {
		unsigned m = (unsigned)_mm_movemask_epi8(tp__scan_not_ascii(tp__scan_load16(s)));
		if (m)
			return s + tp__scan_first(m);
	}
#else
	for (; end - s >= 8; s += 8) {
		uint64_t w;
		memcpy(&w, s, sizeof(w));
		const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
		if ((w | ((w - ones) & ~w)) & highs)
			break;
	}
#endif
	while (s < end && *s != 0 && *s < 0x80)
		s++;
	return s;
}

#endif
