/*
 * test_rotation_life.c — certs/rotation.c driven through whole CA lives with
 * an injected clock, the way webhook/certmgr.c drives it: a round at the
 * time the plan names; a write brings the Secret back through the watch and
 * so another round 5 ms later (931 writes in 5 s were measured with
 * --ca-validity 60s: 5.4 ms a write); the bundle is published at the end of
 * each round. Counted: Secret writes per CA life, certificates due the
 * moment they are made, rounds at which the Secret's pair does not serve,
 * and serving certificates whose CA was published less than the overlap
 * before they were served.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs/certs.h"
#include "tests/support/testutil.h"

#define MIN 60
#define HOUR 3600
#define DAY (24 * (int64_t)HOUR)
#define YEAR (365 * DAY)
#define T0 ((int64_t)1800000000) /* 2027-01-15 */
#define KICK_MS 5                /* a write comes back through the watch */
#define MAX_CAS 16

typedef struct life {
	/* in */
	int64_t validity, ca_validity, overlap;
	bool publish;   /* the webhook configurations keep the bundle written */
	int lives;      /* how many CA lives to run */
	long max_writes; /* give up past this many (the storm before the fix) */
	/* out */
	long writes, born_due, unserved, untrusted, rounds;
	int64_t min_gap; /* shortest time between two writes, seconds */
	double per_life;
} life;

/* When each CA (PEM text) first appeared in a published bundle. */
typedef struct trust {
	char *pem[MAX_CAS];
	int64_t since[MAX_CAS];
	int n;
} trust;

static void trust_add(trust *t, const char *bundle, int64_t now)
{
	const char *end = "-----END CERTIFICATE-----";
	for (const char *p = bundle; p && (p = strstr(p, "-----BEGIN CERTIFICATE-----"));) {
		const char *e = strstr(p, end);
		assert_non_null(e);
		size_t n = (size_t)(e + strlen(end) - p);
		bool seen = false;
		for (int i = 0; i < t->n; i++)
			seen |= strlen(t->pem[i]) == n && !strncmp(t->pem[i], p, n);
		if (!seen && t->n < MAX_CAS) {
			t->pem[t->n] = strndup(p, n);
			t->since[t->n++] = now;
		}
		p = e;
	}
}

static X509 *read_cert(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);
	BIO_free(b);
	return x;
}

/* Which published CA issued the serving certificate; -1: none. */
static int issuer_of(const trust *t, const char *leaf_pem)
{
	X509 *leaf = leaf_pem ? read_cert(leaf_pem) : NULL;
	int found = -1;
	for (int i = 0; leaf && i < t->n && found < 0; i++) {
		X509 *ca = read_cert(t->pem[i]);
		if (ca && X509_verify(leaf, X509_get0_pubkey(ca)) == 1)
			found = i;
		X509_free(ca);
	}
	X509_free(leaf);
	return found;
}

static bool serves(const tw_certs_managed *m, int64_t now)
{
	const char *names[] = { "trainer-webhook.kubeflow.svc" };
	tw_certs_check_opts o = { .cert_path = "tls.crt", .key_path = "tls.key",
				  .ca_path = "ca.crt", .cert_pem = m->tls_crt,
				  .key_pem = m->tls_key, .ca_pem = m->ca_crt, .names = names,
				  .nnames = 1, .now = now };
	tw_certs_report rep;
	return m->tls_crt && tw_certs_check(&o, &rep) == TW_CERTS_OK;
}

static tw_certs_plan rotate(const tw_certs_managed *in, const tw_certs_policy *p,
			    tw_certs_managed *out)
{
	tw_certs_plan plan;
	char err[512] = "";
	if (tw_certs_rotate(in, p, out, &plan, err, sizeof(err)))
		fail_msg("tw_certs_rotate: %s", err);
	return plan;
}

/* Right after a write, the Secret as written, at the same second and with
 * no write floor: does it want another change already? */
static bool due_at_birth(const tw_certs_managed *sec, tw_certs_policy p)
{
	tw_certs_managed again;
	p.last_write = 0;
	tw_certs_plan plan = rotate(sec, &p, &again);
	tw_certs_managed_free(&again);
	return plan.changed;
}

