/*
 * test_index.c — the keyed lookups that keep the library linear
 * (core/hash.c, core/index.c): the hash, whole and in pieces, the table,
 * the indexes of members and of
 * list items, which must answer exactly what a scan answers, small or
 * large; the first repetitions of list-map keys; and tp_json_equal over
 * large objects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/index.h"
#include "policy/core/internal.h"
#include "tests/support/testutil.h"

/* n items {"name": "<prefix><i % mod>", "i": i} */
static cJSON *named_list(int n, int mod)
{
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "n%d", i % mod);
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "name", name);
		cJSON_AddNumberToObject(it, "i", i);
		cJSON_AddItemToArray(arr, it);
	}
	return arr;
}

/* What a scan finds: the first item whose name is name. */
static const cJSON *scan_named(const cJSON *arr, const char *name)
{
	return tp_find_named(arr, "name", name);
}

static void table_keeps_the_order_of_equal_hashes(void **state)
{
	(void)state;
	tp_htab t = TP_HTAB_INIT;
	static int v[200];
	/* all under one hash whose home slot is the last one: runs wrap around
	 * the end, and growing must keep their order */
	for (int i = 0; i < 200; i++)
		assert_int_equal(tp__htab_put(&t, (uint64_t)-1, &v[i]), TP_OK);
	size_t pos = 0;
	for (int i = 0; i < 200; i++)
		assert_ptr_equal(tp__htab_next(&t, (uint64_t)-1, &pos), &v[i]);
	assert_null(tp__htab_next(&t, (uint64_t)-1, &pos));
	/* a removed item is passed over, the run is not cut */
	assert_true(tp__htab_replace(&t, (uint64_t)-1, &v[3], NULL));
	assert_false(tp__htab_replace(&t, (uint64_t)-1, &v[3], NULL));
	pos = 0;
	assert_ptr_equal(tp__htab_next(&t, (uint64_t)-1, &pos), &v[0]);
	for (int i = 1; i < 3; i++)
		tp__htab_next(&t, (uint64_t)-1, &pos);
	assert_ptr_equal(tp__htab_next(&t, (uint64_t)-1, &pos), &v[4]);
	pos = 0;
	assert_null(tp__htab_next(&t, 12345, &pos));
	tp__htab_free(&t);
}

/* The hash of bytes given in pieces is the hash of them joined, wherever
 * they are cut, for every length around the 8-byte words; every byte
 * counts; a tuple of strings keeps its fields apart; the 128-bit form is
 * two words of its own. */
static void hash_in_pieces(void **state)
{
	(void)state;
	unsigned char text[40];
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (unsigned char)(i * 37 + 11);
	for (size_t n = 0; n <= sizeof(text); n++) {
		uint64_t whole = tp_hash_bytes(text, n);
		for (size_t a = 0; a <= n; a++)
			for (size_t b = a; b <= n; b++) {
				tp_hasher h;
				tp__hasher_init(&h);
				tp__hasher_add(&h, text, a);
				tp__hasher_add(&h, text + a, b - a);
				tp__hasher_add(&h, text + b, n - b);
				assert_true(tp__hasher_end(&h) == whole);
			}
		for (size_t i = 0; i < n; i++) { /* one byte changed: another hash */
			text[i] ^= 0x40;
			assert_true(tp_hash_bytes(text, n) != whole);
			text[i] ^= 0x40;
		}
		if (n)
			assert_true(tp_hash_bytes(text, n - 1) != whole); /* the length counts */
	}
	assert_true(tp__hash_str("metadata") == tp_hash_bytes("metadata", 8));

	tp_hasher x, y;
	tp__hasher_init(&x);
	tp__hasher_add_str(&x, "ab");
	tp__hasher_add_str(&x, "c");
	tp__hasher_init(&y);
	tp__hasher_add_str(&y, "a");
	tp__hasher_add_str(&y, "bc");
	assert_true(tp__hasher_end(&x) != tp__hasher_end(&y));

	uint64_t w1[2], w2[2];
	tp__hasher_init128(&x);
	tp__hasher_add(&x, text, sizeof(text));
	tp__hasher_end128(&x, w1);
	tp__hasher_init128(&y);
	tp__hasher_add(&y, text, 13);
	tp__hasher_add(&y, text + 13, sizeof(text) - 13);
	tp__hasher_end128(&y, w2);
	assert_true(w1[0] == w2[0] && w1[1] == w2[1]);
	assert_true(w1[0] != w1[1] && w1[0] != tp_hash_bytes(text, sizeof(text)));
}

