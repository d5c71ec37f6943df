/*
 * test_pod_volumes.c — what kube-apiserver v1.32 checks inside a runtime
 * Pod template's configMap, secret, downwardAPI and projected volumes
 * (policy/pod/volumes.c): validateKeyToPath's items (key and path Required,
 * ValidateLocalNonReservedPath, mode), validateDownwardAPIVolumeFile (its
 * path, exactly one of fieldRef and resourceFieldRef, the volume's
 * validateObjectFieldSelector and validateContainerResourceFieldSelector,
 * mode) and validateProjectionSources. Each case is ported from Kubernetes'
 * pkg/apis/core/validation/validation_test.go (TestValidateVolumes unless
 * named otherwise) and goes through tp_validate_runtime in the strict
 * profile, wanting exactly the listed errors: type, path, value and the API
 * server's detail at the head of the text. A downward API file's errors are
 * at its source's path, not its item's: upstream passes the source's path.
 * A fieldRef's empty apiVersion counts as v1 (defaulting fills it in).
 */
#include "tests/unit/up_cases.h"

#include <stdio.h>

#define RT "spec.template.spec.replicatedJobs[0].template.spec.template.spec."

typedef struct want {
	tp_field_type type;
	const char *path;   /* under RT */
	const char *value;  /* as rendered, or NULL */
	const char *detail; /* the API server's; "" when it has none */
} want;

typedef struct row {
	const char *vols;   /* the Pod spec's volumes, single-quoted JSON */
	want errs[8];       /* ends at the first with path NULL */
} row;

static tp_result *review(const row *r)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':{'containers':[{'name':'node','image':'pytorch'}],'volumes':[%s]}}}}}]}}}}",
		 r->vols);
	cJSON *rt = tt_jsq(buf);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_options opt = { .profile = TP_PROFILE_STRICT };
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, res), TP_OK);
	cJSON_Delete(rt);
	return res;
}

/* The API server's detail first in the text ("<detail>: <where>; <hint>"),
 * or the text alone when it has none. */
static bool matches(const tp_field_error *e, const want *w)
{
	char path[512];
	snprintf(path, sizeof(path), RT "%s", w->path);
	size_t n = strlen(w->detail);
	return e->type == w->type && !strcmp(e->path, path) &&
	       (w->value ? e->value && !strcmp(e->value, w->value) : !e->value) && e->detail &&
	       !strncmp(e->detail, w->detail, n) && (!n || !e->detail[n] || e->detail[n] == ':');
}

static void run_row(void **state)
{
	const row *r = *state;
	tp_result *res = review(r);
	size_t n = 0;
	while (n < 8 && r->errs[n].path)
		n++;
	if (tp_result_error_count(res) != n) {
		tt_dump(res);
		fail_msg("%zu errors, want %zu", tp_result_error_count(res), n);
	}
	for (size_t i = 0; i < n; i++)
		if (!matches(tp_result_error_at(res, i), &r->errs[i])) {
			tt_dump(res);
			fail_msg("error %zu: want %s %s: %s", i, r->errs[i].path,
				 r->errs[i].value ? r->errs[i].value : "(no value)", r->errs[i].detail);
		}
	tp_result_free(res);
}

#define VOL(name, vols, ...) UP_ROW(name, run_row, (&(const row){ vols, { __VA_ARGS__ } }))
#define OK_VOL(name, vols) VOL(name, vols, { 0 })
#define E(type, path, value, detail) { TP_FIELD_##type, path, value, detail }

/* The second volume (the first an emptyDir), as in the differential test. */
#define V1(src) "{'name':'scratch','emptyDir':{}},{'name':'v','" src "}"
#define SECRET(items) V1("secret':{'secretName':'s','items':[" items "]}")
#define CM(items) V1("configMap':{'name':'c','items':[" items "]}")
#define DAPI(items) V1("downwardAPI':{'items':[" items "]}")
#define LABELS "'fieldRef':{'apiVersion':'v1','fieldPath':'metadata.labels'}"
#define FILE_MODE "must be a number between 0 and 0777 (octal), both inclusive"
#define NO_DOTDOT "must not contain '..'"
#define NO_LEADING "must not start with '..'"
#define VOL_FIELDS \
	"supported values: \"metadata.annotations\", \"metadata.labels\", \"metadata.name\", " \
	"\"metadata.namespace\", \"metadata.uid\""
#define RESOURCES \
	"supported values: \"limits.cpu\", \"limits.ephemeral-storage\", \"limits.memory\", " \
	"\"requests.cpu\", \"requests.ephemeral-storage\", \"requests.memory\""

