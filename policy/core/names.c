/*
 * core/names.c — Kubernetes name rules (k8s.io/apimachinery/pkg/util/validation),
 * with upstream's message texts.
 */
#include "policy/core/internal.h"

#include <ctype.h>
#include <string.h>

#define DNS1035_MSG                                                                          \
	"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start " \
	"with an alphabetic character, and end with an alphanumeric character (e.g. "       \
	"'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_LABEL_MSG                                                                      \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " \
	"and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', " \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1123_SUBDOMAIN_MSG                                                                   \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "    \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"     \
	"[a-z0-9])?)*')"
#define LABEL_VALUE_MSG                                                                          \
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "    \
	"'my_value',  or '12345', regex used for validation is "                                  \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define QUALIFIED_NAME_MSG                                                                      \
	"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and " \
	"end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex " \
	"used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"

/* The classes of the bytes the name rules allow, one table lookup a byte:
 * the range tests and isalnum's locale lookup a byte cost 5,950
 * instructions of a ClusterTrainingRuntime review (callgrind). isalnum is
 * ASCII's here too: no byte past 0x7f is alphanumeric in the C locale or in
 * UTF-8's. */
enum { C_LOW = 1, C_DIG = 2, C_UP = 4, C_DASH = 8, C_DOT = 16, C_UNDER = 32 };
#define C_LALNUM (C_LOW | C_DIG)       /* [a-z0-9] */
#define C_ALNUM (C_LOW | C_DIG | C_UP) /* [A-Za-z0-9] */

static const unsigned char byte_class[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x00 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* 0x10 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, C_DASH, C_DOT, 0, /* 0x20: '-' '.' */
	C_DIG, C_DIG, C_DIG, C_DIG, C_DIG, C_DIG, C_DIG, C_DIG, C_DIG, C_DIG, /* 0x30: 0-9 */
	0, 0, 0, 0, 0, 0,
	0, C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, /* 0x40: A-O */
	C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, C_UP,
	C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, C_UP, /* 0x50: P-Z, '_' */
	C_UP, C_UP, C_UP, 0, 0, 0, 0, C_UNDER,
	0, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, /* 0x60: a-o */
	C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW,
	C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, C_LOW, /* 0x70: p-z */
	C_LOW, C_LOW, C_LOW, 0, 0, 0, 0, 0,
};

static inline unsigned class_of(char c)
{
	return byte_class[(unsigned char)c];
}

/* True when each of the n bytes at s is in one of the classes of mask. */
static bool all_in(const char *s, size_t n, unsigned mask)
{
	for (size_t i = 0; i < n; i++)
		if (!(class_of(s[i]) & mask))
			return false;
	return true;
}

static bool label_shape(const char *s, size_t n, bool first_alpha)
{
	if (n == 0)
		return false;
	if (!(class_of(s[0]) & (first_alpha ? C_LOW : C_LALNUM)))
		return false;
	if (!(class_of(s[n - 1]) & C_LALNUM))
		return false;
	return all_in(s, n, C_LALNUM | C_DASH);
}

const char *tp__check_dns1035_label(const char *s)
{
	size_t n = strlen(s);
	if (n > 63)
		return "must be no more than 63 characters";
	return label_shape(s, n, true) ? NULL : DNS1035_MSG;
}

const char *tp__check_dns1123_label(const char *s)
{
	size_t n = strlen(s);
	if (n > 63)
		return "must be no more than 63 characters";
	return label_shape(s, n, false) ? NULL : DNS1123_LABEL_MSG;
}

/* Dot-separated RFC 1123 labels, any length (the length is checked apart),
 * in one pass: every byte a label's, each end and each dot's neighbours
 * alphanumeric (so no label is empty or starts or ends with '-'). */
static bool subdomain_shape(const char *s, size_t n)
{
	if (n == 0 || !(class_of(s[0]) & C_LALNUM) || !(class_of(s[n - 1]) & C_LALNUM))
		return false;
	for (size_t i = 1; i + 1 < n; i++) {
		unsigned c = class_of(s[i]);
		if (c & (C_LALNUM | C_DASH))
			continue;
		if (!(c & C_DOT) || !(class_of(s[i - 1]) & C_LALNUM) ||
		    !(class_of(s[i + 1]) & C_LALNUM))
			return false;
	}
	return true;
}

const char *tp__check_dns1123_subdomain(const char *s)
{
	size_t n = strlen(s);
	if (n > 253)
		return "must be no more than 253 characters";
	return subdomain_shape(s, n) ? NULL : DNS1123_SUBDOMAIN_MSG;
}

