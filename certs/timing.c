/*
 * timing.c — when managed certificates are made, come due and may be
 * written, and which durations work together (see certs.h, "managed
 * certificates"). Arithmetic only: rotation.c applies it.
 *
 * Why no certificate is ever due the moment it is made. A certificate made
 * at now ends at na (a CA: now + its validity; a serving certificate: the
 * same, cut to its signer's end) and starts at nb = now - backdate(na - now).
 * It is due when what is left is at most a fifth of its life, or one second.
 * With r = na - now, its life is r + min(r / 10, 1 h) <= 1.1 r, so a fifth of
 * it is at most 0.22 r < r; and one second < r once r >= 2. The backdate
 * follows what is left, not the validity asked for: a serving certificate of
 * the default year made ten minutes before its CA ends once started an hour
 * in the past, so it was 70 minutes long with 10 left, due at birth, and
 * rewritten on every round (931 Secret writes in 5 s with --ca-validity 60s).
 * A CA with less than two write floors left does not sign (rotation.c), so
 * every serving certificate has r >= 2 floors >= 2 s: never due at birth,
 * and not due again before the Secret may be written again.
 *
 * The write floor. Whatever the plan says, a replica writes the Secret at
 * most once per floor: a tenth of the shortest of the three durations,
 * between one second and a minute. What it stops is a cycle, a write that
 * makes another write due. It may also hold back a write the rotation needs
 * when the serving certificate's schedule and the CA's come due close
 * together, by less than a floor, which under the rules below every such
 * write can wait: a serving certificate lives at least its validity or,
 * cut to its CA, about the overlap (ten floors or more), so it comes due
 * with two floors or more left; a next CA joins with two overlaps left.
 *
 * The rules (tw_certs_policy_check), with L, C, O the serving certificate's
 * validity, the CA's and the overlap:
 *   - L <= C: a serving certificate never outlives its CA; a longer L is cut
 *     to the CA's life anyway, so asking for it is a mistake worth naming.
 *   - C >= 10 O: the next CA joins the bundle when a fifth of the signing
 *     CA's life is left (C / 5 >= 2 O), is trusted for O, then signs; the
 *     old CA still has at least O left then. Serving certificates the old
 *     CA signs before the switch therefore live at least O, and the switch
 *     never races the old CA's end. The default overlap is an hour whatever
 *     C is: it is the time API servers need to pick up a new caBundle, which
 *     does not shrink with the CA, so a short C needs a short overlap given
 *     explicitly rather than one scaled down in silence.
 *   - L >= 5 s: the fifth of a serving certificate's life left when it is
 *     renewed must be at least the one-second floor.
 * The defaults (L one year, C ten years, O one hour) meet all three.
 */
#include "certs/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define FLOOR_MIN 1
#define FLOOR_MAX 60
#define MIN_VALIDITY 5 /* a fifth of it is the one-second floor */
#define CA_PER_OVERLAP 10

int64_t tw_certs_backdate(int64_t left)
{
	return left / 10 < 3600 ? left / 10 : 3600;
}

bool tw_certs_due(int64_t nb, int64_t na, int64_t now)
{
	return now >= tw_certs_due_at(nb, na);
}

int64_t tw_certs_due_at(int64_t nb, int64_t na)
{
	int64_t margin = (na - nb) / 5;
	return na - (margin > 0 ? margin : 1);
}

int64_t tw_certs_validity(const tw_certs_policy *p)
{
	return p->validity > 0 ? p->validity : TW_CERTS_DEFAULT_VALIDITY;
}

int64_t tw_certs_ca_validity(const tw_certs_policy *p)
{
	return p->ca_validity > 0 ? p->ca_validity : TW_CERTS_DEFAULT_CA_VALIDITY;
}

int64_t tw_certs_overlap(const tw_certs_policy *p)
{
	return p->overlap > 0 ? p->overlap : TW_CERTS_DEFAULT_OVERLAP;
}

