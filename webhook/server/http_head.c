/*
 * webhook/server/http_head.c — RFC 9112's framing rules over a request
 * stream, one byte at a time (http_head.h).
 */
#include "webhook/server/http_head.h"

#include <string.h>
#include <strings.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum {
	P_START,    /* before a request line (empty lines allowed) */
	P_LEAD_LF,  /* an empty line's CR seen */
	P_METHOD,
	P_TARGET,
	P_VERSION,
	P_REQ_LF,   /* the request line's CR seen */
	P_FIELD,    /* at the start of a header line */
	P_NAME,
	P_VALUE,
	P_FIELD_LF, /* a header line's CR seen */
	P_END_LF,   /* the empty line's CR seen: the head ends at its LF */
	P_BODY,
	P_REFUSED,
};

enum { F_NONE, F_CL, F_TE, F_HOST };

#define MAX_BLANK_LINES 4
#define MAX_METHOD 32

static const struct {
	int status;
	const char *reason;
} reasons[] = {
	{ 400, "Bad Request" },		   { 411, "Length Required" },
	{ 413, "Content Too Large" },	   { 414, "URI Too Long" },
	{ 431, "Request Header Fields Too Large" }, { 501, "Not Implemented" },
	{ 505, "HTTP Version Not Supported" },
};

const char *tw_head_reason(int status)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(*reasons); i++)
		if (reasons[i].status == status)
			return reasons[i].reason;
	return "Bad Request";
}

void tw_head_init(tw_head *h)
{
	memset(h, 0, sizeof(*h));
}

bool tw_head_between(const tw_head *h)
{
	return h->phase == P_START && !h->blank_lines;
}

bool tw_head_in_body(const tw_head *h)
{
	return h->phase == P_BODY;
}

/* RFC 9110 §5.6.2 token characters: ALPHA, DIGIT and "!#$%&'*+-.^_`|~",
 * as a bit per byte value below 128. */
static const uint64_t TCHAR_LO = 0x03ff6cfa00000000ull; /* 0x00-0x3f */
static const uint64_t TCHAR_HI = 0x57ffffffc7fffffeull; /* 0x40-0x7f */

static inline bool tchar(unsigned char c)
{
	return c < 64 ? TCHAR_LO >> c & 1 : c < 128 && (TCHAR_HI >> (c - 64) & 1);
}

/* Refuse the head with status and msg. -1 means refused: the answer the
 * byte steps pass up to tw_head_feed (0 is "go on"), which reads h. */
static int refuse(tw_head *h, int status, const char *msg)
{
	h->status = status;
	h->error = msg;
	h->phase = P_REFUSED;
	return -1;
}

static int bare_lf(tw_head *h)
{
	return refuse(h, 400, "a line of the request ends in a bare LF: end the request line and "
			      "every header line with CRLF (RFC 9112 §2.2)");
}

static int lone_cr(tw_head *h)
{
	return refuse(h, 400, "a CR in the request line or a header is not followed by LF: end "
			      "every line with CRLF (RFC 9112 §2.2)");
}

/* A new request: everything of the last one forgotten. */
static void next_request(tw_head *h)
{
	uint64_t body = h->body_left;
	uint32_t heads = h->heads;
	bool stepwise = h->stepwise;
	tw_head_init(h);
	h->body_left = body;
	h->heads = heads;
	h->stepwise = stepwise;
	h->phase = body ? P_BODY : P_START;
}

static int check_version(tw_head *h)
{
	const char *v = h->ver;
	if (h->ver_len == 8 && !memcmp(v, "HTTP/1.", 7) && (v[7] == '1' || v[7] == '0')) {
		h->http11 = v[7] == '1';
		return 0;
	}
	if (h->ver_len == 8 && !memcmp(v, "HTTP/", 5) && v[5] >= '0' && v[5] <= '9' &&
	    v[6] == '.' && v[7] >= '0' && v[7] <= '9')
		return refuse(h, 505, "only HTTP/1.1 (and HTTP/1.0) is served: send the request "
				      "as HTTP/1.1");
	return refuse(h, 400, "the request line does not end in an HTTP version: write it as "
			      "METHOD SP request-target SP HTTP/1.1 (RFC 9112 §3)");
}