static void json_hash_follows_equality(void **state)
{
	(void)state;
	cJSON *a = tt_json("{\"x\":[1,\"s\",{\"p\":true,\"q\":null}],\"y\":-0.0,\"z\":2}");
	cJSON *b = tt_json("{\"z\":2.0,\"y\":0,\"x\":[1.0,\"s\",{\"q\":null,\"p\":true}]}");
	cJSON *c = tt_json("{\"z\":2,\"y\":0,\"x\":[\"s\",1,{\"q\":null,\"p\":true}]}");
	assert_true(tp_json_equal(a, b));
	assert_int_equal(tp__hash_json(a), tp__hash_json(b));
	assert_false(tp_json_equal(a, c));
	assert_int_not_equal(tp__hash_json(a), tp__hash_json(c)); /* list order counts */
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
}

/* Small and large lists, with repeated names: the index answers what a
 * scan does, also for items appended, replaced and removed later. */
static void item_index_answers_as_a_scan(void **state)
{
	(void)state;
	static const int sizes[] = { 3, TP_INDEX_SCAN_MAX, TP_INDEX_SCAN_MAX + 1, 500 };
	for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
		int n = sizes[s];
		cJSON *arr = named_list(n, n / 2 + 1);
		tp_index ix;
		assert_int_equal(tp__index_items(&ix, arr, "name"), TP_OK);
		for (int k = 0; k <= n; k++) {
			char name[32];
			snprintf(name, sizeof(name), "n%d", k);
			assert_ptr_equal(tp__index_named(&ix, name), scan_named(arr, name));
		}
		/* appended: found, but never before an earlier item of its name */
		cJSON *extra = cJSON_CreateObject();
		cJSON_AddStringToObject(extra, "name", "fresh");
		cJSON_AddItemToArray(arr, extra);
		assert_int_equal(tp__index_add(&ix, extra), TP_OK);
		assert_ptr_equal(tp__index_named(&ix, "fresh"), extra);
		cJSON *again = cJSON_CreateObject();
		cJSON_AddStringToObject(again, "name", "n0");
		cJSON_AddItemToArray(arr, again);
		assert_int_equal(tp__index_add(&ix, again), TP_OK);
		assert_ptr_equal(tp__index_named(&ix, "n0"), scan_named(arr, "n0"));
		/* replaced where it stands */
		cJSON *first = (cJSON *)tp__index_named(&ix, "n1");
		cJSON *repl = cJSON_CreateObject();
		cJSON_AddStringToObject(repl, "name", "n1");
		tp__index_swap(&ix, first, repl);
		cJSON_ReplaceItemViaPointer(arr, first, repl);
		assert_ptr_equal(tp__index_named(&ix, "n1"), repl);
		/* a key of another type is another key */
		cJSON *num = cJSON_CreateNumber(1);
		assert_null(tp__index_item(&ix, num));
		cJSON_Delete(num);
		tp__index_free(&ix);
		cJSON_Delete(arr);
	}
}

