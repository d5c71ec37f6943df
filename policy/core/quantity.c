/*
 * core/quantity.c — Kubernetes resource quantities, after apimachinery's
 * resource.Quantity with its int64Amount representation.
 *
 * A quantity is value × 10^scale in int64 arithmetic. That covers every
 * quantity a pod spec holds in practice; what does not fit (more than 18
 * significant digits, sums past 9.2e18) is reported as TP_ELIMIT instead of
 * silently losing precision, since apimachinery would switch to arbitrary
 * precision there. Rendering follows Quantity.CanonicalizeBytes: the format
 * the text was written in, reduced to the largest unit that keeps an integral
 * mantissa ("1.5" → "1500m", 3 × "4Gi" → "12Gi", "1.5Gi" → "1536Mi").
 */
#include "policy/core/internal.h"
#include "policy/core/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SCALE (-9)

static bool mul64(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

static bool pow10_64(int n, int64_t *out)
{
	int64_t p = 1;
	for (int i = 0; i < n; i++)
		if (!mul64(p, 10, &p))
			return false;
	*out = p;
	return true;
}

/* v / 10^n rounded away from zero, as Quantity rounds below nano. */
static int64_t div_pow10_up(int64_t v, int n)
{
	int64_t p;
	if (!pow10_64(n, &p))
		return v == 0 ? 0 : (v > 0 ? 1 : -1);
	int64_t q = v / p;
	if (v % p)
		q += v > 0 ? 1 : -1;
	return q;
}

/* ------------------------------------------------------------------ parse */

static const struct {
	const char *suffix;
	int exp;     /* power of 10, or of 1024 when binary */
	bool binary;
} suffixes[] = {
	{ "Ki", 1, true }, { "Mi", 2, true }, { "Gi", 3, true },
	{ "Ti", 4, true }, { "Pi", 5, true }, { "Ei", 6, true },
	{ "n", -9, false }, { "u", -6, false }, { "m", -3, false }, { "", 0, false },
	{ "k", 3, false }, { "M", 6, false }, { "G", 9, false },
	{ "T", 12, false }, { "P", 15, false }, { "E", 18, false },
};

/* "e<signed int>" / "E<signed int>": the DecimalExponent suffix. */
static bool parse_exponent(const char *s, int *exp)
{
	if (*s != 'e' && *s != 'E')
		return false;
	s++;
	const char *digits = s + (*s == '+' || *s == '-');
	if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 4)
		return false;
	*exp = atoi(s);
	return true;
}

/* The digits and the decimal point; *rest is left at the suffix. */
static int parse_number(const char *s, int64_t *value, int32_t *scale, const char **rest)
{
	int64_t v = 0;
	int32_t sc = 0;
	int digits = 0;
	bool frac = false;
	for (;; s++) {
		if (*s == '.' && !frac) {
			frac = true;
			continue;
		}
		if (*s < '0' || *s > '9')
			break;
		digits++;
		int64_t next;
		if (!mul64(v, 10, &next) || __builtin_add_overflow(next, *s - '0', &next)) {
			/* Trailing zeros of a fraction change nothing; anything
			 * else needs more precision than we keep. */
			if (frac && *s == '0')
				continue;
			return TP_ELIMIT;
		}
		v = next;
		if (frac)
			sc--;
	}
	if (!digits)
		return TP_EINVAL;
	*value = v;
	*scale = sc;
	*rest = s;
	return TP_OK;
}

static int apply_suffix(const char *suffix, tp_quantity *q)
{
	int exp;
	if (parse_exponent(suffix, &exp)) {
		q->scale += exp;
		q->format = TP_QFMT_DECIMAL_EXP;
		return TP_OK;
	}
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(suffixes[i].suffix, suffix))
			continue;
		if (!suffixes[i].binary) {
			q->scale += suffixes[i].exp;
			q->format = TP_QFMT_DECIMAL_SI;
			return TP_OK;
		}
		for (int k = 0; k < suffixes[i].exp; k++)
			if (!mul64(q->value, 1024, &q->value))
				return TP_ELIMIT;
		q->format = TP_QFMT_BINARY_SI;
		return TP_OK;
	}
	return TP_EINVAL;
}

int tp__quantity_parse(const char *s, tp_quantity *out)
{
	if (!s || !out)
		return TP_EINVAL;
	tp_quantity q = { 0, 0, TP_QFMT_DECIMAL_SI };
	bool negative = *s == '-';
	if (*s == '+' || *s == '-')
		s++;
	const char *rest = NULL;
	int rc = parse_number(s, &q.value, &q.scale, &rest);
	if (rc)
		return rc;
	if ((rc = apply_suffix(rest, &q)))
		return rc;
	if (negative)
		q.value = -q.value;
	if (q.scale < MIN_SCALE) {
		q.value = div_pow10_up(q.value, MIN_SCALE - q.scale);
		q.scale = MIN_SCALE;
	}
	if (q.scale > 18 && q.value != 0)
		return TP_ELIMIT;
	if (q.value == 0)
		q.scale = 0;
	*out = q;
	return TP_OK;
}

int tp__quantity_from_json(const cJSON *v, tp_quantity *out)
{
	if (cJSON_IsString(v))
		return tp__quantity_parse(v->valuestring, out);
	if (!cJSON_IsNumber(v))
		return TP_EINVAL;
	/* A YAML number: render it as the string the API server would see. */
	char buf[64];
	long long i;
	if (tp_json_is_int(v, &i))
		snprintf(buf, sizeof(buf), "%lld", i);
	else
		snprintf(buf, sizeof(buf), "%.15g", v->valuedouble);
	if (strchr(buf, 'e') || strchr(buf, 'n') || strchr(buf, 'i'))
		return TP_EINVAL; /* 1e+20, inf, nan: not a quantity we keep */
	return tp__quantity_parse(buf, out);
}

