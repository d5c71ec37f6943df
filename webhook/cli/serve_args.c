/*
 * serve_args.c — the options of `trainer-webhook serve`, their defaults and
 * the combinations that make no sense.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "certs/certs.h"
#include "webhook/cli/flags.h"
#include "webhook/cli/serve.h"
#include "webhook/core/duration.h"
#include "webhook/server/server.h"
#include "webhook/admission/admission.h"
#include "certs/certs.h"

const char tw_serve_help[] =
	"Give --tls-cert and --tls-key, --manage-certs (with --kube), or --dev.\n"
	"\n"
	"  --listen ADDR          HTTPS address (default :9443; --dev: 127.0.0.1:9443)\n"
	"  --metrics-listen ADDR  plain-HTTP /metrics (default :8080; --dev: 127.0.0.1:8080)\n"
	"  --dev                  development certificates (made when absent) and the\n"
	"                         example runtimes built in, in a private folder\n"
	"                         ($XDG_STATE_HOME or ~/.local/state/trainer-webhook/dev)\n"
	"  --threads N            connection threads: TLS and HTTP (default: the CPUs)\n"
	"  --decision-threads N   threads that decide admission requests, so that a long\n"
	"                         decision never holds other connections (default: twice\n"
	"                         --threads, at least 4)\n"
	"  --memory-budget SIZE   memory the requests in flight and the open connections may\n"
	"                         hold together: bodies as they arrive, what deciding them\n"
	"                         takes (9 times a body at first), 48 KiB a connection; an\n"
	"                         eighth is kept for bodies of 32 KiB or less, one address's\n"
	"                         requests hold at most half the rest, connections at most\n"
	"                         half; a request that does not fit is answered 503 with\n"
	"                         Retry-After (default: half the container's memory limit;\n"
	"                         64Mi, 1Gi or bytes)\n"
	"  --read-timeout S       a request's headers and body must arrive within this, and\n"
	"                         within its ?timeout=, or it is answered 408 and closed\n"
	"                         (default 10, the API server's own default timeout)\n"
	"  --max-connections N    open connections at most (default: what the open-files\n"
	"                         limit, raised to its hard limit at start, less 64 kept for\n"
	"                         files and clients, and half the memory budget at 48 KiB a\n"
	"                         connection allow); past it a new connection is closed at\n"
	"                         once and counted in /metrics\n"
	"  --max-connections-per-peer N  from one address at most (default: half of one\n"
	"                         thread's share of the above, so a flood from one peer\n"
	"                         cannot lock out the API server)\n"
	"  --handshake-timeout S  a new connection that is silent this long before its first\n"
	"                         request (TLS handshake included) is closed (default 10)\n"
	"  --idle-timeout S       a keep-alive connection silent this long is closed (default\n"
	"                         120: longer than the API server's own 90 s, so that it is\n"
	"                         the client that closes an idle connection)\n"
	"  --strict-action warn   what only the strict profile denies is allowed, with one\n"
	"                         warning per violation and an audit annotation (default deny)\n"
	"  --kube                 follow the cluster: runtimes and PriorityClasses by watch,\n"
	"                         other objects by GET when a request needs them (in-cluster\n"
	"                         configuration; /readyz waits for the runtimes' first lists)\n"
	"  --crds PATH            CustomResourceDefinitions (files or folders) to check with\n"
	"                         instead of the built-in ones (trainer-webhook --version);\n"
	"                         with --kube and no --crds: the cluster's CRDs, followed by\n"
	"                         watch (/readyz waits for their first lists); none: no CRD\n"
	"  --kube-server URL      the API server outside a cluster (https://, or http://\n"
	"                         for tests); implies --kube. --kube-token-file and\n"
	"                         --kube-ca-file replace the service account's files\n"
	"  --kubeconfig F         the API server and credentials of a kubeconfig (client\n"
	"                         certificates, tokens, exec plugins); implies --kube\n"
	"  --context NAME         its context (default: current-context); alone, of\n"
	"                         $KUBECONFIG's files merged as kubectl merges them, or\n"
	"                         ~/.kube/config\n"
	"  --namespace NS         the server's namespace (default: the service account's)\n"
	"  --service NAME         the Service the API server calls (default " TW_SERVE_SERVICE "):\n"
	"                         with --kube, not ready while the certificate does not\n"
	"                         cover NAME.NS.svc (\"\": no such check)\n"
	"\n"
	"Managed certificates (--manage-certs, needs --kube): the CA and the serving pair live\n"
	"in a Secret, renewed before a fifth of their life is left, and the CA bundle is kept\n"
	"in both webhook configurations:\n"
	"  --cert-secret NAME           default " TW_SERVE_SECRET "\n"
	"  --validating-webhook NAME    default " TW_SERVE_VALIDATING " (\"\": none)\n"
	"  --mutating-webhook NAME      default " TW_SERVE_MUTATING " (\"\": none)\n"
	"  --cert-validity DURATION     serving certificate (default 8760h)\n"
	"  --ca-validity DURATION       CA (default 87600h)\n"
	"  --ca-overlap DURATION        a new CA is trusted this long before it signs (1h)\n"
	"  (refused: a --cert-validity under 5s or over --ca-validity, a --ca-validity under\n"
	"  ten times --ca-overlap; the Secret is written at most once per a tenth of the\n"
	"  shortest of the three, from 1s to 1m)\n"
	"\n"
	"Registration (--register-webhooks, needs --kube): both webhook configurations are\n"
	"shipped empty; the server fills them once it is ready and its Service has a ready\n"
	"endpoint, and empties them when its pod is deleted and no other replica is ready:\n"
	"  --failure-policy Fail|Ignore  every webhook's (default Fail)\n"
	"  --webhook-timeout SECONDS    every webhook's timeoutSeconds, 1 to 30 (default 5)\n"
	"  --exempt-namespace NS        never send this namespace's objects (repeatable)\n"
	"  --ca-bundle FILE             with --tls-cert: the CA the API server trusts (default:\n"
	"                               ca.crt beside --tls-cert, when there is one)\n"
	"Signals: SIGHUP reloads --runtimes; SIGTERM or SIGINT drain and exit 0.\n";

static int number(tw_cli *c, const char *flag, const char *v, unsigned long long lo,
		  unsigned long long hi, unsigned long long *out)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || end == v || n < lo || n > hi || v[0] == '-')
		return tw_cli_usage(c, "%s \"%s\": want a whole number from %llu to %llu", flag, v,
				    lo, hi);
	*out = n;
	return 0;
}

/* A size: bytes, or a number with Ki, Mi, Gi (or K, M, G: powers of ten),
 * from 1 MiB to 1 TiB. */
