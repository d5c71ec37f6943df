/*
 * core/z85.c — ZeroMQ's Z85 (ZeroMQ RFC 32): 4 bytes as 5 characters of an
 * 85-letter alphabet, big-endian. Flux's CURVE certificate writes its keys
 * this way (plugins/flux.c).
 */
#include "policy/core/internal.h"

int tp__z85_encode(const unsigned char *data, size_t n, tp_buf *out)
{
	static const char abc[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
				  "XYZ.-:+=^!/*?&<>()[]{}@%$#";
	if ((!data && n) || n % 4)
		return TP_EINVAL;
	for (size_t i = 0; i < n; i += 4) {
		unsigned long v = (unsigned long)data[i] << 24 | (unsigned long)data[i + 1] << 16 |
				  (unsigned long)data[i + 2] << 8 | data[i + 3];
		char five[5];
		for (int k = 4; k >= 0; k--, v /= 85)
			five[k] = abc[v % 85];
		int rc = tp_buf_add(out, five, 5);
		if (rc)
			return rc;
	}
	return n ? TP_OK : tp_buf_add(out, "", 0);
}