/* ------------------------------------------------------------- arithmetic */

bool tp__quantity_is_zero(const tp_quantity *q)
{
	return q->value == 0;
}

/* v × 10^(from - to), from >= to. */
static bool rescale(int64_t v, int32_t from, int32_t to, int64_t *out)
{
	int64_t p;
	return pow10_64(from - to, &p) && mul64(v, p, out);
}

int tp__quantity_add(tp_quantity *acc, const tp_quantity *q)
{
	if (q->value == 0)
		return TP_OK;
	if (acc->value == 0) {
		*acc = *q;
		return TP_OK;
	}
	int32_t scale = acc->scale < q->scale ? acc->scale : q->scale;
	int64_t a, b;
	if (!rescale(acc->value, acc->scale, scale, &a) || !rescale(q->value, q->scale, scale, &b) ||
	    __builtin_add_overflow(a, b, &a))
		return TP_ELIMIT;
	acc->value = a;
	acc->scale = a ? scale : 0;
	return TP_OK;
}

int tp__quantity_cmp(const tp_quantity *a, const tp_quantity *b)
{
	int32_t scale = a->scale < b->scale ? a->scale : b->scale;
	int64_t x, y;
	if (rescale(a->value, a->scale, scale, &x) && rescale(b->value, b->scale, scale, &y))
		return (x > y) - (x < y);
	/* Past int64 at a common scale: the magnitudes differ so much that
	 * doubles tell them apart. */
	long double dx = (long double)a->value, dy = (long double)b->value;
	for (int i = 0; i < a->scale - scale; i++)
		dx *= 10;
	for (int i = 0; i < b->scale - scale; i++)
		dy *= 10;
	return (dx > dy) - (dx < dy);
}

int tp__quantity_mul(tp_quantity *q, int64_t n)
{
	if (!mul64(q->value, n, &q->value))
		return TP_ELIMIT;
	if (q->value == 0)
		q->scale = 0;
	return TP_OK;
}

int tp__quantity_ceil(const tp_quantity *q, int64_t *out)
{
	if (q->scale >= 0)
		return rescale(q->value, q->scale, 0, out) ? TP_OK : TP_ELIMIT;
	int64_t p;
	if (!pow10_64(-q->scale, &p))
		return TP_ELIMIT;
	int64_t r = q->value / p;
	if (q->value % p && q->value > 0)
		r++;
	*out = r;
	return TP_OK;
}

/* --------------------------------------------------------------- rendering */

static const char *decimal_suffix(int exp)
{
	switch (exp) {
	case -9: return "n";
	case -6: return "u";
	case -3: return "m";
	case 0: return "";
	case 3: return "k";
	case 6: return "M";
	case 9: return "G";
	case 12: return "T";
	case 15: return "P";
	case 18: return "E";
	}
	return NULL;
}

static int emit(char *buf, size_t n, int64_t mantissa, const char *suffix, int exp)
{
	int w = suffix ? snprintf(buf, n, "%lld%s", (long long)mantissa, suffix)
		       : snprintf(buf, n, "%llde%d", (long long)mantissa, exp);
	return w < 0 || (size_t)w >= n ? TP_ELIMIT : TP_OK;
}

/* int64Amount.AsCanonicalBytes: strip factors of ten, then bring the
 * exponent down to a multiple of three. */
static int format_decimal(const tp_quantity *q, tp_qformat f, char *buf, size_t n)
{
	int64_t m = q->value;
	int exp = q->scale;
	while (m % 10 == 0) {
		m /= 10;
		exp++;
	}
	int adjust = exp % 3 == 1 || exp % 3 == -2 ? 1 : exp % 3 == 2 || exp % 3 == -1 ? 2 : 0;
	for (int i = 0; i < adjust; i++) {
		if (!mul64(m, 10, &m))
			return TP_ELIMIT;
		exp--;
	}
	if (f == TP_QFMT_DECIMAL_EXP)
		return emit(buf, n, m, exp == 0 ? "" : NULL, exp);
	return emit(buf, n, m, decimal_suffix(exp), exp);
}

static int format_binary(int64_t bytes, char *buf, size_t n)
{
	static const char *const units[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	int k = 0;
	while (k < 6 && bytes % 1024 == 0) {
		bytes /= 1024;
		k++;
	}
	return emit(buf, n, bytes, units[k], 0);
}

int tp__quantity_format(const tp_quantity *q, char *buf, size_t n)
{
	if (!q || !buf || !n)
		return TP_EINVAL;
	if (q->value == 0)
		return emit(buf, n, 0, "", 0);
	if (q->format == TP_QFMT_BINARY_SI) {
		/* Binary units only for whole byte counts of at least 1Ki;
		 * anything else renders as DecimalSI, as upstream does. */
		int64_t bytes;
		if (q->scale >= 0 && rescale(q->value, q->scale, 0, &bytes) &&
		    (bytes >= 1024 || bytes <= -1024))
			return format_binary(bytes, buf, n);
		if (q->scale < 0) {
			int64_t p;
			if (pow10_64(-q->scale, &p) && q->value % p == 0 &&
			    (q->value / p >= 1024 || q->value / p <= -1024))
				return format_binary(q->value / p, buf, n);
		}
		return format_decimal(q, TP_QFMT_DECIMAL_SI, buf, n);
	}
	return format_decimal(q, q->format, buf, n);
}
