/*
 * cmd_serve.c — `trainer-webhook serve`: the HTTPS admission server.
 *
 * The main thread reads the options (serve_args.c), loads the certificates
 * and the store, starts the TLS daemon and the metrics port, then the
 * cluster's helpers (the watch of the runtimes, the certificate manager),
 * and waits for signals: SIGHUP reloads the store from --runtimes,
 * SIGTERM/SIGINT drain and exit 0. Certificates from files reload themselves
 * (tls.c watches them); managed ones come from the Secret (certmgr.c).
 *
 * --dev is the README's embedded default: development certificates (made
 * when absent) and the example runtimes the binary carries, in a private
 * folder of the user's (dev_state.c), never the current one; 127.0.0.1:9443,
 * and a curl line to try.
 */
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs/certs.h"
#include "webhook/cluster/certmgr.h"
#include "webhook/metrics/metrics.h"
#include "webhook/server/metrics_http.h"
#include "webhook/server/crds_follow.h"
#include "webhook/cli/serve.h"
#include "webhook/server/server.h"
#include "webhook/cluster/version.h"
#include "webhook/cluster/watch.h"
#include "webhook/cli/commands.h"

/* What --kube follows by watch: what every request may read. TrainJobs and
 * JobSets are not cached (their number grows with the cluster): requests
 * that need one GET it. */
enum { W_CTR, W_TR, W_PRIORITY, W_COUNT };

static const tw_watch_kind watched[W_COUNT] = {
	[W_CTR] = { .group = "trainer.kubeflow.org", .version = "v1alpha1",
		    .plural = "clustertrainingruntimes", .kind = "ClusterTrainingRuntime",
		    .cluster_scoped = true },
	[W_TR] = { .group = "trainer.kubeflow.org", .version = "v1alpha1",
		   .plural = "trainingruntimes", .kind = "TrainingRuntime" },
	/* The Volcano rule's PriorityClasses: a cluster without the API (or
	 * without the RBAC to list it) must not lose readiness. */
	[W_PRIORITY] = { .group = "scheduling.k8s.io", .version = "v1",
			 .plural = "priorityclasses", .kind = "PriorityClass",
			 .cluster_scoped = true, .optional = true },
};
static const tp_kind watched_kind[W_COUNT] = { TP_KIND_CLUSTER_TRAINING_RUNTIME,
					       TP_KIND_TRAINING_RUNTIME,
					       TP_KIND_PRIORITY_CLASS };

