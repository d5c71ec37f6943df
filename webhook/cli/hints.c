/*
 * hints.c — the sentence after the API server's text that says what to
 * write instead. Quantities are the commonest mistake: people write the
 * units of other tools (GB, Gib, K), words, or a stray letter, and the API
 * server answers with a 120-character regular expression. The suggestions
 * made here are built from the number the user wrote and a unit of
 * Kubernetes' list, so each one is a valid quantity.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "webhook/cli/hints.h"

/* ------------------------------------------------------------ quantities */

/* "one" .. "ten": a number written as a word; -1 means it is none. */
static int word_number(const char *s)
{
	static const char *const words[] = { "zero", "one", "two", "three", "four", "five",
					     "six", "seven", "eight", "nine", "ten" };
	for (int i = 0; i < (int)(sizeof(words) / sizeof(words[0])); i++)
		if (!strcasecmp(s, words[i]))
			return i;
	return -1;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);
	return a >= b && !strcmp(s + a - b, tail);
}

/* What kind of amount the field holds, for the example units. */
static const char *units_for(const char *field)
{
	if (field && (ends_with(field, ".cpu") || ends_with(field, "[cpu]")))
		return "a number of cores, like 2 or 500m";
	if (field && strstr(field, "gpu"))
		return "a whole number of devices, like 1 or 2";
	return "a number with an optional unit: Ki Mi Gi Ti Pi Ei (powers of 1024), "
	       "k M G T P E (powers of 1000) or m (thousandths), like 4Gi or 500m";
}

/* The unit (lowercased, without a trailing "b"/"ib") as Kubernetes writes
 * it: "g" -> "G" / "Gi". NULL when there is no such prefix. */
static const char *decimal_unit(char c)
{
	switch (tolower((unsigned char)c)) {
	case 'k': return "k";
	case 'm': return "M";
	case 'g': return "G";
	case 't': return "T";
	case 'p': return "P";
	case 'e': return "E";
	default: return NULL;
	}
}

/* A unit of another tool (GB, Gib, K) as Kubernetes writes it; false when
 * unit is none of those. */
static bool hint_unit(const char *num, const char *unit, char *out, size_t n)
{
	char u[8];
	size_t len = strlen(unit);
	for (size_t i = 0; i < len && i < sizeof(u) - 1; i++)
		u[i] = (char)tolower((unsigned char)unit[i]);
	u[len < sizeof(u) - 1 ? len : sizeof(u) - 1] = '\0';
	const char *dec = len ? decimal_unit(u[0]) : NULL;
	char bin = len ? (char)toupper((unsigned char)u[0]) : 0;
	if (!strcmp(u, "b"))
		snprintf(out, n, "use %s (a number of bytes takes no unit), or %sKi, %sMi, %sGi",
			 num, num, num, num);
	else if (dec && (!strcmp(u + 1, "ib") || !strcmp(u + 1, "i")))
		snprintf(out, n, "did you mean %s%ci?", num, bin); /* 4Gib, 4gi, 4GiB */
	else if (dec && !strcmp(u + 1, "b"))
		snprintf(out, n, "use %s%ci or %s%s", num, bin, num, dec); /* 4GB, 4gb */
	else if (dec && !u[1]) /* 4K, 4g: the wrong case of a unit */
		snprintf(out, n, "did you mean %s%s or %s%ci?", num, dec, num, bin);
	else
		return false;
	return true;
}