static int size_arg(tw_cli *c, const char *flag, const char *v, size_t *out)
{
	static const struct { const char *suffix; unsigned long long mult; } units[] = {
		{ "", 1 }, { "Ki", 1ull << 10 }, { "Mi", 1ull << 20 }, { "Gi", 1ull << 30 },
		{ "K", 1000 }, { "M", 1000000 }, { "G", 1000000000 },
	};
	char *end;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	for (size_t i = 0; !errno && end != v && v[0] != '-' && i < sizeof(units) / sizeof(*units);
	     i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (n > (1ull << 40) / units[i].mult || n * units[i].mult < (1ull << 20))
			break;
		*out = (size_t)(n * units[i].mult);
		return 0;
	}
	return tw_cli_usage(c, "%s \"%s\": want a size from 1Mi to 1024Gi, like 48Mi, 1Gi or "
			       "50000000", flag, v);
}

/* A Go duration of at least a second and at most 100 years, in seconds. */
static int duration(tw_cli *c, const char *flag, const char *v, int64_t *out)
{
	long long us = tw_parse_go_duration_max(v, 100LL * 8766 * 3600 * 1000000);
	if (us < 1000000)
		return tw_cli_usage(c, "%s \"%s\": want a duration from 1s to 876600h, like 8760h "
				       "or 90m", flag, v);
	*out = us / 1000000;
	return 0;
}