static bool name_part_ok(const char *s, size_t n)
{
	if (n == 0 || !(class_of(s[0]) & C_ALNUM) || !(class_of(s[n - 1]) & C_ALNUM))
		return false;
	return all_in(s, n, C_ALNUM | C_DASH | C_UNDER | C_DOT);
}

size_t tp__label_value_msgs(const char *s, const char **msgs)
{
	size_t k = 0, n = strlen(s);
	if (n > 63)
		msgs[k++] = "must be no more than 63 characters";
	if (n && !name_part_ok(s, n))
		msgs[k++] = LABEL_VALUE_MSG;
	return k;
}

const char *tp__check_label_value(const char *s)
{
	const char *msgs[TP_NAME_MSGS_MAX];
	return tp__label_value_msgs(s, msgs) ? msgs[0] : NULL;
}

#define QUALIFIED_NAME_WHOLE_MSG                                                                  \
	"a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start " \
	"and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "     \
	"regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "          \
	"optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"

/* IsDNS1123Subdomain's messages for the n bytes at s, each prefixed by
 * IsQualifiedName's "prefix part ". */
static size_t prefix_msgs(const char *s, size_t n, const char **msgs)
{
	size_t k = 0;
	if (n == 0) {
		msgs[k++] = "prefix part must be non-empty";
		return k;
	}
	if (n > 253)
		msgs[k++] = "prefix part must be no more than 253 characters";
	if (!subdomain_shape(s, n))
		msgs[k++] = "prefix part " DNS1123_SUBDOMAIN_MSG;
	return k;
}

size_t tp__qualified_name_msgs(const char *s, const char **msgs)
{
	const char *slash = strchr(s, '/');
	if (slash && strchr(slash + 1, '/')) {
		msgs[0] = QUALIFIED_NAME_WHOLE_MSG;
		return 1;
	}
	size_t k = slash ? prefix_msgs(s, (size_t)(slash - s), msgs) : 0;
	const char *name = slash ? slash + 1 : s;
	size_t n = strlen(name);
	if (n == 0)
		msgs[k++] = "name part must be non-empty";
	else if (n > 63)
		msgs[k++] = "name part must be no more than 63 characters";
	if (!name_part_ok(name, n))
		msgs[k++] = QUALIFIED_NAME_MSG;
	return k;
}

const char *tp__check_qualified_name(const char *s)
{
	const char *msgs[TP_NAME_MSGS_MAX];
	return tp__qualified_name_msgs(s, msgs) ? msgs[0] : NULL;
}

/* apimachinery IsDomainPrefixedPath (k8s.io/apimachinery v0.36.3,
 * pkg/util/validation): Required when empty; one Invalid for the whole value
 * without a "<host>/<path>" shape; else each of IsDNS1123Subdomain's errors
 * for the host (its length, its shape, with the host as the value), then the
 * path's regex error (with the path as the value). Returns the number of
 * errors added, or a negative TP_E* code. */
#define HTTP_PATH_FMT "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"

static int invalid_part(tp_result *res, const char *path, const char *s, size_t n,
			const char *detail)
{
	tp_buf part = TP_BUF_INIT(0);
	int rc = tp_buf_add(&part, s, n);
	if (!rc)
		rc = tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, part.data), "%s",
				   detail);
	tp_buf_free(&part);
	return rc;
}

static bool http_path_ok(const char *s)
{
	static const char allowed[] = "/-._~%!$&'()*+,;=:";
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(allowed, *p))
			return false;
	return *s != '\0';
}

int tp__check_domain_prefixed_path(tp_result *res, const char *path, const char *value)
{
	if (!value || !*value) {
		int rc = tp_result_add(res, TP_FIELD_REQUIRED, path, NULL, "%s", "");
		return rc ? rc : 1;
	}
	const char *slash = strchr(value, '/');
	if (!slash || slash == value || !slash[1]) {
		int rc = tp_result_add(res, TP_FIELD_INVALID, path, tp_result_quote(res, value),
				       "must be a domain-prefixed path (such as \"acme.io/foo\")");
		return rc ? rc : 1;
	}
	size_t hn = (size_t)(slash - value);
	int n = 0, rc = TP_OK;
	if (hn > 253 && !(rc = invalid_part(res, path, value, hn,
					    "must be no more than 253 characters")))
		n++;
	if (!rc && !subdomain_shape(value, hn) &&
	    !(rc = invalid_part(res, path, value, hn, DNS1123_SUBDOMAIN_MSG)))
		n++;
	if (!rc && !http_path_ok(slash + 1) &&
	    !(rc = invalid_part(res, path, slash + 1, strlen(slash + 1),
				"Invalid path (regex used for validation is '" HTTP_PATH_FMT "')")))
		n++;
	return rc ? rc : n;
}
