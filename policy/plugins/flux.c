/*
 * plugins/flux.c — mlPolicy.flux: the Flux framework runs the trainer's
 * command under its own workload manager, as upstream's flux plugin
 * (pkg/runtime/framework/plugins/flux at kubeflow/trainer@8c0f5059) sets it
 * up:
 *
 *   TrainJob check  an init container named `flux-installer` in the `node`
 *                   job is reserved;
 *   enforce         the `node` job gets the flux-installer init container
 *                   (a Flux view image that copies Flux into a shared
 *                   emptyDir), five volumes and the node container's five
 *                   mounts; the trainer's command becomes
 *                   `/bin/bash /etc/flux-config/entrypoint.sh "<command args>"`
 *                   and the TrainJob's args are dropped;
 *   build           the <tj>-flux-entrypoint ConfigMap (init.sh with the
 *                   broker configuration, entrypoint.sh with flux run's
 *                   flags) and the <tj>-flux-curve Secret (the brokers'
 *                   CURVE certificate; the key is the caller's, tp_keys).
 *
 * FLUX_VIEW_IMAGE, FLUX_NETWORK_DEVICE and FLUX_QUEUE_POLICY come from the
 * trainer's env (the TrainJob's over the runtime's), else the defaults.
 * Where upstream's controller stops with a nil dereference (a TrainJob
 * without trainer.numNodes), the expansion answers an error naming it.
 */
#include "policy/plugins/flux.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define INSTALLER        "flux-installer"
#define INSTALL_VOLUME   "flux-install"
#define INSTALL_PATH     "/mnt/flux"
#define CONFIG_PATH      "/etc/flux-config"
#define CURVE_VOLUME     "flux-curve"
#define CURVE_PATH       "/curve"
#define MEMORY_VOLUME    "shared-memory"
#define MEMORY_PATH      "/dev/shm"
#define SPACK_VOLUME     "spack-install"
#define SPACK_PATH       "/opt/software"
#define VIEW_ROOT        "/opt/view"
#define NUM_NODES_NEEDED                                                                   \
	"a TrainJob of a Flux runtime must set it: Flux lists one host per node in its broker " \
	"configuration; write the node count, e.g. numNodes: 2"
#define MODE_0755 493
#define MODE_0400 256

/* ------------------------------------------------------ TrainJob check */

static int check_trainjob(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->runtime, "spec.mlPolicy.flux"))
		return TP_OK;
	const cJSON *pod = tp__tj_pod_spec(tp__tj_job(ctx->tmpl, TP_JOB_NODE));
	const cJSON *c;
	cJSON_ArrayForEach(c, tp_get_array(pod, "initContainers")) {
		const char *name = tp_get_str(c, "name");
		if (!name || strcmp(name, INSTALLER))
			continue;
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.trainer.initContainers",
				       tp_result_quote(ctx->res, name),
				       "InitContainer '" INSTALLER "' is reserved");
		if (rc)
			return rc;
	}
	/* Strict: the broker configuration lists one host per node, so the
	 * count must be there (upstream's controller dereferences it). */
	if (tp_strict(ctx->opt) && !tp_get_int(ctx->job, "spec.trainer.numNodes", NULL))
		return tp_result_add(ctx->res, TP_FIELD_REQUIRED, "spec.trainer.numNodes", NULL,
				     "%s", NUM_NODES_NEEDED);
	return TP_OK;
}

/* ------------------------------------------------------ shared pieces */

int tp__flux_fill(tp_buf *out, const char *tmpl, const char *const *args, size_t n)
{
	size_t used = 0;
	const char *p = tmpl;
	for (const char *slot; (slot = strstr(p, "%s")) != NULL; p = slot + 2) {
		if (used == n)
			return TP_EINVAL;
		int rc;
		if ((rc = tp_buf_add(out, p, (size_t)(slot - p))) || (rc = tp_buf_adds(out, args[used++])))
			return rc;
	}
	return used == n ? tp_buf_adds(out, p) : TP_EINVAL;
}

int tp__flux_range(long long size, long long start, tp_buf *out)
{
	return size == 1 ? tp_buf_addf(out, "%lld", start)
			 : tp_buf_addf(out, "%lld-%lld", start, start + size - 1);
}

