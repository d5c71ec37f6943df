/*
 * test_names.c — policy/core/names.c's IsQualifiedName and IsValidLabelValue:
 * every message apimachinery gives, in its order (k8s.io/apimachinery
 * pkg/util/validation, TestIsQualifiedName and TestIsValidLabelValue's
 * cases), and the first of them from the one-message checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "policy/core/internal.h"

#define NAME_PART_RE                                                                        \
	"must consist of alphanumeric characters, '-', '_' or '.', and must start and end " \
	"with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex " \
	"used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define SUBDOMAIN_RE                                                                            \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "    \
	"regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"     \
	"[a-z0-9])?)*')"

static char *repeat(char c, size_t n, const char *tail)
{
	static char buf[512];
	memset(buf, c, n);
	strcpy(buf + n, tail);
	return buf;
}

/* The messages for s are exactly want (NULL-terminated), in order. */
static void qualified(const char *s, const char *const *want)
{
	const char *got[TP_NAME_MSGS_MAX];
	size_t n = tp__qualified_name_msgs(s, got), k = 0;
	for (; want[k]; k++) {
		if (k >= n)
			fail_msg("%s: message %zu missing: %s", s, k, want[k]);
		assert_string_equal(got[k], want[k]);
	}
	assert_int_equal(n, k);
	if (k)
		assert_string_equal(tp__check_qualified_name(s), want[0]);
	else
		assert_null(tp__check_qualified_name(s));
}

/* TestIsQualifiedName's successCases. */
static void qualified_names_accepted(void **state)
{
	(void)state;
	static const char *const none[] = { NULL };
	const char *ok[] = { "simple", "now-with-dashes", "1-starts-with-num", "1234",
			     "simple/simple", "now-with-dashes/simple",
			     "now-with-dashes/now-with-dashes", "now.with.dots/simple",
			     "now-with.dashes-and.dots/simple", "1-num.2-num/3-num", "1234/5678",
			     "1.2.3.4/5678", "Uppercase_Is_OK_123",
			     "example.com/Uppercase_Is_OK_123", "requests.storage-foo" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		qualified(ok[i], none);
	qualified(repeat('a', 63, ""), none);
	char both[400];
	memset(both, 'a', 253);
	both[253] = '/';
	memset(both + 254, 'b', 63);
	both[317] = '\0';
	qualified(both, none);
}

/* TestIsQualifiedName's errorCases, each with every message it gets. */
static void qualified_names_refused(void **state)
{
	(void)state;
	qualified("nospecialchars%^=@", (const char *const[]){ "name part " NAME_PART_RE, NULL });
	qualified("cantendwithadash-", (const char *const[]){ "name part " NAME_PART_RE, NULL });
	qualified("-cantstartwithadash-",
		  (const char *const[]){ "name part " NAME_PART_RE, NULL });
	qualified("only/one/slash",
		  (const char *const[]){ "a qualified name " NAME_PART_RE
					 " with an optional DNS subdomain prefix and '/' (e.g. "
					 "'example.com/MyName')",
					 NULL });
	qualified("Example.com/abc", (const char *const[]){ "prefix part " SUBDOMAIN_RE, NULL });
	qualified("example_com/abc", (const char *const[]){ "prefix part " SUBDOMAIN_RE, NULL });
	qualified("example.com/", (const char *const[]){ "name part must be non-empty",
							 "name part " NAME_PART_RE, NULL });
	qualified("/simple", (const char *const[]){ "prefix part must be non-empty", NULL });
	qualified(repeat('a', 64, ""),
		  (const char *const[]){ "name part must be no more than 63 characters", NULL });
	qualified(repeat('a', 254, "/abc"),
		  (const char *const[]){ "prefix part must be no more than 253 characters", NULL });
	/* two of each: a prefix too long and malformed, a name too long and
	 * malformed */
	qualified(repeat('A', 254, "/abc"),
		  (const char *const[]){ "prefix part must be no more than 253 characters",
					 "prefix part " SUBDOMAIN_RE, NULL });
	qualified(repeat('a', 64, "-"),
		  (const char *const[]){ "name part must be no more than 63 characters",
					 "name part " NAME_PART_RE, NULL });
	qualified("", (const char *const[]){ "name part must be non-empty",
					     "name part " NAME_PART_RE, NULL });
}

#define LABEL_VALUE_RE                                                                           \
	"a valid label must be an empty string or consist of alphanumeric characters, '-', '_' " \
	"or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "    \
	"'my_value',  or '12345', regex used for validation is "                                  \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

/* TestIsValidLabelValue's cases, and a value both too long and malformed. */
static void label_values(void **state)
{
	(void)state;
	const char *msgs[TP_NAME_MSGS_MAX];
	const char *ok[] = { "simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1",
			     "1234", "" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		assert_int_equal(tp__label_value_msgs(ok[i], msgs), 0);
		assert_null(tp__check_label_value(ok[i]));
	}
	assert_int_equal(tp__label_value_msgs(repeat('a', 63, ""), msgs), 0);
	const char *bad[] = { "nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun",
			      "\\backslashes\\are\\bad", "-starts-with-dash", "ends-with-dash-",
			      ".starts.with.dot", "ends.with.dot." };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(tp__label_value_msgs(bad[i], msgs), 1);
		assert_string_equal(msgs[0], LABEL_VALUE_RE);
	}
	assert_int_equal(tp__label_value_msgs(repeat('a', 64, ""), msgs), 1);
	assert_string_equal(msgs[0], "must be no more than 63 characters");
	assert_int_equal(tp__label_value_msgs(repeat('a', 64, "-"), msgs), 2);
	assert_string_equal(msgs[0], "must be no more than 63 characters");
	assert_string_equal(msgs[1], LABEL_VALUE_RE);
	assert_string_equal(tp__check_label_value(repeat('a', 64, "-")),
			    "must be no more than 63 characters");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(qualified_names_accepted),
		cmocka_unit_test(qualified_names_refused),
		cmocka_unit_test(label_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
