/*
 * schema/memo.c — one compiled tree for every copy of the same schema.
 *
 * The CRDs repeat big subtrees: a PodSpec under each runtime kind and the
 * JobSet, a Container under containers and initContainers, whole CRDs twice
 * (TrainingRuntime and ClusterTrainingRuntime). Compiled trees are read-only
 * once built, so a subtree written the same way is compiled once and shared:
 * the upstream CRDs compile to about half the memory.
 *
 * "The same" is a 128-bit hash of the subtree as compile reads it: every key
 * and value in order, except the description keywords of schema objects
 * (compile drops them), so two schemas share a tree only when they differ in
 * their documentation alone. The hash is core/hash.h's keyed SipHash, in
 * its 128-bit form: whoever writes a CRD can neither make two different
 * schemas hash equal (one would be checked with the other's tree) nor make
 * subtrees share a slot of the table (each lookup would walk them all), and
 * by chance a collision needs two different schemas among some ten thousand
 * with equal 128-bit hashes.
 */
#include "policy/core/hash.h"
#include "policy/schema/schema.h"

#include <stdlib.h>

typedef struct hash2 {
	uint64_t a, b;
} hash2;

static int hash_schema(tp_hasher *h, const cJSON *j);

/* Any JSON value, whole (enum values, defaults, rule texts, ...). */
static void hash_value(tp_hasher *h, const cJSON *v)
{
	unsigned char t = (unsigned char)(v->type & 0xff);
	tp__hasher_add(h, &t, 1);
	if (cJSON_IsString(v))
		tp__hasher_add_str(h, v->valuestring); /* the NUL separates neighbours */
	else if (cJSON_IsNumber(v))
		tp__hasher_add(h, &v->valuedouble, sizeof(v->valuedouble));
	for (const cJSON *c = v->child; c; c = c->next) {
		if (c->string)
			tp__hasher_add_str(h, c->string);
		hash_value(h, c);
	}
	tp__hasher_add(h, "}", 1);
}

int tp__sch_member_kind(const char *k)
{
	if (!strcmp(k, "items") || !strcmp(k, "additionalProperties") || !strcmp(k, "not"))
		return 1;
	if (!strcmp(k, "properties") || !strcmp(k, "allOf") || !strcmp(k, "anyOf") ||
	    !strcmp(k, "oneOf"))
		return 2;
	return 0;
}

/* A schema object; returns its height in schema levels. */
static int hash_schema(tp_hasher *h, const cJSON *j)
{
	int height = 0;
	if (!cJSON_IsObject(j)) {
		hash_value(h, j);
		return 0;
	}
	tp__hasher_add(h, "{", 1);
	for (const cJSON *m = j->child; m; m = m->next) {
		if (!strcmp(m->string, "description") && cJSON_IsString(m))
			continue;
		tp__hasher_add_str(h, m->string);
		int kind = tp__sch_member_kind(m->string);
		if (kind == 1 && cJSON_IsObject(m)) {
			int sub = hash_schema(h, m) + 1;
			height = sub > height ? sub : height;
		} else if (kind == 2 && (cJSON_IsObject(m) || cJSON_IsArray(m))) {
			unsigned char t = (unsigned char)(m->type & 0xff);
			tp__hasher_add(h, &t, 1);
			for (const cJSON *c = m->child; c; c = c->next) {
				if (c->string)
					tp__hasher_add_str(h, c->string);
				int sub = hash_schema(h, c) + 1;
				height = sub > height ? sub : height;
			}
			tp__hasher_add(h, "]", 1);
		} else {
			hash_value(h, m);
		}
	}
	tp__hasher_add(h, "}", 1);
	return height;
}

struct tp_sch_memo {
	hash2 key;
	int height;
	tp_sch *s;
	size_t rules, unsupported; /* counted once per copy, as if compiled again */
};

void tp__sch_memo_key(const cJSON *j, tp_sch_memo_key *out)
{
	tp_hasher h;
	tp__hasher_init128(&h);
	out->height = hash_schema(&h, j);
	uint64_t ab[2];
	tp__hasher_end128(&h, ab);
	out->a = ab[0];
	out->b = ab[1];
}

static size_t slot_of(const tp_crds *c, const tp_sch_memo_key *k)
{
	size_t mask = c->memo_cap - 1, i = (size_t)(k->a ^ k->b) & mask;
	while (c->memo[i].s && (c->memo[i].key.a != k->a || c->memo[i].key.b != k->b))
		i = (i + 1) & mask;
	return i;
}

const tp_sch *tp__sch_memo_get(tp_crds *c, const tp_sch_memo_key *k, int depth)
{
	if (!c->memo_cap)
		return NULL;
	const struct tp_sch_memo *m = &c->memo[slot_of(c, k)];
	if (!m->s || depth + m->height > TP_SCH_MAX_DEPTH)
		return NULL; /* too deep here: compile, and fail, as without sharing */
	c->rules += m->rules;
	c->rules_unsupported += m->unsupported;
	return m->s;
}

static int grow(tp_crds *c)
{
	size_t cap = c->memo_cap ? c->memo_cap * 2 : 1024;
	struct tp_sch_memo *old = c->memo, *v = calloc(cap, sizeof(*v));
	if (!v)
		return TP_ENOMEM;
	size_t n = c->memo_cap;
	c->memo = v;
	c->memo_cap = cap;
	for (size_t i = 0; i < n; i++)
		if (old[i].s) {
			tp_sch_memo_key k = { old[i].key.a, old[i].key.b, old[i].height };
			c->memo[slot_of(c, &k)] = old[i];
		}
	free(old);
	return TP_OK;
}

int tp__sch_memo_put(tp_crds *c, const tp_sch_memo_key *k, tp_sch *s, size_t rules,
		     size_t unsupported)
{
	if ((c->memo_n + 1) * 2 > c->memo_cap && grow(c))
		return TP_ENOMEM;
	struct tp_sch_memo *m = &c->memo[slot_of(c, k)];
	if (!m->s)
		c->memo_n++;
	*m = (struct tp_sch_memo){ { k->a, k->b }, k->height, s, rules, unsupported };
	return TP_OK;
}
