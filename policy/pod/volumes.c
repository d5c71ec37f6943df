/*
 * pod/volumes.c — spec.volumes as kube-apiserver checks them
 * (pkg/apis/core/validation ValidateVolumes and validateVolumeSource, v1.32;
 * v1.26 has the same rules and texts, without the image source): each volume
 * names itself with a DNS-1123 label, once, and has exactly one source, in
 * upstream's order of sources; the sources a training template uses most are
 * checked inside too (hostPath, secret, configMap, persistentVolumeClaim,
 * nfs, emptyDir, csi, ephemeral, and the items of secret, configMap,
 * downwardAPI and projected: validateKeyToPath, validateDownwardAPIVolumeFile,
 * validateProjectionSources). Only a volume without any error counts as
 * defined for the containers' volumeMounts, as upstream's map does.
 */
#include "policy/core/quantity.h"
#include "policy/pod/pod.h"

#include <string.h>

#define MORE_THAN_ONE "may not specify more than 1 volume type"
#define FILE_MODE "must be a number between 0 and 0777 (octal), both inclusive"

/* validateVolumeSource's order; the sources checked inside are dispatched
 * by their place (a chain of strcmp on the name was six calls for a
 * persistentVolumeClaim). */
enum source {
	S_EMPTY_DIR, S_HOST_PATH, S_GIT_REPO, S_GCE_PD, S_AWS_EBS, S_SECRET, S_NFS, S_ISCSI,
	S_GLUSTERFS, S_FLOCKER, S_PVC, S_RBD, S_CINDER, S_CEPHFS, S_QUOBYTE, S_DOWNWARD_API,
	S_FC, S_FLEX_VOLUME, S_CONFIG_MAP, S_AZURE_FILE, S_VSPHERE, S_PHOTON_PD, S_PORTWORX,
	S_AZURE_DISK, S_STORAGEOS, S_PROJECTED, S_SCALEIO, S_CSI, S_EPHEMERAL, S_IMAGE
};
static const char *const sources[] = {
	[S_EMPTY_DIR] = "emptyDir", [S_HOST_PATH] = "hostPath", [S_GIT_REPO] = "gitRepo",
	[S_GCE_PD] = "gcePersistentDisk", [S_AWS_EBS] = "awsElasticBlockStore",
	[S_SECRET] = "secret", [S_NFS] = "nfs", [S_ISCSI] = "iscsi", [S_GLUSTERFS] = "glusterfs",
	[S_FLOCKER] = "flocker", [S_PVC] = "persistentVolumeClaim", [S_RBD] = "rbd",
	[S_CINDER] = "cinder", [S_CEPHFS] = "cephfs", [S_QUOBYTE] = "quobyte",
	[S_DOWNWARD_API] = "downwardAPI", [S_FC] = "fc", [S_FLEX_VOLUME] = "flexVolume",
	[S_CONFIG_MAP] = "configMap", [S_AZURE_FILE] = "azureFile", [S_VSPHERE] = "vsphereVolume",
	[S_PHOTON_PD] = "photonPersistentDisk", [S_PORTWORX] = "portworxVolume",
	[S_AZURE_DISK] = "azureDisk", [S_STORAGEOS] = "storageos", [S_PROJECTED] = "projected",
	[S_SCALEIO] = "scaleIO", [S_CSI] = "csi", [S_EPHEMERAL] = "ephemeral", [S_IMAGE] = "image",
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
	if (limit && !tp__quantity_from_json(limit, &q) && tp__quantity_cmp(&q, &zero) < 0)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".sizeLimit", NULL, "use a size of 0 or more",
			     "SizeLimit field must be a valid resource quantity");
}

/* ValidateLocalNonReservedPath at the current path plus suffix: a relative
 * path without '..' elements that does not start with '..' either (the
 * kubelet keeps its own "..data" links there). */
static void check_item_path(tp_podv *v, const char *suffix, const char *p)
{
	tp__pod_local_path(v, suffix, p, "the volume's directory");
	if (!strncmp(p, "..", 2) && strncmp(p, "../", 3))
		tp__podv_add(v, TP_FIELD_INVALID, suffix, tp__podv_quote(v, p),
			     "give the file a name that does not start with '..'",
			     "must not start with '..'");
}

