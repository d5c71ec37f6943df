/*
 * plugins/mpi.c — mlPolicy.mpi (OpenMPI): pod counts, the SSH and hostfile
 * volumes and mounts, the launcher's OMPI_* environment, and the two objects
 * the Job needs beside the JobSet: the `<tj>-mpi-hostfile` ConfigMap and the
 * `<tj>-mpi-ssh-auth` Secret (kubeflow-upstream.md §5.2). The key pair is
 * the caller's (tp_keys.ssh); the library never makes one, so that the same
 * inputs give the same Secret.
 */
#include "policy/plugins/plugin.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------ runtime checks */

static void check_mpi(const tp__rt_flavor *f, tp_result *res, const cJSON *mpi)
{
	static const char *const impls[] = { "OpenMPI", "Intel", "MPICH", NULL };
	const char *base = "spec.mlPolicy.mpi";
	long long n;
	/* for the trainer group the CRD's CEL rule says it, with its own words */
	if ((f->ome || !f->schema) && tp__rt_int(res, mpi, "numProcPerNode", base, !f->schema, &n)) {
		if (f->ome)
			tp__rt_at_least(res, base, "numProcPerNode", n, 1, "set numProcPerNode to 1 or more");
		else if (n < 1)
			tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy.mpi.numProcPerNode",
				      tp_result_value(res, tp_get(mpi, "numProcPerNode")),
				      "NumProcPerNode in mpiPolicy must be >= 1");
	}
	const char *impl = tp_get_str(mpi, "mpiImplementation");
	if (impl && (*impl || f->ome)) {
		bool known = false;
		for (size_t i = 0; impls[i]; i++)
			known = known || !strcmp(impl, impls[i]);
		if (!known)
			tp_result_add(res, TP_FIELD_UNSUPPORTED, "spec.mlPolicy.mpi.mpiImplementation",
				      tp_result_quote(res, impl),
				      "supported values: \"OpenMPI\", \"Intel\", \"MPICH\"");
		else if (strcmp(impl, "OpenMPI"))
			tp_result_warn(res, "mlPolicy.mpi.mpiImplementation %s: the controller builds "
				       "OpenMPI hostfiles only", impl);
	}
	const char *ssh = tp_get_str(mpi, "sshAuthMountPath");
	if (ssh && ssh[0] != '/')
		tp_result_add(res, TP_FIELD_INVALID, "spec.mlPolicy.mpi.sshAuthMountPath",
			      tp_result_quote(res, ssh),
			      "must be an absolute path; write it from the root, e.g. \"/root/.ssh\"");
	if (!f->schema)
		tp__rt_typed(res, mpi, "runLauncherAsNode", "spec.mlPolicy.mpi.runLauncherAsNode",
			     TP_RT_BOOLEAN);
}

static int check_ml_policy(const tp_rt_ctx *rc)
{
	const cJSON *mpi = tp_get_object(rc->ml, "mpi");
	if (mpi)
		check_mpi(rc->f, rc->res, mpi);
	return TP_OK;
}

/* ------------------------------------------------------ TrainJob checks */

static const char *const mpi_reserved[] = {
	"OMPI_MCA_orte_default_hostfile",
	"OMPI_MCA_plm_rsh_args",
	"OMPI_MCA_orte_keep_fqdn_hostnames",
	"OMPI_MCA_orte_set_default_slots",
};

static int check_trainjob(tp_tj_ctx *ctx)
{
	if (!tp_get_object(ctx->runtime, "spec.mlPolicy.mpi"))
		return TP_OK;
	/* With the launcher running as a node, both jobs carry ranks; without
	 * one of them there is nowhere to put a second node. */
	if (tp__tj_num_nodes(ctx) >= 2 &&
	    tp_get_true(ctx->runtime, "spec.mlPolicy.mpi.runLauncherAsNode") &&
	    (!tp__tj_job(ctx->tmpl, TP_JOB_LAUNCHER) || !tp__tj_job(ctx->tmpl, TP_JOB_NODE))) {
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.trainer.numNodes",
				       tp_result_value(ctx->res, tp_get(ctx->job, "spec.trainer.numNodes")),
				       "must have 1 when MPI trainingRuntime with enabled "
				       "runLauncherAsNode does not have either launcher and node");
		if (rc)
			return rc;
	}
	return tp__tj_reserved_envs(ctx, mpi_reserved, sizeof(mpi_reserved) / sizeof(*mpi_reserved));
}

/* ------------------------------------------------------ the expansion */

#define SSH_VOLUME      "mpi-ssh-auth"
#define HOSTFILE_VOLUME "mpi-hostfile"
#define HOSTFILE_DIR    "/etc/mpi"
#define MODE_0400 256
#define MODE_0640 416
#define MODE_0644 420
#define MODE_0444 292

static bool launcher_as_node(const tp_expansion *x)
{
	return tp_get_true(x->ml, "mpi.runLauncherAsNode");
}

