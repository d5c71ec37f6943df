/*
 * cli.c — what the commands share: the options every command takes
 * (--profile, --runtimes, --crds, --no-schema, --now, --pod-security,
 * --kubernetes-version) and the store and CRD set they build.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/cli/builtin_crds.h"
#include "webhook/cli/cli.h"
#include "webhook/cli/cluster_reads.h"
#include "webhook/cli/flags.h"
#include "webhook/cli/crds.h"
#include "webhook/cli/manifests.h"
#include "webhook/cluster/kube.h"
#include "webhook/cluster/kubeapi.h"
#include "webhook/cluster/version.h"
#include "webhook/cli/commands.h"

void tw_cli_init(tw_cli *c, const char *cmd, const char *help)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	c->help = help;
	c->opt.profile = TP_PROFILE_STRICT;
}

void tw_cli_free(tw_cli *c)
{
	free(c->runtimes);
	free(c->crd_paths);
	tp_crds_unref(c->crds);
	c->crd_paths = NULL;
	c->crds = NULL;
	tp_store_free(c->store);
	cJSON_Delete(c->known);
	c->known = NULL;
	c->runtimes = NULL;
	c->store = NULL;
}

int tw_cli_usage(const tw_cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s %s: ", tw_prog(), c->cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see %s --help)\n", tw_prog());
	va_end(ap);
	return TW_EXIT_USAGE;
}

/* RFC 3339 in UTC with seconds, as metav1.Time serialises. */
static bool is_rfc3339_utc(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	return true;
}

int tw_cli_add_runtimes(tw_cli *c, const char *path)
{
	const char **r = realloc(c->runtimes, (c->nruntimes + 1) * sizeof(*r));
	if (!r)
		return TP_ENOMEM;
	c->runtimes = r;
	c->runtimes[c->nruntimes++] = path;
	return TP_OK;
}

int tw_cli_help(void *cli)
{
	const tw_cli *c = cli;
	tw_flags_help(c->cmd, c->help, stdout);
	return TW_CLI_HELP;
}

int tw_cli_flag(tw_cli *c, const char *as, const tw_flag *f, const char *val)
{
	const char *a = f->name;
	if (!strcmp(a, "--no-schema")) {
		c->opt.no_schema = true;
		return 0;
	}
	bool takes = !strcmp(a, "--profile") || !strcmp(a, "--runtimes") || !strcmp(a, "--now") ||
		     !strcmp(a, "--crds") || !strcmp(a, "--kubeconfig") || !strcmp(a, "--context") ||
		     !strcmp(a, "--pod-security") || !strcmp(a, "--kubernetes-version");
	if (!takes)
		return TW_CLI_OTHER;
	if (!val)
		return tw_cli_usage(c, "%s needs a value", as);
	if (!strcmp(a, "--profile")) {
		if (tp_profile_parse(val, &c->opt.profile))
			return tw_cli_usage(c, "--profile \"%s\": use kubeflow or strict", val);
	} else if (!strcmp(a, "--now")) {
		if (!is_rfc3339_utc(val))
			return tw_cli_usage(c, "--now \"%s\": use RFC 3339 UTC, like "
					       "2026-08-21T10:15:30Z", val);
		c->opt.now = val;
	} else if (!strcmp(a, "--kubeconfig")) {
		c->kubeconfig = val;
	} else if (!strcmp(a, "--pod-security")) {
		char why[256];
		tp_psa_lv lv;
		if (tp_psa_parse(val, &lv, why, sizeof(why)))
			return tw_cli_usage(c, "--pod-security \"%s\": %s", val, why);
		c->opt.pod_security = val;
	} else if (!strcmp(a, "--kubernetes-version")) {
		char why[160];
		if (tp_kube_version_parse(val, &c->opt.kubernetes_minor, why, sizeof(why)))
			return tw_cli_usage(c, "--kubernetes-version \"%s\": %s", val, why);
	} else if (!strcmp(a, "--crds") && !strcmp(val, "none")) {
		c->crds_none = true;
	} else if (!strcmp(a, "--context")) {
		c->context = val;
	} else if (!strcmp(a, "--crds")) {
		const char **p = realloc(c->crd_paths, (c->ncrd_paths + 1) * sizeof(*p));
		if (!p)
			return tw_cli_usage(c, "out of memory");
		c->crd_paths = p;
		c->crd_paths[c->ncrd_paths++] = val;
	} else if (tw_cli_add_runtimes(c, val)) {
		return tw_cli_usage(c, "out of memory");
	}
	return 0;
}

int tw_cli_unknown(void *cli, const char *arg)
{
	return tw_cli_usage(cli, "unknown option \"%s\"", arg);
}

int tw_cli_load_store(tw_cli *c)
{
	if (!c->store) { /* a fresh store (serve's reload): its names afresh too */
		cJSON_Delete(c->known);
		c->known = NULL;
		if (tp_store_new(&c->store))
			return TP_ENOMEM;
	}
	if (!c->known && !(c->known = cJSON_CreateArray()))
		return TP_ENOMEM;
	for (size_t i = 0; i < c->nruntimes; i++) {
		int rc = tw_store_load_path_names(c->store, c->runtimes[i], stderr, c->known);
		if (rc)
			return rc;
	}
	c->opt.store = c->store;
	return TP_OK;
}

/* The CRDs of the cluster --kubeconfig (or $KUBECONFIG) and --context name. */
/* The cluster's Kubernetes release, which the Jobs and Pods are checked as.
 * Unreadable: the newest supported release's checks, and no field refused
 * for a release the cluster may not run (as serve does), said once. */