int tp__flux_hostlist(const char *prefix, long long size, tp_buf *out)
{
	int rc;
	if ((rc = tp_buf_addf(out, "%s-%s-0-[", prefix, TP_JOB_NODE)) ||
	    (rc = tp__flux_range(size, 0, out)))
		return rc;
	return tp_buf_adds(out, "]");
}

static int add_trimmed(tp_buf *out, const char *s, size_t n)
{
	size_t off, len;
	tp_go_trim_space(s, n, &off, &len);
	return tp_buf_add(out, s + off, len);
}

int tp__flux_command_line(const cJSON *command, const cJSON *args, tp_buf *out)
{
	tp_buf joined = TP_BUF_INIT(1u << 20);
	int rc = tp_buf_adds(&joined, "");
	const cJSON *lists[] = { command, args };
	bool first = true;
	for (int i = 0; i < 2 && !rc; i++) {
		const cJSON *a;
		cJSON_ArrayForEach(a, lists[i]) {
			if ((rc = tp_buf_addf(&joined, "%s%s", first ? "" : " ",
					      cJSON_IsString(a) ? a->valuestring : "")))
				break;
			first = false;
		}
	}
	if (!rc)
		rc = add_trimmed(out, joined.data, joined.len);
	tp_buf_free(&joined);
	return rc ? rc : tp_buf_adds(out, "");
}

int tp__flux_curve_cert(const char *name, const tp_curve_key *key, tp_buf *out)
{
	tp_buf pub = TP_BUF_INIT(0), sec = TP_BUF_INIT(0);
	int rc;
	if (!(rc = tp_z85_encode(key->public_key, TP_CURVE_KEY_LEN, &pub)) &&
	    !(rc = tp_z85_encode(key->secret_key, TP_CURVE_KEY_LEN, &sec)))
		rc = tp_buf_addf(out,
				 "#  ZeroMQ CURVE Secret Certificate\n"
				 "#  Generated by Kubeflow Trainer\n\n"
				 "metadata\n"
				 "    name = \"%s\"\n"
				 "curve\n"
				 "    public-key = \"%s\"\n"
				 "    secret-key = \"%s\"\n",
				 name, pub.data, sec.data);
	tp_buf_free(&pub);
	tp_buf_free(&sec);
	return rc;
}

/* ------------------------------------------------------ settings */

typedef struct settings {
	const char *view_image;     /* FLUX_VIEW_IMAGE */
	const char *network_device; /* FLUX_NETWORK_DEVICE */
	const char *queue_policy;   /* FLUX_QUEUE_POLICY */
} settings;

static void set_from(settings *s, const char *name, const char *value)
{
	if (!strcmp(name, "FLUX_VIEW_IMAGE"))
		s->view_image = value;
	else if (!strcmp(name, "FLUX_NETWORK_DEVICE"))
		s->network_device = value;
	else if (!strcmp(name, "FLUX_QUEUE_POLICY"))
		s->queue_policy = value;
}

/* The defaults, then the trainer node container's env entries with a value,
 * then the TrainJob's env (an entry without a value sets ""). */
static void read_settings(tp_expansion *x, settings *s)
{
	*s = (settings){ "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy", "eth0", "fcfs" };
	const cJSON *e;
	cJSON_ArrayForEach(e, tp_get_array(tp_x_container(tp_x_podset_by_ancestor(
							      x, TP_ANCESTOR_TRAINER),
						      TP_CONTAINER_NODE),
					   "env")) {
		const char *name = tp_get_str(e, "name"), *value = tp_get_str(e, "value");
		if (name && value)
			set_from(s, name, value);
	}
	cJSON_ArrayForEach(e, tp_get_array(x->trainer, "env")) {
		const char *name = tp_get_str(e, "name"), *value = tp_get_str(e, "value");
		if (name)
			set_from(s, name, value ? value : "");
	}
}

static bool num_nodes(tp_expansion *x, long long *nodes)
{
	if (tp_x_trainjob_num_nodes(x, nodes))
		return true;
	tp_result_add(x->res, TP_FIELD_REQUIRED, "spec.trainer.numNodes", NULL, "%s",
		      NUM_NODES_NEEDED);
	return false;
}

/* ------------------------------------------------------ enforcement */

static cJSON *volume(const char *name, const char *source, cJSON *spec)
{
	cJSON *v = cJSON_CreateObject();
	if (!spec || !v || !cJSON_AddStringToObject(v, "name", name) ||
	    !cJSON_AddItemToObject(v, source, spec)) {
		cJSON_Delete(v);
		cJSON_Delete(spec);
		return NULL;
	}
	return v;
}

