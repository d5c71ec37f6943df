/*
 * test_regex.c — RE2 patterns on PCRE2: what Go's regexp accepts means the
 * same here, what it refuses is refused with its words.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "policy/core/regex.h"

static int match(const char *pattern, const char *s)
{
	tp_regex *re = NULL;
	char why[256] = "";
	int rc = tp__regex_compile(pattern, &re, why, sizeof(why));
	if (rc != TP_OK)
		print_message("%s: %s\n", pattern, why);
	assert_int_equal(rc, TP_OK);
	int m = tp__regex_match(re, s, strlen(s));
	tp__regex_free(re);
	return m;
}

/* Many matches of one compiled pattern, a match block kept between them:
 * answers that alternate between a match and none, from one thread and
 * from four at once (decider threads share the compiled CRDs). */
static tp_regex *shared_re;

static void *match_many(void *arg)
{
	long wrong = 0;
	for (int i = 0; i < 2000; i++) {
		const char *s = i % 2 ? "abc-123" : "ABC";
		wrong += tp__regex_match(shared_re, s, strlen(s)) != i % 2;
	}
	*(long *)arg = wrong;
	return NULL;
}

static void kept_match_block(void **state)
{
	(void)state;
	char why[256] = "";
	assert_int_equal(tp__regex_compile("^[a-z]+-[0-9]+$", &shared_re, why, sizeof(why)), TP_OK);
	long wrong[5] = { 0 };
	match_many(&wrong[0]);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, match_many, &wrong[i + 1]), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 5; i++)
		assert_int_equal(wrong[i], 0);
	tp__regex_free(shared_re); /* frees the kept block: valgrind and ASan see no leak */
}

static void refused(const char *pattern, const char *want)
{
	tp_regex *re = NULL;
	char why[256] = "";
	assert_int_equal(tp__regex_compile(pattern, &re, why, sizeof(why)), TP_EPARSE);
	assert_null(re);
	if (strcmp(why, want))
		print_message("%s: got \"%s\"\n", pattern, why);
	assert_string_equal(why, want);
}

/* The patterns of the shipped CRDs. */
static void crd_patterns(void **state)
{
	(void)state;
	const char *quantity = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|"
			       "[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";
	assert_int_equal(match(quantity, "4Gi"), 1);
	assert_int_equal(match(quantity, "500m"), 1);
	assert_int_equal(match(quantity, "4gi"), 0);
	assert_int_equal(match(quantity, "two"), 0);
	assert_int_equal(match("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$", "a_b:c"), 1);
	assert_int_equal(match("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$", "a_b:"), 0);
}

/* Go's MatchString searches: an unanchored pattern matches inside. */
static void unanchored_search(void **state)
{
	(void)state;
	assert_int_equal(match("b+", "abbbc"), 1);
	assert_int_equal(match("^b", "abc"), 0);
	/* $ without (?m) is the end of text only, never before a final newline. */
	assert_int_equal(match("a$", "a\n"), 0);
	assert_int_equal(match("(?m)a$", "a\nb"), 1);
}

/* Where RE2 and PCRE2 read the same text differently. */
static void re2_meanings(void **state)
{
	(void)state;
	/* \s is [\t\n\f\r ] in RE2: no vertical tab. */
	assert_int_equal(match("^\\s$", "\v"), 0);
	assert_int_equal(match("^\\s$", "\t"), 1);
	assert_int_equal(match("^\\S$", "\v"), 1);
	/* \v is the vertical tab itself. */
	assert_int_equal(match("^\\v$", "\v"), 1);
	assert_int_equal(match("^\\v$", "\n"), 0);
	/* \Q...\E quotes. */
	assert_int_equal(match("^\\Qa.b\\E$", "a.b"), 1);
	assert_int_equal(match("^\\Qa.b\\E$", "axb"), 0);
	/* Character classes and UTF-8: . is one code point. */
	assert_int_equal(match("^.$", "\xc3\xa9"), 1);
	assert_int_equal(match("^[[:alpha:]]+$", "abc"), 1);
	assert_int_equal(match("^\\pL+$", "\xc3\xa9t\xc3\xa9"), 1);
	assert_int_equal(match("^a{2,3}$", "aaa"), 1);
	assert_int_equal(match("^a{2,3}$", "aaaa"), 0);
	/* Invalid UTF-8 input is text that does not match, not a failure. */
	assert_int_equal(match("^a", "a\xff"), 1);
}

/* Go refuses these; so do we, with Go's words. */
static void go_refusals(void **state)
{
	(void)state;
	refused("(a", "missing closing ): `(a`");
	refused("a)", "unexpected ): `a)`");
	refused("[a", "missing closing ]: `[a`");
	refused("(?=a)", "invalid or unsupported Perl syntax: `(?=`");
	refused("(?!a)", "invalid or unsupported Perl syntax: `(?!`");
	refused("(?<=a)b", "invalid or unsupported Perl syntax: `(?<`");
	refused("(a)\\1", "invalid escape sequence: `\\1`");
	refused("a++", "invalid nested repetition operator: `++`");
	refused("a**", "invalid nested repetition operator: `**`");
	refused("*a", "missing argument to repetition operator: `*`");
	refused("a{1001}", "invalid repeat count: `{1001}`");
	refused("\\Z", "invalid escape sequence: `\\Z`");
}

static void translation(void **state)
{
	(void)state;
	tp_buf b = TP_BUF_INIT(0);
	char why[128];
	assert_int_equal(tp__regex_translate("\\s\\S", &b, why, sizeof(why)), TP_OK);
	assert_string_equal(b.data, "[\\t\\n\\f\\r\\x{20}][^\\t\\n\\f\\r\\x{20}]");
	tp_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crd_patterns),
		cmocka_unit_test(unanchored_search),
		cmocka_unit_test(re2_meanings),
		cmocka_unit_test(go_refusals),
		cmocka_unit_test(translation),
		cmocka_unit_test(kept_match_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
