/*
 * schema/pattern.c — the pattern most values under a Kubernetes CRD's
 * patterns are matched against: resource.Quantity's, which controller-gen
 * writes on every requests, limits and capacity map (the TrainJob CRD holds
 * it ten times, a runtime's twenty). It is matched here in C, by its
 * grammar, instead of by the regex engine (two of them, cpu and memory,
 * cost a TrainJob review 1,370 instructions in pcre2): the same answer for
 * every string (tests/unit/test_schema_fast.c compares them), and the
 * engine still takes a string longer than TP_SCH_QUANTITY_MAX, whose
 * match may stop at its limits.
 */
#include "policy/schema/schema.h"

#include <string.h>

/* As the CRDs write it (YAML unquoted; compile.c compares the text). */
static const char quantity[] =
	"^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
	"([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

bool tp__sch_is_quantity_pattern(const char *text)
{
	return !strcmp(text, quantity);
}

static bool digits(const char **p)
{
	const char *s = *p;
	while (*s >= '0' && *s <= '9')
		s++;
	bool any = s != *p;
	*p = s;
	return any;
}

/* ([0-9]+(\.[0-9]*)?)|(\.[0-9]+), taken whole: what follows a number
 * (a suffix, an exponent, the end) never starts with a digit or a dot, so
 * the longest number is the only one a match can use. */
static bool number(const char **p)
{
	const char *s = *p;
	if (digits(&s)) {
		if (*s == '.') {
			s++;
			digits(&s);
		}
	} else if (*s != '.' || (s++, !digits(&s))) {
		return false;
	}
	*p = s;
	return true;
}

static void sign(const char **p)
{
	if (**p == '+' || **p == '-')
		++*p;
}

bool tp__sch_quantity_match(const char *s)
{
	sign(&s);
	if (!number(&s))
		return false;
	if (!*s)
		return true;
	if (s[1] == 'i' && !s[2] && strchr("KMGTPE", s[0]))
		return true;
	if (!s[1] && strchr("numkMGTPE", s[0]))
		return true;
	if (s[0] != 'e' && s[0] != 'E')
		return false;
	s++;
	sign(&s);
	return number(&s) && !*s;
}
