/*
 * pod/volumes.c — spec.volumes as kube-apiserver checks them
 * (pkg/apis/core/validation ValidateVolumes and validateVolumeSource, v1.32;
 * v1.26 has the same rules and texts, without the image source): each volume
 * names itself with a DNS-1123 label, once, and has exactly one source, in
 * upstream's order of sources; the sources a training template uses most are
 * checked inside too (hostPath, secret, configMap, persistentVolumeClaim,
 * nfs, emptyDir, csi, ephemeral). Only a volume without any error counts as
 * defined for the containers' volumeMounts, as upstream's map does.
 */
#include "policy/core/quantity.h"
#include "policy/pod/pod.h"

#include <string.h>

#define MORE_THAN_ONE "may not specify more than 1 volume type"
#define FILE_MODE "must be a number between 0 and 0777 (octal), both inclusive"

/* validateVolumeSource's order. */
static const char *const sources[] = {
	"emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret",
	"nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder",
	"cephfs", "quobyte", "downwardAPI", "fc", "flexVolume", "configMap", "azureFile",
	"vsphereVolume", "photonPersistentDisk", "portworxVolume", "azureDisk", "storageos",
	"projected", "scaleIO", "csi", "ephemeral", "image",
};

static bool empty_str(const cJSON *obj, const char *member)
{
	const char *s = tp__mstr(obj, member);
	return !s || !*s;
}

static void required(tp_podv *v, const cJSON *src, const char *member, const char *hint)
{
	if (empty_str(src, member))
		tp__podv_add(v, TP_FIELD_REQUIRED, tp__podv_printf(v, ".%s", member), NULL, hint, "%s",
			     "");
}

static void check_mode(tp_podv *v, const cJSON *src, const char *member)
{
	long long m;
	if (tp__mint(src, member, &m) && (m < 0 || m > 0777))
		tp__podv_add(v, TP_FIELD_INVALID, tp__podv_printf(v, ".%s", member),
			     tp__podv_int(v, m), "write a file mode such as 0644 (420)", FILE_MODE);
}

static bool has_backstep(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

static void check_host_path(tp_podv *v, const cJSON *src)
{
	const char *path = tp__mstr(src, "path");
	if (!path || !*path) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".path", NULL, "give the node's path to mount", "%s",
			     "");
		return;
	}
	if (has_backstep(path))
		tp__podv_add(v, TP_FIELD_INVALID, ".path", tp__podv_quote(v, path),
			     "write the path without '..'", "must not contain '..'");
	static const char *const types[] = { "", "BlockDevice", "CharDevice", "Directory",
					     "DirectoryOrCreate", "File", "FileOrCreate", "Socket" };
	const char *t = tp__mstr(src, "type");
	if (!t)
		return;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i]))
			return;
	tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".type", tp__podv_quote(v, t), NULL,
		     "supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", "
		     "\"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"");
}

static void check_nfs(tp_podv *v, const cJSON *src)
{
	required(v, src, "server", "give the NFS server");
	required(v, src, "path", "give the exported path");
	const char *p = tp__mstr(src, "path");
	if (!p || *p != '/')
		tp__podv_add(v, TP_FIELD_INVALID, ".path", tp__podv_quote(v, p ? p : ""),
			     "write an absolute path", "must be an absolute path");
}

static void check_empty_dir(tp_podv *v, const cJSON *src)
{
	const cJSON *limit = tp_member(src, "sizeLimit");
	tp_quantity q, zero = { 0, 0, TP_QFMT_DECIMAL_SI };
	if (limit && !tp_quantity_from_json(limit, &q) && tp_quantity_cmp(&q, &zero) < 0)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".sizeLimit", NULL, "use a size of 0 or more",
			     "SizeLimit field must be a valid resource quantity");
}