int64_t tw_certs_write_floor(const tw_certs_policy *p)
{
	int64_t shortest = tw_certs_validity(p);
	if (tw_certs_ca_validity(p) < shortest)
		shortest = tw_certs_ca_validity(p);
	if (tw_certs_overlap(p) < shortest)
		shortest = tw_certs_overlap(p);
	int64_t f = shortest / 10;
	return f < FLOOR_MIN ? FLOOR_MIN : f > FLOOR_MAX ? FLOOR_MAX : f;
}

/* s as a duration the flags take back: "8760h", "1h30m", "6s". */
static const char *duration_text(int64_t s, char *buf, size_t n)
{
	int64_t h = s / 3600, m = s % 3600 / 60, sec = s % 60;
	size_t len = 0;
	buf[0] = '\0';
	if (h)
		len += (size_t)snprintf(buf + len, n - len, "%" PRId64 "h", h);
	if (m && len < n)
		len += (size_t)snprintf(buf + len, n - len, "%" PRId64 "m", m);
	if ((sec || !len) && len < n)
		snprintf(buf + len, n - len, "%" PRId64 "s", sec);
	return buf;
}

/* `--flag "value"`, with " (the default)" when the flag was not given. */
static const char *flag_text(const char *flag, int64_t given, int64_t value, char *buf, size_t n)
{
	char d[32];
	snprintf(buf, n, "%s \"%s\"%s", flag, duration_text(value, d, sizeof(d)),
		 given > 0 ? "" : " (the default)");
	return buf;
}

/* Append one reason to err, "; "-separated. */
static void add_reason(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_reason(char *err, size_t errlen, const char *fmt, ...)
{
	size_t len = strlen(err);
	if (len && len + 2 < errlen)
		len += (size_t)snprintf(err + len, errlen - len, "; ");
	if (len >= errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + len, errlen - len, fmt, ap);
	va_end(ap);
}

int tw_certs_policy_check(const tw_certs_policy *p, char *err, size_t errlen)
{
	int64_t l = tw_certs_validity(p), c = tw_certs_ca_validity(p), o = tw_certs_overlap(p);
	char lf[64], cf[64], of[64], d1[32], d2[32];
	char local[8];
	if (!err || !errlen)
		err = local, errlen = sizeof(local);
	err[0] = '\0';
	flag_text("--cert-validity", p->validity, l, lf, sizeof(lf));
	flag_text("--ca-validity", p->ca_validity, c, cf, sizeof(cf));
	flag_text("--ca-overlap", p->overlap, o, of, sizeof(of));
	if (l < MIN_VALIDITY)
		add_reason(err, errlen, "%s is too short: the serving certificate is renewed when a "
			   "fifth of its life is left, which must be at least a second (the Secret "
			   "is written at most once a second); give --cert-validity \"%s\" or more",
			   lf, duration_text(MIN_VALIDITY, d1, sizeof(d1)));
	if (l > c)
		add_reason(err, errlen, "%s is longer than %s: a serving certificate never outlives "
			   "the CA that signs it; give --cert-validity \"%s\" or less, or a longer "
			   "--ca-validity", lf, cf, duration_text(c, d1, sizeof(d1)));
	if (c / CA_PER_OVERLAP < o) {
		char alt[64] = "";
		if (c / CA_PER_OVERLAP >= 1)
			snprintf(alt, sizeof(alt), ", or --ca-overlap \"%s\" or less",
				 duration_text(c / CA_PER_OVERLAP, d2, sizeof(d2)));
		add_reason(err, errlen, "%s is too short for %s: a next CA joins the bundle when a "
			   "fifth of the CA's life is left and is trusted for the overlap before it "
			   "signs, and the CA it replaces must still be valid for as long again; give "
			   "--ca-validity \"%s\" or more (ten times the overlap)%s", cf, of,
			   duration_text(o > INT64_MAX / CA_PER_OVERLAP ? o : o * CA_PER_OVERLAP, d1,
					 sizeof(d1)), alt);
	}
	return err[0] ? TW_CERTS_EINVAL : TW_CERTS_OK;
}
