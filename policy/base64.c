/*
 * base64.c — RFC 4648 base64 with padding: the encoding of a mutating
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