/* --dev fills in what was not given. */
static int dev_defaults(tw_serve_args *a)
{
	if (!a->dev)
		return 0;
	if (!a->listen)
		a->listen = "127.0.0.1:9443";
	if (!a->metrics_listen)
		a->metrics_listen = "127.0.0.1:8080";
	char err[PATH_MAX + 256];
	tw_dev_state *st = &a->dev_state;
	if (tw_dev_state_open(st, err, sizeof(err))) {
		fprintf(stderr, "trainer-webhook serve: --dev: %s\n", err);
		return TW_EXIT_USAGE;
	}
	if (!a->cli.nruntimes && tw_cli_add_runtimes(&a->cli, st->runtimes))
		return TW_EXIT_USAGE;
	if (a->cert)
		return 0;
	int dev = tw_certs_ensure_dev(st->certs, err, sizeof(err));
	if (dev == TW_CERTS_DEV_REPLACED)
		fprintf(stderr, "trainer-webhook serve: replaced the development certificates: %s\n",
			err);
	if (dev < 0) {
		fprintf(stderr, "trainer-webhook serve: development certificates: %s\n", err);
		return TW_EXIT_USAGE;
	}
	a->cert = st->cert;
	a->key = st->key;
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

static void print_try_line(const tw_serve_args *a, unsigned short port)
{
	if (!a->dev)
		return;
	const tw_dev_state *st = &a->dev_state;
	fprintf(stderr,
		"\ntrainer-webhook is serving on https://127.0.0.1:%u (development certificates "
		"and example runtimes in %s). Stop it with Ctrl-C.\nTry it:\n\n"
		"  curl -s --cacert '%s' -H 'Content-Type: application/json' --data @'%s' "
		"https://127.0.0.1:%u/validate-trainer-kubeflow-org-v1alpha1-trainjob\n\n",
		port, st->dir, st->ca, st->sample, port);
}

/* The API server: --kubeconfig / --context, --kube-server, else the
 * in-cluster configuration (whose files --kube-token-file / --kube-ca-file
 * may replace). */
static int kube_config(const tw_serve_args *a, tw_kube_config *kc)
{
	char err[1024];
	int rc;
	if (a->kubeconfig || a->context) {
		rc = tw_kubeconfig_load(a->kubeconfig, a->context, kc, err, sizeof(err));
	} else if (a->kube_server) {
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

/* The serving pair: from files, checked as `certs check` checks them and
 * then watched; or, with --manage-certs, empty until the Secret is read.
 * NULL when it is refused. */
static tw_tls *open_pair(const tw_serve_args *a)
{
	char err[512];
	tw_tls *tls = NULL;
	if (a->manage_certs) {
		if (tw_tls_new(&tls))
			fprintf(stderr, "trainer-webhook serve: out of memory\n");
		return tls;
	}
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
	if (tw_tls_open(&tls, a->cert, a->key, err, sizeof(err)))
		fprintf(stderr, "trainer-webhook serve: %s\n", err);
	return tls;
}

/* Files mode in a cluster: the name the API server calls must be on the
 * certificate. A namespace set over a kustomization whose certificate names
 * did not follow it shows up here, as a reason not to be ready, rather than
 * as x509 errors on every call. */
struct covers {
	tw_tls *tls;
	char host[300];
};

static bool pair_covers(void *arg, char *why, size_t n)
{
	struct covers *c = arg;
	if (tw_tls_covers(c->tls, c->host))
		return true;
	snprintf(why, n, "the serving certificate does not cover %s, the name the API server "
			 "calls: issue it for that name (a namespace set over a kustomization whose "
			 "certificate names did not follow it?)", c->host);
	return false;
}

/* Everything serve starts, so that one function can stop it all. */
struct running {
	tw_tls *tls;
	tw_server *srv;
	tw_metrics_server *ms;
	tw_kube_config kc;
	tw_kubeapi *api;
	tw_watch *watch;
	tw_certmgr *certs;
	tw_register *reg;          /* --register-webhooks */
	tw_store_sink sinks[W_COUNT];
	tw_freshness fresh;        /* which watched kinds lookups may take from the store */
	tw_watch *crd_watch;       /* --kube without --crds: the cluster's CRDs */
	tw_crds_follow *follow;
	struct covers covers;
	_Atomic int kube_minor;    /* the cluster's release, re-read by the watch */
};

static bool shutting_down(void *arg, char *why, size_t n)
{
	(void)arg;
	snprintf(why, n, "shutting down");
	return false;
}

static bool starting(void *arg, char *why, size_t n)
{
	(void)arg;
	snprintf(why, n, "starting");
	return false;
}

static bool watch_ready(void *arg, char *why, size_t n)
{
	return tw_watch_ready(arg, why, n);
}

/* Before the drain: the store outlives the watch that writes it, the pair
 * the manager that renews it. From here on the replica is not ready. */
static void stop_helpers(struct running *r)
{
	if (r->srv) {
		tw_server_set_ready_check(r->srv, TW_READY_WATCH, shutting_down, NULL);
		tw_server_set_ready_check(r->srv, TW_READY_CERTS, shutting_down, NULL);
	}
	/* First, while the API server still reaches this replica: the last one
	 * whose pod is deleted empties the webhook configurations. */
	tw_register_stop(r->reg, true);
	r->reg = NULL;
	if (r->watch) {
		tw_watch_stop(r->watch);
		r->watch = NULL;
		tw_log(TW_LOG_INFO | TW_LOG_ALWAYS, "API-server watch stopped");
	}
	tw_certmgr_stop(r->certs);
	r->certs = NULL;
	if (r->srv)
		tw_server_set_ready_check(r->srv, TW_READY_CRDS, shutting_down, NULL);
	tw_watch_stop(r->crd_watch);
	r->crd_watch = NULL;
	tw_crds_follow_free(r->follow);
	r->follow = NULL;
}

static void stop_all(struct running *r)
{
	stop_helpers(r);
	tw_metrics_stop(r->ms);
	tw_server_free(r->srv);
	tw_tls_close(r->tls);
	tw_kubeapi_free(r->api);
	tw_kube_config_free(&r->kc);
}

/* The runtimes were listed anew: the API server came back, and an upgraded
 * one checks the Jobs and Pods by its new release. */
static void release_reread(void *arg)
{
	struct running *r = arg;
	tw_kube_version_reread(r->api, TW_KUBE_VERSION_REREAD_MS, &r->kube_minor);
}

static int start_watch(struct running *r, tp_store *store, char *err, size_t n)
{
	tw_watch_kind kinds[W_COUNT];
	for (int i = 0; i < W_COUNT; i++) {
		kinds[i] = watched[i];
		r->sinks[i] = (tw_store_sink){ store, watched_kind[i] };
		kinds[i].sink = tw_watch_store_sink(&r->sinks[i]);
		kinds[i].fresh_bit = 1u << watched_kind[i];
	}
	tw_watch_opts wo = { .kube = &r->kc, .kinds = kinds, .nkinds = W_COUNT,
			     .name = "runtimes", .metrics = true, .fresh = &r->fresh,
			     .relisted = r->api ? release_reread : NULL, .relisted_arg = r };
	return tw_watch_start(&wo, &r->watch, err, n);
}

/* The cluster's CRDs of the webhook's kinds, by name, into the server. */
static int start_crds(struct running *r, char *err, size_t n)
{
	tw_watch_kind kinds[TW_CRDS_FOLLOW_MAX];
	if (!(r->follow = tw_crds_follow_new(r->srv)))
		return snprintf(err, n, "out of memory"), TP_ENOMEM;
	tw_watch_opts wo = { .kube = &r->kc, .kinds = kinds,
			     .nkinds = tw_crds_follow_kinds(r->follow, kinds), .name = "crds" };
	return tw_watch_start(&wo, &r->crd_watch, err, n);
}

static int start_certs(const tw_serve_args *a, struct running *r, char *err, size_t n)
{
	char ns[256];
	if (!a->namespace_ && tw_kube_namespace(NULL, ns, sizeof(ns)))
		return snprintf(err, n, "--manage-certs: no namespace: give --namespace (outside "
				       "a pod there is no service-account namespace file)"),
		       TW_EFAILED;
	tw_certmgr_opts co = { .kube = &r->kc, .namespace_ = a->namespace_ ? a->namespace_ : ns,
			       .secret = a->secret, .service = a->service,
			       .validating = a->validating, .mutating = a->mutating,
			       .validity = a->cert_validity_s, .ca_validity = a->ca_validity_s,
			       .overlap = a->ca_overlap_s, .serve = tw_tls_serve_pem,
			       .serve_arg = r->tls };
	int rc = tw_certmgr_start(&co, &r->certs, err, n);
	if (rc)
		return rc;
	tw_server_set_ready_check(r->srv, TW_READY_CERTS, tw_certmgr_ready, r->certs);
	return 0;
}

/* --max-connections from the open-files limit (raised to its hard limit
 * first), with room for files, the metrics port and the API-server client,
 * and from the memory budget, of which connections may hold half: past the
 * limit a connection is closed at once instead of the process running out
 * of descriptors (when certificate reloads and lookups fail) or of memory
 * (an OOM kill). */
static void connection_limits(const tw_serve_args *a, tw_server_opts *so)
{
	struct rlimit rl;
	unsigned max = 1024 - 64;
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		rlim_t n = rl.rlim_cur == RLIM_INFINITY ? 65536 : rl.rlim_cur;
		max = n > 64 + 16 ? (unsigned)(n > 65536 + 64 ? 65536 : n - 64) : 16;
	}
	unsigned by_memory = tw_budget_max_conns(so->memory_budget);
	if (by_memory && by_memory < max)
		max = by_memory < 16 ? 16 : by_memory;
	so->max_conns = a->max_conns ? a->max_conns : max;
	/* libmicrohttpd splits the limit among its worker threads, and a worker
	 * at its share refuses what it accepts: one peer may fill at most half
	 * of one worker, so another (the API server) always finds room. */
	unsigned share = so->max_conns / (a->threads ? a->threads : 1);
	so->max_per_peer = a->max_per_peer ? a->max_per_peer : share / 2 ? share / 2 : 1;
	tw_metrics_connection_limit(so->max_conns);
}

/* The decision threads and the memory budget (serve_args.c's defaults
 * need the CPUs and the container's limit), said once at start. */
static void work_limits(const tw_serve_args *a, tw_server_opts *so)
{
	unsigned twice = 2 * (a->threads ? a->threads : 1);
	so->deciders = a->deciders ? a->deciders : twice > 4 ? twice : 4;
	char source[160] = "--memory-budget";
	so->memory_budget = a->memory_budget ? a->memory_budget
					     : tw_budget_default("", source, sizeof(source));
	tw_log_line l;
	tw_log_begin(&l, TW_LOG_INFO | TW_LOG_ALWAYS, "memory budget for requests in flight");
	tw_log_int(&l, "limit", (long long)so->memory_budget);
	tw_log_str(&l, "from", source);
	tw_log_int(&l, "decision_threads", so->deciders);
	tw_log_end(&l);
}

/* Load the store, open both ports, start the cluster's helpers. 0, or
 * TW_EFAILED with the reason printed. */
static int start_all(tw_serve_args *a, struct running *r)
{
	char err[512] = "";
	if (a->kube && (kube_config(a, &r->kc) || tw_kubeapi_new(&r->kc, &r->api, err,
								    sizeof(err)))) {
		if (err[0])
			fprintf(stderr, "trainer-webhook serve: --kube: %s\n", err);
		return TW_EFAILED;
	}
	tp_store *store = load_store(&a->cli);
	tw_metrics_store_reload(store != NULL); /* the start-up load counts too */
	if (!store)
		return TW_EFAILED;
	a->cli.crds_elsewhere = a->kube; /* the cluster's own, followed below */
	if (tw_cli_load_crds(&a->cli)) {
		tw_log(TW_LOG_ERROR, "cannot load --crds (see above); fix the CustomResourceDefinitions");
		tp_store_free(store);
		return TW_EFAILED;
	}
	tw_server_opts so = { .listen = a->listen, .threads = a->threads, .tls = r->tls,
			      .store = store, .handshake_timeout_s = a->handshake_s,
			      .idle_timeout_s = a->idle_s, .read_timeout_s = a->read_s };
	work_limits(a, &so);
	connection_limits(a, &so);
	if (r->api) { /* the cluster's Kubernetes, for every decision, followed */
		atomic_store(&r->kube_minor, tw_kube_version_minor(r->api,
								    TW_KUBE_VERSION_TIMEOUT_MS));
		so.cluster.kube_minor = &r->kube_minor;
	}
	so.base.opt = a->cli.opt;
	so.crds = a->cli.crds; /* --crds: compiled once; else the cluster's, followed */
	so.base.max_body = a->max_body;
	so.base.strict_warn = a->strict_warn;
	so.cluster.api = r->api;
	so.cluster.fresh = &r->fresh; /* stale (read through) until the watch lists them */
	for (int i = 0; a->kube && i < W_COUNT; i++)
		so.cluster.cached |= 1u << watched_kind[i];
	if (a->kube) /* not ready before the runtimes' first lists */
		so.ready[TW_READY_WATCH] = starting;
	if (a->manage_certs) /* not ready before the manager has a pair and a bundle */
		so.ready[TW_READY_CERTS] = starting;
	bool follow = a->kube && !a->cli.crds && !a->cli.opt.no_schema && !a->cli.crds_none;
	if (follow) /* not ready before the CRDs' first lists */
		so.ready[TW_READY_CRDS] = starting;
	if (tw_server_start(&so, &r->srv, err, sizeof(err)) ||
	    tw_metrics_serve(a->metrics_listen, &r->ms, err, sizeof(err)) ||
	    (a->kube && start_watch(r, store, err, sizeof(err))) ||
	    (follow && start_crds(r, err, sizeof(err))) ||
	    (a->manage_certs && start_certs(a, r, err, sizeof(err)))) {
		fprintf(stderr, "trainer-webhook serve: %s\n", err);
		return TW_EFAILED;
	}
	if (r->watch)
		tw_server_set_ready_check(r->srv, TW_READY_WATCH, watch_ready, r->watch);
	if (r->crd_watch)
		tw_server_set_ready_check(r->srv, TW_READY_CRDS, watch_ready, r->crd_watch);
	if (a->register_webhooks &&
	    tw_serve_register_start(a, r->srv, &r->kc, r->certs, &r->reg, err, sizeof(err))) {
		fprintf(stderr, "trainer-webhook serve: %s\n", err);
		return TW_EFAILED;
	}
	char ns[256];
	if (a->kube && !a->manage_certs && a->service[0] &&
	    (a->namespace_ || !tw_kube_namespace(NULL, ns, sizeof(ns)))) {
		r->covers.tls = r->tls;
		snprintf(r->covers.host, sizeof(r->covers.host), "%s.%s.svc", a->service,
			 a->namespace_ ? a->namespace_ : ns);
		tw_server_set_ready_check(r->srv, TW_READY_CERTS, pair_covers, &r->covers);
	}
	tw_tls_watch(r->tls, TW_TLS_POLL_MS);
	return 0;
}

static int serve(tw_serve_args *a)
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
		       "(port %u), profile %s%s, %u threads%s", a->listen, tw_server_port(r.srv),
		       a->metrics_listen, tw_metrics_port(r.ms),
		       tp_profile_name(a->cli.opt.profile),
		       a->strict_warn ? " (strict violations as warnings)" : "", a->threads,
		       a->manage_certs ? ", managed certificates" : "");
		print_try_line(a, tw_server_port(r.srv));
		wait_for_stop(r.srv, &a->cli, &set, a->kube);
		stop_helpers(&r);
		tw_server_drain(r.srv, a->grace_s * 1000);
		code = TW_EXIT_OK;
	}
	stop_all(&r);
	return code;
}

int tw_cmd_serve(int argc, char **argv)
{
	tw_serve_args a;
	int rc = tw_serve_parse(&a, argc, argv);
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