static void item_index_keys_of_any_type(void **state)
{
	(void)state;
	char text[4096] = "[";
	for (int i = 0; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s{\"containerPort\":%d}", i ? "," : "", 8000 + i);
	strcat(text, ",{\"containerPort\":{\"a\":1,\"b\":[2]}},{\"other\":1}]");
	cJSON *arr = tt_json(text);
	tp_index ix;
	assert_int_equal(tp__index_items(&ix, arr, "containerPort"), TP_OK);
	cJSON *port = tt_json("8005.0"); /* 8005 == 8005.0, as tp_json_equal has it */
	assert_ptr_equal(tp__index_item(&ix, port), cJSON_GetArrayItem(arr, 5));
	cJSON *obj = tt_json("{\"b\":[2],\"a\":1}");
	assert_ptr_equal(tp__index_item(&ix, obj), cJSON_GetArrayItem(arr, 40));
	cJSON_Delete(port);
	cJSON_Delete(obj);
	tp__index_free(&ix);
	cJSON_Delete(arr);
}

static void member_index_answers_as_tp_member(void **state)
{
	(void)state;
	cJSON *obj = cJSON_CreateObject();
	for (int i = 0; i < 300; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		cJSON_AddNumberToObject(obj, k, i);
	}
	tp_index ix;
	assert_int_equal(tp__index_members(&ix, obj), TP_OK);
	assert_true(ix.hashed);
	for (int i = 0; i < 310; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		assert_ptr_equal(tp__index_member(&ix, k), tp_member(obj, k));
	}
	cJSON *gone = (cJSON *)tp__index_member(&ix, "k7");
	tp__index_remove(&ix, gone);
	cJSON_Delete(cJSON_DetachItemViaPointer(obj, gone));
	assert_null(tp__index_member(&ix, "k7"));
	assert_ptr_equal(tp__index_member(&ix, "k8"), tp_member(obj, "k8"));
	tp__index_free(&ix);
	/* not an object: nothing, and nothing to free */
	assert_int_equal(tp__index_members(&ix, NULL), TP_OK);
	assert_null(tp__index_member(&ix, "k1"));
	tp__index_free(&ix);
	cJSON_Delete(obj);
}

static void record(void *ctx, const cJSON *item, int i)
{
	(void)item;
	tp_buf *b = ctx;
	tp_buf_addf(b, "%d,", i);
}

/* Each repeated key once, at its first repetition: the same on the short
 * path (a scan) and the long one (a table). */
static void first_repeats_short_and_long(void **state)
{
	(void)state;
	cJSON *small = tt_json("[{\"name\":\"a\"},{\"name\":\"a\"},{\"name\":\"b\"},{},{\"name\":\"a\"},"
			       "{\"name\":\"b\"},{\"name\":7},7,{\"name\":\"c\"}]");
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__index_first_repeats(small, "name", record, &b), TP_OK);
	assert_string_equal(b.data, "1,5,");
	tp_buf_free(&b);
	/* the same names with padding past TP_INDEX_SCAN_MAX, then again */
	cJSON *big = cJSON_Duplicate(small, 1);
	for (int i = 0; i < 40; i++) {
		char name[16];
		snprintf(name, sizeof(name), "p%d", i);
		cJSON *it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "name", name);
		cJSON_AddItemToArray(big, it);
	}
	cJSON_AddItemToArray(big, cJSON_Duplicate(cJSON_GetArrayItem(small, 8), 1));
	tp_buf_init(&b, 0);
	assert_int_equal(tp__index_first_repeats(big, "name", record, &b), TP_OK);
	assert_string_equal(b.data, "1,5,49,");
	tp_buf_free(&b);
	cJSON_Delete(small);
	cJSON_Delete(big);
}

static void string_set(void **state)
{
	(void)state;
	tp_strset s = TP_STRSET_INIT;
	char names[100][16];
	bool added;
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "s%d", i % 60);
		assert_int_equal(tp__strset_add(&s, names[i], &added), TP_OK);
		assert_int_equal(added, i < 60);
	}
	assert_true(tp__strset_has(&s, "s59"));
	assert_false(tp__strset_has(&s, "s60"));
	tp__strset_free(&s);
}

/* Large objects compare through a table; the answers are a scan's. */
static void equal_large_objects(void **state)
{
	(void)state;
	cJSON *a = cJSON_CreateObject(), *b = cJSON_CreateObject();
	for (int i = 0; i < 100; i++) {
		char k[16];
		snprintf(k, sizeof(k), "k%d", i);
		cJSON_AddNumberToObject(a, k, i);
		snprintf(k, sizeof(k), "k%d", 99 - i);
		cJSON_AddNumberToObject(b, k, 99 - i);
	}
	assert_true(tp_json_equal(a, b));
	cJSON_AddStringToObject(a, "time", "t1");
	cJSON_AddStringToObject(b, "time", "t2");
	assert_false(tp_json_equal(a, b));
	assert_true(tp_json_equal_except(a, b, "time"));
	cJSON_ReplaceItemInObject(b, "k42", cJSON_CreateNumber(0));
	assert_false(tp_json_equal_except(a, b, "time"));
	cJSON_Delete(a);
	cJSON_Delete(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hash_in_pieces),
		cmocka_unit_test(table_keeps_the_order_of_equal_hashes),
		cmocka_unit_test(json_hash_follows_equality),
		cmocka_unit_test(item_index_answers_as_a_scan),
		cmocka_unit_test(item_index_keys_of_any_type),
		cmocka_unit_test(member_index_answers_as_tp_member),
		cmocka_unit_test(first_repeats_short_and_long),
		cmocka_unit_test(string_set),
		cmocka_unit_test(equal_large_objects),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
