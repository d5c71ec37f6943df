/*
 * core/base64.c — RFC 4648 base64 with padding: the encoding of a mutating
 * webhook's patch, of Secret data and of a caBundle.
 */
#include "policy/trainpolicy.h"

int tp_base64_encode(const void *data, size_t n, tp_buf *out)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	if ((!data && n) || !out)
		return TP_EINVAL;
	const unsigned char *p = data;
	char quad[4];
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		quad[0] = tab[(v >> 18) & 63];
		quad[1] = tab[(v >> 12) & 63];
		quad[2] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		quad[3] = i + 2 < n ? tab[v & 63] : '=';
		int rc = tp_buf_add(out, quad, 4);
		if (rc)
			return rc;
	}
	/* An empty input still gives a valid, NUL-terminated (empty) string. */
	return n ? TP_OK : tp_buf_add(out, "", 0);
}

/* RFC 4648 with padding, as the API server writes Secret data and a
 * caBundle: no whitespace, no URL alphabet; anything else is TP_EPARSE. */
int tp_base64_decode(const char *in, size_t n, tp_buf *out)
{
	if ((!in && n) || !out)
		return TP_EINVAL;
	if (n % 4)
		return TP_EPARSE;
	for (size_t i = 0; i < n; i += 4) {
		unsigned v = 0;
		int pad = 0;
		for (int j = 0; j < 4; j++) {
			char c = in[i + j];
			int d = c >= 'A' && c <= 'Z'   ? c - 'A'
				: c >= 'a' && c <= 'z' ? c - 'a' + 26
				: c >= '0' && c <= '9' ? c - '0' + 52
				: c == '+'	       ? 62
				: c == '/'	       ? 63
						       : -1;
			if (c == '=' && i + 4 == n && j >= 2 && (j == 3 || in[i + 3] == '=')) {
				pad++;
				d = 0;
			} else if (d < 0 || pad) {
				return TP_EPARSE;
			}
			v = v << 6 | (unsigned)d;
		}
		char three[3] = { (char)(v >> 16), (char)(v >> 8), (char)v };
		int rc = tp_buf_add(out, three, 3 - (size_t)pad);
		if (rc)
			return rc;
	}
	return n ? TP_OK : tp_buf_add(out, "", 0);
}
