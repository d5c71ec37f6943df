/*
 * serve_register.c — serve --register-webhooks: the registrar
 * (webhook/cluster/register.c) started with what serve knows: the names it
 * was told, its namespace and pod, the server's readiness as the gate, and
 * the CA bundle (the managed certificates', or the --ca-bundle file's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webhook/cli/serve.h"
#include "webhook/core/files.h"

static bool server_ready(void *arg, char *why, size_t n)
{
	return tw_server_ready(arg, why, n);
}

/* The --ca-bundle file (or ca.crt beside --tls-cert), read at each fill:
 * cert-manager's kubelet-mounted Secret changes under it. */
static char *file_bundle(void *arg)
{
	tp_buf b = TP_BUF_INIT(1 << 20);
	if (tw_read_file(arg, 1 << 20, &b) || !b.len || tp_buf_addc(&b, '\0')) {
		tp_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* --ca-bundle, else ca.crt in --tls-cert's folder when it is there. */
static bool bundle_path(const tw_serve_args *a, char *out, size_t n)
{
	if (a->ca_bundle)
		return snprintf(out, n, "%s", a->ca_bundle) < (int)n;
	const char *slash = a->cert ? strrchr(a->cert, '/') : NULL;
	int len = slash ? snprintf(out, n, "%.*s/ca.crt", (int)(slash - a->cert), a->cert)
			: snprintf(out, n, "ca.crt");
	return len < (int)n && !access(out, R_OK);
}

int tw_serve_register_start(const tw_serve_args *a, tw_server *srv, const tw_kube_config *kc,
			    tw_certmgr *certs, tw_register **out, char *err, size_t errlen)
{
	static char bundle_file[1024]; /* read by the registrar's thread until exit */
	char ns[256], pod[256] = "";
	if (!a->namespace_ && tw_kube_namespace(NULL, ns, sizeof(ns)))
		return snprintf(err, errlen, "--register-webhooks: no namespace: give --namespace "
					     "(outside a pod there is no service-account namespace "
					     "file)"), -1;
	/* The pod's name (POD_NAME from the downward API, else the hostname the
	 * kubelet gives it): its own endpoint is not "another replica". */
	const char *env = getenv("POD_NAME");
	if (env && *env)
		snprintf(pod, sizeof(pod), "%s", env);
	else if (gethostname(pod, sizeof(pod)))
		pod[0] = '\0';
	tw_register_opts ro = { .kube = kc, .namespace_ = a->namespace_ ? a->namespace_ : ns,
				.service = a->service, .validating = a->validating,
				.mutating = a->mutating, .failure_policy = a->failure_policy,
				.timeout_s = a->webhook_timeout_s, .exempt = a->exempt,
				.nexempt = a->nexempt, .pod = pod, .ready = server_ready,
				.ready_arg = srv };
	if (certs) {
		ro.bundle = tw_certmgr_bundle;
		ro.bundle_arg = certs;
	} else if (bundle_path(a, bundle_file, sizeof(bundle_file))) {
		ro.bundle = file_bundle;
		ro.bundle_arg = bundle_file;
	}
	return tw_register_start(&ro, out, err, errlen);
}
