/*
 * test_pod_validation.c — kube-apiserver's checks of a Job template and its
 * Pod template (policy/pod/), ported from Kubernetes v1.32's own tables
 * under their names: pkg/apis/core/validation/validation_test.go
 * (TestValidatePorts, TestValidateContainers, TestValidateInitContainers,
 * TestValidateVolumes, TestValidateVolumeMounts, TestValidateEnv,
 * TestValidateRestartPolicy, TestValidateDNSPolicy, TestValidatePod's
 * resource cases, TestHugePagesIsolation) and
 * pkg/apis/batch/validation/validation_test.go (TestValidateJob). Each case
 * wants exactly the errors upstream's table lists, by type and path.
 *
 * The inputs here are manifests, as a runtime holds them, so what the API
 * server's defaulting fills in before validation (protocol, imagePullPolicy,
 * terminationMessagePolicy, restartPolicy, dnsPolicy when empty) is filled
 * in: upstream's cases of an empty enumeration ("protocol required",
 * "empty message termination policy") cannot happen and are not ported, nor
 * those that need a cluster setting (AllowPrivileged) or a feature gate off
 * (v1.32 turns RelaxedEnvironmentVariableValidation on: "ev!1" is a valid
 * name there).
 */
#include "tests/unit/up_cases.h"

typedef struct want {
	tp_field_type type;
	const char *path;
	const char *detail; /* a part of it, or NULL */
} want;

typedef struct row {
	bool job;           /* a JobTemplateSpec, else a PodTemplateSpec */
	const char *object; /* single-quoted JSON */
	want errs[6];       /* ends at the first with path NULL */
} row;

static void run_row(void **state)
{
	const row *r = *state;
	cJSON *obj = tt_jsq(r->object);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(r->job ? tp_pod_validate_job_template(obj, res)
				: tp_pod_validate_template(obj, NULL, res),
			 TP_OK);
	size_t n = 0;
	while (n < 6 && r->errs[n].path)
		n++;
	if (tp_result_error_count(res) != n) {
		tt_dump(res);
		fail_msg("%zu errors, want %zu", tp_result_error_count(res), n);
	}
	for (size_t i = 0; i < n; i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		if (e->type != r->errs[i].type || strcmp(e->path, r->errs[i].path) ||
		    (r->errs[i].detail && !strstr(e->detail, r->errs[i].detail))) {
			tt_dump(res);
			fail_msg("error %zu: want %s (%s)", i, r->errs[i].path,
				 r->errs[i].detail ? r->errs[i].detail : "");
		}
	}
	tp_result_free(res);
	cJSON_Delete(obj);
}

#define ROW(name, job, object, ...) \
	UP_ROW(name, run_row, (&(const row){ job, object, { __VA_ARGS__ } }))
#define POD(name, spec, ...) ROW(name, false, "{'spec':" spec "}", __VA_ARGS__)
#define OK_POD(name, spec) ROW(name, false, "{'spec':" spec "}", { 0 })
#define E(type, path, detail) { TP_FIELD_##type, path, detail }

/* One container "c" with members m, and the pod spec's own members. */
#define ONE(m) "{'containers':[{'name':'c','image':'i'" m "}]}"
#define C0 "spec.containers[0]"

