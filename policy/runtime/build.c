/*
 * runtime/build.c — small lookups and upserts the expansion's plugins share.
 * Upserts follow upstream's pkg/apply: an item with the same key is replaced
 * where it stands, a new one is appended, so the order of the runtime's
 * lists survives and the output does not depend on anything but the inputs.
 */
#include "policy/patch/patch.h"
#include "policy/runtime/runtime.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ lookups */

tp_podset *tp__x_podset_by_name(tp_expansion *x, const char *name)
{
	for (size_t i = 0; i < x->npodsets; i++)
		if (!strcmp(x->podsets[i].name, name))
			return &x->podsets[i];
	return NULL;
}

tp_podset *tp__x_podset_by_ancestor(tp_expansion *x, const char *ancestor)
{
	for (size_t i = 0; i < x->npodsets; i++)
		if (x->podsets[i].ancestor && !strcmp(x->podsets[i].ancestor, ancestor))
			return &x->podsets[i];
	return NULL;
}

cJSON *tp__x_container(const tp_podset *ps, const char *name)
{
	return (cJSON *)tp_find_named(tp_get(ps->pod_spec, "containers"), "name", name);
}

cJSON *tp__x_any_container(const tp_podset *ps, const char *name)
{
	cJSON *c = tp__x_container(ps, name);
	return c ? c : (cJSON *)tp_find_named(tp_get(ps->pod_spec, "initContainers"), "name", name);
}

bool tp__x_trainjob_num_nodes(const tp_expansion *x, long long *out)
{
	long long n;
	if (!tp_get_int(x->trainer, "numNodes", &n))
		return false;
	/* 0 passes the schema. Upstream's controller builds what it says (no
	 * pods; torch's PET_NNODES "0"); the strict profile runs one node, as
	 * its admission warning says (docs/rules.md). */
	*out = n < 1 ? (tp_strict(x->opt) ? 1 : 0) : n;
	return true;
}

/* ------------------------------------------------------------ writing */

void tp__x_drop(cJSON *tree)
{
	if (tree && !tp_arena_owns(tp_arena_current(), tree))
		cJSON_Delete(tree);
}

int tp__x_set(cJSON *obj, const char *name, cJSON *v)
{
	if (!v || !cJSON_IsObject(obj)) {
		cJSON_Delete(v);
		return v ? TP_EINVAL : TP_ENOMEM;
	}
	bool ok = cJSON_GetObjectItemCaseSensitive(obj, name)
			  ? cJSON_ReplaceItemInObjectCaseSensitive(obj, name, v)
			  : cJSON_AddItemToObject(obj, name, v);
	if (!ok) {
		cJSON_Delete(v);
		return TP_ENOMEM;
	}
	return TP_OK;
}

int tp__x_set_string(cJSON *obj, const char *name, const char *s)
{
	return tp__x_set(obj, name, cJSON_CreateString(s));
}

int tp__x_set_number(cJSON *obj, const char *name, double n)
{
	return tp__x_set(obj, name, cJSON_CreateNumber(n));
}

static cJSON *member_of_type(cJSON *obj, const char *name, bool array)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (v && !cJSON_IsNull(v))
		return (array ? cJSON_IsArray(v) : cJSON_IsObject(v)) ? v : NULL;
	v = array ? cJSON_CreateArray() : cJSON_CreateObject();
	return tp__x_set(obj, name, v) == TP_OK ? v : NULL;
}

cJSON *tp__x_object(cJSON *obj, const char *name)
{
	return member_of_type(obj, name, false);
}

cJSON *tp__x_array(cJSON *obj, const char *name)
{
	return member_of_type(obj, name, true);
}

static int upsert(cJSON *parent, const char *list, const char *key, cJSON *item)
{
	cJSON *arr = item ? tp__x_array(parent, list) : NULL;
	if (!arr) {
		cJSON_Delete(item);
		return item ? TP_EINVAL : TP_ENOMEM;
	}
	return tp__upsert_named(arr, key, item);
}

int tp__x_env(cJSON *container, const char *name, const char *value)
{
	cJSON *e = cJSON_CreateObject();
	if (!e || !cJSON_AddStringToObject(e, "name", name) ||
	    !cJSON_AddStringToObject(e, "value", value)) {
		cJSON_Delete(e);
		return TP_ENOMEM;
	}
	return upsert(container, "env", "name", e);
}

int tp__x_env_field(cJSON *container, const char *name, const char *field_path)
{
	cJSON *e = cJSON_CreateObject();
	cJSON *ref = NULL;
	if (!e || !cJSON_AddStringToObject(e, "name", name) ||
	    !(ref = cJSON_AddObjectToObject(e, "valueFrom")) ||
	    !(ref = cJSON_AddObjectToObject(ref, "fieldRef")) ||
	    !cJSON_AddStringToObject(ref, "fieldPath", field_path)) {
		cJSON_Delete(e);
		return TP_ENOMEM;
	}
	return upsert(container, "env", "name", e);
}

int tp__x_env_copy(cJSON *container, const cJSON *env_list)
{
	if (!env_list || !env_list->child)
		return TP_OK;
	cJSON *arr = tp__x_array(container, "env");
	return arr ? tp__upsert_all(arr, "name", env_list) : TP_EINVAL;
}

