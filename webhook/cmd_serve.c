/*
 * cmd_serve.c — `trainer-webhook serve`: the HTTPS admission server.
 *
 * The main thread parses options, loads the certificates and the store,
 * starts the TLS daemon and the metrics port, then waits for signals:
 * SIGHUP reloads the store from --runtimes, SIGTERM/SIGINT drain and exit 0.
 * Certificates reload themselves (tls.c watches their files).
 *
 * --dev is the README's embedded default: development certificates under
 * certs/dev (made when absent), the example runtimes of deploy/runtimes,
 * 127.0.0.1:9443, and a curl line to try.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "certs/certs.h"
#include "webhook/cli.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/server.h"
#include "webhook/watch.h"

#define DEV_CERT_DIR "certs/dev"
#define DEV_RUNTIMES "deploy/runtimes"
#define DEV_SAMPLE "deploy/samples/admissionreview-trainjob.json"

static const char serve_help[] =
	"usage: trainer-webhook serve [--listen ADDR] [--tls-cert F --tls-key F] [--dev]\n"
	"         [--runtimes PATH]... [--profile kubeflow|strict] [--no-schema]\n"
	"         [--threads N] [--max-body BYTES] [--metrics-listen ADDR]\n"
	"         [--log-level debug|info|warn|error] [--shutdown-grace SECONDS]\n"
	"         [--kube [--kube-server URL --kube-token-file F --kube-ca-file F]]\n"
	"\n"
	"  --listen ADDR          HTTPS address (default :9443; --dev: 127.0.0.1:9443)\n"
	"  --metrics-listen ADDR  plain-HTTP /metrics (default :8080; --dev: 127.0.0.1:8080)\n"
	"  --dev                  development certificates under " DEV_CERT_DIR
	" (made when absent)\n"
	"                         and the example runtimes of " DEV_RUNTIMES "\n"
	"  --kube                 fill the store by watching the API server (in-cluster\n"
	"                         configuration; /readyz waits for the first lists)\n"
	"  --kube-server URL      the API server outside a cluster (https://, or http://\n"
	"                         for tests); implies --kube. --kube-token-file and\n"
	"                         --kube-ca-file replace the service account's files\n"
	"Signals: SIGHUP reloads --runtimes; SIGTERM or SIGINT drain and exit 0.\n";

struct serve_args {
	tw_cli cli;
	const char *listen, *metrics_listen, *cert, *key;
	bool dev;
	unsigned threads;
	size_t max_body;
	unsigned grace_s;
	tw_log_level level;
	bool kube;
	const char *kube_server, *kube_token, *kube_ca;
};

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

static int one_option(struct serve_args *a, const char *f, const char *v)
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
	else if (!strcmp(f, "--threads") && !(rc = number(&a->cli, f, v, 1, 256, &n)))
		a->threads = (unsigned)n;
	else if (!strcmp(f, "--max-body") && !(rc = number(&a->cli, f, v, 1024, 64u << 20, &n)))
		a->max_body = (size_t)n;
	else if (!strcmp(f, "--shutdown-grace") && !(rc = number(&a->cli, f, v, 0, 3600, &n)))
		a->grace_s = (unsigned)n;
	else if (!strcmp(f, "--log-level") && tw_log_level_parse(v, &a->level))
		rc = tw_cli_usage(&a->cli, "--log-level \"%s\": use debug, info, warn or error", v);
	return rc;
}

static int parse_args(struct serve_args *a, int argc, char **argv)
{
	static const char *const valued[] = { "--listen",  "--metrics-listen", "--tls-cert",
					      "--tls-key", "--threads",	       "--max-body",
					      "--shutdown-grace", "--log-level",
					      "--kube-server", "--kube-token-file",
					      "--kube-ca-file" };
	for (int i = 1; i < argc; i++) {
		int took = tw_cli_common(&a->cli, argc, argv, &i);
		if (took < 0)
			return tw_cli_stop(took);
		if (took)
			continue;
		const char *f = argv[i];
		if (!strcmp(f, "--dev")) {
			a->dev = true;
			continue;
		}
		if (!strcmp(f, "--kube")) {
			a->kube = true;
			continue;
		}
		size_t k = 0;
		while (k < sizeof(valued) / sizeof(valued[0]) && strcmp(valued[k], f))
			k++;
		if (k == sizeof(valued) / sizeof(valued[0]))
			return tw_cli_usage(&a->cli, "unknown option \"%s\"", f);
		if (++i >= argc)
			return tw_cli_usage(&a->cli, "%s needs a value", f);
		int rc = one_option(a, f, argv[i]);
		if (rc)
			return rc;
	}
	if (!a->dev && (!a->cert || !a->key))
		return tw_cli_usage(&a->cli, "give --tls-cert and --tls-key (or --dev for "
					     "development certificates)");
	if (!!a->cert != !!a->key)
		return tw_cli_usage(&a->cli, "--tls-cert and --tls-key go together");
	return 0;
}

/* --dev fills in what was not given. */
static int dev_defaults(struct serve_args *a)
{
	if (!a->dev)
		return 0;
	if (!a->listen)
		a->listen = "127.0.0.1:9443";
	if (!a->metrics_listen)
		a->metrics_listen = "127.0.0.1:8080";
	if (!a->cli.nruntimes && tw_cli_add_runtimes(&a->cli, DEV_RUNTIMES))
		return TW_EXIT_USAGE;
	if (a->cert)
		return 0;
	char err[512];
	int dev = tw_certs_ensure_dev(DEV_CERT_DIR, err, sizeof(err));
	if (dev == TW_CERTS_DEV_REPLACED)
		fprintf(stderr, "trainer-webhook serve: replaced the development certificates: %s\n",
			err);
	if (dev < 0) {
		fprintf(stderr, "trainer-webhook serve: development certificates: %s\n", err);
		return TW_EXIT_USAGE;
	}
	a->cert = DEV_CERT_DIR "/tls.crt";
	a->key = DEV_CERT_DIR "/tls.key";
	return 0;
}