/* An item's path, once among a projected volume's files (paths NULL: not
 * projected): upstream reports a second one at the projected source's path,
 * with value the item's source name (a Secret's or ConfigMap's) or path. */
typedef struct projection {
	tp_nameset paths;
	size_t len; /* the projected source's path */
} projection;

static void claim_path(tp_podv *v, projection *pr, const char *path, const char *value)
{
	if (!pr || !*path)
		return;
	if (!tp__nameset_has(&pr->paths, path)) {
		if (tp__nameset_add(&pr->paths, path))
			v->rc = TP_ENOMEM;
		return;
	}
	/* the item's path is cut off for the finding and put back after it */
	size_t mark = v->len;
	char cut = v->path[pr->len];
	tp__podv_pop(v, pr->len);
	tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, value),
		     "give each file of the projected volume its own path",
		     "conflicting duplicate paths");
	v->path[pr->len] = cut;
	v->len = mark;
}

/* validateKeyToPath for each of a secret's or configMap's items. */
static void check_key_to_paths(tp_podv *v, const cJSON *src, projection *pr, const char *name)
{
	const cJSON *items = tp__marr(src, "items");
	int i = 0;
	for (const cJSON *kp = items ? items->child : NULL; kp; kp = kp->next, i++) {
		if (!cJSON_IsObject(kp))
			continue; /* the schema layer's to report */
		size_t mark = tp__podv_push_index(v, ".items", i);
		required(v, kp, "key", "name the key to project");
		const char *path = tp__mstr(kp, "path");
		required(v, kp, "path", "give the file's path inside the volume");
		check_item_path(v, ".path", path ? path : "");
		check_mode(v, kp, "mode");
		claim_path(v, pr, path ? path : "", name ? name : "");
		tp__podv_pop(v, mark);
	}
}

/* validateDownwardAPIVolumeFile, at the source's path (upstream passes it,
 * not the item's). */
static void check_downward_file(tp_podv *v, const cJSON *file, projection *pr)
{
	const char *path = tp__mstr(file, "path");
	required(v, file, "path", "give the file's path inside the volume");
	check_item_path(v, ".path", path ? path : "");
	const cJSON *field = tp__mobj(file, "fieldRef");
	const cJSON *res = tp__mobj(file, "resourceFieldRef");
	if (field) {
		size_t mark = tp__podv_push(v, ".fieldRef");
		tp__pod_check_field_selector(v, field, tp__pod_volume_fields);
		tp__podv_pop(v, mark);
		if (res)
			tp__podv_add(v, TP_FIELD_INVALID, NULL, tp__podv_quote(v, "resource"),
				     "keep fieldRef or resourceFieldRef, and give the other its "
				     "own file",
				     "fieldRef and resourceFieldRef can not be specified "
				     "simultaneously");
	} else if (res) {
		size_t mark = tp__podv_push(v, ".resourceFieldRef");
		tp__pod_check_resource_selector(v, res, true);
		tp__podv_pop(v, mark);
	} else {
		tp__podv_add(v, TP_FIELD_REQUIRED, NULL, NULL,
			     "read a field with fieldRef or a resource with resourceFieldRef",
			     "one of fieldRef and resourceFieldRef is required");
	}
	check_mode(v, file, "mode");
	claim_path(v, pr, path ? path : "", path ? path : "");
}

static void check_downward_files(tp_podv *v, const cJSON *src, projection *pr)
{
	const cJSON *items = tp__marr(src, "items");
	for (const cJSON *f = items ? items->child : NULL; f; f = f->next)
		if (cJSON_IsObject(f))
			check_downward_file(v, f, pr);
}

/* A serviceAccountToken source's expirationSeconds (defaulted to 3600 when
 * unset, so only a written one can be wrong): 10 minutes to 2^32 seconds. */
static void check_token_expiry(tp_podv *v, const cJSON *token)
{
	long long s;
	if (!tp__mint(token, "expirationSeconds", &s) || (s >= 600 && s <= 4294967296LL))
		return;
	tp__podv_add(v, TP_FIELD_INVALID, ".expirationSeconds", tp__podv_int(v, s),
		     "use from 600 to 4294967296 seconds, or leave it unset for an hour",
		     s < 600 ? "may not specify a duration less than 10 minutes"
			     : "may not specify a duration larger than 2^32 seconds");
}