static const up_case key_to_path[] = {
	OK_VOL("valid Secret with projection and mode",
	       SECRET("{'key':'my-username','path':'my-group/my-username','mode':511}")),
	OK_VOL("valid Secret with subdir projection",
	       SECRET("{'key':'my-username','path':'my-group/my-username'}")),
	OK_VOL("valid ConfigMap with projection and mode",
	       CM("{'key':'my-username','path':'my-group/my-username','mode':511}")),
	OK_VOL("valid ConfigMap with subdir projection",
	       CM("{'key':'my-username','path':'my-group/my-username'}")),
	VOL("secret with missing path", SECRET("{'key':'key','path':''}"),
	    E(REQUIRED, "volumes[1].secret.items[0].path", NULL, "")),
	VOL("secret with leading ..", SECRET("{'key':'key','path':'../foo'}"),
	    E(INVALID, "volumes[1].secret.items[0].path", "\"../foo\"", NO_DOTDOT)),
	VOL("secret with .. inside", SECRET("{'key':'key','path':'foo/../bar'}"),
	    E(INVALID, "volumes[1].secret.items[0].path", "\"foo/../bar\"", NO_DOTDOT)),
	VOL("configmap with missing path", CM("{'key':'key','path':''}"),
	    E(REQUIRED, "volumes[1].configMap.items[0].path", NULL, "")),
	VOL("configmap with leading ..", CM("{'key':'key','path':'../foo'}"),
	    E(INVALID, "volumes[1].configMap.items[0].path", "\"../foo\"", NO_DOTDOT)),
	VOL("configmap with .. inside", CM("{'key':'key','path':'foo/../bar'}"),
	    E(INVALID, "volumes[1].configMap.items[0].path", "\"foo/../bar\"", NO_DOTDOT)),
	/* the differential test's case, and the other rules of validateKeyToPath */
	VOL("differential: configMap item path ../x", CM("{'key':'k','path':'../x'}"),
	    E(INVALID, "volumes[1].configMap.items[0].path", "\"../x\"", NO_DOTDOT)),
	VOL("validateKeyToPath: absolute path, missing key, bad mode",
	    CM("{'key':'k','path':'a'},{'path':'/etc/x','mode':512}"),
	    E(REQUIRED, "volumes[1].configMap.items[1].key", NULL, ""),
	    E(INVALID, "volumes[1].configMap.items[1].path", "\"/etc/x\"", "must be a relative path"),
	    E(INVALID, "volumes[1].configMap.items[1].mode", "512", FILE_MODE)),
	VOL("ValidateLocalNonReservedPath: ..name", SECRET("{'key':'k','path':'..data'}"),
	    E(INVALID, "volumes[1].secret.items[0].path", "\"..data\"", NO_LEADING)),
	VOL("validateKeyToPath: negative mode", SECRET("{'key':'k','path':'p','mode':-1}"),
	    E(INVALID, "volumes[1].secret.items[0].mode", "-1", FILE_MODE)),
};