static void version_from_cluster(tw_cli *c, tw_kubeapi *api)
{
	char git[128] = "", why[512] = "";
	int minor = 0;
	if (tw_kube_version_read(api, TW_KUBE_VERSION_TIMEOUT_MS, &minor, git, sizeof(git), why,
				 sizeof(why))) {
		c->opt.kubernetes_minor = TP_KUBE_MINOR_UNKNOWN;
		fprintf(stderr, "trainer-webhook %s: the cluster's Kubernetes version could not be "
			"read (%s): the Jobs and Pods are checked as Kubernetes 1.%d checks them, "
			"and no field is refused for its release; give --kubernetes-version 1.N\n",
			c->cmd, why, TP_KUBE_MINOR_NEWEST);
		return;
	}
	c->opt.kubernetes_minor = minor;
	fprintf(stderr, "Kubernetes %s read from %s: the Jobs and Pods are checked as 1.%d checks "
		"them\n", git, tw_kubeapi_server(api),
		minor >= TP_KUBE_MINOR_OLDEST && minor <= TP_KUBE_MINOR_NEWEST ? minor
										: TP_KUBE_MINOR_NEWEST);
}

static int crds_from_cluster(tw_cli *c)
{
	tw_kube_config kc = { 0 };
	tw_kubeapi *api = NULL;
	char err[1024] = "";
	size_t n = 0;
	int rc = TP_EUNAVAILABLE;
	if (!tw_kubeconfig_load(c->kubeconfig, c->context, &kc, err, sizeof(err)) &&
	    !tw_kubeapi_new(&kc, &api, err, sizeof(err)) &&
	    !(rc = tw_kube_crds_fetch(api, c->crds, &n, err, sizeof(err)))) {
		fprintf(stderr, "%zu CRD%s read from %s\n", n, n == 1 ? "" : "s", tw_kubeapi_server(api));
		if (!c->opt.kubernetes_minor) /* --kubernetes-version, when given, wins */
			version_from_cluster(c, api);
	} else
		/* judging without the cluster's CRDs would say "ok" to what they refuse */
		fprintf(stderr, "trainer-webhook %s: %s: %s; nothing was checked: fix the "
			"kubeconfig or the cluster's RBAC (get customresourcedefinitions), or drop "
			"--kubeconfig and --context to check against the built-in CRDs\n", c->cmd,
			tw_cli_cluster_flag(c, err), err);
	tw_cli_reads_keep(&kc, api); /* the same connection reads what the inputs lack */
	return rc ? TP_EUNAVAILABLE : TP_OK;
}

/* The CRDs built into the binary: what upstream's release ships. */
static int crds_builtin(tw_cli *c)
{
	if (!c->crds && tp_crds_new(&c->crds))
		return TP_ENOMEM;
	int rc = tw_builtin_crds_load(c->crds, stderr);
	c->opt.crds = c->crds;
	malloc_trim(0); /* the parsed text is gone: give its pages back */
	return rc;
}

int tw_cli_load_crds(tw_cli *c)
{
	bool cluster = c->kubeconfig || c->context; /* the CRDs from a cluster */
	if (c->crds_none && (c->ncrd_paths || cluster))
		return tw_cli_usage(c, "--crds none turns the CRDs off: drop it, or drop the other "
				       "--crds%s", cluster ? " and --kubeconfig/--context" : ""),
		       TP_EINVAL;
	if (c->crds_none || (!c->ncrd_paths && !cluster && (c->opt.no_schema ||
							    c->crds_elsewhere)))
		return TP_OK;
	if (!c->ncrd_paths && !cluster)
		return crds_builtin(c);
	if (!c->ncrd_paths) {
		if (!c->crds && tp_crds_new(&c->crds))
			return TP_ENOMEM;
		c->opt.crds = c->crds;
		return crds_from_cluster(c);
	}
	if (!c->crds && tp_crds_new(&c->crds))
		return TP_ENOMEM;
	int first = TP_OK;
	for (size_t i = 0; i < c->ncrd_paths; i++) {
		int rc = tw_crds_load(c->crds, c->crd_paths[i], stderr, NULL);
		if (rc && !first)
			first = rc;
	}
	c->opt.crds = c->crds;
	malloc_trim(0); /* the CRDs' parsed text is gone: give its pages back */
	return first;
}

int tw_cli_keep(tw_cli *c, const cJSON *obj)
{
	tp_kind k = tp_kind_of(obj);
	/* ConfigMaps: the store keeps runtime snapshots only; a Namespace gives
	 * the Pod Security labels of the TrainJobs in it; ServiceAccounts,
	 * LimitRanges and ResourceQuotas what its Pods may name and ask for */
	if (!tp_kind_is_runtime(k) && k != TP_KIND_PRIORITY_CLASS && k != TP_KIND_CONFIGMAP &&
	    k != TP_KIND_NAMESPACE && k != TP_KIND_SERVICE_ACCOUNT && k != TP_KIND_LIMIT_RANGE &&
	    k != TP_KIND_RESOURCE_QUOTA)
		return TP_OK;
	if (c->known && tw_note_runtime(c->known, obj))
		return TP_ENOMEM;
	cJSON *copy = cJSON_Duplicate(obj, 1);
	int rc = copy ? tp_store_put(c->store, copy) : TP_ENOMEM;
	if (rc && copy)
		cJSON_Delete(copy);
	return rc == TP_ENOMEM ? TP_ENOMEM : TP_OK;
}
