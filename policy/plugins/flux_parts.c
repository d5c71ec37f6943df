/*
 * plugins/flux_parts.c — what Flux adds to the Pods of the `node` job, as
 * upstream's EnforceMLPolicy writes it: five volumes (the view's install
 * and spack emptyDirs, the entrypoint ConfigMap, shared memory, the CURVE
 * Secret), the flux-installer init container that copies the view into
 * them, and the node container's mounts; and the settings they read. The
 * expansion (flux.c) writes the parts into the JobSet, the strict
 * profile's Pod check into its copy of the job (plugin.h's pod_parts),
 * where the API server's and Pod Security's checks see them: an empty
 * FLUX_VIEW_IMAGE, a TrainJob name too long for the ConfigMap's volume,
 * the installer under restricted.
 */
#include "policy/plugins/flux.h"

#include <string.h>

#define INSTALL_VOLUME   "flux-install"
#define INSTALL_PATH     "/mnt/flux"
#define CURVE_VOLUME     "flux-curve"
#define CURVE_PATH       "/curve"
#define MEMORY_VOLUME    "shared-memory"
#define MEMORY_PATH      "/dev/shm"
#define SPACK_VOLUME     "spack-install"
#define SPACK_PATH       "/opt/software"
#define MODE_0755 493
#define MODE_0400 256

/* ------------------------------------------------------ settings */

static void set_from(tp__flux_settings *s, const char *name, const char *value)
{
	if (!strcmp(name, "FLUX_VIEW_IMAGE"))
		s->view_image = value;
	else if (!strcmp(name, "FLUX_NETWORK_DEVICE"))
		s->network_device = value;
	else if (!strcmp(name, "FLUX_QUEUE_POLICY"))
		s->queue_policy = value;
}

void tp__flux_read_settings(const cJSON *node, const cJSON *trainer, tp__flux_settings *s)
{
	*s = (tp__flux_settings){ "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy", "eth0",
				  "fcfs" };
	const cJSON *e;
	cJSON_ArrayForEach(e, tp_get_array(node, "env")) {
		const char *name = tp_get_str(e, "name"), *value = tp_get_str(e, "value");
		if (name && value)
			set_from(s, name, value);
	}
	cJSON_ArrayForEach(e, tp_get_array(trainer, "env")) {
		const char *name = tp_get_str(e, "name"), *value = tp_get_str(e, "value");
		if (name)
			set_from(s, name, value ? value : "");
	}
}

void tp__flux_names_of(const char *tj, tp__flux_names *n)
{
	tp__name_after(n->cm, sizeof(n->cm), tj, "-flux-entrypoint");
	tp__name_after(n->secret, sizeof(n->secret), tj, "-flux-curve");
}

/* ------------------------------------------------------ the parts */

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
static int add_volumes(cJSON *pod_spec, const char *cm, const char *secret)
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
			rc = v[i] ? tp__x_volume(pod_spec, v[i]) : TP_ENOMEM;
		else
			cJSON_Delete(v[i]);
	}
	return rc;
}

/* TP_ECONFLICT: the Pod has a flux-installer init container already. */
static int add_installer(cJSON *pod_spec, const tp__flux_settings *s, const char *cm)
{
	if (tp_find_named(tp_get_array(pod_spec, "initContainers"), "name", TP_FLUX_INSTALLER))
		return TP_ECONFLICT;
	cJSON *inits = tp__x_array(pod_spec, "initContainers");
	cJSON *c = cJSON_CreateObject(), *cmd = NULL;
	if (!inits || !c || !cJSON_AddItemToArray(inits, c)) {
		cJSON_Delete(c);
		return inits ? TP_ENOMEM : TP_EINVAL;
	}
	if (!cJSON_AddStringToObject(c, "name", TP_FLUX_INSTALLER) ||
	    (*s->view_image && !cJSON_AddStringToObject(c, "image", s->view_image)) ||
	    !(cmd = cJSON_AddArrayToObject(c, "command")) ||
	    !cJSON_AddItemToArray(cmd, cJSON_CreateString("/bin/bash")) ||
	    !cJSON_AddItemToArray(cmd, cJSON_CreateString(TP_FLUX_CONFIG_PATH "/init.sh")))
		return TP_ENOMEM;
	int rc = tp__x_mount_as(c, INSTALL_VOLUME, INSTALL_PATH, false);
	return rc ? rc : tp__x_mount_as(c, cm, TP_FLUX_CONFIG_PATH, true);
}

