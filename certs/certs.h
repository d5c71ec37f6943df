/*
 * certs.h — certificate work with OpenSSL: make a CA and a serving pair for a
 * Service, check a pair (key, chain, names, validity), and the dev-mode pair.
 *
 * Conventions follow the Kubeflow Trainer bootstrap (spec §5.2): files ca.crt,
 * ca.key, tls.crt, tls.key in one folder; the caBundle is base64 of ca.crt.
 * Nothing here prints; every failure comes back as one sentence in err (or
 * rep->reason) that names the file and what to do.
 */
#ifndef TW_CERTS_H
#define TW_CERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Status codes. Negative values are failures. */
enum {
	TW_CERTS_OK = 0,
	TW_CERTS_EINVAL = -1, /* bad input: a name, an address, a day count */
	TW_CERTS_EEXIST = -2, /* a file to write exists and force was not given */
	TW_CERTS_EIO = -3,    /* a file or folder cannot be read, written or created */
	TW_CERTS_EBAD = -4,   /* check: the pair is unusable (err/reason says why) */
	TW_CERTS_ECRYPTO = -5 /* OpenSSL failed (out of memory, no randomness) */
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

#endif /* TW_CERTS_H */
