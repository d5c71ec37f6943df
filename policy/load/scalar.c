/*
 * load/scalar.c — the type of a YAML scalar, as Kubernetes sees it.
 *
 * kubectl and the API server read YAML through sigs.k8s.io/yaml, which uses
 * go-yaml v2 and so YAML 1.1 typing: "yes" is a boolean, "0x1F" an integer,
 * "08" a float. The rules below follow go-yaml v2's resolve.go step by step
 * (the table of special words, then ParseInt with base 0, then ParseUint,
 * then its float pattern) so that a manifest means here what it means there.
 *
 * Deliberate differences: an explicit !!null is honoured (go-yaml v2 ignores
 * it and keeps the text), and !!binary/!!timestamp values stay the source
 * text (go-yaml v2 base64-decodes !!binary).
 */
#include "policy/load/load.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define YAML_TAG_PREFIX "tag:yaml.org,2002:"
#define NUM_MAX 128 /* longest number text worth trying; longer is a string */

static bool word_in(const char *s, size_t n, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == n && !memcmp(s, *words, n))
			return true;
	return false;
}

static const char *const true_words[] = { "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE",
					  "on", "On", "ON", NULL };
static const char *const false_words[] = { "n", "N", "no", "No", "NO", "false", "False",
					   "FALSE", "off", "Off", "OFF", NULL };
static const char *const null_words[] = { "", "~", "null", "Null", "NULL", NULL };
static const char *const nan_words[] = { ".nan", ".NaN", ".NAN", NULL };
static const char *const inf_words[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL };
static const char *const ninf_words[] = { "-.inf", "-.Inf", "-.INF", NULL };

/* go-yaml's resolve_map: exact words with a fixed meaning. */
static bool resolve_word(const char *s, size_t n, tp_yaml_scalar *out)
{
	if (word_in(s, n, true_words) || word_in(s, n, false_words)) {
		out->type = TP_YAML_BOOL;
		out->b = word_in(s, n, true_words);
	} else if (word_in(s, n, null_words)) {
		out->type = TP_YAML_NULL;
	} else if (word_in(s, n, nan_words)) {
		out->type = TP_YAML_FLOAT;
		out->d = NAN;
	} else if (word_in(s, n, inf_words) || word_in(s, n, ninf_words)) {
		out->type = TP_YAML_FLOAT;
		out->d = word_in(s, n, ninf_words) ? -INFINITY : INFINITY;
	} else if (n == 2 && !memcmp(s, "<<", 2)) {
		out->type = TP_YAML_MERGE;
	} else {
		return false;
	}
	return true;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

/* Go's strconv.ParseUint(s, 0, 64) on an unsigned text: 0x, 0o, 0b
 * prefixes, a leading 0 for octal. 1 on success, 0 on a syntax error,
 * -1 when the value does not fit in 64 bits. */
static int parse_u64(const char *s, unsigned long long *out)
{
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
		base = 8, s += 2;
	else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		base = 2, s += 2;
	else if (s[0] == '0' && s[1])
		base = 8, s += 1;
	if (!*s)
		return 0;
	unsigned long long v = 0;
	bool over = false;
	for (; *s; s++) {
		int d = digit_value(*s);
		if (d >= base)
			return 0;
		if (v > (~0ULL - (unsigned)d) / (unsigned)base)
			over = true;
		else
			v = v * (unsigned)base + (unsigned)d;
	}
	*out = v;
	return over ? -1 : 1;
}

/* yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool yaml_style_float(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	size_t digits = strspn(s, "0123456789");
	if (digits == 0) {
		if (*s != '.' || !strspn(s + 1, "0123456789"))
			return false;
		s += 1 + strspn(s + 1, "0123456789");
	} else {
		s += digits;
		if (*s == '.')
			s += 1 + strspn(s + 1, "0123456789");
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		size_t e = strspn(s, "0123456789");
		if (!e)
			return false;
		s += e;
	}
	return *s == '\0';
}

/* Go's ParseFloat refuses values out of range (1e400); so does go-yaml. */
static bool parse_float(const char *s, double *out)
{
	errno = 0;
	char *end;
	double d = strtod(s, &end);
	if (*end || (errno == ERANGE && isinf(d)))
		return false;
	*out = d;
	return true;
}

/* Numbers, for texts that start with a digit or a sign. */
static void resolve_number(const char *text, size_t n, tp_yaml_scalar *out)
{
	char plain[NUM_MAX];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) /* go-yaml drops every underscore first */
		if (text[i] != '_')
			plain[k++] = text[i];
	plain[k] = '\0';

	bool neg = plain[0] == '-';
	const char *digits = plain + (plain[0] == '-' || plain[0] == '+');
	unsigned long long u = 0;
	int ok = parse_u64(digits, &u);
	if (ok == 1 && !neg && u <= (unsigned long long)INT64_MAX) {
		out->type = TP_YAML_INT;
		out->i = (long long)u;
		return;
	}
	if (ok == 1 && neg && u <= (unsigned long long)INT64_MAX + 1) {
		out->type = TP_YAML_INT;
		out->i = u == (unsigned long long)INT64_MAX + 1 ? INT64_MIN : -(long long)u;
		return;
	}
	if (ok == 1 && digits == plain) { /* ParseUint takes no sign at all */
		out->type = TP_YAML_INT;
		out->is_uint = true;
		out->u = u;
		return;
	}
	double d;
	if (yaml_style_float(plain) && parse_float(plain, &d)) {
		out->type = TP_YAML_FLOAT;
		out->d = d;
	}
}

