/*
 * core/regex.h — regular expressions with Go's (RE2's) meaning, for CRD
 * `pattern`s and CEL's `matches`. Internal to policy/.
 *
 * kube-openapi and cel-go both match with Go's regexp package, so a pattern
 * means what RE2's syntax says. The engine underneath is PCRE2 (Debian's
 * libpcre2-8: packaged, maintained, a C API, a JIT); core/regex.c translates
 * RE2 syntax into PCRE2 syntax where the two differ and refuses what Go
 * refuses (backreferences, lookaround, possessive quantifiers, \Z, ...), so
 * a pattern the API server would reject is never half-accepted here.
 */
#ifndef TP_CORE_REGEX_H
#define TP_CORE_REGEX_H

#include "policy/trainpolicy.h"

typedef struct tp_regex tp_regex;

/* Compile an RE2-syntax pattern. TP_OK and *out, or TP_EPARSE with Go's
 * words in why ("missing closing ): `(a`"), or TP_ENOMEM. */
int tp__regex_compile(const char *pattern, tp_regex **out, char *why, size_t whylen);
/* Unanchored search of s[0..n) (Go's MatchString): 1 found, 0 not found,
 * TP_ELIMIT when the match gave up (PCRE2's backtracking limits), TP_ENOMEM. */
int tp__regex_match(const tp_regex *re, const char *s, size_t n);
void tp__regex_free(tp_regex *re);

/* The PCRE2 pattern a RE2 pattern becomes (tests, diagnostics). TP_OK and
 * the text appended to out, or TP_EPARSE with why. */
int tp__regex_translate(const char *pattern, tp_buf *out, char *why, size_t whylen);

#endif