/* Content-Length's value: one number of bytes. */
static int content_length(tw_head *h)
{
	size_t n = h->val_len;
	bool digits = n && !h->val_long && strspn(h->val, "0123456789") == n;
	if (!digits)
		return refuse(h, 400, "Content-Length is not a number of bytes: send one decimal "
				      "Content-Length (RFC 9110 §8.6)");
	if (n > 19)
		return refuse(h, 413, "Content-Length is larger than any body this server reads: "
				      "send at most --max-body bytes");
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (uint64_t)(h->val[i] - '0');
	if (h->has_cl && v != h->cl)
		return refuse(h, 400, "the request has Content-Length headers with different "
				      "values: send one Content-Length (RFC 9110 §8.6)");
	h->has_cl = true;
	h->cl = v;
	return 0;
}

/* A header line has ended: what the check reads of it. */
static int field_done(tw_head *h)
{
	while (h->val_len && (h->val[h->val_len - 1] == ' ' || h->val[h->val_len - 1] == '\t'))
		h->val_len--;
	h->val[h->val_len] = '\0';
	int rc = 0;
	if (h->which == F_CL)
		rc = content_length(h);
	else if (h->which == F_TE)
		h->te_chunked = !h->has_te && !h->val_long && !strcasecmp(h->val, "chunked"),
		h->has_te = true;
	else if (h->which == F_HOST && h->hosts < 2)
		h->hosts++;
	h->which = F_NONE;
	h->name_len = h->val_len = 0;
	h->val_long = false;
	return rc;
}

/* The head has ended: the rules between its headers. */
static int head_done(tw_head *h)
{
	if (h->hosts > 1)
		return refuse(h, 400, "the request has more than one Host header: send one (RFC "
				      "9112 §3.2)");
	if (h->http11 && !h->hosts)
		return refuse(h, 400, "an HTTP/1.1 request must have a Host header (RFC 9112 "
				      "§3.2)");
	if (h->has_te && h->has_cl)
		return refuse(h, 400, "the request has both Content-Length and Transfer-Encoding: "
				      "send the body with Content-Length only (RFC 9112 §6.3)");
	if (h->has_te && h->te_chunked)
		return refuse(h, 411, "send the body with a Content-Length, not Transfer-Encoding: "
				      "chunked (a body is budgeted by its length before it is "
				      "read)");
	if (h->has_te)
		return refuse(h, 501, "this Transfer-Encoding is not implemented: send the body "
				      "with a Content-Length (RFC 9112 §6.1)");
	h->body_left = h->has_cl ? h->cl : 0;
	h->heads++;
	next_request(h);
	return 0;
}

/* Which field a lowercased name is. */
static int field_of(const tw_head *h)
{
	if (h->name_len == 14 && !memcmp(h->name, "content-length", 14))
		return F_CL;
	if (h->name_len == 17 && !memcmp(h->name, "transfer-encoding", 17))
		return F_TE;
	if (h->name_len == 4 && !memcmp(h->name, "host", 4))
		return F_HOST;
	return F_NONE;
}

static int request_line_byte(tw_head *h, unsigned char c)
{
	switch (h->phase) {
	case P_METHOD:
		if (c == ' ' && h->name_len)
			return h->phase = P_TARGET, h->name_len = 0, 0;
		if (!tchar(c) || ++h->name_len > MAX_METHOD)
			return c == '\n' ? bare_lf(h)
					 : refuse(h, 400, "the request line does not start with a "
							  "method: write it as METHOD SP "
							  "request-target SP HTTP/1.1 (RFC 9112 §3)");
		return 0;
	case P_TARGET:
		if (c == ' ' && h->name_len)
			return h->phase = P_VERSION, h->name_len = 0, 0;
		if (!c)
			return refuse(h, 400, "the request target holds a NUL byte: percent-encode "
					      "it (RFC 3986)");
		if (c == '\r')
			return refuse(h, 400, "the request line has no HTTP version: write it as "
					      "METHOD SP request-target SP HTTP/1.1 (RFC 9112 §3)");
		if (c <= ' ' || c >= 0x7f)
			return c == '\n' ? bare_lf(h)
					 : refuse(h, 400, "the request target holds a space, control "
							  "or non-ASCII byte: percent-encode it (RFC "
							  "3986)");
		h->name_len = 1;
		return 0;
	case P_VERSION:
		if (c == '\r')
			return check_version(h) ? -1 : (h->phase = P_REQ_LF, 0);
		if (c == '\n')
			return bare_lf(h);
		if (h->ver_len >= 8)
			return check_version(h) ? -1 : refuse(h, 400, "the request line goes on "
								      "after its HTTP version");
		h->ver[h->ver_len++] = (char)c;
		return 0;
	default: /* P_REQ_LF */
		return c == '\n' ? (h->phase = P_FIELD, 0) : lone_cr(h);
	}
}