/* One round at now_ms; returns the time of the next one. */
static long long round_at(life *l, tw_certs_policy *p, tw_certs_managed *sec, char **published,
			  trust *t, long long now_ms, int64_t *last_write)
{
	p->now = now_ms / 1000;
	p->bundle_published = *published && sec->ca_crt && !strcmp(*published, sec->ca_crt);
	p->last_write = *last_write;
	tw_certs_managed out;
	tw_certs_plan plan = rotate(sec, p, &out);
	long long next = plan.next_at * 1000;
	l->rounds++;
	if (plan.changed) {
		if (l->writes && p->now - *last_write < l->min_gap)
			l->min_gap = p->now - *last_write;
		l->writes++;
		*last_write = p->now;
		tw_certs_managed_free(sec);
		*sec = out;
		l->born_due += due_at_birth(sec, *p);
		next = now_ms + KICK_MS;
	} else {
		tw_certs_managed_free(&out);
	}
	if (!serves(sec, p->now))
		l->unserved++;
	int ca = issuer_of(t, sec->tls_crt);
	/* The first CA serves before any bundle is published: nothing else can. */
	if (t->n && (ca < 0 || (ca > 0 && p->now < t->since[ca] + p->overlap)))
		l->untrusted++;
	if (l->publish) {
		free(*published);
		*published = strdup(sec->ca_crt);
		trust_add(t, sec->ca_crt, p->now);
	}
	return next > now_ms ? next : now_ms + KICK_MS;
}

static void run_life(life *l)
{
	tw_certs_policy p = { .service = "trainer-webhook", .namespace_ = "kubeflow",
			      .validity = l->validity, .ca_validity = l->ca_validity,
			      .overlap = l->overlap };
	tw_certs_managed sec = { 0 };
	char *published = NULL;
	trust t = { 0 };
	int64_t last_write = 0;
	long long now_ms = T0 * 1000, end = (T0 + l->lives * l->ca_validity) * 1000;
	l->writes = l->born_due = l->unserved = l->untrusted = l->rounds = 0;
	l->min_gap = INT64_MAX;
	while (now_ms < end && l->writes < l->max_writes)
		now_ms = round_at(l, &p, &sec, &published, &t, now_ms, &last_write);
	l->per_life = (double)l->writes * (double)l->ca_validity * 1000.0 /
		      (double)(now_ms - T0 * 1000);
	tw_certs_managed_free(&sec);
	free(published);
	for (int i = 0; i < t.n; i++)
		free(t.pem[i]);
}

static const char *dur(int64_t s, char *buf, size_t n)
{
	if (s % YEAR == 0)
		snprintf(buf, n, "%lldy", (long long)(s / YEAR));
	else if (s % DAY == 0)
		snprintf(buf, n, "%lldd", (long long)(s / DAY));
	else if (s % HOUR == 0)
		snprintf(buf, n, "%lldh", (long long)(s / HOUR));
	else if (s % MIN == 0)
		snprintf(buf, n, "%lldm", (long long)(s / MIN));
	else
		snprintf(buf, n, "%llds", (long long)s);
	return buf;
}

static void print_life(const life *l)
{
	char a[24], b[24], c[24];
	print_message("cert %-4s ca %-4s overlap %-3s %s: %ld writes, %.1f per CA life, "
		      "shortest gap %llds, due at birth %ld, unserved rounds %ld, untrusted %ld\n",
		      dur(l->validity, a, sizeof(a)), dur(l->ca_validity, b, sizeof(b)),
		      dur(l->overlap, c, sizeof(c)), l->publish ? "published" : "never published",
		      l->writes, l->per_life, (long long)(l->min_gap == INT64_MAX ? 0 : l->min_gap),
		      l->born_due, l->unserved, l->untrusted);
}

/* The case: `serve --manage-certs --ca-validity 60s` with the
 * default year of serving certificate and hour of overlap. The flags now
 * refuse it (test_rotation.c), but the rotation must not storm on it either:
 * before the fix every serving certificate was due when made, and the Secret
 * was written on every round (12,000 writes per CA life, simulated; 931 in
 * 5 s measured). */
static void short_ca_validity_does_not_storm(void **state)
{
	(void)state;
	life l = { .validity = YEAR, .ca_validity = 60, .overlap = HOUR, .publish = true,
		   .lives = 2, .max_writes = 200 };
	run_life(&l);
	print_life(&l);
	assert_int_equal(l.born_due, 0);
	assert_true(l.per_life <= 6);
	/* floor: a tenth of the 60 s CA */
	assert_true(l.min_gap >= 6);
}