static int mount_node(cJSON *c, const char *cm)
{
	int rc;
	if ((rc = tp__x_mount_as(c, INSTALL_VOLUME, INSTALL_PATH, false)) ||
	    (rc = tp__x_mount_as(c, SPACK_VOLUME, SPACK_PATH, false)) ||
	    (rc = tp__x_mount_as(c, cm, TP_FLUX_CONFIG_PATH, true)) ||
	    (rc = tp__x_mount_as(c, CURVE_VOLUME, CURVE_PATH, true)))
		return rc;
	return tp__x_mount_as(c, MEMORY_VOLUME, MEMORY_PATH, true);
}

int tp__flux_write_parts(cJSON *pod_spec, cJSON *node, const tp__flux_settings *s,
			 const tp__flux_names *n)
{
	int rc;
	if ((rc = add_volumes(pod_spec, n->cm, n->secret)) || (rc = add_installer(pod_spec, s, n->cm)))
		return rc;
	return node ? mount_node(node, n->cm) : TP_OK;
}

/* ------------------------------------------------------ the Pod check */

#define INSTALLER_PSA_NOTE                                                                 \
	"the init container \"" TP_FLUX_INSTALLER "\" that mlPolicy.flux adds to replicated job \"" \
	TP_JOB_NODE "\" sets no securityContext, and a runtime cannot give it one: a Flux "   \
	"TrainJob cannot run where Pod Security enforces restricted"

/* The settings, read at the TrainJob's first `node` job and kept for the
 * others (a runtime may repeat the name): the view image is the one the
 * parts use. */
static void parts_settings(tp_pod_parts *pp, tp__flux_settings *s)
{
	tp_pod_parts_cache *c = pp->cache;
	const cJSON *trainer = pp->ctx->trainer;
	if (!c->flux_read) {
		tp__flux_read_settings(tp__parts_trainer_node(pp), trainer, s);
		c->flux_view_image = s->view_image;
		c->flux_image_from_trainjob = false;
		const cJSON *e;
		cJSON_ArrayForEach(e, tp_get_array(trainer, "env")) {
			const char *name = tp_get_str(e, "name");
			c->flux_image_from_trainjob = c->flux_image_from_trainjob ||
						      (name && !strcmp(name, "FLUX_VIEW_IMAGE"));
		}
		c->flux_read = true;
	}
	*s = (tp__flux_settings){ .view_image = c->flux_view_image };
}

/* Where a finding in the parts comes from: the installer's image is
 * FLUX_VIEW_IMAGE; the ConfigMap's volume is named after the TrainJob. */
static void origins(tp_pod_parts *pp, const tp__flux_names *n)
{
	tp_pod_origin *o = tp__parts_origin(pp);
	if (o)
		*o = (tp_pod_origin){ .container = TP_FLUX_INSTALLER, .rel = ".image",
				      .field = pp->cache->flux_image_from_trainjob ? "spec.trainer.env"
									   : "spec.runtimeRef",
				      .hint = "set FLUX_VIEW_IMAGE to a Flux view image, or leave it "
					      "out for the default" };
	if ((o = tp__parts_origin(pp))) {
		tp__name_after(o->value, sizeof(o->value) - 1, "\"", n->cm);
		strcat(o->value, "\"");
		o->field = "metadata.name";
		o->hint = "Flux names a volume \"<name>-flux-entrypoint\" after the TrainJob, "
			  "which must be a DNS-1123 label: use a name of at most 47 characters";
	}
}

int tp__flux_pod_parts(tp_pod_parts *pp)
{
	if (!cJSON_IsObject(tp_member(pp->ml, "flux")) || !pp->job_name ||
	    strcmp(pp->job_name, TP_JOB_NODE))
		return TP_OK;
	tp__flux_settings s;
	parts_settings(pp, &s);
	tp__flux_names n;
	tp__flux_names_of(tp__parts_tj_name(pp), &n);
	cJSON *pod = tp__parts_pod_spec(pp);
	if (!pod)
		return TP_ENOMEM;
	cJSON *node = (cJSON *)tp_find_named(tp_get_array(pod, "containers"), "name",
					     TP_CONTAINER_NODE);
	int rc = tp__flux_write_parts(pod, node, &s, &n);
	if (rc == TP_ECONFLICT) /* check_trainjob has said it is reserved */
		return TP_OK;
	origins(pp, &n);
	pp->psa_container = TP_FLUX_INSTALLER;
	pp->psa_note = INSTALLER_PSA_NOTE;
	return rc;
}