static cJSON *empty_dir(const char *medium)
{
	cJSON *d = cJSON_CreateObject();
	if (d && medium && !cJSON_AddStringToObject(d, "medium", medium)) {
		cJSON_Delete(d);
		return NULL;
	}
	return d;
}

/* {name|secretName: ref, defaultMode: mode} in Go's member order. */
static cJSON *file_source(const char *ref_key, const char *ref, int mode)
{
	cJSON *s = cJSON_CreateObject();
	if (!s || !cJSON_AddStringToObject(s, ref_key, ref) ||
	    !cJSON_AddNumberToObject(s, "defaultMode", mode)) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* Upstream's order: the view's volumes, then the CURVE certificate's. */
static int add_volumes(tp_podset *ps, const char *cm, const char *secret)
{
	cJSON *v[] = {
		volume(SPACK_VOLUME, "emptyDir", empty_dir(NULL)),
		volume(INSTALL_VOLUME, "emptyDir", empty_dir(NULL)),
		volume(cm, "configMap", file_source("name", cm, MODE_0755)),
		volume(MEMORY_VOLUME, "emptyDir", empty_dir("Memory")),
		volume(CURVE_VOLUME, "secret", file_source("secretName", secret, MODE_0400)),
	};
	int rc = TP_OK;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		if (!rc)
			rc = v[i] ? tp_x_volume(ps->pod_spec, v[i]) : TP_ENOMEM;
		else
			cJSON_Delete(v[i]);
	}
	return rc;
}

static int add_installer(tp_expansion *x, tp_podset *ps, const settings *s, const char *cm)
{
	if (tp_find_named(tp_get_array(ps->pod_spec, "initContainers"), "name", INSTALLER))
		return tp_x_fail(x, "spec.trainer.initContainers", NULL,
				 "InitContainer '" INSTALLER "' is reserved");
	cJSON *inits = tp_x_array(ps->pod_spec, "initContainers");
	cJSON *c = cJSON_CreateObject(), *cmd = NULL;
	if (!inits || !c || !cJSON_AddItemToArray(inits, c)) {
		cJSON_Delete(c);
		return inits ? TP_ENOMEM : TP_EINVAL;
	}
	if (!cJSON_AddStringToObject(c, "name", INSTALLER) ||
	    (*s->view_image && !cJSON_AddStringToObject(c, "image", s->view_image)) ||
	    !(cmd = cJSON_AddArrayToObject(c, "command")) ||
	    !cJSON_AddItemToArray(cmd, cJSON_CreateString("/bin/bash")) ||
	    !cJSON_AddItemToArray(cmd, cJSON_CreateString(CONFIG_PATH "/init.sh")))
		return TP_ENOMEM;
	int rc = tp_x_mount_as(c, INSTALL_VOLUME, INSTALL_PATH, false);
	return rc ? rc : tp_x_mount_as(c, cm, CONFIG_PATH, true);
}

static int mount_node(cJSON *c, const char *cm)
{
	int rc;
	if ((rc = tp_x_mount_as(c, INSTALL_VOLUME, INSTALL_PATH, false)) ||
	    (rc = tp_x_mount_as(c, SPACK_VOLUME, SPACK_PATH, false)) ||
	    (rc = tp_x_mount_as(c, cm, CONFIG_PATH, true)) ||
	    (rc = tp_x_mount_as(c, CURVE_VOLUME, CURVE_PATH, true)))
		return rc;
	return tp_x_mount_as(c, MEMORY_VOLUME, MEMORY_PATH, true);
}

/* The command upstream hands to the entrypoint: the TrainJob's command
 * (else the runtime's) and the TrainJob's args. */