/* A new store from --runtimes; NULL (and the reason logged) when it fails. */
static tp_store *load_store(tw_cli *c)
{
	tp_store_free(c->store);
	c->store = NULL;
	if (tw_cli_load_store(c)) {
		tw_log(TW_LOG_ERROR, "cannot load --runtimes (see above); fix the manifests");
		return NULL;
	}
	tp_store *s = c->store;
	c->store = NULL; /* the server owns it now */
	c->opt.store = NULL;
	return s;
}

static void print_try_line(const struct serve_args *a, unsigned short port)
{
	if (!a->dev)
		return;
	fprintf(stderr,
		"\ntrainer-webhook is serving on https://127.0.0.1:%u (development certificates in "
		DEV_CERT_DIR ").\nTry it:\n\n"
		"  curl -s --cacert " DEV_CERT_DIR "/ca.crt -H 'Content-Type: application/json' "
		"--data @" DEV_SAMPLE " https://127.0.0.1:%u/validate-trainer-kubeflow-org-v1alpha1-"
		"trainjob\n\n",
		port, port);
}

/* The API server to watch: --kube-server, else the in-cluster configuration
 * (whose files --kube-token-file / --kube-ca-file may replace). */
static int kube_config(const struct serve_args *a, tw_kube_config *kc)
{
	char err[512];
	int rc;
	if (a->kube_server) {
		rc = tw_kube_config_explicit(kc, a->kube_server, a->kube_token, a->kube_ca, err,
					     sizeof(err));
	} else {
		rc = tw_kube_config_in_cluster(kc, NULL, err, sizeof(err));
		tw_kube_config over;
		if (!rc && (a->kube_token || a->kube_ca) &&
		    !(rc = tw_kube_config_explicit(&over, kc->server,
						   a->kube_token ? a->kube_token : kc->token_file,
						   a->kube_ca ? a->kube_ca : kc->ca_file, err,
						   sizeof(err)))) {
			tw_kube_config_free(kc);
			*kc = over;
		}
	}
	if (rc)
		fprintf(stderr, "trainer-webhook serve: --kube: %s\n", err);
	return rc;
}

/* Block the signals we wait for, before any thread starts, so that only
 * sigwait sees them. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void wait_for_stop(tw_server *srv, tw_cli *cli, const sigset_t *set, bool kube)
{
	for (;;) {
		int sig = 0;
		if (sigwait(set, &sig))
			continue;
		if (sig != SIGHUP) {
			tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "signal %s: draining",
			       sig == SIGTERM ? "SIGTERM" : "SIGINT");
			return;
		}
		if (kube) { /* the watch writes the store in place: never swap it */
			tw_log(TW_LOG_WARN | TW_LOG_ALWAYS, "SIGHUP ignored with --kube: the watch "
			       "keeps the store current; restart to reload --runtimes");
			continue;
		}
		tp_store *s = load_store(cli);
		tw_metrics_store_reload(s != NULL);
		if (s) {
			tw_server_set_store(srv, s);
			tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "SIGHUP: runtime store reloaded");
		} else {
			tw_log(TW_LOG_ERROR | TW_LOG_ALWAYS,
			       "SIGHUP: store reload failed; the previous store stays in use");
		}
	}
}

/* The serving pair, checked as `certs check` checks it, then opened for
 * the TLS layer (which watches it from now on). NULL when it is refused. */