/* The registration flags (any other is left alone). */
static int register_option(tw_serve_args *a, const char *f, const char *v)
{
	unsigned long long n;
	int rc = 0;
	if (!strcmp(f, "--failure-policy") && strcmp(v, "Fail") && strcmp(v, "Ignore"))
		rc = tw_cli_usage(&a->cli, "--failure-policy \"%s\": use Fail or Ignore", v);
	else if (!strcmp(f, "--failure-policy"))
		a->failure_policy = v;
	else if (!strcmp(f, "--webhook-timeout") && !(rc = number(&a->cli, f, v, 1, 30, &n)))
		a->webhook_timeout_s = (unsigned)n;
	else if (!strcmp(f, "--exempt-namespace") && tw_certs_check_label(v))
		rc = tw_cli_usage(&a->cli, "--exempt-namespace \"%s\": %s", v, tw_certs_check_label(v));
	else if (!strcmp(f, "--exempt-namespace") && a->nexempt == TW_SERVE_MAX_EXEMPT)
		rc = tw_cli_usage(&a->cli, "--exempt-namespace: at most %d", TW_SERVE_MAX_EXEMPT);
	else if (!strcmp(f, "--exempt-namespace"))
		a->exempt[a->nexempt++] = v;
	else if (!strcmp(f, "--ca-bundle"))
		a->ca_bundle = v;
	return rc;
}

static int one_option(tw_serve_args *a, const char *f, const char *v)
{
	unsigned long long n;
	int rc = 0;
	if (!strcmp(f, "--listen"))
		a->listen = v;
	else if (!strcmp(f, "--metrics-listen"))
		a->metrics_listen = v;
	else if (!strcmp(f, "--tls-cert"))
		a->cert = v;
	else if (!strcmp(f, "--tls-key"))
		a->key = v;
	else if (!strcmp(f, "--kube-server"))
		a->kube_server = v, a->kube = true;
	else if (!strcmp(f, "--kube-token-file"))
		a->kube_token = v, a->kube = true;
	else if (!strcmp(f, "--kube-ca-file"))
		a->kube_ca = v, a->kube = true;
	else if (!strcmp(f, "--namespace"))
		a->namespace_ = v;
	else if (!strcmp(f, "--cert-secret"))
		a->secret = v;
	else if (!strcmp(f, "--service"))
		a->service = v;
	else if (!strcmp(f, "--validating-webhook"))
		a->validating = v;
	else if (!strcmp(f, "--mutating-webhook"))
		a->mutating = v;
	else if (!strcmp(f, "--cert-validity"))
		rc = duration(&a->cli, f, v, &a->cert_validity_s);
	else if (!strcmp(f, "--ca-validity"))
		rc = duration(&a->cli, f, v, &a->ca_validity_s);
	else if (!strcmp(f, "--ca-overlap"))
		rc = duration(&a->cli, f, v, &a->ca_overlap_s);
	else if (!strcmp(f, "--strict-action") && strcmp(v, "deny") && strcmp(v, "warn"))
		rc = tw_cli_usage(&a->cli, "--strict-action \"%s\": use deny or warn", v);
	else if (!strcmp(f, "--strict-action"))
		a->strict_warn = !strcmp(v, "warn");
	else if (!strcmp(f, "--threads") && !(rc = number(&a->cli, f, v, 1, 256, &n)))
		a->threads = (unsigned)n;
	else if (!strcmp(f, "--decision-threads") && !(rc = number(&a->cli, f, v, 1, 1024, &n)))
		a->deciders = (unsigned)n;
	else if (!strcmp(f, "--memory-budget"))
		rc = size_arg(&a->cli, f, v, &a->memory_budget);
	else if (!strcmp(f, "--max-connections") && !(rc = number(&a->cli, f, v, 8, 1000000, &n)))
		a->max_conns = (unsigned)n;
	else if (!strcmp(f, "--max-connections-per-peer") &&
		 !(rc = number(&a->cli, f, v, 1, 1000000, &n)))
		a->max_per_peer = (unsigned)n;
	else if (!strcmp(f, "--max-body") && !(rc = number(&a->cli, f, v, 1024, 64u << 20, &n)))
		a->max_body = (size_t)n;
	else if (!strcmp(f, "--handshake-timeout") && !(rc = number(&a->cli, f, v, 1, 3600, &n)))
		a->handshake_s = (unsigned)n;
	else if (!strcmp(f, "--idle-timeout") && !(rc = number(&a->cli, f, v, 1, 86400, &n)))
		a->idle_s = (unsigned)n;
	else if (!strcmp(f, "--read-timeout") && !(rc = number(&a->cli, f, v, 1, 3600, &n)))
		a->read_s = (unsigned)n;
	else if (!strcmp(f, "--shutdown-grace") && !(rc = number(&a->cli, f, v, 0, 3600, &n)))
		a->grace_s = (unsigned)n;
	else if (!strcmp(f, "--log-level") && tw_log_level_parse(v, &a->level))
		rc = tw_cli_usage(&a->cli, "--log-level \"%s\": use debug, info, warn or error", v);
	else if (!rc)
		rc = register_option(a, f, v);
	return rc;
}