/* go-yaml's resolve() for an untagged plain scalar (or a resolvable tag). */
static void resolve_implicit(const char *s, size_t n, tp_yaml_scalar *out)
{
	out->type = TP_YAML_STR;
	if (resolve_word(s, n, out))
		return;
	if (n == 0 || n >= NUM_MAX)
		return;
	char c = s[0];
	if (c == '.') {
		char tmp[NUM_MAX];
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		double d;
		if (yaml_style_float(tmp) && parse_float(tmp, &d)) {
			out->type = TP_YAML_FLOAT;
			out->d = d;
		}
	} else if ((c >= '0' && c <= '9') || c == '-' || c == '+') {
		resolve_number(s, n, out);
	}
}

/* The short form of a tag ("!!int"), or the tag itself when it is not one
 * of YAML's own. */
static void short_tag(const char *tag, char *buf, size_t len)
{
	size_t pl = strlen(YAML_TAG_PREFIX);
	if (!strncmp(tag, YAML_TAG_PREFIX, pl))
		snprintf(buf, len, "!!%s", tag + pl);
	else
		snprintf(buf, len, "%s", tag);
}

static const char *type_tag(tp_yaml_type t)
{
	switch (t) {
	case TP_YAML_NULL:
		return "!!null";
	case TP_YAML_BOOL:
		return "!!bool";
	case TP_YAML_INT:
		return "!!int";
	case TP_YAML_FLOAT:
		return "!!float";
	case TP_YAML_MERGE:
		return "!!merge";
	case TP_YAML_STR:
		break;
	}
	return "!!str";
}

/* The type an explicit tag asks for, or -1 for tags that keep the text
 * (!!str, !!binary, !!timestamp, custom tags such as !foo or "!"). */
static int tag_type(const char *st)
{
	static const struct {
		const char *tag;
		tp_yaml_type type;
	} map[] = {
		{ "!!null", TP_YAML_NULL }, { "!!bool", TP_YAML_BOOL },	  { "!!int", TP_YAML_INT },
		{ "!!float", TP_YAML_FLOAT }, { "!!merge", TP_YAML_MERGE },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(st, map[i].tag))
			return (int)map[i].type;
	return -1;
}

int tp__yaml_resolve(const char *s, size_t n, const char *tag, bool plain, tp_yaml_scalar *out,
		     char *msg, size_t msglen)
{
	if (!s || !out)
		return TP_EINVAL;
	memset(out, 0, sizeof(*out));
	out->type = TP_YAML_STR;
	if (!tag) {
		/* Quoted scalars are strings; only plain ones are typed. */
		if (plain)
			resolve_implicit(s, n, out);
		return TP_OK;
	}
	char st[64];
	short_tag(tag, st, sizeof(st));
	int want = tag_type(st);
	if (want < 0)
		return TP_OK;
	resolve_implicit(s, n, out);
	if ((int)out->type == want)
		return TP_OK;
	if (want == TP_YAML_FLOAT && out->type == TP_YAML_INT) {
		/* go-yaml's one conversion: an integer under !!float. */
		out->d = out->is_uint ? (double)out->u : (double)out->i;
		out->type = TP_YAML_FLOAT;
		out->is_uint = false;
		return TP_OK;
	}
	if (msg && msglen)
		snprintf(msg, msglen, "cannot decode %s `%.*s` as a %s", type_tag(out->type),
			 (int)(n > 64 ? 64 : n), s, st);
	return TP_EPARSE;
}

/* Go's strconv.FormatFloat(f, 'g', -1, 32), which sigs.k8s.io/yaml uses for
 * float keys: the shortest digits that read back as the same float32, in
 * exponent form when the exponent is below -4 or at least 6. */
static int format_float32(double d, char *buf, size_t len)
{
	/* Go converts to float32 first: a double past FLT_MAX (1e39) is
	 * +Inf there too, and "%e" of an infinity has no 'e' to look for. */
	float f = (float)d;
	if (isnan(f))
		return snprintf(buf, len, ".nan");
	if (isinf(f))
		return snprintf(buf, len, f > 0 ? ".inf" : "-.inf");
	char tmp[64];
	int prec = 1;
	for (; prec < 9; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, (double)f);
		if (strtof(tmp, NULL) == f)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, (double)f);
	int exp = atoi(strchr(tmp, 'e') + 1);
	if (f == 0)
		exp = 0;
	if (exp < -4 || exp >= 6)
		return snprintf(buf, len, "%s", tmp);
	int decimals = prec - 1 - exp;
	return snprintf(buf, len, "%.*f", decimals > 0 ? decimals : 0, (double)f);
}

/* For TP_YAML_STR and TP_YAML_MERGE the caller uses the source text:
 * TP_EINVAL. */
int tp__yaml_key_text(const tp_yaml_scalar *sc, char *buf, size_t buflen)
{
	if (!sc || !buf || !buflen)
		return TP_EINVAL;
	int n;
	switch (sc->type) {
	case TP_YAML_NULL:
		return -1;
	case TP_YAML_BOOL:
		n = snprintf(buf, buflen, "%s", sc->b ? "true" : "false");
		break;
	case TP_YAML_INT:
		n = sc->is_uint ? snprintf(buf, buflen, "%llu", sc->u)
				: snprintf(buf, buflen, "%lld", sc->i);
		break;
	case TP_YAML_FLOAT:
		n = format_float32(sc->d, buf, buflen);
		break;
	default:
		return TP_EINVAL;
	}
	return n >= 0 && (size_t)n < buflen ? n : TP_ELIMIT;
}