static bool is_openmpi(const tp_expansion *x)
{
	const char *impl = tp_get_str(x->ml, "mpi.mpiImplementation");
	return !impl || !*impl || !strcmp(impl, "OpenMPI");
}

/* ------------------------------------------------------------ volumes */

static cJSON *key_to_path(const char *key, const char *path, int mode)
{
	cJSON *k = cJSON_CreateObject();
	if (!k || !cJSON_AddStringToObject(k, "key", key) || !cJSON_AddStringToObject(k, "path", path) ||
	    !cJSON_AddNumberToObject(k, "mode", mode)) {
		cJSON_Delete(k);
		return NULL;
	}
	return k;
}

static bool add_item(cJSON *arr, cJSON *item)
{
	if (item && cJSON_AddItemToArray(arr, item))
		return true;
	cJSON_Delete(item);
	return false;
}

/* Members in Go's SecretVolumeSource / ConfigMapVolumeSource order. */
static cJSON *ssh_volume(const tp_expansion *x)
{
	char secret[300];
	snprintf(secret, sizeof(secret), "%s-mpi-ssh-auth", x->name);
	cJSON *v = cJSON_CreateObject(), *src = NULL, *items = NULL;
	if (!v || !cJSON_AddStringToObject(v, "name", SSH_VOLUME) ||
	    !(src = cJSON_AddObjectToObject(v, "secret")) ||
	    !cJSON_AddStringToObject(src, "secretName", secret) ||
	    !(items = cJSON_AddArrayToObject(src, "items")) ||
	    !add_item(items, key_to_path("ssh-privatekey", "id_rsa", MODE_0640)) ||
	    !add_item(items, key_to_path("ssh-publickey", "id_rsa.pub", MODE_0644)) ||
	    !add_item(items, key_to_path("ssh-publickey", "authorized_keys", MODE_0644)) ||
	    !cJSON_AddNumberToObject(src, "defaultMode", MODE_0400)) {
		cJSON_Delete(v);
		return NULL;
	}
	return v;
}

static cJSON *hostfile_volume(const tp_expansion *x)
{
	char cm[300];
	snprintf(cm, sizeof(cm), "%s-mpi-hostfile", x->name);
	cJSON *v = cJSON_CreateObject(), *src = NULL, *items = NULL;
	if (!v || !cJSON_AddStringToObject(v, "name", HOSTFILE_VOLUME) ||
	    !(src = cJSON_AddObjectToObject(v, "configMap")) || !cJSON_AddStringToObject(src, "name", cm) ||
	    !(items = cJSON_AddArrayToObject(src, "items")) ||
	    !add_item(items, key_to_path("hostfile", "hostfile", MODE_0444))) {
		cJSON_Delete(v);
		return NULL;
	}
	return v;
}

static int launcher_env(tp_expansion *x, cJSON *c)
{
	char slots[32];
	snprintf(slots, sizeof(slots), "%lld", x->mpi_slots);
	int rc;
	if ((rc = tp_x_env_copy(c, tp_get_array(x->trainer, "env"))))
		return rc;
	if (!is_openmpi(x))
		return TP_OK;
	if ((rc = tp_x_env(c, "OMPI_MCA_orte_default_hostfile", HOSTFILE_DIR "/hostfile")) ||
	    (rc = tp_x_env(c, "OMPI_MCA_orte_keep_fqdn_hostnames", "true")) ||
	    (rc = tp_x_env(c, "OMPI_MCA_orte_set_default_slots", slots)))
		return rc;
	return tp_x_env(c, "OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10");
}

static int wire_podset(tp_expansion *x, tp_podset *ps, bool launcher)
{
	const char *mount = tp_get_str(x->ml, "mpi.sshAuthMountPath");
	if (!mount || !*mount)
		mount = "/root/.ssh";
	int rc;
	if ((rc = tp_x_volume(ps->pod_spec, ssh_volume(x))) ||
	    (launcher && (rc = tp_x_volume(ps->pod_spec, hostfile_volume(x)))))
		return rc;
	cJSON *c = tp_x_container(ps, TP_CONTAINER_NODE);
	if (!c)
		return TP_OK;
	if ((rc = tp_x_mount(c, SSH_VOLUME, mount)))
		return rc;
	if (!launcher)
		return TP_OK;
	if ((rc = tp_x_mount(c, HOSTFILE_VOLUME, HOSTFILE_DIR)))
		return rc;
	return launcher_env(x, c);
}

/* ------------------------------------------------------- enforcement */

static long long slots_per_node(const tp_expansion *x, const cJSON *mpi)
{
	const cJSON *v = tp_get(x->trainer, "numProcPerNode");
	long long n;
	if (tp_json_is_int(v, &n))
		return n;
	if (cJSON_IsString(v) && sscanf(v->valuestring, "%lld", &n) == 1 && n > 0)
		return n;
	n = 1;
	tp_get_int(mpi, "numProcPerNode", &n);
	long long gpu = tp_gpu_count(tp_x_resources_per_node(x));
	return n == 1 && gpu > 1 ? gpu : n;
}