static int field_byte(tw_head *h, unsigned char c)
{
	switch (h->phase) {
	case P_FIELD:
		if (c == '\r')
			return h->phase = P_END_LF, 0;
		if (c == '\n')
			return bare_lf(h);
		if (c == ' ' || c == '\t')
			return refuse(h, 400, "a header line starts with a space or tab (obsolete "
					      "line folding): send each header on one line (RFC 9112 "
					      "§5.2)");
		if (++h->fields > TW_HEAD_MAX_FIELDS)
			return refuse(h, 431, "the request has more than 100 header lines");
		h->phase = P_NAME;
		return field_byte(h, c); /* the name's first byte */
	case P_NAME:
		if (c == ':') {
			if (!h->name_len)
				return refuse(h, 400, "a header line has no name before its colon");
			h->which = (uint8_t)field_of(h);
			return h->phase = P_VALUE, 0;
		}
		if (c == ' ' || c == '\t')
			return refuse(h, 400, "a header name is followed by whitespace before its "
					      "colon: remove it (RFC 9112 §5.1)");
		if (c == '\r' || c == '\n')
			return refuse(h, 400, "a header line has no colon: write it as Name: value");
		if (!tchar(c))
			return refuse(h, 400, "a header name holds a character that is not a token "
					      "character (RFC 9110 §5.1)");
		if (h->name_len < sizeof(h->name))
			h->name[h->name_len] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		h->name_len = h->name_len < 255 ? h->name_len + 1 : 255;
		return 0;
	case P_VALUE:
		if (c == '\r')
			return h->phase = P_FIELD_LF, 0;
		if (c == '\n')
			return bare_lf(h);
		if ((c < ' ' && c != '\t') || c == 0x7f)
			return refuse(h, 400, "a header value holds a NUL or control character (RFC "
					      "9110 §5.5)");
		if (!h->val_len && (c == ' ' || c == '\t'))
			return 0; /* leading whitespace */
		if (h->val_len < sizeof(h->val) - 1)
			h->val[h->val_len++] = (char)c;
		else
			h->val_long = true;
		return 0;
	case P_FIELD_LF:
		if (c != '\n')
			return lone_cr(h);
		h->phase = P_FIELD;
		return field_done(h);
	default: /* P_END_LF */
		return c == '\n' ? head_done(h) : lone_cr(h);
	}
}

/* One byte of a head. 0, or -1 once refused. */
static int head_byte(tw_head *h, unsigned char c)
{
	if (h->phase == P_START || h->phase == P_LEAD_LF) {
		if (h->phase == P_LEAD_LF)
			return c == '\n' ? (h->phase = P_START, 0) : lone_cr(h);
		if (c == '\r')
			return ++h->blank_lines > MAX_BLANK_LINES
				       ? refuse(h, 400, "the request starts with empty lines")
				       : (h->phase = P_LEAD_LF, 0);
		if (c == '\n')
			return bare_lf(h);
		h->phase = P_METHOD;
	}
	if (++h->head_bytes > TW_HEAD_MAX_BYTES)
		return h->phase <= P_REQ_LF
			       ? refuse(h, 414, "the request line is longer than 8 KiB")
			       : refuse(h, 431, "the request's headers are larger than 8 KiB");
	return h->phase <= P_REQ_LF ? request_line_byte(h, c) : field_byte(h, c);
}