static int on_flag(void *ctx, const char *as, const tw_flag *f, const char *v)
{
	tw_serve_args *a = ctx;
	int rc = tw_cli_flag(&a->cli, as, f, v);
	if (rc != TW_CLI_OTHER)
		return rc;
	const char *n = f->name;
	if (!f->arg) {
		a->dev |= !strcmp(n, "--dev");
		a->kube |= !strcmp(n, "--kube");
		a->manage_certs |= !strcmp(n, "--manage-certs");
		a->register_webhooks |= !strcmp(n, "--register-webhooks");
		return 0;
	}
	if (!v)
		return tw_cli_usage(&a->cli, "%s needs a value", as);
	return one_option(a, n, v);
}

/* The combinations that make no sense, said once with what to do. */
static int check_combination(tw_serve_args *a)
{
	if (a->manage_certs && (a->cert || a->key || a->dev))
		return tw_cli_usage(&a->cli, "--manage-certs takes the pair from the Secret: drop "
					     "--tls-cert, --tls-key and --dev");
	if (a->manage_certs && !a->kube)
		return tw_cli_usage(&a->cli, "--manage-certs keeps the pair in a Secret: add --kube "
					     "(or --kube-server URL)");
	if (!a->manage_certs && !a->dev && (!a->cert || !a->key))
		return tw_cli_usage(&a->cli, "give --tls-cert and --tls-key, --manage-certs, or "
					     "--dev for development certificates");
	if (!!a->cert != !!a->key)
		return tw_cli_usage(&a->cli, "--tls-cert and --tls-key go together");
	tw_certs_policy durations = { .validity = a->cert_validity_s,
				      .ca_validity = a->ca_validity_s,
				      .overlap = a->ca_overlap_s };
	char why[1024];
	if (a->manage_certs && tw_certs_policy_check(&durations, why, sizeof(why)))
		return tw_cli_usage(&a->cli, "%s", why);
	if (a->register_webhooks && !a->kube)
		return tw_cli_usage(&a->cli, "--register-webhooks fills the webhook configurations "
					     "through the API server: add --kube (or --kube-server URL, "
					     "--kubeconfig F)");
	if (a->ca_bundle && a->manage_certs)
		return tw_cli_usage(&a->cli, "--ca-bundle is for a pair from files: with "
					     "--manage-certs the bundle is the Secret's");
	if ((a->kubeconfig || a->context) && (a->kube_server || a->kube_token || a->kube_ca))
		return tw_cli_usage(&a->cli, "--kubeconfig and --context name the API server and "
					     "the credentials: drop --kube-server, --kube-token-file "
					     "and --kube-ca-file");
	return 0;
}

int tw_serve_parse(tw_serve_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	a->grace_s = 10;
	a->handshake_s = TW_SERVER_HANDSHAKE_TIMEOUT_S;
	a->idle_s = TW_SERVER_IDLE_TIMEOUT_S;
	a->read_s = TW_SERVER_READ_TIMEOUT_S;
	a->level = TW_LOG_INFO;
	a->secret = TW_SERVE_SECRET;
	a->service = TW_SERVE_SERVICE;
	a->validating = TW_SERVE_VALIDATING;
	a->mutating = TW_SERVE_MUTATING;
	tw_cli_init(&a->cli, "serve", tw_serve_help);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	a->threads = cpus > 0 ? (unsigned)cpus : 1;
	a->max_body = TW_DEFAULT_MAX_BODY;
	/* a starts with its tw_cli, which tw_cli_help and tw_cli_unknown take; an
	 * operand is an unknown option too (serve takes none) */
	tw_argv p = { "serve", a, on_flag, tw_cli_unknown, tw_cli_unknown, tw_cli_help, false };
	int rc = tw_flags_parse(&p, argc, argv);
	if (rc)
		return rc;
	/* The shared --kubeconfig and --context name serve's API server (not a
	 * one-time read of CRDs, as for validate). */
	a->kubeconfig = a->cli.kubeconfig;
	a->context = a->cli.context;
	a->cli.kubeconfig = a->cli.context = NULL;
	a->kube |= a->kubeconfig || a->context;
	return check_combination(a);
}
