/*
 * certs.h — certificate work with OpenSSL: make a CA and a serving pair for a
 * Service, check a pair (key, chain, names, validity), and the dev-mode pair.
 *
 * Conventions follow the Kubeflow Trainer bootstrap (docs/admission-protocol.md §5.2): files ca.crt,
 * ca.key, tls.crt, tls.key in one folder; the caBundle is base64 of ca.crt.
 * Nothing here prints; every failure comes back as one sentence in err (or
 * rep->reason) that names the file and what to do.
 */
#ifndef TW_CERTS_H
#define TW_CERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/trainpolicy.h"

/* Status codes: the one error enum's (policy/trainpolicy.h's tp_error and
 * the binary's range), under the names this folder's callers know. */
enum {
	TW_CERTS_OK = TP_OK,
	TW_CERTS_EINVAL = TP_EINVAL,   /* bad input: a name, an address, a day count */
	TW_CERTS_EEXIST = TW_EEXIST,   /* a file to write exists and force was not given */
	TW_CERTS_EIO = TP_EIO,         /* a file or folder cannot be read, written or created */
	TW_CERTS_EBAD = TW_EBAD,       /* check: the pair is unusable (err/reason says why) */
	TW_CERTS_ECRYPTO = TW_ECRYPTO  /* OpenSSL failed (out of memory, no randomness) */
};

#define TW_CERTS_DEFAULT_DAYS 365
#define TW_CERTS_MAX_DAYS 3650
#define TW_CERTS_CA_DAYS 3650
#define TW_CERTS_WARN_DAYS 30 /* check: fewer days left than this is a warning */
#define TW_CERTS_CA_CN "trainer-webhook-ca"

typedef struct tw_certs_gen_opts {
	/* The Service: SANs NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local and
	 * CN NAME.NS.svc. Both NULL: only dns/ips below, and CN is the first name. */
	const char *service;
	const char *namespace_;
	const char *const *dns; /* extra DNS names (DNS-1123 subdomains, "*." allowed) */
	size_t ndns;
	const char *const *ips; /* IPv4 or IPv6 addresses */
	size_t nips;
	int days;     /* validity of the serving certificate; 0: TW_CERTS_DEFAULT_DAYS */
	bool force;   /* replace existing files (atomically) instead of refusing */
	/* For tests: explicit validity of the serving certificate in Unix seconds.
	 * Both 0: now - 1 h .. now + days. */
	int64_t not_before, not_after;
} tw_certs_gen_opts;

/* Write dir/ca.crt, ca.key, tls.crt, tls.key (dir is created with mode 0700
 * when missing; keys 0600, certificates 0644 less the umask). Without force,
 * nothing is written when any of the four exists. On success *ca_bundle (may
 * be NULL) receives a malloc'd single-line base64 of ca.crt's PEM. */
int tw_certs_generate(const char *dir, const tw_certs_gen_opts *o, char **ca_bundle,
		      char *err, size_t errlen);

/* A DNS-1123 label (service, namespace): NULL, or what is wrong with s. */
const char *tw_certs_check_label(const char *s);
/* A DNS name usable in a SAN (lowercase RFC 1123 subdomain, optional "*."
 * prefix): NULL, or what is wrong with s. */
const char *tw_certs_check_dns(const char *s);
/* True when s is an IPv4 or IPv6 address. */
bool tw_certs_is_ip(const char *s);

typedef struct tw_certs_check_opts {
	const char *cert_path;     /* PEM; the first certificate is the leaf, the rest intermediates */
	const char *key_path;      /* PEM private key, EC or RSA, unencrypted */
	const char *ca_path;       /* NULL: the chain is not checked */
	/* In-memory PEM instead of the files (a Secret's data): when set, the
	 * *_path above only name it in messages ("Secret ns/x tls.crt"). */
	const char *cert_pem, *key_pem, *ca_pem;
	const char *const *names;  /* DNS names or IP addresses the SAN must cover */
	size_t nnames;
	int64_t now;               /* 0: the current time */
} tw_certs_check_opts;

typedef struct tw_certs_report {
	char subject[256];    /* RFC 2253, e.g. "CN=svc.ns.svc" */
	char names[1024];     /* the SANs, ", "-separated */
	char serial[80];      /* lowercase hex */
	int64_t not_before, not_after;
	int64_t days_left;    /* whole days until notAfter; negative once expired */
	bool expiring_soon;   /* fewer than TW_CERTS_WARN_DAYS days left */
	char reason[1024];    /* why the check failed; "" on success */
} tw_certs_report;

/* Check a pair. Returns TW_CERTS_OK; TW_CERTS_EBAD with rep->reason when the
 * pair is unusable (garbage PEM, key mismatch, chain, names, validity);
 * TW_CERTS_EIO with rep->reason when a file cannot be read. */
int tw_certs_check(const tw_certs_check_opts *o, tw_certs_report *rep);

/* notAfter of the first certificate in a PEM file, Unix seconds (metrics). */
int tw_certs_not_after(const char *path, int64_t *out);

