/*
 * pod/security_text.c — the string lists pod-security-admission's checks
 * build their details from (Go's []string and sets.String), and its phrase
 * helpers (joinQuote, pluralize), in the arena of one evaluation.
 */
#include "policy/pod/psa.h"

#include <stdarg.h>
#include <stdlib.h>

void tp__psa_add(psa_ctx *c, strs *s, const char *x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		const char **v = tp_arena_alloc(c->a, cap * sizeof(*v));
		if (!v) {
			c->rc = TP_ENOMEM;
			return;
		}
		if (s->n)
			memcpy(v, s->v, s->n * sizeof(*v));
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x ? x : "";
}

int tp__psa_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* sets.NewString(...).List(): sorted, each once. */
void tp__psa_sort_unique(strs *s)
{
	if (s->n < 2)
		return;
	qsort(s->v, s->n, sizeof(*s->v), tp__psa_cmp);
	size_t k = 1;
	for (size_t i = 1; i < s->n; i++)
		if (strcmp(s->v[i], s->v[k - 1]))
			s->v[k++] = s->v[i];
	s->n = k;
}

const char *tp__psa_join(psa_ctx *c, const strs *s, const char *sep, bool quote)
{
	tp_buf b = TP_BUF_INIT(1 << 20);
	int rc = tp_buf_adds(&b, "");
	for (size_t i = 0; !rc && i < s->n; i++)
		rc = tp_buf_addf(&b, "%s%s%s%s", i ? sep : "", quote ? "\"" : "", s->v[i],
				 quote ? "\"" : "");
	const char *out = rc ? NULL : tp_arena_strdup(c->a, b.data);
	tp_buf_free(&b);
	if (!out)
		c->rc = TP_ENOMEM;
	return out ? out : "";
}

/* joinQuote: "a", "b" */
const char *tp__psa_jq(psa_ctx *c, const strs *s)
{
	return tp__psa_join(c, s, ", ", true);
}

const char *tp__psa_fmt(psa_ctx *c, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	const char *s = tp_arena_vprintf(c->a, f, ap);
	va_end(ap);
	if (!s)
		c->rc = TP_ENOMEM;
	return s ? s : "";
}

/* "container \"a\"" / "containers \"a\", \"b\"" */
const char *tp__psa_containers(psa_ctx *c, const strs *names)
{
	return tp__psa_fmt(c, "%s %s", tp__psa_plural("container", "containers", names->n), tp__psa_jq(c, names));
}

bool tp__psa_in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

