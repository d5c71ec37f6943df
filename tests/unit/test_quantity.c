/*
 * test_quantity.c — Kubernetes quantities: parsing, arithmetic, rendering.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/core/internal.h"
#include "policy/core/quantity.h"
#include "tests/support/testutil.h"

static void assert_canonical(const char *in, const char *want)
{
	tp_quantity q;
	char buf[TP_QUANTITY_MAX_TEXT];
	assert_int_equal(tp__quantity_parse(in, &q), TP_OK);
	assert_int_equal(tp__quantity_format(&q, buf, sizeof(buf)), TP_OK);
	if (strcmp(buf, want))
		print_message("%s -> %s, want %s\n", in, buf, want);
	assert_string_equal(buf, want);
}

static void canonical_forms(void **state)
{
	(void)state;
	assert_canonical("500m", "500m");
	assert_canonical("2", "2");
	assert_canonical("1.5", "1500m");
	assert_canonical("0.5", "500m");
	assert_canonical("4Gi", "4Gi");
	assert_canonical("1.5Gi", "1536Mi");
	assert_canonical("1024", "1024");
	assert_canonical("1000", "1k");
	assert_canonical("1500", "1500");
	assert_canonical("12000", "12k");
	assert_canonical("1e3", "1e3");
	assert_canonical("100M", "100M");
	assert_canonical("0", "0");
	assert_canonical("0Gi", "0");
	assert_canonical("512Ki", "512Ki");
	assert_canonical("1024Ki", "1Mi");
	assert_canonical("0.1m", "100u");
	assert_canonical("1n", "1n");
	assert_canonical("0.0000000001", "1n"); /* rounded up to nano */
	assert_canonical("+3", "3");
	assert_canonical("-2", "-2");
	assert_canonical("1.50000000000000000000000", "1500m");
}

static void rejects_malformed(void **state)
{
	(void)state;
	tp_quantity q;
	const char *bad[] = { "", "m", ".", "1.2.3", "1x", "Gi", "1 Gi", "1Gii", "--1",
			      "1e", "1e+", "1ee3", "abc" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tp__quantity_parse(bad[i], &q) == TP_OK)
			print_message("accepted \"%s\"\n", bad[i]);
		assert_int_not_equal(tp__quantity_parse(bad[i], &q), TP_OK);
	}
	assert_int_equal(tp__quantity_parse("99999999999999999999", &q), TP_ELIMIT);
	assert_int_equal(tp__quantity_parse("9Ei", &q), TP_ELIMIT);
	assert_int_equal(tp__quantity_parse(NULL, &q), TP_EINVAL);
}

static void arithmetic(void **state)
{
	(void)state;
	tp_quantity a = { 0, 0, TP_QFMT_DECIMAL_SI }, b;
	char buf[TP_QUANTITY_MAX_TEXT];
	/* 3 × 500m + 2 = 3500m */
	assert_int_equal(tp__quantity_parse("500m", &b), TP_OK);
	assert_int_equal(tp__quantity_mul(&b, 3), TP_OK);
	assert_int_equal(tp__quantity_add(&a, &b), TP_OK);
	assert_int_equal(tp__quantity_parse("2", &b), TP_OK);
	assert_int_equal(tp__quantity_add(&a, &b), TP_OK);
	assert_int_equal(tp__quantity_format(&a, buf, sizeof(buf)), TP_OK);
	assert_string_equal(buf, "3500m");
	/* the sum keeps the first operand's format: 4Gi × 3 + 512Mi */
	tp_quantity m = { 0, 0, TP_QFMT_DECIMAL_SI };
	assert_int_equal(tp__quantity_parse("4Gi", &b), TP_OK);
	assert_int_equal(tp__quantity_mul(&b, 3), TP_OK);
	assert_int_equal(tp__quantity_add(&m, &b), TP_OK);
	assert_int_equal(tp__quantity_parse("512Mi", &b), TP_OK);
	assert_int_equal(tp__quantity_add(&m, &b), TP_OK);
	assert_int_equal(tp__quantity_format(&m, buf, sizeof(buf)), TP_OK);
	assert_string_equal(buf, "12800Mi");
	int64_t n;
	assert_int_equal(tp__quantity_parse("2500m", &b), TP_OK);
	assert_int_equal(tp__quantity_ceil(&b, &n), TP_OK);
	assert_int_equal(n, 3);
	assert_int_equal(tp__quantity_parse("2", &b), TP_OK);
	assert_int_equal(tp__quantity_ceil(&b, &n), TP_OK);
	assert_int_equal(n, 2);
	assert_int_equal(tp__quantity_parse("1k", &b), TP_OK);
	assert_int_equal(tp__quantity_ceil(&b, &n), TP_OK);
	assert_int_equal(n, 1000);
	/* comparison across scales and formats */
	tp_quantity x, y;
	assert_int_equal(tp__quantity_parse("1Ki", &x), TP_OK);
	assert_int_equal(tp__quantity_parse("1k", &y), TP_OK);
	assert_true(tp__quantity_cmp(&x, &y) > 0);
	assert_int_equal(tp__quantity_parse("1500m", &x), TP_OK);
	assert_int_equal(tp__quantity_parse("1.5", &y), TP_OK);
	assert_int_equal(tp__quantity_cmp(&x, &y), 0);
	/* overflow is reported, not wrapped */
	assert_int_equal(tp__quantity_parse("4Ei", &x), TP_OK);
	assert_int_equal(tp__quantity_mul(&x, 2), TP_ELIMIT);
}

static void from_json_numbers(void **state)
{
	(void)state;
	cJSON *v = tt_json("[2, 1.5, \"250m\", true, 1e30]");
	tp_quantity q;
	char buf[TP_QUANTITY_MAX_TEXT];
	assert_int_equal(tp__quantity_from_json(cJSON_GetArrayItem(v, 0), &q), TP_OK);
	assert_int_equal(tp__quantity_format(&q, buf, sizeof(buf)), TP_OK);
	assert_string_equal(buf, "2");
	assert_int_equal(tp__quantity_from_json(cJSON_GetArrayItem(v, 1), &q), TP_OK);
	assert_int_equal(tp__quantity_format(&q, buf, sizeof(buf)), TP_OK);
	assert_string_equal(buf, "1500m");
	assert_int_equal(tp__quantity_from_json(cJSON_GetArrayItem(v, 2), &q), TP_OK);
	assert_int_equal(tp__quantity_format(&q, buf, sizeof(buf)), TP_OK);
	assert_string_equal(buf, "250m");
	assert_int_equal(tp__quantity_from_json(cJSON_GetArrayItem(v, 3), &q), TP_EINVAL);
	assert_int_not_equal(tp__quantity_from_json(cJSON_GetArrayItem(v, 4), &q), TP_OK);
	cJSON_Delete(v);
}

static void small_buffer_is_a_limit(void **state)
{
	(void)state;
	tp_quantity q;
	char buf[3];
	assert_int_equal(tp__quantity_parse("1500m", &q), TP_OK);
	assert_int_equal(tp__quantity_format(&q, buf, sizeof(buf)), TP_ELIMIT);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(canonical_forms),
		cmocka_unit_test(rejects_malformed),
		cmocka_unit_test(arithmetic),
		cmocka_unit_test(from_json_numbers),
		cmocka_unit_test(small_buffer_is_a_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