/* validateProjectionSources' sources of a projected volume: secret,
 * configMap and downwardAPI as upstream checks them, a serviceAccountToken's
 * expiry; clusterTrustBundle counts as a source. */
static void check_projection(tp_podv *v, const cJSON *src, int i, projection *pr)
{
	static const char *const kinds[] = { "secret", "configMap", "downwardAPI",
					     "serviceAccountToken", "clusterTrustBundle" };
	size_t mark = tp__podv_push_index(v, ".sources", i);
	int n = 0;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		const cJSON *p = tp__mobj(src, kinds[k]);
		if (!p)
			continue;
		n++;
		size_t inner = tp__podv_push_member(v, kinds[k]);
		if (k < 2) {
			required(v, p, "name", k ? "name the ConfigMap to project"
						 : "name the Secret to project");
			check_key_to_paths(v, p, pr, tp__mstr(p, "name"));
		} else if (k == 2) {
			check_downward_files(v, p, pr);
		} else if (k == 3) {
			check_token_expiry(v, p);
		}
		tp__podv_pop(v, inner);
	}
	if (n > 1)
		tp__podv_add(v, TP_FIELD_FORBIDDEN, NULL, NULL,
			     "keep one kind per source, and add a source for the other",
			     "may not specify more than 1 volume type per source");
	tp__podv_pop(v, mark);
}

static void check_projected(tp_podv *v, const cJSON *src)
{
	check_mode(v, src, "defaultMode");
	projection pr = { .len = v->len };
	tp__nameset_init(&pr.paths, v->arena);
	const cJSON *list = tp__marr(src, "sources");
	int i = 0;
	for (const cJSON *s = list ? list->child : NULL; s; s = s->next, i++)
		if (cJSON_IsObject(s))
			check_projection(v, s, i, &pr);
}


/* The checks inside one source, at the source's path. */
static void check_source(tp_podv *v, enum source kind, const cJSON *src)
{
	switch (kind) {
	case S_HOST_PATH:
		check_host_path(v, src);
		break;
	case S_SECRET:
		required(v, src, "secretName", "name the Secret to mount");
		check_mode(v, src, "defaultMode");
		check_key_to_paths(v, src, NULL, NULL);
		break;
	case S_CONFIG_MAP:
		required(v, src, "name", "name the ConfigMap to mount");
		check_mode(v, src, "defaultMode");
		check_key_to_paths(v, src, NULL, NULL);
		break;
	case S_DOWNWARD_API:
		check_mode(v, src, "defaultMode");
		check_downward_files(v, src, NULL);
		break;
	case S_PROJECTED:
		check_projected(v, src);
		break;
	case S_PVC:
		required(v, src, "claimName", "name the PersistentVolumeClaim to mount");
		break;
	case S_NFS:
		check_nfs(v, src);
		break;
	case S_EMPTY_DIR:
		check_empty_dir(v, src);
		break;
	case S_CSI:
		required(v, src, "driver", "name the CSI driver");
		break;
	case S_EPHEMERAL:
		if (!tp__mobj(src, "volumeClaimTemplate"))
			tp__podv_add(v, TP_FIELD_REQUIRED, ".volumeClaimTemplate", NULL,
				     "give the claim template", "%s", "");
		break;
	default:
		break;
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
 * upstream's order. Returns the volume's name member (the first), read in
 * the same walk. */
static const cJSON *check_sources(tp_podv *v, const cJSON *vol)
{
	const cJSON *found[NSOURCES] = { 0 };
	const cJSON *name = NULL;
	int n = 0;
	for (const cJSON *m = vol->child; m; m = m->next) {
		if (!name && m->string && !strcmp(m->string, "name")) {
			name = m;
			continue;
		}
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
		return name;
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
			check_source(v, (enum source)i, found[i]);
		first = false;
		tp__podv_pop(v, mark);
	}
	return name;
}

static int check_volume(tp_podv *v, const cJSON *vol, int i, tp_nameset *names)
{
	size_t before = v->n;
	size_t mark = tp__podv_push_index(v, ".volumes", i);
	const cJSON *name_m = check_sources(v, vol);
	const char *name = cJSON_IsString(name_m) ? name_m->valuestring : NULL;
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