static int wrapped_command(tp_expansion *x, cJSON **out)
{
	const cJSON *command = tp_get_array(x->trainer, "command");
	const cJSON *args = tp_get_array(x->trainer, "args");
	if (!command || !command->child)
		command = x->runtime_command;
	tp_buf line = TP_BUF_INIT(1u << 20);
	int rc = tp__flux_command_line(command, args && args->child ? args : NULL, &line);
	cJSON *cmd = rc ? NULL : cJSON_CreateArray();
	if (!rc && (!cmd || !cJSON_AddItemToArray(cmd, cJSON_CreateString("/bin/bash")) ||
		    !cJSON_AddItemToArray(cmd, cJSON_CreateString(CONFIG_PATH "/entrypoint.sh")) ||
		    !cJSON_AddItemToArray(cmd, cJSON_CreateString(line.data))))
		rc = TP_ENOMEM;
	tp_buf_free(&line);
	if (rc) {
		cJSON_Delete(cmd);
		return rc == TP_ELIMIT ? tp_x_fail(x, "spec.trainer.command", NULL,
						   "with args makes a command line over 1 MiB")
				       : rc;
	}
	*out = cmd;
	return TP_OK;
}

/* Upstream sets trainJob.spec.trainer.command and clears its args, which
 * the JobSet builder writes into every trainer job's node container: the
 * wrapper, and the args the template had. */
static int rewrite_trainer(tp_expansion *x, const cJSON *cmd)
{
	for (size_t i = 0; i < x->npodsets; i++) {
		tp_podset *ps = &x->podsets[i];
		cJSON *c = ps->ancestor && !strcmp(ps->ancestor, TP_ANCESTOR_TRAINER)
				   ? tp_x_container(ps, TP_CONTAINER_NODE)
				   : NULL;
		if (!c)
			continue;
		int rc = tp_x_set(c, "command", cJSON_Duplicate(cmd, 1));
		if (!rc && ps->node_args)
			rc = tp_x_set(c, "args", cJSON_Duplicate(ps->node_args, 1));
		else if (!rc)
			cJSON_DeleteItemFromObjectCaseSensitive(c, "args");
		if (rc)
			return rc;
	}
	return TP_OK;
}

static int enforce_ml_policy(tp_expansion *x)
{
	if (!tp_get_object(x->ml, "flux"))
		return TP_OK;
	long long nodes;
	if (!num_nodes(x, &nodes))
		return TP_EINVAL;
	settings s;
	read_settings(x, &s);
	char cm[300], secret[300];
	snprintf(cm, sizeof(cm), "%s-flux-entrypoint", x->name);
	snprintf(secret, sizeof(secret), "%s-flux-curve", x->name);
	int rc = TP_OK;
	for (size_t i = 0; i < x->npodsets && !rc; i++) {
		tp_podset *ps = &x->podsets[i];
		if (strcmp(ps->name, TP_JOB_NODE))
			continue;
		cJSON *node = tp_x_container(ps, TP_CONTAINER_NODE);
		if (!(rc = add_volumes(ps, cm, secret)) && !(rc = add_installer(x, ps, &s, cm)) && node)
			rc = mount_node(node, cm);
	}
	cJSON *cmd = NULL;
	if (!rc && !(rc = wrapped_command(x, &cmd)))
		rc = rewrite_trainer(x, cmd);
	cJSON_Delete(cmd);
	return rc;
}

/* ------------------------------------------------------------- build */

/* Tasks per node: the TrainJob's numProcPerNode, else the runtime's
 * flux.numProcPerNode (its CRD default 1). */
static long long tasks_per_node(const tp_expansion *x)
{
	const cJSON *v = tp_get(x->trainer, "numProcPerNode");
	long long n;
	if (tp_json_is_int(v, &n))
		return n;
	if (cJSON_IsString(v) && sscanf(v->valuestring, "%lld", &n) == 1 && n > 0)
		return n;
	n = 1;
	tp_get_int(x->ml, "flux.numProcPerNode", &n);
	return n;
}

/* entrypoint.sh: flux R's resources, the lead broker's host, flux run's
 * flags. Upstream counts tasks in int32: the product wraps as Go's does. */