/* What tw_certs_ensure_dev did (all >= 0). */
enum { TW_CERTS_DEV_KEPT = 0, TW_CERTS_DEV_CREATED = 1, TW_CERTS_DEV_REPLACED = 2 };

/* Dev mode: make sure dir holds a usable pair for localhost, 127.0.0.1 and ::1.
 * Absent: generate one (CREATED). Present, valid and more than a day left:
 * keep it (KEPT). Present but broken or expiring: regenerate (REPLACED), and
 * err says what was wrong with the old pair, for the caller to log.
 * Negative on failure, with the reason in err. */
int tw_certs_ensure_dev(const char *dir, char *err, size_t errlen);

/* ------------------------------------------- managed certificates (rotation.c)
 *
 * serve --manage-certs keeps a CA and the serving pair in a Secret (as
 * upstream's cert-controller rotator does) and decides here, with no I/O,
 * what the Secret should hold at a given time:
 *   - no usable CA (absent, broken, key missing, expired): a new one;
 *   - the CA has less than a fifth of its life left: a new one joins the
 *     bundle as the next CA (its key kept apart) while the old one goes on
 *     signing; once the bundle with both is in every webhook configuration
 *     and `overlap` has passed (the API servers trust the new CA by then),
 *     the next CA is promoted: it signs from then on, and the old one stays
 *     in the bundle until it expires. No client ever meets an unknown issuer;
 *   - the serving certificate is absent, broken, not for the Service, not
 *     signed by a CA of the bundle, or has less than a fifth of its life left:
 *     a new one from the signing CA (never outliving it, and never due when
 *     made: timing.c). A signing CA with less than two write floors left
 *     counts as unusable: the next CA signs, or a new one;
 *   - a serving certificate from another CA of the bundle (the old one after
 *     a promotion, or after the signing key was lost) is re-issued from the
 *     signing CA once that CA has been published for `overlap`;
 *   - whatever of the above comes due, the Secret is written at most once per
 *     write floor (tw_certs_write_floor): a change due sooner is held.
 */

typedef struct tw_certs_managed {
	char *ca_crt;        /* trust bundle (PEM): the signing CA first, then older CAs */
	char *ca_key;        /* the signing CA's key (PEM) */
	char *ca_next_key;   /* the next CA's key during a CA rotation, else NULL */
	char *tls_crt, *tls_key;
	int64_t ca_added_at; /* when the newest CA joined the bundle (0: unknown) */
} tw_certs_managed;

void tw_certs_managed_free(tw_certs_managed *m);

typedef struct tw_certs_policy {
	const char *service, *namespace_; /* the serving certificate's DNS names */
	int64_t validity;       /* serving certificate, seconds (0: one year) */
	int64_t ca_validity;    /* CA, seconds (0: ten years) */
	int64_t overlap;        /* trust time before a new CA signs (0: one hour) */
	bool bundle_published;  /* every webhook configuration carries in->ca_crt */
	int64_t now;            /* 0: the clock */
	int64_t last_write;     /* when this replica last wrote the Secret (0: never) */
} tw_certs_policy;

typedef struct tw_certs_plan {
	bool changed;     /* *out differs from *in: write it */
	bool new_ca, new_leaf;
	bool held;        /* a change is due, but the Secret was written less than the
			     write floor ago: *out is *in, next_at is when it may be */
	int64_t next_at;  /* the next time something comes due (Unix seconds) */
	int64_t ca_not_after, leaf_not_after; /* of what *out holds (leaf: 0 when held) */
	char why[1400];   /* what changed and why, for the log ("" when nothing did) */
} tw_certs_plan;

/* Seconds between two writes of the Secret at least: a tenth of the
 * shortest of the policy's three durations, from 1 s to 60 s. A plan that
 * would write sooner after p->last_write is held (see timing.c for why no
 * needed write ever is, under tw_certs_policy_check). */
int64_t tw_certs_write_floor(const tw_certs_policy *p);

/* Do the policy's durations work together (0: the default)? TW_CERTS_OK, or
 * TW_CERTS_EINVAL with every reason in err, each naming its flag
 * (--cert-validity, --ca-validity, --ca-overlap) and what to give instead:
 * a serving certificate of at least 5 s and at most the CA's validity, a CA
 * of at least ten overlaps. */
int tw_certs_policy_check(const tw_certs_policy *p, char *err, size_t errlen);

/* What the Secret should hold now. *out is a fresh copy of everything (free
 * it with tw_certs_managed_free), whether or not it changed. */
int tw_certs_rotate(const tw_certs_managed *in, const tw_certs_policy *p,
		    tw_certs_managed *out, tw_certs_plan *plan, char *err, size_t errlen);

/* The serving certificate's DNS names for a Service (NAME, NAME.NS,
 * NAME.NS.svc, NAME.NS.svc.cluster.local): the one the API server dials is
 * index 2. out[i] are malloc'd; free with tw_certs_service_names_free. */
int tw_certs_service_names(const char *service, const char *ns, char *out[4]);
void tw_certs_service_names_free(char *names[4]);

#endif /* TW_CERTS_H */