static const up_case core[] = {
	/* TestValidatePorts */
	OK_POD("TestValidatePorts/successCase",
	       ONE(",'ports':[{'name':'abc','containerPort':80,'hostPort':80,'protocol':'TCP'},"
		   "{'name':'easy','containerPort':82,'protocol':'TCP'},{'name':'as','containerPort':83,"
		   "'protocol':'UDP'},{'name':'do-re-me','containerPort':84,'protocol':'SCTP'},"
		   "{'containerPort':85,'protocol':'TCP'}]")),
	POD("TestValidatePorts/name > 15 characters",
	    ONE(",'ports':[{'name':'aaaaaaaaaaaaaaaa','containerPort':80,'protocol':'TCP'}]"),
	    E(INVALID, C0 ".ports[0].name", "15")),
	POD("TestValidatePorts/name contains invalid characters",
	    ONE(",'ports':[{'name':'a.b.c','containerPort':80,'protocol':'TCP'}]"),
	    E(INVALID, C0 ".ports[0].name", "alpha-numeric")),
	POD("TestValidatePorts/name is a number",
	    ONE(",'ports':[{'name':'80','containerPort':80,'protocol':'TCP'}]"),
	    E(INVALID, C0 ".ports[0].name", "at least one letter")),
	POD("TestValidatePorts/name not unique",
	    ONE(",'ports':[{'name':'abc','containerPort':80,'protocol':'TCP'},"
		"{'name':'abc','containerPort':81,'protocol':'TCP'}]"),
	    E(DUPLICATE, C0 ".ports[1].name", "")),
	POD("TestValidatePorts/zero container port",
	    ONE(",'ports':[{'containerPort':0,'protocol':'TCP'}]"),
	    E(REQUIRED, C0 ".ports[0].containerPort", "")),
	POD("TestValidatePorts/invalid container port",
	    ONE(",'ports':[{'containerPort':65536,'protocol':'TCP'}]"),
	    E(INVALID, C0 ".ports[0].containerPort", "must be between 1 and 65535, inclusive")),
	POD("TestValidatePorts/invalid host port",
	    ONE(",'ports':[{'containerPort':80,'hostPort':65536,'protocol':'TCP'}]"),
	    E(INVALID, C0 ".ports[0].hostPort", "must be between 1 and 65535, inclusive")),
	POD("TestValidatePorts/invalid protocol case", ONE(",'ports':[{'containerPort':80,'protocol':'tcp'}]"),
	    E(UNSUPPORTED, C0 ".ports[0].protocol", "supported values: \"SCTP\", \"TCP\", \"UDP\"")),
	POD("TestValidatePorts/invalid protocol", ONE(",'ports':[{'containerPort':80,'protocol':'ICMP'}]"),
	    E(UNSUPPORTED, C0 ".ports[0].protocol", "supported values: \"SCTP\", \"TCP\", \"UDP\"")),
	/* TestValidateContainers */
	POD("TestValidateContainers/zero-length name", "{'containers':[{'name':'','image':'i'}]}",
	    E(REQUIRED, C0 ".name", NULL)),
	POD("TestValidateContainers/zero-length-image", "{'containers':[{'name':'abc','image':''}]}",
	    E(REQUIRED, C0 ".image", NULL)),
	POD("TestValidateContainers/name > 63 characters",
	    "{'containers':[{'name':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',"
	    "'image':'i'}]}",
	    E(INVALID, C0 ".name", "must be no more than 63 characters")),
	POD("TestValidateContainers/name not a DNS label", "{'containers':[{'name':'a.b.c','image':'i'}]}",
	    E(INVALID, C0 ".name", "must not contain dots")),
	POD("TestValidateContainers/name not unique",
	    "{'containers':[{'name':'abc','image':'i'},{'name':'abc','image':'i'}]}",
	    E(DUPLICATE, "spec.containers[1].name", NULL)),
	POD("TestValidateContainers/unknown volume name",
	    ONE(",'volumeMounts':[{'name':'anything','mountPath':'/foo'}]"),
	    E(NOT_FOUND, C0 ".volumeMounts[0].name", NULL)),
	POD("TestValidateContainers/invalid message termination policy",
	    ONE(",'terminationMessagePolicy':'Unknown'"),
	    E(UNSUPPORTED, C0 ".terminationMessagePolicy",
	      "supported values: \"File\", \"FallbackToLogsOnError\"")),
	POD("TestValidateContainers/invalid compute resource", ONE(",'resources':{'limits':{'disk':'10G'}}"),
	    E(INVALID, C0 ".resources.limits[disk]", "must be a standard resource type or fully qualified"),
	    E(INVALID, C0 ".resources.limits[disk]", "must be a standard resource for containers")),
	POD("TestValidateContainers/Resource CPU invalid",
	    ONE(",'resources':{'limits':{'cpu':'-10','memory':'0'}}"),
	    E(INVALID, C0 ".resources.limits[cpu]", "must be greater than or equal to 0")),
	POD("TestValidateContainers/Resource Requests CPU invalid",
	    ONE(",'resources':{'requests':{'cpu':'-10','memory':'0'}}"),
	    E(INVALID, C0 ".resources.requests[cpu]", "must be greater than or equal to 0")),
	POD("TestValidateContainers/Resource Memory invalid",
	    ONE(",'resources':{'limits':{'cpu':'0','memory':'-10'}}"),
	    E(INVALID, C0 ".resources.limits[memory]", "must be greater than or equal to 0")),
	POD("TestValidateContainers/Request limit simple invalid",
	    ONE(",'resources':{'limits':{'cpu':'5','memory':'3'},'requests':{'cpu':'6','memory':'3'}}"),
	    E(INVALID, C0 ".resources.requests", "must be less than or equal to cpu limit of 5")),
	POD("TestValidateContainers/Invalid storage limit request",
	    ONE(",'resources':{'limits':{'attachable-volumes-aws-ebs':10}}"),
	    E(INVALID, C0 ".resources.limits[attachable-volumes-aws-ebs]", "fully qualified"),
	    E(INVALID, C0 ".resources.limits[attachable-volumes-aws-ebs]", "for containers")),
	POD("TestValidateContainers/Memory request limit multiple invalid",
	    ONE(",'resources':{'limits':{'cpu':'5','memory':'3'},'requests':{'cpu':'5','memory':'4'}}"),
	    E(INVALID, C0 ".resources.requests", "must be less than or equal to memory limit of 3")),
	POD("TestValidateContainers/Invalid env from",
	    ONE(",'envFrom':[{'configMapRef':{'name':'$%^&*#'}}]"),
	    E(INVALID, C0 ".envFrom[0].configMapRef.name", "RFC 1123 subdomain")),
	POD("TestValidateContainers/Forbidden RestartPolicy: Always", ONE(",'restartPolicy':'Always'"),
	    E(FORBIDDEN, C0 ".restartPolicy", "may not be set for non-init containers")),
	POD("TestValidateContainers/Forbidden RestartPolicy: Never", ONE(",'restartPolicy':'Never'"),
	    E(FORBIDDEN, C0 ".restartPolicy", "may not be set for non-init containers")),
	/* TestValidatePod: the extended resource cases */
	POD("TestValidatePod/invalid extended resource name in container request",
	    ONE(",'resources':{'limits':{'invalid-name':'2'},'requests':{'invalid-name':'2'}}"),
	    E(INVALID, C0 ".resources.limits[invalid-name]", "fully qualified"),
	    E(INVALID, C0 ".resources.limits[invalid-name]", "must be a standard resource for containers"),
	    E(INVALID, C0 ".resources.requests[invalid-name]", "fully qualified"),
	    E(INVALID, C0 ".resources.requests[invalid-name]", "must be a standard resource for containers")),
	POD("TestValidatePod/invalid extended resource requirement: request must be == limit",
	    ONE(",'resources':{'limits':{'example.com/a':'2'},'requests':{'example.com/a':'1'}}"),
	    E(INVALID, C0 ".resources.requests", "must be equal to example.com/a limit of 2")),
	POD("TestValidatePod/invalid extended resource requirement without limit",
	    ONE(",'resources':{'requests':{'example.com/a':'2'}}"),
	    E(REQUIRED, C0 ".resources.limits", "Limit must be set for non overcommitable resources")),
	POD("TestValidatePod/invalid fractional extended resource in container request",
	    ONE(",'resources':{'limits':{'example.com/a':'500m'},'requests':{'example.com/a':'500m'}}"),
	    E(INVALID, C0 ".resources.limits[example.com/a]", "must be an integer"),
	    E(INVALID, C0 ".resources.requests[example.com/a]", "must be an integer")),
	OK_POD("TestValidatePod/extended resource request equal to its limit",
	       ONE(",'resources':{'limits':{'nvidia.com/gpu':2},'requests':{'nvidia.com/gpu':'2'}}")),
	/* TestHugePagesIsolation */
	POD("TestHugePagesIsolation/Invalid: hugepages without cpu or memory",
	    ONE(",'resources':{'limits':{'hugepages-2Mi':'1Gi'},'requests':{'hugepages-2Mi':'1Gi'}}"),
	    E(FORBIDDEN, C0 ".resources", "HugePages require cpu or memory")),
	POD("TestHugePagesIsolation/Invalid: not a multiple of the page size",
	    ONE(",'resources':{'limits':{'memory':'2Gi','hugepages-2Mi':'3Mi'},"
		"'requests':{'memory':'2Gi','hugepages-2Mi':'3Mi'}}"),
	    E(INVALID, C0 ".resources.limits[hugepages-2Mi]", "3Mi is not positive integer multiple of hugepages-2Mi"),
	    E(INVALID, C0 ".resources.requests[hugepages-2Mi]", "is not positive integer multiple")),
	/* TestValidateInitContainers */
	POD("TestValidateInitContainers/duplicate name with a container",
	    "{'containers':[{'name':'app','image':'i'}],'initContainers':[{'name':'app','image':'i'}]}",
	    E(DUPLICATE, "spec.initContainers[0].name", NULL)),
	POD("TestValidateInitContainers/livenessProbe without restartPolicy Always",
	    "{'containers':[{'name':'app','image':'i'}],'initContainers':[{'name':'init','image':'i',"
	    "'livenessProbe':{'exec':{'command':['true']}}}]}",
	    E(FORBIDDEN, "spec.initContainers[0].livenessProbe",
	      "may not be set for init containers without restartPolicy=Always")),
	POD("TestValidateInitContainers/invalid restart policy",
	    "{'containers':[{'name':'app','image':'i'}],'initContainers':[{'name':'init','image':'i',"
	    "'restartPolicy':'OnFailure'}]}",
	    E(UNSUPPORTED, "spec.initContainers[0].restartPolicy", "supported values: \"Always\"")),
	OK_POD("TestValidateInitContainers/sidecar with a probe",
	       "{'containers':[{'name':'app','image':'i'}],'initContainers':[{'name':'side','image':'i',"
	       "'restartPolicy':'Always','readinessProbe':{'exec':{'command':['true']}}}]}"),
	/* TestValidateVolumes */
	POD("TestValidateVolumes/zero-length name",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'','emptyDir':{}}]}",
	    E(REQUIRED, "spec.volumes[0].name", NULL)),
	POD("TestValidateVolumes/name > 63 characters",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':"
	    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa','emptyDir':{}}]}",
	    E(INVALID, "spec.volumes[0].name", "must be no more than")),
	POD("TestValidateVolumes/name has dots",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'a.b.c','emptyDir':{}}]}",
	    E(INVALID, "spec.volumes[0].name", "must not contain dots")),
	POD("TestValidateVolumes/name not a DNS label",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'Not a DNS label!','emptyDir':{}}]}",
	    E(INVALID, "spec.volumes[0].name", "a lowercase RFC 1123 label must consist of")),
	POD("TestValidateVolumes/more than one source",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'dups','emptyDir':{},"
	    "'hostPath':{'path':'/mnt/path','type':'Directory'}}]}",
	    E(FORBIDDEN, "spec.volumes[0].hostPath", "may not specify more than 1 volume")),
	OK_POD("TestValidateVolumes/valid HostPath",
	       "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'hostpath',"
	       "'hostPath':{'path':'/mnt/path','type':'Socket'}}]}"),
	POD("TestValidateVolumes/invalid HostPath",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'hostpath',"
	    "'hostPath':{'path':'/mnt/path','type':'invalid'}}]}",
	    E(UNSUPPORTED, "spec.volumes[0].hostPath.type", NULL)),
	POD("TestValidateVolumes/invalid HostPath backsteps",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'hostpath',"
	    "'hostPath':{'path':'/mnt/path/..','type':'Directory'}}]}",
	    E(INVALID, "spec.volumes[0].hostPath.path", "must not contain '..'")),
	POD("TestValidateVolumes/secret with invalid positive defaultMode",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'secret',"
	    "'secret':{'secretName':'s','defaultMode':512}}]}",
	    E(INVALID, "spec.volumes[0].secret.defaultMode", "between 0 and 0777")),
	POD("TestValidateVolumes/secret with invalid negative defaultMode",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'secret',"
	    "'secret':{'secretName':'s','defaultMode':-1}}]}",
	    E(INVALID, "spec.volumes[0].secret.defaultMode", NULL)),
	POD("TestValidateVolumes/configmap with invalid positive defaultMode",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'cm',"
	    "'configMap':{'name':'c','defaultMode':512}}]}",
	    E(INVALID, "spec.volumes[0].configMap.defaultMode", NULL)),
	POD("TestValidateVolumes/empty claimName",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'pvc','persistentVolumeClaim':{}}]}",
	    E(REQUIRED, "spec.volumes[0].persistentVolumeClaim.claimName", NULL)),
	POD("TestValidateVolumes/NFS relative path",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'n','nfs':{'server':'s',"
	    "'path':'data'}}]}",
	    E(INVALID, "spec.volumes[0].nfs.path", "must be an absolute path")),
	POD("TestValidateVolumes/no source",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'v'}]}",
	    E(REQUIRED, "spec.volumes[0]", "must specify a volume type")),
	POD("TestValidateVolumes/duplicate name",
	    "{'containers':[{'name':'c','image':'i'}],'volumes':[{'name':'v','emptyDir':{}},"
	    "{'name':'v','emptyDir':{}}]}",
	    E(DUPLICATE, "spec.volumes[1].name", NULL)),
	/* TestValidateVolumeMounts */
	POD("TestValidateVolumeMounts/name not found",
	    "{'containers':[{'name':'c','image':'i','volumeMounts':[{'name':'data','mountPath':'/d'}]}]}",
	    E(NOT_FOUND, C0 ".volumeMounts[0].name", NULL)),
	POD("TestValidateVolumeMounts/empty mountpath",
	    "{'volumes':[{'name':'abc','emptyDir':{}}],'containers':[{'name':'c','image':'i',"
	    "'volumeMounts':[{'name':'abc','mountPath':''}]}]}",
	    E(REQUIRED, C0 ".volumeMounts[0].mountPath", NULL)),
	POD("TestValidateVolumeMounts/mountpath collision",
	    "{'volumes':[{'name':'abc','emptyDir':{}},{'name':'def','emptyDir':{}}],'containers':["
	    "{'name':'c','image':'i','volumeMounts':[{'name':'abc','mountPath':'/foo'},"
	    "{'name':'def','mountPath':'/foo'}]}]}",
	    E(INVALID, C0 ".volumeMounts[1].mountPath", "must be unique")),
	POD("TestValidateVolumeMounts/absolute subpath",
	    "{'volumes':[{'name':'abc','emptyDir':{}}],'containers':[{'name':'c','image':'i',"
	    "'volumeMounts':[{'name':'abc','mountPath':'/bar','subPath':'/baz'}]}]}",
	    E(INVALID, C0 ".volumeMounts.subPath", "must be a relative path")),
	POD("TestValidateVolumeMounts/subpath in ..",
	    "{'volumes':[{'name':'abc','emptyDir':{}}],'containers':[{'name':'c','image':'i',"
	    "'volumeMounts':[{'name':'abc','mountPath':'/bar','subPath':'../baz'}]}]}",
	    E(INVALID, C0 ".volumeMounts.subPath", "must not contain '..'")),
	POD("TestValidateVolumeMounts/mount of an invalid volume",
	    "{'volumes':[{'name':'abc'}],'containers':[{'name':'c','image':'i',"
	    "'volumeMounts':[{'name':'abc','mountPath':'/bar'}]}]}",
	    E(REQUIRED, "spec.volumes[0]", "must specify a volume type"),
	    E(NOT_FOUND, C0 ".volumeMounts[0].name", NULL)),
	/* TestValidateEnv (v1.32's relaxed names) */
	OK_POD("TestValidateEnv/successCase",
	       ONE(",'env':[{'name':'abc','value':'value'},{'name':'ABC','value':'value'},"
		   "{'name':'AbC_123','value':'value'},{'name':'abc','value':''},{'name':'a.b.c'},"
		   "{'name':'a-b-c'},{'name':'1abc'},{'name':'ev!1'}]")),
	POD("TestValidateEnv/zero-length name", ONE(",'env':[{'name':''}]"),
	    E(REQUIRED, C0 ".env[0].name", NULL)),
	POD("TestValidateEnv/illegal character", ONE(",'env':[{'name':'a=b'}]"),
	    E(INVALID, C0 ".env[0].name",
	      "a valid environment variable name must consist only of printable ASCII characters other "
	      "than '='")),
	POD("TestValidateEnv/value and valueFrom specified",
	    ONE(",'env':[{'name':'abc','value':'foo','valueFrom':{'fieldRef':{'apiVersion':'v1',"
		"'fieldPath':'metadata.name'}}}]"),
	    E(INVALID, C0 ".env[0].valueFrom", "may not be specified when `value` is not empty")),
	POD("TestValidateEnv/missing FieldPath on ObjectFieldSelector",
	    ONE(",'env':[{'name':'abc','valueFrom':{'fieldRef':{'apiVersion':'v1'}}}]"),
	    E(REQUIRED, C0 ".env[0].valueFrom.fieldRef.fieldPath", NULL)),
	POD("TestValidateEnv/valueFrom source missing",
	    ONE(",'env':[{'name':'abc','valueFrom':{}}]"),
	    E(INVALID, C0 ".env[0].valueFrom", "must specify one of: `fieldRef`, `resourceFieldRef`")),
	POD("TestValidateEnv/valueFrom.fieldRef and valueFrom.secretKeyRef specified",
	    ONE(",'env':[{'name':'abc','valueFrom':{'fieldRef':{'apiVersion':'v1','fieldPath':"
		"'metadata.name'},'secretKeyRef':{'name':'a-secret','key':'a-key'}}}]"),
	    E(INVALID, C0 ".env[0].valueFrom", "may not have more than one field specified at a time")),
	/* TestValidateRestartPolicy, TestValidateDNSPolicy */
	POD("TestValidateRestartPolicy/errorCases", "{'restartPolicy':'UnknownPolicy','containers':"
	    "[{'name':'c','image':'i'}]}",
	    E(UNSUPPORTED, "spec.restartPolicy", "supported values: \"Always\", \"OnFailure\", \"Never\"")),
	POD("TestValidateDNSPolicy/errorCases", "{'dnsPolicy':'ClusterFirstWithoutHostNet','containers':"
	    "[{'name':'c','image':'i'}]}",
	    E(UNSUPPORTED, "spec.dnsPolicy", NULL)),
	POD("TestValidatePodSpec/no containers", "{}", E(REQUIRED, "spec.containers", NULL)),
	POD("TestValidatePodSpec/bad activeDeadlineSeconds",
	    "{'activeDeadlineSeconds':0,'containers':[{'name':'c','image':'i'}]}",
	    E(INVALID, "spec.activeDeadlineSeconds", "must be between 1 and 2147483647, inclusive")),
	POD("TestValidateTolerations/value must be empty when `operator` is 'Exists'",
	    "{'tolerations':[{'key':'foo','operator':'Exists','value':'bar'}],'containers':"
	    "[{'name':'c','image':'i'}]}",
	    E(INVALID, "spec.tolerations[0].operator", "value must be empty when `operator` is 'Exists'")),
	POD("TestValidatePodTemplateSpec/ephemeral containers",
	    "{'containers':[{'name':'c','image':'i'}],'ephemeralContainers':[{'name':'e','image':'i'}]}",
	    E(FORBIDDEN, "spec.ephemeralContainers", "ephemeral containers not allowed in pod template")),
	POD("TestValidateSecurityContext/privileged without escalation",
	    ONE(",'securityContext':{'privileged':true,'allowPrivilegeEscalation':false}"),
	    E(INVALID, C0 ".securityContext",
	      "cannot set `allowPrivilegeEscalation` to false and `privileged` to true")),
};