static tw_tls *open_pair(const struct serve_args *a)
{
	char err[512];
	tw_certs_check_opts chk = { .cert_path = a->cert, .key_path = a->key };
	tw_certs_report rep;
	if (tw_certs_check(&chk, &rep) != TW_CERTS_OK) {
		fprintf(stderr, "trainer-webhook serve: refusing the serving pair: %s\n",
			rep.reason);
		return NULL;
	}
	if (rep.expiring_soon)
		tw_log(TW_LOG_WARN | TW_LOG_ALWAYS, "the serving certificate expires in %lld days: "
		       "renew it", (long long)rep.days_left);
	tw_tls *tls = NULL;
	if (tw_tls_open(&tls, a->cert, a->key, err, sizeof(err)))
		fprintf(stderr, "trainer-webhook serve: %s\n", err);
	return tls;
}

/* Everything serve starts, so that one function can stop it all. */
struct running {
	tw_tls *tls;
	tw_server *srv;
	tw_metrics_server *ms;
	tw_kube_config kc;
	tw_watch *watch;
};

static bool never_ready(void *arg)
{
	(void)arg;
	return false;
}

/* Before the drain: the store outlives the watch that writes it. From here
 * on the replica is not ready (a stopped watch keeps no store current). */
static void stop_watch(struct running *r)
{
	if (!r->watch)
		return;
	tw_server_set_ready_gate(r->srv, never_ready, NULL);
	tw_watch_stop(r->watch);
	r->watch = NULL;
	tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "API-server watch stopped");
}

static void stop_all(struct running *r)
{
	stop_watch(r);
	tw_metrics_stop(r->ms);
	tw_server_free(r->srv);
	tw_tls_close(r->tls);
	tw_kube_config_free(&r->kc);
}

/* Load the store, open both ports, start the watch. 0, or -1 with the
 * reason printed. */
static int start_all(struct serve_args *a, struct running *r)
{
	char err[512];
	if (a->kube && kube_config(a, &r->kc))
		return -1;
	tp_store *store = load_store(&a->cli);
	tw_metrics_store_reload(store != NULL); /* the start-up load counts too */
	if (!store)
		return -1;
	tp_store *live = store; /* the watch writes the server's store in place */
	tw_server_opts so = { .listen = a->listen, .threads = a->threads, .tls = r->tls,
			      .store = store };
	so.base.opt = a->cli.opt;
	so.base.max_body = a->max_body;
	if (a->kube) /* not ready before every kind's first list */
		so.ready_gate = tw_watch_ready_gate;
	if (tw_server_start(&so, &r->srv, err, sizeof(err)) ||
	    tw_metrics_serve(a->metrics_listen, &r->ms, err, sizeof(err))) {
		fprintf(stderr, "trainer-webhook serve: %s\n", err);
		return -1;
	}
	tw_watch_opts wo = { .kube = &r->kc, .store = live };
	if (a->kube && tw_watch_start(&wo, &r->watch, err, sizeof(err))) {
		fprintf(stderr, "trainer-webhook serve: --kube: %s\n", err);
		return -1;
	}
	if (r->watch)
		tw_server_set_ready_gate(r->srv, tw_watch_ready_gate, r->watch);
	tw_tls_watch(r->tls, TW_TLS_POLL_MS);
	return 0;
}

static int serve(struct serve_args *a)
{
	sigset_t set;
	block_signals(&set);
	tw_metrics_reset();
	struct running r = { .tls = open_pair(a) };
	if (!r.tls)
		return TW_EXIT_USAGE;
	int code = TW_EXIT_USAGE;
	if (start_all(a, &r) == 0) {
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "serving https on %s (port %u), metrics on %s "
		       "(port %u), profile %s, %u threads", a->listen, tw_server_port(r.srv),
		       a->metrics_listen, tw_metrics_port(r.ms),
		       tp_profile_name(a->cli.opt.profile), a->threads);
		print_try_line(a, tw_server_port(r.srv));
		wait_for_stop(r.srv, &a->cli, &set, a->kube);
		stop_watch(&r);
		tw_server_drain(r.srv, a->grace_s * 1000);
		code = TW_EXIT_OK;
	}
	stop_all(&r);
	return code;
}

int tw_cmd_serve(int argc, char **argv)
{
	struct serve_args a = { .listen = NULL, .metrics_listen = NULL, .grace_s = 10,
				.level = TW_LOG_INFO };
	tw_cli_init(&a.cli, "serve", serve_help);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	a.threads = cpus > 0 ? (unsigned)cpus : 1;
	a.max_body = TW_DEFAULT_MAX_BODY;
	int rc = parse_args(&a, argc, argv);
	if (!rc)
		rc = dev_defaults(&a);
	if (rc) {
		tw_cli_free(&a.cli);
		return rc < 0 ? TW_EXIT_OK : rc;
	}
	if (!a.listen)
		a.listen = ":9443";
	if (!a.metrics_listen)
		a.metrics_listen = ":8080";
	tw_log_set_level(a.level);
	int code = serve(&a);
	tw_cli_free(&a.cli);
	return code;
}
