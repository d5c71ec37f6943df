/*
 * plugins/mpi.c — mlPolicy.mpi (OpenMPI): pod counts, the SSH and hostfile
 * volumes and mounts, the launcher's OMPI_* environment, and the two objects
 * the Job needs beside the JobSet: the `<tj>-mpi-hostfile` ConfigMap and the
 * `<tj>-mpi-ssh-auth` Secret (docs/kubeflow-upstream.md §5.2). The key pair is
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
	if (!tp_get_object(ctx->ml, "mpi"))
		return TP_OK;
	/* With the launcher running as a node, both jobs carry ranks; without
	 * one of them there is nowhere to put a second node. */
	if (tp__tj_num_nodes(ctx) >= 2 &&
	    tp_get_true(ctx->ml, "mpi.runLauncherAsNode") &&
	    (!tp__tj_job(ctx->tmpl, TP_JOB_LAUNCHER) || !tp__tj_job(ctx->tmpl, TP_JOB_NODE))) {
		int rc = tp_result_add(ctx->res, TP_FIELD_INVALID, "spec.trainer.numNodes",
				       tp_result_value(ctx->res, tp_get(ctx->trainer, "numNodes")),
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
static cJSON *ssh_volume(const char *tj)
{
	char secret[300];
	tp__name_after(secret, sizeof(secret), tj, "-mpi-ssh-auth");
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

static cJSON *hostfile_volume(const char *tj)
{
	char cm[300];
	tp__name_after(cm, sizeof(cm), tj, "-mpi-hostfile");
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
	if ((rc = tp__x_env_copy(c, tp_get_array(x->trainer, "env"))))
		return rc;
	if (!is_openmpi(x))
		return TP_OK;
	if ((rc = tp__x_env(c, "OMPI_MCA_orte_default_hostfile", HOSTFILE_DIR "/hostfile")) ||
	    (rc = tp__x_env(c, "OMPI_MCA_orte_keep_fqdn_hostnames", "true")) ||
	    (rc = tp__x_env(c, "OMPI_MCA_orte_set_default_slots", slots)))
		return rc;
	return tp__x_env(c, "OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10");
}

static const char *ssh_mount_path(const cJSON *ml)
{
	const char *mount = tp_get_str(ml, "mpi.sshAuthMountPath");
	return mount && *mount ? mount : "/root/.ssh";
}

/* What MPI adds to the Pods of the launcher and node jobs, in the expansion
 * and in the Pod check alike (plugin.h's pod_parts): the SSH keys' volume
 * and the launcher's hostfile volume, mounted in the node container c (may
 * be NULL). */
static int write_parts(cJSON *pod_spec, cJSON *c, const char *tj, const char *ssh_path,
		       bool launcher)
{
	int rc;
	if ((rc = tp__x_volume(pod_spec, ssh_volume(tj))) ||
	    (launcher && (rc = tp__x_volume(pod_spec, hostfile_volume(tj)))))
		return rc;
	if (!c || (rc = tp__x_mount(c, SSH_VOLUME, ssh_path)))
		return rc;
	return launcher ? tp__x_mount(c, HOSTFILE_VOLUME, HOSTFILE_DIR) : TP_OK;
}

static int wire_podset(tp_expansion *x, tp_podset *ps, bool launcher)
{
	cJSON *c = tp__x_container(ps, TP_CONTAINER_NODE);
	int rc = write_parts(ps->pod_spec, c, x->name, ssh_mount_path(x->ml), launcher);
	return rc || !c || !launcher ? rc : launcher_env(x, c);
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
	long long gpu = tp__gpu_count(tp__x_resources_per_node(x));
	return n == 1 && gpu > 1 ? gpu : n;
}

/* The node job runs the TrainJob's numNodes, one fewer with runLauncherAsNode
 * (the launcher is a node too), at least one. Upstream sets it only from the
 * TrainJob and leaves the launcher what the runtime info gave it (the
 * runtime's numNodes when it is the trainer job); the strict profile counts
 * the runtime's numNodes the same way and runs one launcher pod. */
static void count_pods(tp_expansion *x)
{
	tp_podset *node = tp__x_podset_by_name(x, TP_JOB_NODE);
	tp_podset *launcher = tp__x_podset_by_name(x, TP_JOB_LAUNCHER);
	bool strict = tp_strict(x->opt);
	long long nodes = 1;
	bool given = tp__x_trainjob_num_nodes(x, &nodes);
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

/* ------------------------------------------------------- the Pod check */

/* p with repeated slashes and trailing ones dropped, into buf. */
static const char *clean_path(const char *p, char *buf, size_t n)
{
	size_t k = 0;
	for (; *p && k + 1 < n; p++)
		if (*p != '/' || !k || buf[k - 1] != '/')
			buf[k++] = *p;
	while (k > 1 && buf[k - 1] == '/')
		k--;
	buf[k] = '\0';
	return buf;
}

/* A mount MPI writes into the node container, and what it is. */
typedef struct mpi_mount {
	const char *volume, *path;
	const char *what; /* "the SSH keys (volume mpi-ssh-auth, at mlPolicy.mpi.sshAuthMountPath)" */
	const char *alt;  /* ", or ..." another way out, or "" */
} mpi_mount;

static bool mounts(const cJSON *c, const char *volume, const char *path)
{
	const cJSON *m;
	cJSON_ArrayForEach(m, tp_get_array(c, "volumeMounts")) {
		const char *n = tp_get_str(m, "name"), *p = tp_get_str(m, "mountPath");
		if (n && p && !strcmp(n, volume) && !strcmp(p, path))
			return true;
	}
	return false;
}

/* The runtime's own node container of the job named job, or NULL. */
static const cJSON *base_node(const tp_tj_ctx *ctx, const char *job)
{
	return tp_find_named(tp_get_array(tp__tj_pod_spec(tp__tj_job(ctx->base, job)), "containers"),
			     "name", TP_CONTAINER_NODE);
}

/* Each mount of another volume at m's directory in the node container c:
 * at the same path the plugin's upsert takes its place and the volume is
 * not mounted; spelt otherwise ("/root/.ssh/"), the Pods get two volumes at
 * one directory, which the container runtime refuses. At the TrainJob:
 * spec.runtimePatches when the runtime's own job does not have it. */
static int report_clashes(tp_pod_parts *pp, const cJSON *c, const mpi_mount *m)
{
	const tp_tj_ctx *ctx = pp->ctx;
	char want[512], got[512];
	clean_path(m->path, want, sizeof(want));
	const cJSON *mt;
	cJSON_ArrayForEach(mt, tp_get_array(c, "volumeMounts")) {
		const char *name = tp_get_str(mt, "name"), *path = tp_get_str(mt, "mountPath");
		if (!name || !path || !strcmp(name, m->volume) ||
		    strcmp(clean_path(path, got, sizeof(got)), want))
			continue;
		bool patched = ctx->tmpl != ctx->base && !mounts(base_node(ctx, pp->job_name), name, path);
		tp_kind k = tp_kind_of(ctx->runtime);
		char whose[320] = "the patched template";
		if (!patched)
			snprintf(whose, sizeof(whose), "%s \"%s\"",
				 k == TP_KIND_UNKNOWN ? "runtime" : tp_kind_name(k),
				 tp_meta_name(ctx->runtime));
		int rc = tp_result_add(
			ctx->res, TP_FIELD_INVALID, patched ? "spec.runtimePatches" : "spec.runtimeRef",
			tp_result_quote(ctx->res, path),
			"%s: container \"" TP_CONTAINER_NODE "\" of replicated job \"%s\" mounts volume "
			"\"%s\" where the MPI plugin mounts %s: %s; mount the volume at another path%s",
			whose, pp->job_name, name, m->what,
			strcmp(path, m->path) ? "the Pods would have two volumes mounted at one directory"
					      : "the plugin's mount takes its place, so the volume is not "
						"mounted in the Pods",
			m->alt);
		if (rc)
			return rc;
	}
	return TP_OK;
}

/* The launcher's and the node job's SSH keys and hostfile (plugin.h). */
static int pod_parts(tp_pod_parts *pp)
{
	if (!cJSON_IsObject(tp_member(pp->ml, "mpi")) || !pp->job_name)
		return TP_OK;
	bool launcher = !strcmp(pp->job_name, TP_JOB_LAUNCHER);
	if (!launcher && strcmp(pp->job_name, TP_JOB_NODE))
		return TP_OK;
	const char *ssh = ssh_mount_path(pp->ml);
	const mpi_mount ours[] = {
		{ SSH_VOLUME, ssh, "the SSH keys (volume " SSH_VOLUME ", at mlPolicy.mpi.sshAuthMountPath)",
		  ", or set mlPolicy.mpi.sshAuthMountPath to another directory" },
		{ HOSTFILE_VOLUME, HOSTFILE_DIR, "the hostfile (volume " HOSTFILE_VOLUME ", at "
		  HOSTFILE_DIR ")", "" },
	};
	const cJSON *own = tp_find_named(tp_get_array(tp__tj_pod_spec(pp->job), "containers"), "name",
					 TP_CONTAINER_NODE);
	int rc = TP_OK;
	for (int i = 0; i < (launcher ? 2 : 1) && !rc; i++)
		rc = report_clashes(pp, own, &ours[i]);
	cJSON *pod = rc ? NULL : tp__parts_pod_spec(pp);
	if (!pod)
		return rc ? rc : TP_ENOMEM;
	cJSON *c = (cJSON *)tp_find_named(tp_get_array(pod, "containers"), "name", TP_CONTAINER_NODE);
	return write_parts(pod, c, tp__parts_tj_name(pp), ssh, launcher);
}

/* ------------------------------------------------------------- build */

static int hostfile(tp_expansion *x, tp_buf *out)
{
	bool lan = launcher_as_node(x);
	for (size_t i = 0; i < x->npodsets; i++) {
		const tp_podset *ps = &x->podsets[i];
		if (strcmp(ps->name, TP_JOB_NODE) && !(lan && !strcmp(ps->name, TP_JOB_LAUNCHER)))
			continue;
		for (long long r = 0; r < tp__x_replicas(ps); r++)
			for (long long p = 0; p < ps->count; p++) {
				int rc;
				if ((rc = tp__x_endpoint(x, ps, r, p, out)) ||
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
	cJSON *cm = rc ? NULL : tp__x_companion(x, "v1", "ConfigMap", name);
	cJSON *data = cm ? cJSON_AddObjectToObject(cm, "data") : NULL;
	if (rc == TP_OK && (!data || !cJSON_AddStringToObject(data, "hostfile",
							       text.data ? text.data : "")))
		rc = TP_ENOMEM;
	tp_buf_free(&text);
	if (rc == TP_ELIMIT)
		return tp__x_fail(x, "spec.trainer.numNodes", NULL, "makes an MPI hostfile over 1 MiB");
	return rc;
}

/* Members in Go's corev1.Secret order: immutable, data, type. */
static int secret(tp_expansion *x)
{
	char name[300];
	snprintf(name, sizeof(name), "%s-mpi-ssh-auth", x->name);
	cJSON *s = tp__x_companion(x, "v1", "Secret", name);
	cJSON *data = NULL;
	if (!s || !cJSON_AddBoolToObject(s, "immutable", 1) ||
	    !(data = cJSON_AddObjectToObject(s, "data")))
		return TP_ENOMEM;
	int rc;
	if ((rc = tp__x_data_base64(data, "ssh-privatekey", x->keys->ssh->private_pem)) ||
	    (rc = tp__x_data_base64(data, "ssh-publickey", x->keys->ssh->public_line)))
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

const tp_plugin tp__plugin_mpi = {
	.name = "mpi",
	.check_ml_policy = check_ml_policy,
	.check_trainjob = check_trainjob,
	.enforce_ml_policy = enforce_ml_policy,
	.build = build,
	.pod_parts = pod_parts,
};
