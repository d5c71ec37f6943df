/*
 * test_pod_containers.c — the container rules of kube-apiserver v1.32 the
 * strict profile checks in a runtime's Pod template and in what a TrainJob
 * writes into it (policy/pod/probes.c, containers.c, container_fields.c):
 * probes and lifecycle handlers, env valueFrom (fieldRef, resourceFieldRef,
 * the key of a configMapKeyRef/secretKeyRef), the image's whitespace,
 * recursiveReadOnly and mountPropagation, volumeDevices, the seccomp and AppArmor profiles
 * of a container's securityContext, its runAsUser/runAsGroup, and host port
 * conflicts. Each case is ported from Kubernetes'
 * pkg/apis/core/validation/validation_test.go under the Go test's name and
 * goes through tp_validate_runtime (a ClusterTrainingRuntime holding the
 * template) or tp_validate_trainjob (spec.trainer.env, spec.initializer),
 * wanting exactly the listed errors: type, path, value and the API server's
 * detail at the head of the text.
 *
 * Manifests are what a runtime holds, so what defaulting fills in before
 * validation counts as filled in: a probe's 0 thresholds and periods, an
 * httpGet's empty path and scheme, a fieldRef's empty apiVersion, the Pod's
 * terminationGracePeriodSeconds (30). v1.32's feature gates at their
 * defaults: PodLifecycleSleepAction on, PodLifecycleSleepActionAllowZero
 * off, RecursiveReadOnlyMounts on, InPlacePodVerticalScaling off (a
 * resizePolicy is dropped, not checked), ProcMountType off (a procMount is
 * forced to Default, not checked).
 */
#include "tests/unit/up_cases.h"

#include <stdio.h>

#define SP TP_PROFILE_STRICT
#define RT "spec.template.spec.replicatedJobs[0].template.spec.template.spec."

typedef struct want {
	tp_field_type type;
	const char *path;   /* under RT, or from the TrainJob when the row says so */
	const char *value;  /* as rendered, or NULL */
	const char *detail; /* the API server's; "" when it has none */
} want;

typedef struct row {
	const char *pod;    /* the runtime's Pod spec, single-quoted JSON */
	const char *tj;     /* or: a TrainJob's spec members after runtimeRef */
	want errs[8];       /* ends at the first with path NULL */
} row;

static cJSON *runtime_with(const char *pod)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		 "'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		 "[{'name':'node','template':{'metadata':{'labels':"
		 "{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		 "{'spec':%s}}}}]}}}}",
		 pod);
	return tt_jsq(buf);
}

#define GOOD_POD "{'containers':[{'name':'node','image':'pytorch'}]}"

/* The strict profile's answer to the runtime, or to a TrainJob of it. */
static tp_result *review(const row *r)
{
	cJSON *rt = runtime_with(r->pod ? r->pod : GOOD_POD);
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	if (!r->tj) {
		tp_options opt = { .profile = SP };
		assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, res), TP_OK);
		cJSON_Delete(rt);
		return res;
	}
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'},%s}}",
		 r->tj);
	cJSON *tj = tt_jsq(buf);
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, rt), TP_OK);
	tp_options opt = { .profile = SP, .store = store };
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	tp_store_free(store);
	cJSON_Delete(tj);
	return res;
}

static bool starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* One error against its want: the API server's detail comes first in the
 * text ("<detail>: <where>; <hint>"), or the text starts with where it is
 * when the API server has no detail (a rule of the TrainJob's own: the
 * detail alone). */
static bool matches(const tp_field_error *e, const want *w, bool trainjob)
{
	char path[512];
	snprintf(path, sizeof(path), "%s%s", trainjob ? "" : RT, w->path);
	const char *head = *w->detail ? w->detail : trainjob ? "" : "the Job.batch of every TrainJob";
	size_t n = strlen(head);
	return e->type == w->type && !strcmp(e->path, path) &&
	       (w->value ? e->value && !strcmp(e->value, w->value) : !e->value) &&
	       starts(e->detail, head) && (!*w->detail || !e->detail[n] || e->detail[n] == ':');
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
		if (!matches(tp_result_error_at(res, i), &r->errs[i], r->tj != NULL)) {
			tt_dump(res);
			fail_msg("error %zu: want %s %s: %s", i, r->errs[i].path,
				 r->errs[i].value ? r->errs[i].value : "(no value)", r->errs[i].detail);
		}
	tp_result_free(res);
}

#define ROW(name, pod, tj, ...) UP_ROW(name, run_row, (&(const row){ pod, tj, { __VA_ARGS__ } }))
#define POD(name, pod, ...) ROW(name, pod, NULL, __VA_ARGS__)
#define OK_POD(name, pod) ROW(name, pod, NULL, { 0 })
#define TJ(name, tj, ...) ROW(name, NULL, tj, __VA_ARGS__)
#define E(type, path, value, detail) { TP_FIELD_##type, path, value, detail }

/* The node container with members m; the Pod spec's own members p. */
#define NODE(m) "{'containers':[{'name':'node','image':'pytorch'" m "}]}"
#define NODE_P(m, p) "{'containers':[{'name':'node','image':'pytorch'" m "}]" p "}"
#define C0 "containers[0]"
#define EXEC "'exec':{'command':['true']}"

#define NONNEG "must be greater than or equal to 0"
#define PORT_RANGE "must be between 1 and 65535, inclusive"
#define ONE_HANDLER "may not specify more than 1 handler type"
#define SLEEP_RANGE(g) \
	"must be greater than 0 and less than terminationGracePeriodSeconds (" g "). Enable " \
	"AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."