static int entrypoint(tp_expansion *x, long long nodes, tp_buf *out)
{
	long long tasks = tasks_per_node(x);
	long long gpus = tp_gpu_count(tp_x_resources_per_node(x));
	int32_t total = (int32_t)(uint32_t)((uint64_t)tasks * (uint64_t)nodes);
	tp_buf rspec = TP_BUF_INIT(0), flags = TP_BUF_INIT(0), host = TP_BUF_INIT(0);
	int rc;
	if (!(rc = tp_buf_adds(&rspec, "--cores=")) && !(rc = tp__flux_range(tasks, 0, &rspec)) &&
	    !(rc = tp_buf_addf(&flags, "-N %lld -n %d", nodes, (int)total)))
		rc = tp_buf_addf(&host, "%s-%s-0-0", x->name, TP_JOB_NODE);
	/* GPUs: flux run's -g is per task; flux R lists the node's devices */
	if (!rc && gpus > 0 && !(rc = tp_buf_addf(&flags, " -g %lld", gpus)) &&
	    !(rc = tp_buf_adds(&rspec, " --gpu=")))
		rc = tp__flux_range(gpus, 0, &rspec);
	if (!rc) {
		const char *args[] = { rspec.data, host.data, flags.data };
		rc = tp__flux_fill(out, tp__flux_entrypoint_sh, args, 3);
	}
	tp_buf_free(&rspec);
	tp_buf_free(&flags);
	tp_buf_free(&host);
	return rc;
}

/* init.sh: the view root, the lead host, the host list and broker.toml
 * (bind on the network device, connect through the TrainJob's service). */
static int init_script(tp_expansion *x, long long nodes, const settings *s, tp_buf *out)
{
	tp_buf hosts = TP_BUF_INIT(0), bind = TP_BUF_INIT(0), connect = TP_BUF_INIT(0),
	       broker = TP_BUF_INIT(0), lead = TP_BUF_INIT(0);
	int rc;
	if (!(rc = tp__flux_hostlist(x->name, nodes, &hosts)) &&
	    !(rc = tp_buf_addf(&bind, "tcp://%s:%%p", s->network_device)) &&
	    !(rc = tp_buf_addf(&connect, "tcp://%%h.%s.%s.svc.cluster.local:%%p", x->name, x->ns)) &&
	    !(rc = tp_buf_addf(&lead, "%s-0", x->name))) {
		const char *b[] = { bind.data, connect.data, hosts.data, s->queue_policy };
		rc = tp__flux_fill(&broker, tp__flux_broker_toml, b, 4);
	}
	if (!rc) {
		const char *args[] = { VIEW_ROOT, lead.data, hosts.data, broker.data };
		rc = tp__flux_fill(out, tp__flux_init_sh, args, 4);
	}
	tp_buf *all[] = { &hosts, &bind, &connect, &broker, &lead };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		tp_buf_free(all[i]);
	return rc;
}

static int config_map(tp_expansion *x, long long nodes)
{
	settings s;
	read_settings(x, &s);
	char name[300];
	snprintf(name, sizeof(name), "%s-flux-entrypoint", x->name);
	tp_buf entry = TP_BUF_INIT(0), init = TP_BUF_INIT(0);
	int rc;
	if (!(rc = entrypoint(x, nodes, &entry)) && !(rc = init_script(x, nodes, &s, &init))) {
		cJSON *cm = tp_x_companion(x, "v1", "ConfigMap", name);
		cJSON *data = cm ? cJSON_AddObjectToObject(cm, "data") : NULL;
		if (!data || !cJSON_AddStringToObject(data, "entrypoint.sh", entry.data) ||
		    !cJSON_AddStringToObject(data, "init.sh", init.data))
			rc = TP_ENOMEM;
	}
	tp_buf_free(&entry);
	tp_buf_free(&init);
	return rc;
}

static int curve_secret(tp_expansion *x)
{
	char name[300];
	snprintf(name, sizeof(name), "%s-flux-curve", x->name);
	tp_buf cert = TP_BUF_INIT(0);
	int rc = tp__flux_curve_cert(x->name, x->keys->curve, &cert);
	cJSON *s = rc ? NULL : tp_x_companion(x, "v1", "Secret", name);
	cJSON *data = s ? cJSON_AddObjectToObject(s, "data") : NULL;
	if (!rc)
		rc = data ? tp_x_data_base64(data, "curve.cert", cert.data) : TP_ENOMEM;
	tp_buf_free(&cert);
	return rc;
}

static int build(tp_expansion *x)
{
	if (!tp_get_object(x->ml, "flux"))
		return TP_OK;
	long long nodes;
	if (!num_nodes(x, &nodes))
		return TP_EINVAL;
	int rc = config_map(x, nodes);
	return rc || !x->keys->curve ? rc : curve_secret(x);
}

const tp_plugin tp_plugin_flux = {
	.name = "flux",
	.check_trainjob = check_trainjob,
	.enforce_ml_policy = enforce_ml_policy,
	.build = build,
};