/* Every combination of a grid that the flags allow, through two CA lives
 * (two CA rotations): nothing is due when made, the pair serves at every
 * round, a serving certificate's CA has been published for the overlap
 * before it serves, writes are the floor apart at least, and a CA life
 * costs the serving certificate's renewals (one per four fifths of it) and
 * a few writes for the CA. */
static void allowed_durations_renew_calmly(void **state)
{
	(void)state;
	const int64_t certs[] = { 5, 13, MIN, HOUR, 30 * DAY, YEAR };
	const int64_t cas[] = { 10, 47, 10 * MIN, 10 * HOUR, YEAR, 10 * YEAR };
	const int64_t overlaps[] = { 1, MIN, HOUR };
	int checked = 0;
	for (size_t i = 0; i < sizeof(certs) / sizeof(certs[0]); i++)
		for (size_t j = 0; j < sizeof(cas) / sizeof(cas[0]); j++)
			for (size_t k = 0; k < sizeof(overlaps) / sizeof(overlaps[0]); k++) {
				tw_certs_policy p = { .validity = certs[i], .ca_validity = cas[j],
						      .overlap = overlaps[k] };
				if (tw_certs_policy_check(&p, NULL, 0) != TW_CERTS_OK ||
				    cas[j] / certs[i] > 12) /* keeps the run short */
					continue;
				life l = { .validity = certs[i], .ca_validity = cas[j],
					   .overlap = overlaps[k], .publish = true, .lives = 2,
					   .max_writes = 3000 };
				run_life(&l);
				double bound = (double)cas[j] / (0.75 * (double)certs[i]) + 6;
				if (l.born_due || l.unserved || l.untrusted || l.per_life > bound ||
				    l.min_gap < tw_certs_write_floor(&p))
					print_life(&l);
				assert_int_equal(l.born_due, 0);
				assert_int_equal(l.unserved, 0);
				assert_int_equal(l.untrusted, 0);
				assert_true(l.per_life <= bound);
				assert_true(l.min_gap >= tw_certs_write_floor(&p));
				checked++;
			}
	assert_true(checked >= 15);
}

/* The same when the webhook configurations never keep the bundle (something
 * else puts its own caBundle back): no next CA is ever promoted by the
 * overlap, so the signing CA runs to its end and every serving certificate
 * is cut to it. Before the fix the last of them were due when made. */
static void unpublished_bundle_does_not_storm(void **state)
{
	(void)state;
	/* Short CA lives: while a next CA waits, the plan looks every 5 s. */
	const int64_t pairs[][3] = { { 5, 10, 1 }, { 13, 47, 4 }, { MIN, 10 * MIN, MIN },
				     { 10 * MIN, 10 * MIN, MIN } };
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		life l = { .validity = pairs[i][0], .ca_validity = pairs[i][1],
			   .overlap = pairs[i][2], .publish = false, .lives = 2,
			   .max_writes = 1000 };
		run_life(&l);
		print_life(&l);
		tw_certs_policy p = { .validity = l.validity, .ca_validity = l.ca_validity,
				      .overlap = l.overlap };
		assert_int_equal(l.born_due, 0);
		assert_true(l.per_life <= (double)l.ca_validity / (0.75 * (double)l.validity) + 12);
		assert_true(l.min_gap >= tw_certs_write_floor(&p));
	}
}

/* The defaults, through three ten-year CA lives: a serving certificate every
 * four fifths of a year and the CA's own writes, as before the fix. */
static void defaults_keep_their_schedule(void **state)
{
	(void)state;
	life l = { .validity = YEAR, .ca_validity = 10 * YEAR, .overlap = HOUR, .publish = true,
		   .lives = 2, .max_writes = 200 };
	run_life(&l);
	print_life(&l);
	assert_int_equal(l.born_due, 0);
	assert_int_equal(l.unserved, 0);
	assert_int_equal(l.untrusted, 0);
	assert_true(l.per_life >= 12 && l.per_life <= 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(short_ca_validity_does_not_storm),
		cmocka_unit_test(allowed_durations_renew_calmly),
		cmocka_unit_test(unpublished_bundle_does_not_storm),
		cmocka_unit_test(defaults_keep_their_schedule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