#define FIELD_PATHS \
	"supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", " \
	"\"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", " \
	"\"status.podIP\", \"status.podIPs\""
#define RESOURCES \
	"supported values: \"limits.cpu\", \"limits.ephemeral-storage\", \"limits.memory\", " \
	"\"requests.cpu\", \"requests.ephemeral-storage\", \"requests.memory\""
#define FROM0 C0 ".env[0].valueFrom"

static const up_case probes[] = {
	/* a valid probe of each kind and lifecycle hooks of each kind stay allowed
	 * (TestValidateHandler/successCases, TestValidateSleepAction/valid setting) */
	OK_POD("TestValidateHandler/successCases",
	       NODE(",'ports':[{'name':'http','containerPort':8080}],"
		    "'livenessProbe':{'httpGet':{'port':'http','httpHeaders':[{'name':'X-Forwarded-For',"
		    "'value':'1.2.3.4'},{'name':'X-Forwarded-For','value':'5.6.7.8'}]},"
		    "'terminationGracePeriodSeconds':1},"
		    "'readinessProbe':{'tcpSocket':{'port':8080},'initialDelaySeconds':10,"
		    "'periodSeconds':10,'successThreshold':3,'failureThreshold':10},"
		    "'startupProbe':{'grpc':{'port':65535},'successThreshold':1},"
		    "'lifecycle':{'postStart':{" EXEC "},'preStop':{'sleep':{'seconds':5}}}")),
	OK_POD("TestValidateHandler/successCases httpGet with path, host and scheme",
	       NODE(",'livenessProbe':{'httpGet':{'path':'/foo','port':65535,'host':'host',"
		    "'scheme':'HTTPS'}},'lifecycle':{'preStop':{'httpGet':{'port':1}}}")),
	/* a sidecar may carry probes: they are checked as a container's are */
	OK_POD("TestValidateInitContainers/successCases restartable init container probes",
	       NODE_P("", ",'initContainers':[{'name':'sidecar','image':'busybox','restartPolicy':"
			  "'Always','livenessProbe':{" EXEC "},'lifecycle':{'preStop':{" EXEC "}}}]")),

	POD("TestValidateContainers/invalid liveness probe, no action.", NODE(",'livenessProbe':{}"),
	    E(REQUIRED, C0 ".livenessProbe", NULL, "must specify a handler type")),
	POD("TestValidateHandler/errorCases more than 1 handler type",
	    NODE(",'readinessProbe':{" EXEC ",'httpGet':{'port':80},'tcpSocket':{'port':80}}"),
	    E(FORBIDDEN, C0 ".readinessProbe.httpGet", NULL, ONE_HANDLER),
	    E(FORBIDDEN, C0 ".readinessProbe.tcpSocket", NULL, ONE_HANDLER)),
	POD("TestValidateContainers/invalid liveness probe, successThreshold != 1",
	    NODE(",'livenessProbe':{" EXEC ",'successThreshold':2}"),
	    E(INVALID, C0 ".livenessProbe.successThreshold", "2", "must be 1")),
	POD("TestValidateContainers/invalid startup probe, successThreshold != 1",
	    NODE(",'startupProbe':{" EXEC ",'successThreshold':2}"),
	    E(INVALID, C0 ".startupProbe.successThreshold", "2", "must be 1")),
	POD("TestValidateContainers/invalid liveness probe, negative numbers",
	    NODE(",'livenessProbe':{'tcpSocket':{'port':80},'initialDelaySeconds':-1,"
		 "'timeoutSeconds':-1,'periodSeconds':-1,'successThreshold':-1,'failureThreshold':-1,"
		 "'terminationGracePeriodSeconds':-1}"),
	    E(INVALID, C0 ".livenessProbe.initialDelaySeconds", "-1", NONNEG),
	    E(INVALID, C0 ".livenessProbe.timeoutSeconds", "-1", NONNEG),
	    E(INVALID, C0 ".livenessProbe.periodSeconds", "-1", NONNEG),
	    E(INVALID, C0 ".livenessProbe.successThreshold", "-1", NONNEG),
	    E(INVALID, C0 ".livenessProbe.failureThreshold", "-1", NONNEG),
	    E(INVALID, C0 ".livenessProbe.terminationGracePeriodSeconds", "-1",
	      "must be greater than 0"),
	    E(INVALID, C0 ".livenessProbe.successThreshold", "-1", "must be 1")),
	POD("TestValidateContainers/invalid readiness probe, negative numbers",
	    NODE(",'readinessProbe':{'tcpSocket':{'port':80},'initialDelaySeconds':-1,"
		 "'timeoutSeconds':-1,'periodSeconds':-1,'successThreshold':-1,'failureThreshold':-1,"
		 "'terminationGracePeriodSeconds':-1}"),
	    E(INVALID, C0 ".readinessProbe.initialDelaySeconds", "-1", NONNEG),
	    E(INVALID, C0 ".readinessProbe.timeoutSeconds", "-1", NONNEG),
	    E(INVALID, C0 ".readinessProbe.periodSeconds", "-1", NONNEG),
	    E(INVALID, C0 ".readinessProbe.successThreshold", "-1", NONNEG),
	    E(INVALID, C0 ".readinessProbe.failureThreshold", "-1", NONNEG),
	    E(INVALID, C0 ".readinessProbe.terminationGracePeriodSeconds", "-1",
	      "must be greater than 0"),
	    E(INVALID, C0 ".readinessProbe.terminationGracePeriodSeconds", "-1",
	      "must not be set for readinessProbes")),
	POD("TestValidateContainers/invalid readiness probe, terminationGracePeriodSeconds set.",
	    NODE(",'readinessProbe':{'httpGet':{'port':80},'terminationGracePeriodSeconds':10}"),
	    E(INVALID, C0 ".readinessProbe.terminationGracePeriodSeconds", "10",
	      "must not be set for readinessProbes")),
	POD("Test_validateProbe/terminationGracePeriodSeconds 0",
	    NODE(",'startupProbe':{" EXEC ",'terminationGracePeriodSeconds':0}"),
	    E(INVALID, C0 ".startupProbe.terminationGracePeriodSeconds", "0",
	      "must be greater than 0")),
	POD("TestValidateContainers/invalid liveness probe, no tcp socket port.",
	    NODE(",'livenessProbe':{'tcpSocket':{}}"),
	    E(INVALID, C0 ".livenessProbe.tcpSocket.port", "0", PORT_RANGE)),
	POD("TestValidateHandler/errorCases httpGet port 65536",
	    NODE(",'livenessProbe':{'httpGet':{'path':'/foo','port':65536,'host':'host'}}"),
	    E(INVALID, C0 ".livenessProbe.httpGet.port", "65536", PORT_RANGE)),
	POD("TestValidateHandler/errorCases httpGet named port not a port name",
	    NODE(",'livenessProbe':{'httpGet':{'port':'bad_name'}}"),
	    E(INVALID, C0 ".livenessProbe.httpGet.port", "\"bad_name\"",
	      "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")),
	POD("TestValidateHandler/errorCases httpGet empty port name",
	    NODE(",'livenessProbe':{'httpGet':{'port':''}}"),
	    E(INVALID, C0 ".livenessProbe.httpGet.port", "\"\"",
	      "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
	    E(INVALID, C0 ".livenessProbe.httpGet.port", "\"\"",
	      "must contain at least one letter (a-z)")),
	POD("TestValidateHandler/errorCases grpc port 0", NODE(",'livenessProbe':{'grpc':{'port':0}}"),
	    E(INVALID, C0 ".livenessProbe.grpc.port", "0", PORT_RANGE)),
	POD("TestValidateHandler/errorCases http header name",
	    NODE(",'readinessProbe':{'httpGet':{'port':'port','httpHeaders':"
		 "[{'name':'X_Forwarded_For','value':'foo.example.com'}]}}"),
	    E(INVALID, C0 ".readinessProbe.httpGet.httpHeaders", "\"X_Forwarded_For\"",
	      "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. "
	      "'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')")),
	POD("TestValidateHandler/errorCases empty exec command",
	    NODE(",'livenessProbe':{'exec':{'command':[]}}"),
	    E(REQUIRED, C0 ".livenessProbe.exec.command", NULL, "")),
	POD("TestValidateContainers/invalid lifecycle, no action.",
	    NODE(",'lifecycle':{'preStop':{}}"),
	    E(REQUIRED, C0 ".lifecycle.preStop", NULL, "must specify a handler type")),
	POD("TestValidateContainers/invalid lifecycle, no exec command.",
	    NODE(",'lifecycle':{'postStart':{'exec':{}}}"),
	    E(REQUIRED, C0 ".lifecycle.postStart.exec.command", NULL, "")),
	POD("TestValidateContainers/invalid lifecycle, no http scheme.",
	    NODE(",'lifecycle':{'preStop':{'httpGet':{'port':80,'scheme':'ftp'}}}"),
	    E(UNSUPPORTED, C0 ".lifecycle.preStop.httpGet.scheme", "\"ftp\"",
	      "supported values: \"HTTP\", \"HTTPS\"")),
	POD("TestValidateContainers/invalid lifecycle, zero tcp socket port.",
	    NODE(",'lifecycle':{'preStop':{'tcpSocket':{'port':0}}}"),
	    E(INVALID, C0 ".lifecycle.preStop.tcpSocket.port", "0", PORT_RANGE)),
	POD("TestValidateSleepAction/negative seconds",
	    NODE(",'lifecycle':{'preStop':{'sleep':{'seconds':-1}}}"),
	    E(INVALID, C0 ".lifecycle.preStop.sleep", "-1", SLEEP_RANGE("30"))),
	POD("TestValidateSleepAction/longer than gracePeriod",
	    NODE_P(",'lifecycle':{'preStop':{'sleep':{'seconds':5}}}",
		   ",'terminationGracePeriodSeconds':3"),
	    E(INVALID, C0 ".lifecycle.preStop.sleep", "5", SLEEP_RANGE("3"))),
	POD("TestValidateSleepAction/sleep duration of zero with zero value feature gate disabled",
	    NODE(",'lifecycle':{'postStart':{'sleep':{'seconds':0}}}"),
	    E(INVALID, C0 ".lifecycle.postStart.sleep", "0", SLEEP_RANGE("30"))),
	POD("TestValidateInitContainers/restartable init container with invalid probe",
	    NODE_P("", ",'initContainers':[{'name':'sidecar','image':'busybox','restartPolicy':"
		       "'Always','startupProbe':{'tcpSocket':{'port':'bad_name'}}}]"),
	    E(INVALID, "initContainers[0].startupProbe.tcpSocket.port", "\"bad_name\"",
	      "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")),
};

/* spec.runtimePatches giving the node container members m. */
#define PATCH(m) \
	"'runtimePatches':[{'manager':'kueue.x-k8s.io/m','trainingRuntimeSpec':{'template':" \
	"{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':" \
	"{'containers':[{'name':'node'," m "}]}}}}}]}}}}]"

static const up_case env[] = {
	OK_POD("TestValidateEnv/successCase",
	       NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':"
		    "'metadata.annotations[\\'key\\']'}}},{'name':'B','valueFrom':{'fieldRef':"
		    "{'apiVersion':'v1','fieldPath':'metadata.labels[\\'key\\']'}}},"
		    "{'name':'C','valueFrom':{'fieldRef':{'fieldPath':'status.podIPs'}}},"
		    "{'name':'D','valueFrom':{'fieldRef':{'fieldPath':'spec.host'}}},"
		    "{'name':'E','valueFrom':{'resourceFieldRef':{'resource':'limits.cpu',"
		    "'divisor':'1m'}}},{'name':'F','valueFrom':{'resourceFieldRef':"
		    "{'resource':'requests.memory','divisor':'1Mi'}}},{'name':'G','valueFrom':"
		    "{'resourceFieldRef':{'resource':'requests.hugepages-2Mi'}}},{'name':'H',"
		    "'valueFrom':{'configMapKeyRef':{'name':'cm','key':'some.key_NAME-1'}}}]")),
	POD("TestValidateEnv/unsupported fieldPath",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':'status.phase'}}}]"),
	    E(UNSUPPORTED, FROM0 ".fieldRef.fieldPath", "\"status.phase\"", FIELD_PATHS)),
	POD("TestValidateEnv/metadata.labels without subscript",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':'metadata.labels'}}}]"),
	    E(UNSUPPORTED, FROM0 ".fieldRef.fieldPath", "\"metadata.labels\"", FIELD_PATHS)),
	POD("TestValidateEnv/invalid fieldPath",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':'metadata.whoops'}}}]"),
	    E(INVALID, FROM0 ".fieldRef.fieldPath", "\"metadata.whoops\"",
	      "error converting fieldPath: field label not supported: metadata.whoops")),
	POD("TestValidateEnv/metadata.name with subscript",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':"
		 "'metadata.name[\\'key\\']'}}}]"),
	    E(INVALID, FROM0 ".fieldRef.fieldPath", "\"metadata.name['key']\"",
	      "error converting fieldPath: field label does not support subscript: "
	      "metadata.name['key']")),
	POD("TestValidateEnv/missing FieldPath on ObjectFieldSelector",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'apiVersion':'v1'}}}]"),
	    E(REQUIRED, FROM0 ".fieldRef.fieldPath", NULL, "")),
	POD("TestValidateEnv/unsupported pod version",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'apiVersion':'v2','fieldPath':"
		 "'metadata.name'}}}]"),
	    E(INVALID, FROM0 ".fieldRef.fieldPath", "\"metadata.name\"",
	      "error converting fieldPath: unsupported pod version: v2")),
	POD("TestValidateEnv/metadata.labels with invalid key",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':"
		 "'metadata.labels[\\'Www.k8s.io/test\\']'}}}]"),
	    E(INVALID, FROM0 ".fieldRef", "\"Www.k8s.io/test\"",
	      "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
	      "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
	      "'example.com', regex used for validation is "
	      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
	POD("TestValidateEnv/metadata.annotations with invalid key",
	    NODE(",'env':[{'name':'A','valueFrom':{'fieldRef':{'fieldPath':"
		 "'metadata.annotations[\\'invalid~key\\']'}}}]"),
	    E(INVALID, FROM0 ".fieldRef", "\"invalid~key\"",
	      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
	      "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
	      "'123-abc', regex used for validation is "
	      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
	POD("TestHugePagesEnv/unsupported resource",
	    NODE(",'env':[{'name':'A','valueFrom':{'resourceFieldRef':{'resource':"
		 "'limits.nvidia.com/gpu'}}}]"),
	    E(UNSUPPORTED, FROM0 ".resourceFieldRef.resource", "\"limits.nvidia.com/gpu\"",
	      RESOURCES)),
	POD("TestValidateEnv/missing resource on ResourceFieldSelector",
	    NODE(",'env':[{'name':'A','valueFrom':{'resourceFieldRef':{'containerName':'node'}}}]"),
	    E(REQUIRED, FROM0 ".resourceFieldRef.resource", NULL, "")),
	POD("TestLocalStorageEnvWithFeatureGate/invalid cpu divisor",
	    NODE(",'env':[{'name':'A','valueFrom':{'resourceFieldRef':{'resource':'limits.cpu',"
		 "'divisor':'2m'}}}]"),
	    E(INVALID, FROM0 ".resourceFieldRef.divisor", "\"limits.cpu\"",
	      "only divisor's values 1m and 1 are supported with the cpu resource")),
	POD("TestLocalStorageEnvWithFeatureGate/invalid ephemeral-storage divisor",
	    NODE(",'env':[{'name':'A','valueFrom':{'resourceFieldRef':{'resource':"
		 "'requests.ephemeral-storage','divisor':'3Gi'}}}]"),
	    E(INVALID, FROM0 ".resourceFieldRef.divisor", "\"requests.ephemeral-storage\"",
	      "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are "
	      "supported with the local ephemeral storage resource")),
	POD("TestHugePagesEnv/invalid hugepages divisor",
	    NODE(",'env':[{'name':'A','valueFrom':{'resourceFieldRef':{'resource':"
		 "'limits.hugepages-1Gi','divisor':'2Mi'}}}]"),
	    E(INVALID, FROM0 ".resourceFieldRef.divisor", "\"limits.hugepages-1Gi\"",
	      "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are "
	      "supported with the hugepages resource")),
	POD("TestValidateEnv/valueFrom.configMapKeyRef.key invalid",
	    NODE(",'env':[{'name':'A','valueFrom':{'configMapKeyRef':{'name':'cm','key':'a b'}}}]"),
	    E(INVALID, FROM0 ".configMapKeyRef.key", "\"a b\"",
	      "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
	      "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
	      "'[-._a-zA-Z0-9]+')")),
	POD("TestValidateEnv/valueFrom.secretKeyRef.key starts with ..",
	    NODE(",'env':[{'name':'A','valueFrom':{'secretKeyRef':{'name':'s','key':'..a'}}}]"),
	    E(INVALID, FROM0 ".secretKeyRef.key", "\"..a\"", "must not start with '..'")),
	/* the TrainJob's own env: at the TrainJob's field, naming the Job's */
	TJ("TestValidateEnv/unsupported fieldPath in spec.trainer.env",
	   "'trainer':{'env':[{'name':'PHASE','valueFrom':{'fieldRef':{'fieldPath':"
	   "'status.phase'}}}]}",
	   E(UNSUPPORTED, "spec.trainer.env", "\"status.phase\"", FIELD_PATHS)),
	TJ("TestHugePagesEnv/unsupported resource in spec.trainer.env",
	   "'trainer':{'env':[{'name':'GPUS','valueFrom':{'resourceFieldRef':{'resource':"
	   "'limits.nvidia.com/gpu'}}}]}",
	   E(UNSUPPORTED, "spec.trainer.env", "\"limits.nvidia.com/gpu\"", RESOURCES)),
	TJ("TestValidateEnv/unsupported fieldPath in spec.initializer",
	   "'initializer':{'dataset':{'storageUri':'hf://x','env':[{'name':'P','valueFrom':"
	   "{'fieldRef':{'fieldPath':'status.phase'}}}]}}",
	   /* (this runtime has no dataset-initializer job to run it) */
	   E(INVALID, "spec.runtimeRef", "{\"name\":\"rt\"}",
	     "must have dataset-initializer job when trainJob is configured with input "
	     "datasetConfig"),
	   E(UNSUPPORTED, "spec.initializer.dataset.env[0].valueFrom.fieldRef.fieldPath",
	     "\"status.phase\"", FIELD_PATHS)),
	/* what spec.runtimePatches brings in: at spec.runtimePatches */
	TJ("TestValidateContainers/invalid liveness probe, no action. (runtimePatches)",
	   PATCH("'livenessProbe':{}"),
	   E(REQUIRED, "spec.runtimePatches", NULL, "must specify a handler type")),
	TJ("TestValidateSecurityContext/negative RunAsUser (runtimePatches)",
	   PATCH("'securityContext':{'runAsUser':-1}"),
	   E(INVALID, "spec.runtimePatches", "-1", "must be between 0 and 2147483647, inclusive")),
	TJ("TestValidateEnv/successCase in spec.trainer.env",
	   "'trainer':{'env':[{'name':'POD','valueFrom':{'fieldRef':{'fieldPath':"
	   "'metadata.name'}}},{'name':'CPU','valueFrom':{'resourceFieldRef':{'resource':"
	   "'limits.cpu','divisor':'1'}}}]}",
	   { 0 }),
};

#define VOL ",'volumes':[{'name':'data','emptyDir':{}}]"
#define SC(m) NODE(",'securityContext':{" m "}")
#define SECCOMP C0 ".securityContext.seccompProfile"
#define APPARMOR C0 ".securityContext.appArmorProfile"
#define WIN C0 ".securityContext.windowsOptions"

/* The volumes of TestAlphaValidateVolumeDevices: two claims, a hostPath, an
 * ephemeral volume; DEVS: the node container's volumeDevices. */
#define BLOCK_VOLS \
	",'volumes':[{'name':'abc','persistentVolumeClaim':{'claimName':'testclaim1'}}," \
	"{'name':'abc-123','persistentVolumeClaim':{'claimName':'testclaim2'}},{'name':'def'," \
	"'hostPath':{'path':'/foo/baz'}},{'name':'ephemeral','ephemeral':{'volumeClaimTemplate':" \
	"{'spec':{'accessModes':['ReadWriteOnce'],'resources':{'requests':{'storage':'10G'}}}}}}]"
#define DEVS(d) ",'volumeDevices':[" d "]"

static const up_case others[] = {
	OK_POD("TestValidateVolumeMounts/success recursiveReadOnly",
	       NODE_P(",'volumeMounts':[{'name':'data','mountPath':'/a','readOnly':true,"
		      "'recursiveReadOnly':'Enabled'},{'name':'data','mountPath':'/b','readOnly':true,"
		      "'recursiveReadOnly':'IfPossible','mountPropagation':'None'},{'name':'data',"
		      "'mountPath':'/c','recursiveReadOnly':'Disabled','mountPropagation':"
		      "'HostToContainer'}]",
		      VOL)),
	POD("TestValidateVolumeMounts/rro but not ro",
	    NODE_P(",'volumeMounts':[{'name':'data','mountPath':'/a','recursiveReadOnly':'Enabled'}]",
		   VOL),
	    E(FORBIDDEN, C0 ".volumeMounts.recursiveReadOnly", NULL,
	      "may only be specified when readOnly is true")),
	POD("TestValidateVolumeMounts/rro with incompatible propagation",
	    NODE_P(",'volumeMounts':[{'name':'data','mountPath':'/a','readOnly':true,"
		   "'recursiveReadOnly':'IfPossible','mountPropagation':'HostToContainer'}]",
		   VOL),
	    E(FORBIDDEN, C0 ".volumeMounts.recursiveReadOnly", NULL,
	      "may only be specified when mountPropagation is None or not specified")),
	POD("TestValidateVolumeMounts/unsupported recursiveReadOnly",
	    NODE_P(",'volumeMounts':[{'name':'data','mountPath':'/a','readOnly':true,"
		   "'recursiveReadOnly':'Always'}]",
		   VOL),
	    E(UNSUPPORTED, C0 ".volumeMounts.recursiveReadOnly", "\"Always\"",
	      "supported values: \"Disabled\", \"Enabled\", \"IfPossible\"")),
	POD("TestValidateMountPropagation/invalid mode",
	    NODE_P(",'volumeMounts':[{'name':'data','mountPath':'/a','mountPropagation':'Foo'}]", VOL),
	    E(UNSUPPORTED, C0 ".volumeMounts.mountPropagation", "\"Foo\"",
	      "supported values: \"Bidirectional\", \"HostToContainer\", \"None\"")),
	POD("TestValidateMountPropagation/Bidirectional in non-privileged container",
	    NODE_P(",'volumeMounts':[{'name':'data','mountPath':'/a','mountPropagation':"
		   "'Bidirectional'}]",
		   VOL),
	    E(FORBIDDEN, C0 ".volumeMounts.mountPropagation", NULL,
	      "Bidirectional mount propagation is available only to privileged containers")),
	OK_POD("TestValidateMountPropagation/Bidirectional in privileged container",
	       NODE_P(",'securityContext':{'privileged':true},'volumeMounts':[{'name':'data',"
		      "'mountPath':'/a','mountPropagation':'Bidirectional'}]",
		      VOL)),

	/* TestAlphaValidateVolumeDevices: block devices of claims only */
	OK_POD("TestAlphaValidateVolumeDevices/successCase",
	       NODE_P(DEVS("{'name':'abc','devicePath':'/foo'},{'name':'abc-123','devicePath':"
			   "'/usr/share/test'},{'name':'ephemeral','devicePath':'/disk'}")
		      ",'volumeMounts':[{'name':'def','mountPath':'/foofoo'},{'name':'def',"
		      "'mountPath':'/foo/usr/share/test'}]",
		      BLOCK_VOLS)),
	POD("TestAlphaValidateVolumeDevices/empty name",
	    NODE_P(DEVS("{'name':'','devicePath':'/foo'}"), BLOCK_VOLS),
	    E(REQUIRED, C0 ".volumeDevices[0].name", NULL, ""),
	    E(NOT_FOUND, C0 ".volumeDevices[0].name", "\"\"", "")),
	POD("TestAlphaValidateVolumeDevices/duplicate name",
	    NODE_P(DEVS("{'name':'abc','devicePath':'/foo'},{'name':'abc','devicePath':'/foo/bar'}"),
		   BLOCK_VOLS),
	    E(INVALID, C0 ".volumeDevices[1].name", "\"abc\"", "must be unique")),
	POD("TestAlphaValidateVolumeDevices/name not found",
	    NODE_P(DEVS("{'name':'not-found','devicePath':'/usr/share/test'}"), BLOCK_VOLS),
	    E(NOT_FOUND, C0 ".volumeDevices[0].name", "\"not-found\"", "")),
	POD("TestAlphaValidateVolumeDevices/name found but invalid source",
	    NODE_P(DEVS("{'name':'def','devicePath':'/usr/share/test'}"), BLOCK_VOLS),
	    E(INVALID, C0 ".volumeDevices[0].name", "\"def\"",
	      "can only use volume source type of PersistentVolumeClaim or Ephemeral for block "
	      "mode")),
	POD("TestAlphaValidateVolumeDevices/empty devicepath",
	    NODE_P(DEVS("{'name':'abc','devicePath':''}"), BLOCK_VOLS),
	    E(REQUIRED, C0 ".volumeDevices[0].devicePath", NULL, "")),
	POD("TestAlphaValidateVolumeDevices/duplicate devicepath",
	    NODE_P(DEVS("{'name':'abc','devicePath':'/foo'},{'name':'abc-123','devicePath':'/foo'}"),
		   BLOCK_VOLS),
	    E(INVALID, C0 ".volumeDevices[1].devicePath", "\"/foo\"", "must be unique")),
	POD("TestAlphaValidateVolumeDevices/no backsteps",
	    NODE_P(DEVS("{'name':'abc','devicePath':'/baz/../'}"), BLOCK_VOLS),
	    E(INVALID, C0 ".volumeDevices[0].devicePath", "\"/baz/../\"",
	      "can not contain backsteps ('..')")),
	POD("TestAlphaValidateVolumeDevices/name exists in volumemounts",
	    NODE_P(DEVS("{'name':'abc','devicePath':'/dev/xvda'}")
		   ",'volumeMounts':[{'name':'abc','mountPath':'/foo'}]",
		   BLOCK_VOLS),
	    E(INVALID, C0 ".volumeMounts[0].name", "\"abc\"", "must not already exist in volumeDevices"),
	    E(INVALID, C0 ".volumeDevices[0].name", "\"abc\"", "must not already exist in volumeMounts")),
	POD("TestAlphaValidateVolumeDevices/path exists in volumemounts",
	    NODE_P(DEVS("{'name':'abc','devicePath':'/this/path/exists'}")
		   ",'volumeMounts':[{'name':'abc-123','mountPath':'/this/path/exists'}]",
		   BLOCK_VOLS),
	    E(INVALID, C0 ".volumeMounts[0].mountPath", "\"/this/path/exists\"",
	      "must not already exist as a path in volumeDevices"),
	    E(INVALID, C0 ".volumeDevices[0].devicePath", "\"/this/path/exists\"",
	      "must not already exist as a path in volumeMounts")),

	/* validateContainerOnlyForPod: the Job's Pods are refused */
	POD("TestValidatePod/image leading and trailing whitespace",
	    "{'containers':[{'name':'node','image':' pytorch '}]}",
	    E(INVALID, C0 ".image", "\" pytorch \"", "must not have leading or trailing whitespace")),

	POD("TestValidateSecurityContext/negative RunAsUser",
	    SC("'runAsUser':-1,'runAsGroup':-1"),
	    E(INVALID, C0 ".securityContext.runAsUser", "-1",
	      "must be between 0 and 2147483647, inclusive"),
	    E(INVALID, C0 ".securityContext.runAsGroup", "-1",
	      "must be between 0 and 2147483647, inclusive")),
	OK_POD("TestValidateSecurityContext/seccomp and AppArmor profiles",
	       SC("'seccompProfile':{'type':'Localhost','localhostProfile':'profiles/audit.json'},"
		  "'appArmorProfile':{'type':'Localhost','localhostProfile':'k8s-apparmor'}")),
	POD("TestValidatePodTemplateSpecSeccomp/Localhost without its profile",
	    SC("'seccompProfile':{'type':'Localhost'}"),
	    E(REQUIRED, SECCOMP ".localhostProfile", NULL,
	      "must be set when seccomp type is Localhost")),
	POD("TestValidatePodTemplateSpecSeccomp/no type",
	    SC("'seccompProfile':{}"),
	    E(REQUIRED, SECCOMP ".type", NULL, "type is required when seccompProfile is set")),
	POD("TestValidatePodTemplateSpecSeccomp/unsupported type",
	    SC("'seccompProfile':{'type':'Default'}"),
	    E(UNSUPPORTED, SECCOMP ".type", "\"Default\"",
	      "supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"")),
	POD("TestValidatePodTemplateSpecSeccomp/localhostProfile with another type",
	    SC("'seccompProfile':{'type':'RuntimeDefault','localhostProfile':'a.json'}"),
	    E(INVALID, SECCOMP ".localhostProfile",
	      "{\"type\":\"RuntimeDefault\",\"localhostProfile\":\"a.json\"}",
	      "can only be set when seccomp type is Localhost")),
	POD("TestValidatePodTemplateSpecSeccomp/localhostProfile with backsteps",
	    SC("'seccompProfile':{'type':'Localhost','localhostProfile':'../a.json'}"),
	    E(INVALID, SECCOMP ".localhostProfile", "\"../a.json\"", "must not contain '..'")),
	POD("TestValidatePodTemplateSpecSeccomp/absolute localhostProfile",
	    SC("'seccompProfile':{'type':'Localhost','localhostProfile':'/a.json'}"),
	    E(INVALID, SECCOMP ".localhostProfile", "\"/a.json\"", "must be a relative path")),
	POD("TestValidateAppArmorProfileFormat/Localhost without its profile",
	    SC("'appArmorProfile':{'type':'Localhost'}"),
	    E(REQUIRED, APPARMOR ".localhostProfile", NULL,
	      "must be set when AppArmor type is Localhost")),
	POD("TestValidateAppArmorProfileFormat/padded localhostProfile",
	    SC("'appArmorProfile':{'type':'Localhost','localhostProfile':' p '}"),
	    E(INVALID, APPARMOR ".localhostProfile", "\" p \"", "must not be padded with whitespace")),
	POD("TestValidateAppArmorProfileFormat/localhostProfile with another type",
	    SC("'appArmorProfile':{'type':'RuntimeDefault','localhostProfile':'p'}"),
	    E(INVALID, APPARMOR ".localhostProfile", "\"p\"",
	      "can only be set when AppArmor type is Localhost")),
	POD("TestValidateAppArmorProfileFormat/no type", SC("'appArmorProfile':{}"),
	    E(REQUIRED, APPARMOR ".type", NULL, "type is required when appArmorProfile is set")),
	POD("TestValidateAppArmorProfileFormat/unsupported type",
	    SC("'appArmorProfile':{'type':'Default'}"),
	    E(UNSUPPORTED, APPARMOR ".type", "\"Default\"",
	      "supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"")),
	OK_POD("TestValidateWindowsSecurityContextOptions/a valid input",
	       SC("'windowsOptions':{'gmsaCredentialSpecName':'dummy-gmsa-crep-spec-name',"
		  "'gmsaCredentialSpec':'dummy-gmsa-crep-spec-contents','runAsUserName':"
		  "'Network Service\\\\Container. User'}")),
	OK_POD("TestValidateWindowsSecurityContextOptions/a valid RunAsUserName with DNS Domain",
	       SC("'windowsOptions':{'runAsUserName':'fOofOofOo.liSH\\\\Container. User'}")),
	POD("TestValidateWindowsSecurityContextOptions/a GMSA cred spec name that is not a valid "
	    "resource name",
	    SC("'windowsOptions':{'gmsaCredentialSpecName':'not_a-valid-gmsa-crep-spec-name'}"),
	    E(INVALID, WIN ".gmsaCredentialSpecName", "\"not_a-valid-gmsa-crep-spec-name\"",
	      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
	      "'-' or '.', and must start and end with an alphanumeric character (e.g. "
	      "'example.com', regex used for validation is "
	      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
	POD("TestValidateWindowsSecurityContextOptions/empty GMSA cred spec contents",
	    SC("'windowsOptions':{'gmsaCredentialSpec':''}"),
	    E(INVALID, WIN ".gmsaCredentialSpec", "\"\"",
	      "gmsaCredentialSpec cannot be an empty string")),
	POD("TestValidateWindowsSecurityContextOptions/an empty RunAsUserName",
	    SC("'windowsOptions':{'runAsUserName':''}"),
	    E(INVALID, WIN ".runAsUserName", "\"\"", "runAsUserName cannot be an empty string")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing a control character",
	    SC("'windowsOptions':{'runAsUserName':'Container\\tUser'}"),
	    E(INVALID, WIN ".runAsUserName", "\"Container\\tUser\"",
	      "runAsUserName cannot contain control characters")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing too many backslashes",
	    SC("'windowsOptions':{'runAsUserName':'Container\\\\Foo\\\\Lish'}"),
	    E(INVALID, WIN ".runAsUserName", "\"Container\\\\Foo\\\\Lish\"",
	      "runAsUserName cannot contain more than one backslash")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing backslash but empty "
	    "Domain",
	    SC("'windowsOptions':{'runAsUserName':'\\\\User'}"),
	    E(INVALID, WIN ".runAsUserName", "\"\\\\User\"",
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing backslash but empty "
	    "User",
	    /* (\\u005c: a backslash tt_jsq would read before the quote as \\') */
	    SC("'windowsOptions':{'runAsUserName':'Container\\u005c'}"),
	    E(INVALID, WIN ".runAsUserName", "\"Container\\\\\"",
	      "runAsUserName's User cannot be empty")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName's NetBios Domain is too long",
	    SC("'windowsOptions':{'runAsUserName':'NetBios aaaaaaaa\\\\user'}"),
	    E(INVALID, WIN ".runAsUserName", "\"NetBios aaaaaaaa\\\\user\"",
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName's User cannot contain only "
	    "spaces or periods",
	    SC("'windowsOptions':{'runAsUserName':'... ...'}"),
	    E(INVALID, WIN ".runAsUserName", "\"... ...\"",
	      "runAsUserName's User cannot contain only periods or spaces")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName's NetBios Domain cannot start "
	    "with a dot",
	    SC("'windowsOptions':{'runAsUserName':'.FooLish\\\\User'}"),
	    E(INVALID, WIN ".runAsUserName", "\".FooLish\\\\User\"",
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName's DNS Domain cannot contain "
	    "invalid characters",
	    SC("'windowsOptions':{'runAsUserName':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com-\\\\user'}"),
	    E(INVALID, WIN ".runAsUserName", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com-\\\\user\"",
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	POD("TestValidateWindowsSecurityContextOptions/RunAsUserName's User cannot contain invalid "
	    "characters",
	    SC("'windowsOptions':{'runAsUserName':'Container/User'}"),
	    E(INVALID, WIN ".runAsUserName", "\"Container/User\"",
	      "runAsUserName's User cannot contain the following characters: "
	      "\"/\\:;|=,+*?<>@[]")),
	/* ProcMountType is off in v1.32: a procMount is forced to Default
	 * (pkg/api/pod/util.go dropDisabledProcMountField), never checked */
	OK_POD("dropDisabledProcMountField/unknown procMount with the gate off",
	       SC("'procMount':'Bogus'")),

	POD("TestValidateContainers/host port not unique",
	    "{'containers':[{'name':'node','image':'pytorch','ports':[{'containerPort':80,"
	    "'hostPort':80}]},{'name':'def','image':'i','ports':[{'containerPort':81,"
	    "'hostPort':80,'protocol':'TCP'}]}]}",
	    E(DUPLICATE, "containers[1].ports[0].hostPort", "\"TCP//80\"", "")),
	OK_POD("AccumulateUniqueHostPorts/other protocol or host IP",
	       "{'containers':[{'name':'node','image':'pytorch','ports':[{'containerPort':80,"
	       "'hostPort':80},{'containerPort':81,'hostPort':80,'protocol':'UDP'},"
	       "{'containerPort':82,'hostPort':80,'hostIP':'10.0.0.1'}]}],'initContainers':"
	       "[{'name':'init','image':'i','ports':[{'containerPort':80,'hostPort':80}]}]}"),
	/* init containers run one by one: each against itself only, at
	 * initContainers[0] whichever it is (upstream passes the list's path and
	 * a one-container list) */
	POD("TestValidateInitContainers/host port not unique within one init container",
	    "{'containers':[{'name':'node','image':'pytorch'}],'initContainers':[{'name':'a',"
	    "'image':'i'},{'name':'b','image':'i','ports':[{'containerPort':80,'hostPort':90},"
	    "{'containerPort':81,'hostPort':90}]}]}",
	    E(DUPLICATE, "initContainers[0].ports[1].hostPort", "\"TCP//90\"", "")),
	/* hostNetwork: the Pod's defaulting makes each hostPort its containerPort */
	POD("AccumulateUniqueHostPorts/hostNetwork defaults hostPort to containerPort",
	    "{'hostNetwork':true,'containers':[{'name':'node','image':'pytorch','ports':"
	    "[{'containerPort':29500,'hostPort':29500}]},{'name':'b','image':'i','ports':"
	    "[{'containerPort':29500}]}]}",
	    E(DUPLICATE, "containers[1].ports[0].hostPort", "\"TCP//29500\"", "")),
};

int main(void)
{
	return UP_RUN("probes and lifecycle", probes) + UP_RUN("env valueFrom", env) +
	       UP_RUN("container fields", others);
}