static const up_case downward[] = {
	OK_VOL("valid DownwardAPI",
	       DAPI("{'path':'labels'," LABELS "},"
		    "{'path':'labels with subscript','fieldRef':{'apiVersion':'v1',"
		    "'fieldPath':'metadata.labels[\\'key\\']'}},"
		    "{'path':'labels with complex subscript','fieldRef':{'apiVersion':'v1',"
		    "'fieldPath':'metadata.labels[\\'test.example.com/key\\']'}},"
		    "{'path':'annotations','fieldRef':{'fieldPath':'metadata.annotations'}},"
		    "{'path':'annotations with complex subscript','fieldRef':{'apiVersion':'v1',"
		    "'fieldPath':'metadata.annotations[\\'TEST.EXAMPLE.COM/key\\']'}},"
		    "{'path':'namespace','fieldRef':{'fieldPath':'metadata.namespace'}},"
		    "{'path':'name','fieldRef':{'fieldPath':'metadata.name'}},"
		    "{'path':'uid','fieldRef':{'fieldPath':'metadata.uid'}},"
		    "{'path':'path/with/subdirs'," LABELS "},{'path':'path/./withdot'," LABELS "},"
		    "{'path':'path/with/embedded..dotdot'," LABELS "},"
		    "{'path':'path/with/leading/..dotdot'," LABELS "},"
		    "{'path':'cpu_limit','resourceFieldRef':{'containerName':'test-container',"
		    "'resource':'limits.cpu'}},"
		    "{'path':'memory_request','resourceFieldRef':{'containerName':'test-container',"
		    "'resource':'requests.memory','divisor':'1Mi'}}")),
	OK_VOL("hugepages-downwardAPI-enabled",
	       DAPI("{'path':'hugepages_request','resourceFieldRef':{'containerName':"
		    "'test-container','resource':'requests.hugepages-2Mi'}},"
		    "{'path':'hugepages_limit','resourceFieldRef':{'containerName':"
		    "'test-container','resource':'limits.hugepages-2Mi'}}")),
	OK_VOL("downapi valid item mode", DAPI("{'path':'p','mode':511," LABELS "}")),
	VOL("downapi invalid positive item mode", DAPI("{'path':'p','mode':512," LABELS "}"),
	    E(INVALID, "volumes[1].downwardAPI.mode", "512", FILE_MODE)),
	VOL("downapi invalid negative item mode", DAPI("{'path':'p','mode':-1," LABELS "}"),
	    E(INVALID, "volumes[1].downwardAPI.mode", "-1", FILE_MODE)),
	VOL("downapi empty metatada path", DAPI("{'path':''," LABELS "}"),
	    E(REQUIRED, "volumes[1].downwardAPI.path", NULL, "")),
	VOL("downapi absolute path", DAPI("{'path':'/absolutepath'," LABELS "}"),
	    E(INVALID, "volumes[1].downwardAPI.path", "\"/absolutepath\"",
	      "must be a relative path")),
	VOL("downapi dot dot path", DAPI("{'path':'../../passwd'," LABELS "}"),
	    E(INVALID, "volumes[1].downwardAPI.path", "\"../../passwd\"", NO_DOTDOT)),
	VOL("downapi dot dot file name", DAPI("{'path':'..badFileName'," LABELS "}"),
	    E(INVALID, "volumes[1].downwardAPI.path", "\"..badFileName\"", NO_LEADING)),
	VOL("downapi dot dot first level dirent",
	    DAPI("{'path':'..badDirName/goodFileName'," LABELS "}"),
	    E(INVALID, "volumes[1].downwardAPI.path", "\"..badDirName/goodFileName\"",
	      NO_LEADING)),
	VOL("downapi fieldRef and ResourceFieldRef together",
	    DAPI("{'path':'test'," LABELS ",'resourceFieldRef':{'containerName':"
		 "'test-container','resource':'requests.memory'}}"),
	    E(INVALID, "volumes[1].downwardAPI", "\"resource\"",
	      "fieldRef and resourceFieldRef can not be specified simultaneously")),
	/* the differential test's cases, and the rest of the file's rules */
	VOL("differential: downwardAPI fieldRef metadata.foo",
	    DAPI("{'path':'p','fieldRef':{'apiVersion':'v1','fieldPath':'metadata.foo'}}"),
	    E(INVALID, "volumes[1].downwardAPI.fieldRef.fieldPath", "\"metadata.foo\"",
	      "error converting fieldPath: field label not supported: metadata.foo")),
	VOL("differential: downwardAPI resourceFieldRef without containerName",
	    DAPI("{'path':'p','resourceFieldRef':{'resource':'limits.cpu'}}"),
	    E(REQUIRED, "volumes[1].downwardAPI.resourceFieldRef.containerName", NULL, "")),
	VOL("validateObjectFieldSelector: a field an env var may read, a volume not",
	    DAPI("{'path':'p','fieldRef':{'fieldPath':'spec.nodeName'}}"),
	    E(UNSUPPORTED, "volumes[1].downwardAPI.fieldRef.fieldPath", "\"spec.nodeName\"",
	      VOL_FIELDS)),
	VOL("validateObjectFieldSelector: spec.host converts to spec.nodeName",
	    DAPI("{'path':'p','fieldRef':{'fieldPath':'spec.host'}}"),
	    E(UNSUPPORTED, "volumes[1].downwardAPI.fieldRef.fieldPath", "\"spec.nodeName\"",
	      VOL_FIELDS)),
	VOL("validateObjectFieldSelector: missing fieldPath", DAPI("{'path':'p','fieldRef':{}}"),
	    E(REQUIRED, "volumes[1].downwardAPI.fieldRef.fieldPath", NULL, "")),
	VOL("validateContainerResourceFieldSelector: unsupported resource",
	    DAPI("{'path':'p','resourceFieldRef':{'containerName':'c','resource':'limits.gpu'}}"),
	    E(UNSUPPORTED, "volumes[1].downwardAPI.resourceFieldRef.resource", "\"limits.gpu\"",
	      RESOURCES)),
	VOL("validateContainerResourceDivisor: cpu divisor",
	    DAPI("{'path':'p','resourceFieldRef':{'containerName':'c','resource':'limits.cpu',"
		 "'divisor':'1Mi'}}"),
	    E(INVALID, "volumes[1].downwardAPI.resourceFieldRef.divisor", "\"limits.cpu\"",
	      "only divisor's values 1m and 1 are supported with the cpu resource")),
	VOL("validateDownwardAPIVolumeFile: neither fieldRef nor resourceFieldRef",
	    DAPI("{'path':'p'}"),
	    E(REQUIRED, "volumes[1].downwardAPI", NULL,
	      "one of fieldRef and resourceFieldRef is required")),
};

