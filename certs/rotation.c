/*
 * rotation.c — what the managed Secret should hold at a given time (see
 * certs.h, "managed certificates"). Pure: PEM text and a clock in, PEM text
 * and a plan out; the certificate manager (webhook/cluster/certmgr.c) does the I/O.
 *
 * Validity windows start a little in the past (a tenth of what is left, at
 * most an hour, as cert-controller backdates by an hour) so that a clock
 * slightly behind ours still accepts a fresh certificate. Renewal comes due
 * when less than a fifth of a certificate's life is left: 73 days of the
 * default year for the serving certificate, two of the ten years of the CA.
 * timing.c says why nothing made here is due when it is made, and how the
 * write floor bounds the rest.
 */
#include "certs/internal.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CAS 4      /* the signing CA and up to three older ones still trusted */
#define CLOCK_SKEW 300 /* a certificate "not yet valid" by less than this is fine */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void cleanse_free(char *s)
{
	if (s)
		OPENSSL_cleanse(s, strlen(s)); /* keys leave no copy in freed memory */
	free(s);
}

void tw_certs_managed_free(tw_certs_managed *m)
{
	if (!m)
		return;
	free(m->ca_crt);
	cleanse_free(m->ca_key);
	cleanse_free(m->ca_next_key);
	free(m->tls_crt);
	cleanse_free(m->tls_key);
	memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------- the bundle */

struct ca {
	X509 *x;
	int64_t nb, na;
};

struct bundle {
	struct ca ca[MAX_CAS];
	int n;
	EVP_PKEY *key; /* the signing (first) CA's key, when it matches */
};

static void bundle_free(struct bundle *b)
{
	for (int i = 0; i < b->n; i++)
		X509_free(b->ca[i].x);
	EVP_PKEY_free(b->key);
	memset(b, 0, sizeof(*b));
}

static bool is_ca(X509 *x)
{
	return X509_check_ca(x) >= 1;
}

/* The CAs of a PEM bundle that are CAs and not expired, in order. */
static void bundle_read(const char *pem, int64_t now, struct bundle *b)
{
	BIO *bio = pem ? BIO_new_mem_buf(pem, -1) : NULL;
	X509 *x;
	while (bio && b->n < MAX_CAS && (x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		struct ca c = { x, 0, 0 };
		if (!is_ca(x) || tw_certs_asn1_time(X509_get0_notBefore(x), &c.nb) ||
		    tw_certs_asn1_time(X509_get0_notAfter(x), &c.na) || c.na <= now) {
			X509_free(x);
			continue;
		}
		b->ca[b->n++] = c;
	}
	ERR_clear_error(); /* the loop ends on "no start line" */
	BIO_free(bio);
}

static EVP_PKEY *read_key(const char *pem)
{
	BIO *bio = pem && *pem ? BIO_new_mem_buf(pem, -1) : NULL;
	EVP_PKEY *k = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	ERR_clear_error();
	BIO_free(bio);
	return k;
}

/* The first CA signs: it must be valid now, its key must be there, and it
 * must have two write floors left, so that what it signs is not due before
 * the Secret may be written again (timing.c). */
static bool signer_usable(const struct bundle *b, EVP_PKEY *key, const tw_certs_policy *p,
			  int64_t now)
{
	return b->n > 0 && key && EVP_PKEY_eq(X509_get0_pubkey(b->ca[0].x), key) == 1 &&
	       b->ca[0].nb <= now + CLOCK_SKEW &&
	       b->ca[0].na - now >= 2 * tw_certs_write_floor(p);
}

/* The bundle as PEM text, the signing CA first. malloc'd, "" when empty. */
static char *bundle_pem(const struct bundle *b)
{
	size_t len = 0;
	char *out = calloc(1, 1);
	for (int i = 0; out && i < b->n; i++) {
		size_t n;
		char *one = tw_certs_cert_pem(b->ca[i].x, &n);
		char *grown = one ? realloc(out, len + n + 1) : NULL;
		if (!grown) {
			free(one);
			free(out);
			return NULL;
		}
		out = grown;
		memcpy(out + len, one, n + 1);
		len += n;
		free(one);
	}
	return out;
}

/* ------------------------------------------------------------ the plan */

static void note(tw_certs_plan *p, const char *what)
{
	size_t len = strlen(p->why);
	snprintf(p->why + len, sizeof(p->why) - len, "%s%s", len ? "; " : "", what);
}

/* A new CA at index at (0: it signs now; 1: the next CA, after the signer);
 * its key's PEM into *key_pem. When the bundle is full the oldest goes. */
static int new_ca(struct bundle *b, int at, const tw_certs_policy *p, int64_t now,
		  EVP_PKEY **key, char **key_pem)
{
	int64_t v = tw_certs_ca_validity(p);
	EVP_PKEY *k = tw_certs_new_key();
	X509 *x = NULL;
	if (!k || tw_certs_make_ca(k, now - tw_certs_backdate(v), now + v, &x)) {
		EVP_PKEY_free(k);
		return TW_CERTS_ECRYPTO;
	}
	if (b->n == MAX_CAS)
		X509_free(b->ca[--b->n].x);
	if (at > b->n)
		at = b->n;
	memmove(&b->ca[at + 1], &b->ca[at], (size_t)(b->n - at) * sizeof(b->ca[0]));
	b->ca[at] = (struct ca){ x, now - tw_certs_backdate(v), now + v };
	b->n++;
	*key = k;
	*key_pem = tw_certs_key_pem(k, NULL);
	return *key_pem ? TW_CERTS_OK : TW_CERTS_ECRYPTO;
}

/* A serving pair from the signing CA, for the Service, valid [*nb, *na]:
 * never outliving the CA, and backdated by what it has left (a pair cut to
 * the CA's last minutes backdated by the hour of a year's validity would be
 * due at once). */
static int new_leaf(const struct bundle *b, const tw_certs_policy *p, int64_t now,
		    tw_certs_managed *out, int64_t *nb, int64_t *na)
{
	char *names[4];
	if (tw_certs_service_names(p->service, p->namespace_, names))
		return TW_CERTS_ECRYPTO;
	int64_t v = tw_certs_validity(p);
	*na = now + v < b->ca[0].na ? now + v : b->ca[0].na;
	*nb = now - tw_certs_backdate(*na - now);
	EVP_PKEY *k = tw_certs_new_key();
	X509 *leaf = NULL;
	const char *cn = strlen(names[2]) <= 64 ? names[2] : p->service;
	int rc = k ? tw_certs_make_leaf(k, cn, (const char *const *)names, 4, NULL, 0,
					b->ca[0].x, b->key, *nb, *na, &leaf)
		   : TW_CERTS_ECRYPTO;
	tw_certs_service_names_free(names);
	if (!rc) {
		free(out->tls_crt);
		cleanse_free(out->tls_key);
		out->tls_crt = tw_certs_cert_pem(leaf, NULL);
		out->tls_key = tw_certs_key_pem(k, NULL);
		if (!out->tls_crt || !out->tls_key)
			rc = TW_CERTS_ECRYPTO;
	}
	X509_free(leaf);
	EVP_PKEY_free(k);
	return rc;
}

/* Facts about the serving pair in the Secret. */
struct leaf_state {
	bool usable;       /* parses, matches its key, verifies against the bundle, names ok */
	bool by_signer;    /* issued by the signing CA */
	int64_t nb, na;
	char why[1024];    /* why it is not usable */
};

static void leaf_inspect(const tw_certs_managed *in, const tw_certs_policy *p,
			 const struct bundle *b, const char *bundle_text, int64_t now,
			 struct leaf_state *ls)
{
	memset(ls, 0, sizeof(*ls));
	if (!in->tls_crt || !*in->tls_crt || !in->tls_key || !*in->tls_key) {
		snprintf(ls->why, sizeof(ls->why), "no serving certificate yet");
		return;
	}
	char *names[4];
	if (tw_certs_service_names(p->service, p->namespace_, names)) {
		snprintf(ls->why, sizeof(ls->why), "out of memory");
		return;
	}
	const char *want[] = { names[2] };
	tw_certs_check_opts o = { .cert_path = "the serving certificate", .key_path = "its key",
				  .ca_path = "the CA bundle", .cert_pem = in->tls_crt,
				  .key_pem = in->tls_key, .ca_pem = bundle_text, .names = want,
				  .nnames = 1, .now = now };
	tw_certs_report rep;
	int rc = tw_certs_check(&o, &rep);
	tw_certs_service_names_free(names);
	if (rc) {
		snprintf(ls->why, sizeof(ls->why), "%s", rep.reason);
		return;
	}
	ls->usable = true;
	ls->nb = rep.not_before;
	ls->na = rep.not_after;
	BIO *bio = BIO_new_mem_buf(in->tls_crt, -1);
	X509 *x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
	ls->by_signer = x && X509_verify(x, X509_get0_pubkey(b->ca[0].x)) == 1;
	ERR_clear_error();
	X509_free(x);
	BIO_free(bio);
}

static int64_t min_time(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The CA of the bundle a key belongs to: its index; -1 means none. */
static int ca_of_key(const struct bundle *b, EVP_PKEY *key)
{
	for (int i = 0; key && i < b->n; i++)
		if (EVP_PKEY_eq(X509_get0_pubkey(b->ca[i].x), key) == 1)
			return i;
	return -1;
}

static void set_key(char **slot, const char *pem)
{
	cleanse_free(*slot);
	*slot = pem ? strdup(pem) : NULL;
}

/* The next CA (index pend, key next) signs from now on; the old signer
 * stays in the bundle behind it. */
static void promote(struct bundle *b, int pend, EVP_PKEY *next, const tw_certs_managed *in,
		    tw_certs_managed *out, tw_certs_plan *plan, const char *why)
{
	struct ca c = b->ca[pend];
	memmove(&b->ca[1], &b->ca[0], (size_t)pend * sizeof(b->ca[0]));
	b->ca[0] = c;
	b->key = next;
	set_key(&out->ca_key, in->ca_next_key);
	set_key(&out->ca_next_key, NULL);
	plan->changed = true;
	note(plan, why);
}

/* With no usable signer and no next CA: a new signer at once (clients
 * learn it when the bundle is published; nothing better can be done). */
static int restart_ca(struct bundle *b, const tw_certs_policy *p, int64_t now,
		      tw_certs_managed *out, tw_certs_plan *plan)
{
	note(plan, b->n ? "the CA key in the Secret does not match the CA, the CA is not "
			  "valid yet, or it ends too soon to sign: a new CA"
			: "no valid CA in the Secret: a new CA");
	set_key(&out->ca_key, NULL);
	set_key(&out->ca_next_key, NULL);
	int rc = new_ca(b, 0, p, now, &b->key, &out->ca_key);
	if (!rc) {
		plan->new_ca = plan->changed = true;
		out->ca_added_at = now;
	}
	return rc;
}

/* The signer's renewal came due: a next CA joins the bundle behind it. */
static int add_next_ca(struct bundle *b, const tw_certs_policy *p, int64_t now,
		       tw_certs_managed *out, tw_certs_plan *plan)
{
	EVP_PKEY *k = NULL;
	set_key(&out->ca_next_key, NULL);
	int rc = new_ca(b, 1, p, now, &k, &out->ca_next_key);
	EVP_PKEY_free(k);
	if (rc)
		return rc;
	note(plan, "the CA has less than a fifth of its life left: a next CA joins the bundle; "
		   "it signs once the bundle has been published for the overlap");
	plan->new_ca = plan->changed = true;
	out->ca_added_at = now;
	plan->next_at = now + 5;
	return TW_CERTS_OK;
}

/* The CA part of the plan: keep the signer; add a next CA when the signer's
 * renewal comes due; promote the next CA after the overlap (or at once when
 * the signer is not usable); or start a new signer. */
static int plan_ca(struct bundle *b, const tw_certs_managed *in, const tw_certs_policy *p,
		   int64_t now, tw_certs_managed *out, tw_certs_plan *plan)
{
	EVP_PKEY *key = read_key(in->ca_key), *next = read_key(in->ca_next_key);
	int64_t overlap = tw_certs_overlap(p);
	bool signer_ok = signer_usable(b, key, p, now);
	int pend = ca_of_key(b, next);
	if (pend == 0 && signer_ok)
		pend = -1; /* the same key twice: nothing is pending */
	bool overlap_over = p->bundle_published && in->ca_added_at &&
			    now >= in->ca_added_at + overlap;
	if (pend >= 0 && (!signer_ok || overlap_over)) {
		promote(b, pend, next, in, out, plan,
			signer_ok ? "the next CA has been trusted for the overlap: it signs from now on"
				  : "the signing CA is not usable: the next CA signs from now on");
		EVP_PKEY_free(key); /* next now belongs to the bundle */
		return TW_CERTS_OK;
	}
	EVP_PKEY_free(next);
	if (!signer_ok) {
		EVP_PKEY_free(key);
		return restart_ca(b, p, now, out, plan);
	}
	b->key = key;
	if (pend >= 0) { /* the overlap goes on */
		plan->next_at = p->bundle_published && in->ca_added_at ? in->ca_added_at + overlap
									: now + 5;
		return TW_CERTS_OK;
	}
	if (in->ca_next_key) { /* the key of no CA in the bundle: forget it */
		set_key(&out->ca_next_key, NULL);
		plan->changed = true;
	}
	return tw_certs_due(b->ca[0].nb, b->ca[0].na, now) ? add_next_ca(b, p, now, out, plan)
							   : TW_CERTS_OK;
}

static int plan_leaf(const struct bundle *b, const tw_certs_managed *in,
		     const tw_certs_policy *p, const char *bundle_text, int64_t now,
		     tw_certs_managed *out, tw_certs_plan *plan)
{
	struct leaf_state ls;
	leaf_inspect(in, p, b, bundle_text, now, &ls);
	int64_t overlap = tw_certs_overlap(p);
	bool switch_due = ls.usable && !ls.by_signer && p->bundle_published &&
			  !plan->new_ca && out->ca_added_at && now >= out->ca_added_at + overlap;
	if (ls.usable && !tw_certs_due(ls.nb, ls.na, now) && !switch_due) {
		plan->leaf_not_after = ls.na;
		if (!ls.by_signer) /* the switch comes due after the overlap */
			plan->next_at = min_time(plan->next_at,
						 p->bundle_published && out->ca_added_at
							 ? out->ca_added_at + overlap
							 : now + 5);
		plan->next_at = min_time(plan->next_at, tw_certs_due_at(ls.nb, ls.na));
		return TW_CERTS_OK;
	}
	if (!ls.usable)
		note(plan, ls.why);
	else if (switch_due)
		note(plan, "the new CA has been trusted for the overlap: the serving certificate "
			   "is re-issued from it");
	else
		note(plan, "the serving certificate has less than a fifth of its life left");
	int64_t nb, na;
	int rc = new_leaf(b, p, now, out, &nb, &na);
	if (rc)
		return rc;
	plan->new_leaf = plan->changed = true;
	plan->leaf_not_after = na;
	plan->next_at = min_time(plan->next_at, tw_certs_due_at(nb, na));
	return TW_CERTS_OK;
}

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* A change came due less than the write floor after this replica's last
 * write: *out goes back to a copy of *in, and the plan says when the write
 * may be made (timing.c: no write a rotation needs comes this soon, so a
 * hold stops a cycle, and never a renewal that matters). ca_na: the notAfter
 * of the Secret's signing CA (0: none). */
static int hold(const tw_certs_managed *in, const tw_certs_policy *p, int64_t now,
		int64_t ca_na, tw_certs_managed *out, tw_certs_plan *plan)
{
	int64_t floor = tw_certs_write_floor(p);
	char was[sizeof(plan->why)];
	snprintf(was, sizeof(was), "%s", plan->why[0] ? plan->why : "the Secret's bundle changed");
	tw_certs_managed_free(out);
	memset(plan, 0, sizeof(*plan));
	plan->held = true;
	plan->next_at = p->last_write + floor;
	plan->ca_not_after = ca_na;
	snprintf(plan->why, sizeof(plan->why), "not written yet: this replica wrote the Secret "
		 "%llds ago and writes it at most once every %llds (%.1000s)",
		 (long long)(now - p->last_write), (long long)floor, was);
	out->ca_crt = strdup(in->ca_crt ? in->ca_crt : "");
	out->ca_key = dup_or_null(in->ca_key);
	out->ca_next_key = dup_or_null(in->ca_next_key);
	out->tls_crt = dup_or_null(in->tls_crt);
	out->tls_key = dup_or_null(in->tls_key);
	out->ca_added_at = in->ca_added_at;
	return out->ca_crt ? TW_CERTS_OK : TW_CERTS_ECRYPTO;
}

int tw_certs_rotate(const tw_certs_managed *in, const tw_certs_policy *p,
		    tw_certs_managed *out, tw_certs_plan *plan, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	memset(plan, 0, sizeof(*plan));
	if (!p->service || !p->namespace_)
		return tw_certs_fail(err, errlen, TW_CERTS_EINVAL, "the Service's name and "
				     "namespace are needed for the serving certificate");
	int64_t now = p->now ? p->now : (int64_t)time(NULL);
	out->ca_key = dup_or_null(in->ca_key);
	out->ca_next_key = dup_or_null(in->ca_next_key);
	out->tls_crt = dup_or_null(in->tls_crt);
	out->tls_key = dup_or_null(in->tls_key);
	out->ca_added_at = in->ca_added_at;
	struct bundle b = { 0 };
	bundle_read(in->ca_crt, now, &b);
	int64_t in_ca_na = b.n ? b.ca[0].na : 0;
	plan->next_at = INT64_MAX; /* lowered to the first thing that comes due */
	int rc = plan_ca(&b, in, p, now, out, plan);
	char *text = rc ? NULL : bundle_pem(&b);
	if (!rc && !text)
		rc = TW_CERTS_ECRYPTO;
	if (!rc && !out->ca_added_at) {
		out->ca_added_at = now; /* unknown: the overlap starts now */
		plan->changed = true;
	}
	if (!rc)
		rc = plan_leaf(&b, in, p, text, now, out, plan);
	if (!rc) {
		plan->ca_not_after = b.ca[0].na;
		if (!out->ca_next_key) /* during a rotation the promotion is what comes due */
			plan->next_at = min_time(plan->next_at, tw_certs_due_at(b.ca[0].nb, b.ca[0].na));
		for (int i = 1; i < b.n; i++) /* an old CA expires: the bundle shrinks */
			plan->next_at = min_time(plan->next_at, b.ca[i].na);
		if (plan->next_at <= now)
			plan->next_at = now + 1;
		out->ca_crt = text;
		text = NULL;
		if (!same(out->ca_crt, in->ca_crt))
			plan->changed = true;
		if (plan->changed && p->last_write > 0 &&
		    now < p->last_write + tw_certs_write_floor(p))
			rc = hold(in, p, now, in_ca_na, out, plan);
	}
	free(text);
	bundle_free(&b);
	if (rc) {
		tw_certs_managed_free(out);
		return tw_certs_fail(err, errlen, rc, "cannot make the certificates: OpenSSL "
				     "failed (%s)", tw_certs_ssl_reason((char[128]){ 0 }, 128));
	}
	return TW_CERTS_OK;
}