void tw_hint_quantity(const char *field, const char *s, char *out, size_t n)
{
	out[0] = '\0';
	if (!s)
		return;
	while (isspace((unsigned char)*s))
		s++;
	int word = word_number(s);
	if (word >= 0) {
		snprintf(out, n, "use %d (quantities are digits: %s)", word, units_for(field));
		return;
	}
	/* the number: sign, digits, a point, digits */
	const char *p = s;
	if (*p == '+' || *p == '-')
		p++;
	size_t digits = 0;
	for (; isdigit((unsigned char)*p) || *p == '.'; p++)
		digits += isdigit((unsigned char)*p) != 0;
	if (!digits) {
		snprintf(out, n, "write %s", units_for(field));
		return;
	}
	char num[64];
	snprintf(num, sizeof(num), "%.*s", (int)(p - s), s);
	while (isspace((unsigned char)*p))
		p++;
	char unit[32];
	snprintf(unit, sizeof(unit), "%s", p);
	size_t ul = strlen(unit);
	while (ul && isspace((unsigned char)unit[ul - 1]))
		unit[--ul] = '\0';
	if (!ul) { /* "4 " or " 4": only the spaces were wrong */
		snprintf(out, n, "did you mean %s?", num);
		return;
	}
	if (!hint_unit(num, unit, out, n))
		snprintf(out, n, "\"%s\" is no unit of a quantity: write %s", unit, units_for(field));
}

/* ------------------------------------------------------------ names */

void tw_hint_name(const char *kind, bool label, const char *name, char *out, size_t n)
{
	const char *rule = label
		? "a DNS label: at most 63 characters, lowercase letters, digits and '-', "
		  "starting with a letter and ending with a letter or digit"
		: "a DNS subdomain: at most 253 characters, lowercase letters, digits, '-' and "
		  "'.', starting and ending with a letter or digit";
	if (!name) {
		snprintf(out, n, "give the %s a metadata.name (%s)", kind && *kind ? kind : "object",
			 rule);
		return;
	}
	char fixed[64];
	size_t k = 0;
	for (const char *p = name; *p && k < sizeof(fixed) - 1 && k < 63; p++) {
		char c = (char)tolower((unsigned char)*p);
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!label && c == '.');
		if (!ok)
			c = '-';
		if (c == '-' && (!k || fixed[k - 1] == '-'))
			continue; /* no leading or doubled '-' */
		if (label && !k && !(c >= 'a' && c <= 'z'))
			continue; /* a label starts with a letter */
		fixed[k++] = c;
	}
	while (k && (fixed[k - 1] == '-' || fixed[k - 1] == '.'))
		k--;
	fixed[k] = '\0';
	if (k)
		snprintf(out, n, "a %s name is %s; try \"%s\"", kind && *kind ? kind : "", rule, fixed);
	else
		snprintf(out, n, "a %s name is %s", kind && *kind ? kind : "", rule);
}

/* ------------------------------------------------------------ near names */

/* ------------------------------------------------------------ guide fields */

void tw_hint_guide_field(const char *field, const char *written, char *out, size_t n)
{
	static const char other_crds[] = "or give --crds of a Trainer whose runtimes have it";
	out[0] = '\0';
	if (!field || !ends_with(field, "mlPolicy.torch.numProcPerNode")) {
		if (field && ends_with(field, "mlPolicy.torch.elasticPolicy"))
			snprintf(out, n, "the Trainer of these CRDs has no elastic training: remove "
				 "it, %s", other_crds);
		return;
	}
	/* Trainer v2.3.0 moved it to the TrainJob, an integer (its CRD's
	 * TrainJob.spec.trainer.numProcPerNode, format int32) */
	bool number = written && *written && strspn(written, "0123456789") == strlen(written);
	snprintf(out, n, "the Trainer of these CRDs takes it from each TrainJob: remove it here "
		 "and write spec.trainer.numProcPerNode: %s in the TrainJobs (an integer, the "
		 "processes per node%s), %s", number ? written : "N",
		 number ? "" : ", such as the GPUs of a node", other_crds);
}

size_t tw_edit_distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return max + 1;
	if ((la > lb ? la - lb : lb - la) > max)
		return max + 1;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] > max ? max + 1 : d[la][lb];
}

bool tw_is_near(const char *typed, const char *candidate)
{
	size_t len = strlen(typed), max = len < 6 ? 1 : len < 12 ? 2 : 3;
	return strcmp(typed, candidate) && tw_edit_distance(typed, candidate, max) <= max;
}
