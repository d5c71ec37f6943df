/*
 * core/text.c — Go's notion of white space (unicode.IsSpace), for the
 * places where upstream trims with strings.TrimSpace and the result must be
 * the same bytes: Flux's command line, TorchTune's boolean arguments.
 */
#include "policy/core/internal.h"

/* Length of the white space character at p (NUL-terminated), or 0. */
static size_t space_at(const unsigned char *p, const unsigned char *end)
{
	size_t left = (size_t)(end - p);
	if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		return 1;
	if (left >= 2 && p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0))
		return 2; /* U+0085, U+00A0 */
	if (left < 3)
		return 0;
	if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80)
		return 3; /* U+1680 */
	if (p[0] == 0xe2 && p[1] == 0x80 &&
	    ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf))
		return 3; /* U+2000..U+200A, U+2028, U+2029, U+202F */
	if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f)
		return 3; /* U+205F */
	if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80)
		return 3; /* U+3000 */
	return 0;
}

void tp__go_trim_space(const char *s, size_t n, size_t *off, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t k;
	while (p < end && (k = space_at(p, end)) != 0)
		p += k;
	const unsigned char *last = p; /* just past the last character that is no space */
	for (const unsigned char *q = p; q < end;) {
		k = space_at(q, end);
		q += k ? k : 1;
		if (!k)
			last = q;
	}
	*off = (size_t)(p - (const unsigned char *)s);
	*len = (size_t)(last - p);
}