/* ---------------------------------------------------------------- batch */

#define JOB(name, spec, ...) ROW(name, true, "{'spec':" spec "}", __VA_ARGS__)
#define TMPL(restart) "'template':{'spec':{'restartPolicy':'" restart "','containers':" \
		      "[{'name':'c','image':'i'}]}}"

static const up_case batch[] = {
	JOB("TestValidateJob/spec.template.spec.restartPolicy: Required value", "{" TMPL("Always") "}",
	    E(REQUIRED, "spec.template.spec.restartPolicy", "valid values: \"OnFailure\", \"Never\"")),
	JOB("TestValidateJob/spec.template.spec.restartPolicy: Unsupported value", "{" TMPL("Invalid") "}",
	    E(UNSUPPORTED, "spec.template.spec.restartPolicy",
	      "supported values: \"Always\", \"OnFailure\", \"Never\""),
	    E(UNSUPPORTED, "spec.template.spec.restartPolicy",
	      "supported values: \"OnFailure\", \"Never\"")),
	JOB("TestValidateJob/spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only "
	    "\"Never\" is supported when podFailurePolicy is specified",
	    "{'podFailurePolicy':{'rules':[]}," TMPL("OnFailure") "}",
	    E(INVALID, "spec.template.spec.restartPolicy",
	      "only \"Never\" is supported when podFailurePolicy is specified")),
	JOB("TestValidateJob/spec.parallelism:must be greater than or equal to 0",
	    "{'parallelism':-1,'completions':1," TMPL("Never") "}",
	    E(INVALID, "spec.parallelism", "must be greater than or equal to 0")),
	JOB("TestValidateJob/spec.completions:must be greater than or equal to 0",
	    "{'completions':-1," TMPL("Never") "}",
	    E(INVALID, "spec.completions", "must be greater than or equal to 0")),
	JOB("TestValidateJob/spec.backoffLimit:must be greater than or equal to 0",
	    "{'backoffLimit':-1," TMPL("Never") "}",
	    E(INVALID, "spec.backoffLimit", "must be greater than or equal to 0")),
	JOB("TestValidateJob/spec.activeDeadlineSeconds:must be greater than or equal to 0",
	    "{'activeDeadlineSeconds':-1," TMPL("Never") "}",
	    E(INVALID, "spec.activeDeadlineSeconds", "must be greater than or equal to 0")),
	JOB("TestValidateJob/spec.ttlSecondsAfterFinished: must be greater than or equal to 0",
	    "{'ttlSecondsAfterFinished':-1," TMPL("Never") "}",
	    E(INVALID, "spec.ttlSecondsAfterFinished", "must be greater than or equal to 0")),
	JOB("TestValidateJob/spec.completions: Required value: when completion mode is Indexed",
	    "{'completionMode':'Indexed','parallelism':2," TMPL("Never") "}",
	    E(REQUIRED, "spec.completions", "when completion mode is Indexed")),
	JOB("TestValidateJob/spec.parallelism: must be less than or equal to 100000 when completion mode is Indexed",
	    "{'completionMode':'Indexed','completions':2,'parallelism':100001," TMPL("Never") "}",
	    E(INVALID, "spec.parallelism", "must be less than or equal to 100000 when completion mode is Indexed")),
	JOB("TestValidateJob/spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
	    "{'completionMode':'NonIndexed','backoffLimitPerIndex':1," TMPL("Never") "}",
	    E(INVALID, "spec.backoffLimitPerIndex", "requires indexed completion mode")),
	JOB("TestValidateJob/spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
	    "{'completions':2,'maxFailedIndexes':1," TMPL("Never") "}",
	    E(REQUIRED, "spec.backoffLimitPerIndex", "when maxFailedIndexes is specified")),
	JOB("TestValidateJob/spec.completionMode: Unsupported value",
	    "{'completionMode':'Sometimes'," TMPL("Never") "}",
	    E(UNSUPPORTED, "spec.completionMode", "supported values: \"NonIndexed\", \"Indexed\"")),
	/* JobSet fills an empty restartPolicy with OnFailure and an absent
	 * completionMode with Indexed (jobset_webhook.go Default) */
	ROW("JobSet defaults/restartPolicy and completionMode", true,
	    "{'spec':{'template':{'spec':{'containers':[{'name':'c','image':'i'}]}}}}", { 0 }),
	JOB("TestValidateJob/the Pod template's errors under spec.template",
	    "{'template':{'spec':{'restartPolicy':'Never','containers':[{'name':'c'}]}}}",
	    E(REQUIRED, "spec.template.spec.containers[0].image", NULL)),
};

int main(void)
{
	return UP_RUN("core validation", core) + UP_RUN("batch validation", batch);
}