int tp__x_port(cJSON *container, long long port)
{
	cJSON *p = cJSON_CreateObject();
	if (!p || !cJSON_AddNumberToObject(p, "containerPort", (double)port)) {
		cJSON_Delete(p);
		return TP_ENOMEM;
	}
	return upsert(container, "ports", "containerPort", p);
}

int tp__x_mount(cJSON *container, const char *name, const char *mount_path)
{
	return tp__x_mount_as(container, name, mount_path, false);
}

/* Members in Go's VolumeMount order: name, readOnly, mountPath. */
int tp__x_mount_as(cJSON *container, const char *name, const char *mount_path, bool read_only)
{
	cJSON *m = cJSON_CreateObject();
	if (!m || !cJSON_AddStringToObject(m, "name", name) ||
	    (read_only && !cJSON_AddBoolToObject(m, "readOnly", 1)) ||
	    !cJSON_AddStringToObject(m, "mountPath", mount_path)) {
		cJSON_Delete(m);
		return TP_ENOMEM;
	}
	return upsert(container, "volumeMounts", "mountPath", m);
}

int tp__x_volume(cJSON *pod_spec, cJSON *volume)
{
	return upsert(pod_spec, "volumes", "name", volume);
}

int tp__x_data_base64(cJSON *data, const char *key, const char *text)
{
	tp_buf b = TP_BUF_INIT(1u << 20);
	int rc = tp_base64_encode(text, strlen(text), &b);
	if (rc == TP_OK && !cJSON_AddStringToObject(data, key, b.data))
		rc = TP_ENOMEM;
	tp_buf_free(&b);
	return rc;
}

int tp__x_pod_metadata(tp_expansion *x, const char *map, const char *key, const char *value)
{
	for (size_t i = 0; i < x->npodsets; i++) {
		cJSON *t = (cJSON *)tp_get(x->podsets[i].job, "template.spec.template");
		cJSON *m = t ? tp__x_object(t, "metadata") : NULL;
		cJSON *kv = m ? tp__x_object(m, map) : NULL;
		if (!kv)
			return TP_ENOMEM;
		int rc = tp__x_set_string(kv, key, value);
		if (rc)
			return rc;
	}
	return TP_OK;
}

cJSON *tp__x_owner_refs(const tp_expansion *x)
{
	const char *uid = tp_get_str(x->trainjob, "metadata.uid");
	cJSON *refs = cJSON_CreateArray();
	cJSON *r = cJSON_CreateObject();
	if (!refs || !r || !cJSON_AddItemToArray(refs, r)) {
		cJSON_Delete(refs);
		cJSON_Delete(r);
		return NULL;
	}
	/* Member order of Go's metav1.OwnerReference; uid is not omitempty. */
	if (!cJSON_AddStringToObject(r, "apiVersion", TP_APIVERSION_TRAINER) ||
	    !cJSON_AddStringToObject(r, "kind", "TrainJob") ||
	    !cJSON_AddStringToObject(r, "name", x->name) ||
	    !cJSON_AddStringToObject(r, "uid", uid ? uid : "") ||
	    !cJSON_AddBoolToObject(r, "controller", 1) ||
	    !cJSON_AddBoolToObject(r, "blockOwnerDeletion", 1)) {
		cJSON_Delete(refs);
		return NULL;
	}
	return refs;
}

cJSON *tp__x_companion(tp_expansion *x, const char *api_version, const char *kind, const char *name)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *meta = NULL;
	if (!o || !cJSON_AddItemToArray(x->companions, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	if (!cJSON_AddStringToObject(o, "apiVersion", api_version) ||
	    !cJSON_AddStringToObject(o, "kind", kind) ||
	    !(meta = cJSON_AddObjectToObject(o, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "name", name) ||
	    (*x->ns && !cJSON_AddStringToObject(meta, "namespace", x->ns)) ||
	    tp__x_set(meta, "ownerReferences", tp__x_owner_refs(x)))
		return NULL;
	return o;
}

int tp__x_master_addr(const tp_expansion *x, int port, char *buf, size_t n)
{
	int w = port ? snprintf(buf, n, "%s-%s-0-0.%s:%d", x->name, TP_JOB_NODE, x->name, port)
		     : snprintf(buf, n, "%s-%s-0-0.%s", x->name, TP_JOB_NODE, x->name);
	return w < 0 || (size_t)w >= n ? TP_ELIMIT : TP_OK;
}

int tp__x_fail(tp_expansion *x, const char *path, const cJSON *value, const char *detail)
{
	const char *v = value ? tp_result_value(x->res, value) : NULL;
	if (tp_result_add(x->res, TP_FIELD_INVALID, path, v, "%s", detail))
		return TP_ENOMEM;
	return TP_EINVAL;
}

const cJSON *tp__x_resources_per_node(const tp_expansion *x)
{
	return tp__trainer_resources(x->trainer, x->runtime);
}

cJSON *tp__x_trainer_node(tp_expansion *x, tp_podset **ps_out)
{
	tp_podset *ps = tp__x_podset_by_ancestor(x, TP_ANCESTOR_TRAINER);
	*ps_out = ps;
	if (!ps)
		return NULL;
	tp__x_trainjob_num_nodes(x, &ps->count);
	return tp__x_container(ps, TP_CONTAINER_NODE);
}