/* The node job runs the TrainJob's numNodes, one fewer with runLauncherAsNode
 * (the launcher is a node too), at least one. Upstream sets it only from the
 * TrainJob and leaves the launcher what the runtime info gave it (the
 * runtime's numNodes when it is the trainer job); the strict profile counts
 * the runtime's numNodes the same way and runs one launcher pod. */
static void count_pods(tp_expansion *x)
{
	tp_podset *node = tp_x_podset_by_name(x, TP_JOB_NODE);
	tp_podset *launcher = tp_x_podset_by_name(x, TP_JOB_LAUNCHER);
	bool strict = tp_strict(x->opt);
	long long nodes = 1;
	bool given = tp_x_trainjob_num_nodes(x, &nodes);
	if (!given && strict && tp_get_int(x->ml, "numNodes", &nodes))
		nodes = nodes < 1 ? 1 : nodes;
	if (node && (given || strict))
		node->count = launcher_as_node(x) ? (nodes - 1 > 1 ? nodes - 1 : 1) : nodes;
	if (launcher && strict)
		launcher->count = 1;
}

static int enforce_ml_policy(tp_expansion *x)
{
	const cJSON *mpi = tp_get_object(x->ml, "mpi");
	if (!mpi)
		return TP_OK;
	if (!is_openmpi(x))
		tp_result_warn(x->res, "mpiImplementation %s: only OpenMPI is built; the OMPI_* "
			       "environment is not set", tp_get_str(mpi, "mpiImplementation"));
	count_pods(x);
	x->mpi_slots = slots_per_node(x, mpi);
	for (size_t i = 0; i < x->npodsets; i++) {
		tp_podset *ps = &x->podsets[i];
		bool is_launcher = !strcmp(ps->name, TP_JOB_LAUNCHER);
		if (!is_launcher && strcmp(ps->name, TP_JOB_NODE))
			continue;
		int rc = wire_podset(x, ps, is_launcher);
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* ------------------------------------------------------------- build */

static int hostfile(tp_expansion *x, tp_buf *out)
{
	bool lan = launcher_as_node(x);
	for (size_t i = 0; i < x->npodsets; i++) {
		const tp_podset *ps = &x->podsets[i];
		if (strcmp(ps->name, TP_JOB_NODE) && !(lan && !strcmp(ps->name, TP_JOB_LAUNCHER)))
			continue;
		for (long long r = 0; r < tp_x_replicas(ps); r++)
			for (long long p = 0; p < ps->count; p++) {
				int rc;
				if ((rc = tp_x_endpoint(x, ps, r, p, out)) ||
				    (rc = tp_buf_addf(out, " slots=%lld\n", x->mpi_slots)))
					return rc;
			}
	}
	return TP_OK;
}

static int config_map(tp_expansion *x)
{
	char name[300];
	snprintf(name, sizeof(name), "%s-mpi-hostfile", x->name);
	tp_buf text = TP_BUF_INIT(1u << 20);
	int rc = hostfile(x, &text);
	cJSON *cm = rc ? NULL : tp_x_companion(x, "v1", "ConfigMap", name);
	cJSON *data = cm ? cJSON_AddObjectToObject(cm, "data") : NULL;
	if (rc == TP_OK && (!data || !cJSON_AddStringToObject(data, "hostfile",
							       text.data ? text.data : "")))
		rc = TP_ENOMEM;
	tp_buf_free(&text);
	if (rc == TP_ELIMIT)
		return tp_x_fail(x, "spec.trainer.numNodes", NULL, "makes an MPI hostfile over 1 MiB");
	return rc;
}

/* Members in Go's corev1.Secret order: immutable, data, type. */
static int secret(tp_expansion *x)
{
	char name[300];
	snprintf(name, sizeof(name), "%s-mpi-ssh-auth", x->name);
	cJSON *s = tp_x_companion(x, "v1", "Secret", name);
	cJSON *data = NULL;
	if (!s || !cJSON_AddBoolToObject(s, "immutable", 1) ||
	    !(data = cJSON_AddObjectToObject(s, "data")))
		return TP_ENOMEM;
	int rc;
	if ((rc = tp_x_data_base64(data, "ssh-privatekey", x->keys->ssh->private_pem)) ||
	    (rc = tp_x_data_base64(data, "ssh-publickey", x->keys->ssh->public_line)))
		return rc;
	return cJSON_AddStringToObject(s, "type", "kubernetes.io/ssh-auth") ? TP_OK : TP_ENOMEM;
}

static int build(tp_expansion *x)
{
	if (!tp_get_object(x->ml, "mpi"))
		return TP_OK;
	int rc = config_map(x);
	return rc || !x->keys->ssh ? rc : secret(x);
}

const tp_plugin tp_plugin_mpi = {
	.name = "mpi",
	.check_ml_policy = check_ml_policy,
	.check_trainjob = check_trainjob,
	.enforce_ml_policy = enforce_ml_policy,
	.build = build,
};