static const up_case projected[] = {
	OK_VOL("valid projected volume",
	       V1("projected':{'defaultMode':420,'sources':[{'secret':{'name':'s','items':"
		  "[{'key':'k','path':'a/s'}]}},{'configMap':{'name':'c','items':[{'key':'k',"
		  "'path':'a/c'}]}},{'downwardAPI':{'items':[{'path':'a/d'," LABELS "}]}},"
		  "{'serviceAccountToken':{'path':'token','expirationSeconds':3600}}]}")),
	VOL("ProjectedVolumeSource more than one projection in a source",
	    V1("projected':{'sources':[{'secret':{}},{'secret':{},'downwardAPI':{}}]}"),
	    E(REQUIRED, "volumes[1].projected.sources[0].secret.name", NULL, ""),
	    E(REQUIRED, "volumes[1].projected.sources[1].secret.name", NULL, ""),
	    E(FORBIDDEN, "volumes[1].projected.sources[1]", NULL,
	      "may not specify more than 1 volume type per source")),
	VOL("validateProjectionSources: items' paths and fields",
	    V1("projected':{'sources':[{'configMap':{'name':'c','items':[{'key':'k',"
	       "'path':'../x'}]}},{'downwardAPI':{'items':[{'path':'p','fieldRef':"
	       "{'fieldPath':'metadata.foo'}}]}}]}"),
	    E(INVALID, "volumes[1].projected.sources[0].configMap.items[0].path", "\"../x\"",
	      NO_DOTDOT),
	    E(INVALID, "volumes[1].projected.sources[1].downwardAPI.fieldRef.fieldPath",
	      "\"metadata.foo\"", "error converting fieldPath: field label not supported: "
	      "metadata.foo")),
	VOL("validateProjectionSources: conflicting duplicate paths",
	    V1("projected':{'sources':[{'secret':{'name':'s','items':[{'key':'k','path':'p'}]}},"
	       "{'configMap':{'name':'c','items':[{'key':'k','path':'p'}]}},"
	       "{'downwardAPI':{'items':[{'path':'p'," LABELS "}]}}]}"),
	    E(INVALID, "volumes[1].projected", "\"c\"", "conflicting duplicate paths"),
	    E(INVALID, "volumes[1].projected", "\"p\"", "conflicting duplicate paths")),
	/* TestValidateVolumes "ProjectedVolumeSource with ServiceAccountToken
	 * expirationSeconds" (too short, too long; 600 and unset pass above) */
	VOL("validateProjectionSources: serviceAccountToken expirationSeconds",
	    V1("projected':{'sources':[{'serviceAccountToken':{'path':'t','expirationSeconds':60}},"
	       "{'serviceAccountToken':{'path':'u','expirationSeconds':4294967297}},"
	       "{'serviceAccountToken':{'path':'w','expirationSeconds':600}}]}"),
	    E(INVALID, "volumes[1].projected.sources[0].serviceAccountToken.expirationSeconds", "60",
	      "may not specify a duration less than 10 minutes"),
	    E(INVALID, "volumes[1].projected.sources[1].serviceAccountToken.expirationSeconds",
	      "4294967297", "may not specify a duration larger than 2^32 seconds")),
	VOL("validateProjectedVolumeSource: defaultMode",
	    V1("projected':{'defaultMode':-1,'sources':[]}"),
	    E(INVALID, "volumes[1].projected.defaultMode", "-1", FILE_MODE)),
};

int main(void)
{
	return UP_RUN("secret and configMap items", key_to_path) +
	       UP_RUN("downwardAPI", downward) + UP_RUN("projected", projected);
}
