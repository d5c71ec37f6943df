/*
 * webhook/cli/serve.h — `trainer-webhook serve`: its options (serve_args.c)
 * and what runs them (cmd_serve.c).
 */
#ifndef TW_SERVE_H
#define TW_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "webhook/cli/cli.h"
#include "webhook/cli/dev_state.h"
#include "webhook/cluster/certmgr.h"
#include "webhook/cluster/register.h"
#include "webhook/core/log.h"
#include "webhook/server/server.h"


/* deploy/base's names, the defaults of the managed-certificate flags. */
#define TW_SERVE_SECRET "trainer-webhook-cert"
#define TW_SERVE_SERVICE "trainer-webhook"
#define TW_SERVE_VALIDATING "trainer-webhook-validator"
#define TW_SERVE_MUTATING "trainer-webhook-defaulter"

#define TW_SERVE_MAX_EXEMPT 64

typedef struct tw_serve_args {
	tw_cli cli;
	const char *listen, *metrics_listen, *cert, *key;
	bool dev;
	tw_dev_state dev_state; /* --dev: its private folder (dev_state.h) */
	unsigned threads;
	unsigned deciders;     /* --decision-threads (0: twice threads, at least 4) */
	size_t memory_budget;  /* --memory-budget (0: from the container's limit) */
	unsigned max_conns;    /* --max-connections (0: from RLIMIT_NOFILE) */
	unsigned max_per_peer; /* --max-connections-per-peer (0: half of max_conns) */
	unsigned handshake_s;  /* --handshake-timeout */
	unsigned idle_s;       /* --idle-timeout */
	unsigned read_s;       /* --read-timeout */
	size_t max_body;
	unsigned grace_s;
	tw_log_level level;
	bool strict_warn;        /* --strict-action warn */
	bool kube;
	const char *kube_server, *kube_token, *kube_ca;
	const char *kubeconfig, *context; /* --kubeconfig, --context: outside a cluster */
	/* --manage-certs */
	bool manage_certs;
	const char *namespace_;  /* NULL: the service account's */
	const char *secret, *service, *validating, *mutating;
	int64_t cert_validity_s, ca_validity_s, ca_overlap_s;
	/* --register-webhooks (serve_register.c) */
	bool register_webhooks;
	const char *failure_policy;     /* --failure-policy Fail|Ignore */
	unsigned webhook_timeout_s;     /* --webhook-timeout */
	const char *exempt[TW_SERVE_MAX_EXEMPT]; /* --exempt-namespace, repeated */
	size_t nexempt;
	const char *ca_bundle;          /* --ca-bundle (files mode) */
} tw_serve_args;

extern const char tw_serve_help[];

/* Fill a from argv (defaults first). 0, -1 after --help, or TW_EXIT_USAGE
 * after printing what is wrong. */
int tw_serve_parse(tw_serve_args *a, int argc, char **argv);

/* (serve_register.c) --register-webhooks: start filling the configurations
 * once srv is ready (certs: the managed certificates' bundle; NULL: the
 * --ca-bundle file's). 0, or -1 with the reason in err. */
int tw_serve_register_start(const tw_serve_args *a, tw_server *srv, const tw_kube_config *kc,
			    tw_certmgr *certs, tw_register **out, char *err, size_t errlen);

#endif /* TW_SERVE_H */