/* The byte classes of the runs below, as cheap tests: a target byte is
 * VCHAR; a value byte is SP, VCHAR or obs-text (HTAB is stepped). */
static inline bool target_byte(unsigned char c)
{
	return (unsigned char)(c - 0x21) < 0x7f - 0x21;
}

static inline bool value_byte(unsigned char c)
{
	return c >= ' ' && c != 0x7f;
}

/* How many of the n bytes at p are value bytes, 16 at a step with SSE2
 * (x86-64 always has it; elsewhere a byte at a time). */
static size_t value_run(const unsigned char *p, size_t n)
{
	size_t k = 0;
#if defined(__SSE2__)
	const __m128i space = _mm_set1_epi8(' '), del = _mm_set1_epi8(0x7f);
	for (; k + 16 <= n; k += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + k));
		__m128i ok = _mm_cmpeq_epi8(_mm_max_epu8(v, space), v); /* >= ' ' */
		unsigned stop = (unsigned)_mm_movemask_epi8(
			_mm_andnot_si128(ok, _mm_set1_epi8(-1))) |
				(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, del));
		if (stop)
			return k + (size_t)__builtin_ctz(stop);
	}
#endif
	while (k < n && value_byte(p[k]))
		k++;
	return k;
}


/* The bytes of the request target, a header name or a header value that
 * change nothing but the field being read, taken as one run: what
 * head_byte does for each of them, without its per-byte dispatch (make
 * bench's TrainJob head, ~160 bytes, cost ~10,500 instructions a request a
 * byte at a time). A run stops before any byte that ends the field or may
 * be refused, and before the byte past TW_HEAD_MAX_BYTES: head_byte takes
 * those. Returns how many bytes it took. */
static size_t head_run(tw_head *h, const unsigned char *p, size_t n)
{
	if (h->head_bytes >= TW_HEAD_MAX_BYTES)
		return 0;
	size_t room = TW_HEAD_MAX_BYTES - h->head_bytes;
	if (n > room)
		n = room;
	size_t k = 0;
	switch (h->phase) {
	case P_TARGET:
		while (k < n && target_byte(p[k]))
			k++;
		if (k)
			h->name_len = 1;
		break;
	case P_NAME:
		for (; k < n && tchar(p[k]); k++) {
			unsigned char c = p[k];
			if (h->name_len < sizeof(h->name))
				h->name[h->name_len] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
			if (h->name_len < 255)
				h->name_len++;
		}
		break;
	case P_VALUE: {
		if (!h->val_len) /* leading whitespace is stepped */
			break;
		k = value_run(p, n);
		size_t room_val = sizeof(h->val) - 1 - h->val_len, keep = k < room_val ? k : room_val;
		memcpy(h->val + h->val_len, p, keep);
		h->val_len = (uint8_t)(h->val_len + keep);
		if (k > keep)
			h->val_long = true;
		break;
	}
	default:
		return 0;
	}
	h->head_bytes += (uint32_t)k;
	return k;
}

size_t tw_head_feed(tw_head *h, const char *p, size_t n)
{
	size_t start = 0; /* where the request being read began, in this call */
	for (size_t i = 0; i < n;) {
		if (h->phase == P_REFUSED)
			return 0;
		if (h->phase >= P_TARGET && h->phase <= P_VALUE && !h->stepwise) {
			size_t k = head_run(h, (const unsigned char *)p + i, n - i);
			if (k) {
				i += k;
				continue;
			}
		}
		if (h->phase == P_BODY) {
			size_t skip = h->body_left < n - i ? (size_t)h->body_left : n - i;
			i += skip;
			h->body_left -= skip;
			if (!h->body_left) {
				h->phase = P_START;
				start = i;
			}
			continue;
		}
		bool at_start = h->phase == P_START && !h->blank_lines;
		if (at_start)
			start = i;
		if (head_byte(h, (unsigned char)p[i++]))
			return start;
		if (h->phase == P_START && !h->blank_lines && !at_start)
			start = i; /* a head without a body has just ended */
	}
	return h->phase == P_REFUSED ? start : n;
}