/* The checks inside one source, at the source's path. */
static void check_source(tp_podv *v, const char *kind, const cJSON *src)
{
	if (!strcmp(kind, "hostPath")) {
		check_host_path(v, src);
	} else if (!strcmp(kind, "secret")) {
		required(v, src, "secretName", "name the Secret to mount");
		check_mode(v, src, "defaultMode");
	} else if (!strcmp(kind, "configMap")) {
		required(v, src, "name", "name the ConfigMap to mount");
		check_mode(v, src, "defaultMode");
	} else if (!strcmp(kind, "persistentVolumeClaim")) {
		required(v, src, "claimName", "name the PersistentVolumeClaim to mount");
	} else if (!strcmp(kind, "nfs")) {
		check_nfs(v, src);
	} else if (!strcmp(kind, "emptyDir")) {
		check_empty_dir(v, src);
	} else if (!strcmp(kind, "csi")) {
		required(v, src, "driver", "name the CSI driver");
	} else if (!strcmp(kind, "ephemeral") && !tp__mobj(src, "volumeClaimTemplate")) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".volumeClaimTemplate", NULL,
			     "give the claim template", "%s", "");
	}
}

#define NSOURCES (sizeof(sources) / sizeof(sources[0]))

/* The place of a source in upstream's order, or -1 for another member. */
static int source_index(const char *member)
{
	for (size_t i = 0; i < NSOURCES; i++)
		if (member[0] == sources[i][0] && !strcmp(member, sources[i]))
			return (int)i;
	return -1;
}

/* validateVolumeSource: exactly one source. The volume's members are read
 * once (a volume has two or three), then the sources found are judged in
 * upstream's order. */
static void check_sources(tp_podv *v, const cJSON *vol)
{
	const cJSON *found[NSOURCES] = { 0 };
	int n = 0;
	for (const cJSON *m = vol->child; m; m = m->next) {
		int i = cJSON_IsObject(m) ? source_index(m->string) : -1;
		if (i >= 0 && !found[i]) {
			found[i] = m;
			n++;
		}
	}
	if (!n) {
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     "give the volume a source (emptyDir, persistentVolumeClaim, configMap, "
			     "secret, ...)", "must specify a volume type");
		return;
	}
	bool first = true;
	for (size_t i = 0; i < NSOURCES && n; i++) {
		if (!found[i])
			continue;
		n--;
		size_t mark = tp__podv_push_member(v, sources[i]);
		if (!first)
			tp__podv_add(v, TP_FIELD_FORBIDDEN, NULL, NULL,
				     "keep one source per volume, and define another volume for "
				     "the other", MORE_THAN_ONE);
		else
			check_source(v, sources[i], found[i]);
		first = false;
		tp__podv_pop(v, mark);
	}
}

static int check_volume(tp_podv *v, const cJSON *vol, int i, tp_nameset *names)
{
	size_t before = v->n;
	size_t mark = tp__podv_push_index(v, ".volumes", i);
	check_sources(v, vol);
	const char *name = tp__mstr(vol, "name");
	if (!name || !*name) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the volume", "%s", "");
	} else {
		tp__pod_dns_label(v, ".name", name,
				  "use a lower-case DNS-1123 label (\"data\", \"model-cache\")");
	}
	if (tp__nameset_has(names, name ? name : ""))
		tp__podv_add(v, TP_FIELD_DUPLICATE, ".name", tp__podv_quote(v, name ? name : ""),
			     "give each volume its own name", "%s", "");
	tp__podv_pop(v, mark);
	if (v->n == before && !v->rc)
		return tp__nameset_add(names, name ? name : "");
	return v->rc;
}

int tp__pod_check_volumes(tp_podv *v, const cJSON *volumes, tp_nameset *names)
{
	int i = 0;
	for (const cJSON *vol = cJSON_IsArray(volumes) ? volumes->child : NULL; vol;
	     vol = vol->next, i++) {
		if (!cJSON_IsObject(vol))
			continue; /* the schema layer's to report */
		int rc = check_volume(v, vol, i, names);
		if (rc)
			return rc;
	}
	return v->rc;
}
