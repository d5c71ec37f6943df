/*
 * test_flux.c — the Flux plugin (policy/plugins/flux.c) and its CURVE key
 * (webhook/admission/curvekey.c). Cases named test_<Upstream>_<case> port upstream's
 * pkg/runtime/framework/plugins/flux/flux_test.go at kubeflow/trainer@8c0f5059;
 * the others cover what those leave out (settings from the env, the wrapped
 * command, GPUs, the scripts' slots, numNodes, the keys).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <unistd.h>

#include "policy/plugins/flux.h"
#include "tests/unit/test_expand.h"
#include "webhook/admission/curvekey.h"

/* A TrainJob "test-job" in "default" (uid test-uid); members are appended to
 * its spec.trainer, which has numNodes 2 unless they say otherwise. */
#define FLUX_TJ_WITH(meta, trainer)                                                       \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"     \
	"{'name':'test-job','namespace':'default'" meta "},'spec':{'runtimeRef':"          \
	"{'name':'rt'},'trainer':{" trainer "}}}"
#define FLUX_TJ(trainer) FLUX_TJ_WITH(",'uid':'test-uid'", trainer)

/* A Flux runtime: one trainer job "node" with a node container (members
 * container), pod spec members pod. */
#define FLUX_RT_WITH(flux, container, pod)                                                \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt'},'spec':{'mlPolicy':{'numNodes':1,'flux':{" flux "}},"    \
	"'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':"     \
	"{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':"     \
	"{'template':{'spec':{" pod "'containers':[{'name':'node'" container "}]}}}}}]}}}}"
#define FLUX_RT FLUX_RT_WITH("'numProcPerNode':1", "", "")

#define OWNER                                                                             \
	"'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob'," \
	"'name':'test-job','uid':'test-uid','controller':true,'blockOwnerDeletion':true}]"

static const cJSON *node_pod(const cJSON *list)
{
	return tp_get(ex_job(list, "node"), "template.spec.template.spec");
}

static const char *cm_data(const cJSON *list, const char *key)
{
	const cJSON *cm = ex_kind(list, "ConfigMap");
	assert_non_null(cm);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tp_get(cm, "data"), key);
	assert_true(cJSON_IsString(v));
	return v->valuestring;
}

/* The decoded curve.cert of the list's Secret (static buffer). */
static const char *curve_cert(const cJSON *list)
{
	static char text[1024];
	const cJSON *s = ex_kind(list, "Secret");
	assert_non_null(s);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(tp_get(s, "data"), "curve.cert");
	assert_true(cJSON_IsString(v));
	const char *b64 = v->valuestring;
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_base64_decode(b64, strlen(b64), &b), TP_OK);
	assert_int_equal(tp_buf_add(&b, "", 1), TP_OK);
	snprintf(text, sizeof(text), "%s", b.data);
	tp_buf_free(&b);
	return text;
}

/* ----------------------------------------------------- TestFlux (2) */

static void test_TestFlux_no_action_when_flux_policy_is_nil(void **state)
{
	(void)state;
	cJSON *list = ex_expand_in(&ex_kubeflow, TJ(",'trainer':{'numNodes':2}"), RT_PLAIN,
				   &ex_key, TP_OK);
	assert_int_equal(cJSON_GetArraySize(tp_get(list, "items")), 1);
	assert_null(tp_get(node_pod(list), "initContainers"));
	assert_null(tp_get(node_pod(list), "volumes"));
	assert_null(tp_get(ex_container(ex_job(list, "node"), "node"), "volumeMounts"));
	cJSON_Delete(list);
}

static void test_TestFlux_flux_mutations_are_applied_correctly(void **state)
{
	(void)state;
	cJSON *list = ex_expand_in(&ex_kubeflow, FLUX_TJ("'numNodes':2"), FLUX_RT, &ex_key, TP_OK);
	const cJSON *pod = node_pod(list);
	ex_assert_json(tp_get(pod, "initContainers"),
		       "[{'name':'flux-installer','image':"
		       "'ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy',"
		       "'command':['/bin/bash','/etc/flux-config/init.sh'],'volumeMounts':["
		       "{'name':'flux-install','mountPath':'/mnt/flux'},"
		       "{'name':'test-job-flux-entrypoint','readOnly':true,"
		       "'mountPath':'/etc/flux-config'}]}]");
	ex_assert_json(tp_get(ex_container(ex_job(list, "node"), "node"), "volumeMounts"),
		       "[{'name':'flux-install','mountPath':'/mnt/flux'},"
		       "{'name':'spack-install','mountPath':'/opt/software'},"
		       "{'name':'test-job-flux-entrypoint','readOnly':true,'mountPath':'/etc/flux-config'},"
		       "{'name':'flux-curve','readOnly':true,'mountPath':'/curve'},"
		       "{'name':'shared-memory','readOnly':true,'mountPath':'/dev/shm'}]");
	ex_assert_json(tp_get(pod, "volumes"),
		       "[{'name':'spack-install','emptyDir':{}},{'name':'flux-install','emptyDir':{}},"
		       "{'name':'test-job-flux-entrypoint','configMap':{'name':"
		       "'test-job-flux-entrypoint','defaultMode':493}},"
		       "{'name':'shared-memory','emptyDir':{'medium':'Memory'}},"
		       "{'name':'flux-curve','secret':{'secretName':'test-job-flux-curve',"
		       "'defaultMode':256}}]");
	/* the pod count is the TrainJob's (upstream's plainml acts on Flux too) */
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
	/* the ConfigMap and the Secret, owned by the TrainJob (data compared below) */
	assert_int_equal(cJSON_GetArraySize(tp_get(list, "items")), 3);
	ex_assert_json(tp_get(ex_item(list, 1), "metadata"),
		       "{'name':'test-job-flux-entrypoint','namespace':'default'," OWNER "}");
	assert_string_equal(tp_get_str(ex_item(list, 1), "kind"), "ConfigMap");
	ex_assert_json(tp_get(ex_item(list, 2), "metadata"),
		       "{'name':'test-job-flux-curve','namespace':'default'," OWNER "}");
	assert_string_equal(tp_get_str(ex_item(list, 2), "kind"), "Secret");
	cJSON_Delete(list);
}

/* ----------------------------------------------------- TestValidate (3) */

static tp_result *validate(const char *runtime, const char *trainjob)
{
	tp_store *s = NULL;
	tp_result *r = NULL;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *rt = tt_jsq(runtime), *tj = tt_jsq(trainjob);
	assert_int_equal(tp_store_put(s, rt), TP_OK);
	tp_options opt = { .profile = TP_PROFILE_KUBEFLOW, .store = s };
	assert_int_equal(tp_result_new(&r), TP_OK);
	tp_store_rdlock(s);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, r), TP_OK);
	tp_store_unlock(s);
	cJSON_Delete(tj);
	tp_store_free(s);
	return r;
}

static void test_TestValidate_valid_when_flux_policy_is_nil(void **state)
{
	(void)state;
	tp_result *r = validate(RT_PLAIN, TJ(",'trainer':{'numNodes':2}"));
	tt_dump(r);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

static void test_TestValidate_valid_when_flux_policy_is_present(void **state)
{
	(void)state;
	tp_result *r = validate(FLUX_RT_WITH("", "", ""), FLUX_TJ("'numNodes':1"));
	tt_dump(r);
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

static void
test_TestValidate_invalid_when_node_podSet_includes_reserved_flux_installer_init_container(
	void **state)
{
	(void)state;
	tp_result *r = validate(FLUX_RT_WITH("", "", "'initContainers':[{'name':'flux-installer',"
						      "'image':'x'}],"),
				FLUX_TJ("'numNodes':1"));
	assert_int_equal(tp_result_error_count(r), 1);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp_result_format(r, &b), TP_OK);
	assert_non_null(strstr(b.data, "spec.trainer.initContainers: Invalid value: "
				       "\"flux-installer\": InitContainer 'flux-installer' is reserved"));
	tp_buf_free(&b);
	tp_result_free(r);
	/* the expansion refuses it too, rather than add a second one */
	tp_result *e = ex_expand_fail(FLUX_TJ("'numNodes':1"),
				      FLUX_RT_WITH("", "", "'initContainers':[{'name':'flux-installer'}],"),
				      &ex_key, TP_EINVAL);
	assert_true(tt_has_error(e, "spec.trainer.initContainers",
				 "InitContainer 'flux-installer' is reserved"));
	tp_result_free(e);
}

/* ----------------------------------------------------- the CURVE key (2) */

static void test_TestDeterministicCurve(void **state)
{
	(void)state;
	char err[256];
	tp_curve_key k1, k2;
	assert_int_equal(tw_curvekey_from_uid("uid-123", &k1, err, sizeof(err)), 0);
	assert_int_equal(tw_curvekey_from_uid("uid-123", &k2, err, sizeof(err)), 0);
	tp_buf a = TP_BUF_INIT(0), b = TP_BUF_INIT(0);
	assert_int_equal(tp__flux_curve_cert("job", &k1, &a), TP_OK);
	assert_int_equal(tp__flux_curve_cert("job", &k2, &b), TP_OK);
	assert_string_equal(a.data, b.data);
	assert_non_null(strstr(a.data, "curve"));
	assert_non_null(strstr(a.data, "public-key"));
	tp_buf_free(&a);
	tp_buf_free(&b);
}

static void test_TestBuildCurveSecret(void **state)
{
	(void)state;
	char err[256];
	tp_curve_key k;
	assert_int_equal(tw_curvekey_from_uid("12345-67890", &k, err, sizeof(err)), 0);
	cJSON *list = ex_expand_in(&ex_kubeflow, FLUX_TJ("'numNodes':1"), FLUX_RT,
				   &(tp_keys){ NULL, &k }, TP_OK);
	assert_string_equal(tp_get_str(ex_kind(list, "Secret"), "metadata.name"),
			    "test-job-flux-curve");
	char cert[1024];
	snprintf(cert, sizeof(cert), "%s", curve_cert(list));
	const char *const required[] = { "metadata", "curve", "public-key =", "secret-key =",
					 "name = \"test-job\"", "    public-key =" };
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!strstr(cert, required[i]))
			fail_msg("curve.cert lacks %s:\n%s", required[i], cert);
	cJSON_Delete(list);
	/* the same uid gives the same certificate, another uid another one */
	tp_curve_key again, other;
	assert_int_equal(tw_curvekey_from_uid("12345-67890", &again, err, sizeof(err)), 0);
	assert_int_equal(tw_curvekey_from_uid("different-uid", &other, err, sizeof(err)), 0);
	assert_memory_equal(&k, &again, sizeof(k));
	assert_memory_not_equal(k.public_key, other.public_key, TP_CURVE_KEY_LEN);
}

/* ----------------------------------------------------- TestGenerateRange (3) */

static void range_is(long long size, long long start, const char *want)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__flux_range(size, start, &b), TP_OK);
	assert_string_equal(b.data, want);
	tp_buf_free(&b);
}

static void test_TestGenerateRange_single_node(void **state)
{
	(void)state;
	range_is(1, 0, "0");
}

static void test_TestGenerateRange_multiple_nodes_starting_at_zero(void **state)
{
	(void)state;
	range_is(4, 0, "0-3");
}

static void test_TestGenerateRange_multiple_nodes_with_offset_start(void **state)
{
	(void)state;
	range_is(3, 10, "10-12");
}

/* ----------------------------------------------------- TestGenerateHostlist (3) */

static void hostlist_is(const char *prefix, long long size, const char *want)
{
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__flux_hostlist(prefix, size, &b), TP_OK);
	assert_string_equal(b.data, want);
	tp_buf_free(&b);
}

static void test_TestGenerateHostlist_prefix_with_one_node(void **state)
{
	(void)state;
	hostlist_is("lammps-job", 1, "lammps-job-node-0-[0]");
}

static void test_TestGenerateHostlist_prefix_with_four_nodes(void **state)
{
	(void)state;
	hostlist_is("flux-cluster", 4, "flux-cluster-node-0-[0-3]");
}

static void test_TestGenerateHostlist_empty_prefix_handled(void **state)
{
	(void)state;
	hostlist_is("", 2, "-node-0-[0-1]");
}

/* ----------------------------------------------------- TestEncodeZ85 (3) */

static void test_TestEncodeZ85_32_bytes_produces_40_characters(void **state)
{
	(void)state;
	unsigned char zero[32] = { 0 };
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__z85_encode(zero, sizeof(zero), &b), TP_OK);
	assert_int_equal(b.len, 40);
	tp_buf_free(&b);
}

static void test_TestEncodeZ85_invalid_length_returns_empty_string(void **state)
{
	(void)state;
	const unsigned char three[] = { 1, 2, 3 };
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__z85_encode(three, sizeof(three), &b), TP_EINVAL);
	assert_int_equal(b.len, 0);
	tp_buf_free(&b);
}

static void test_TestEncodeZ85_all_zeros_produces_zeros_in_Z85(void **state)
{
	(void)state;
	const unsigned char zero[4] = { 0 };
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__z85_encode(zero, sizeof(zero), &b), TP_OK);
	assert_string_equal(b.data, "00000");
	tp_buf_free(&b);
	/* ZeroMQ RFC 32's own example */
	const unsigned char hello[] = { 0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B };
	assert_int_equal(tp__z85_encode(hello, sizeof(hello), &b), TP_OK);
	assert_string_equal(b.data, "HelloWorld");
	tp_buf_free(&b);
}

/* ----------------------------------------------------- TestGetOriginalCommand (2) */

static const char *command_line(const char *command, const char *args)
{
	static char out[256];
	cJSON *c = tt_jsq(command), *a = tt_jsq(args);
	tp_buf b = TP_BUF_INIT(0);
	assert_int_equal(tp__flux_command_line(c, a, &b), TP_OK);
	snprintf(out, sizeof(out), "%s", b.data);
	tp_buf_free(&b);
	cJSON_Delete(c);
	cJSON_Delete(a);
	return out;
}

static void test_TestGetOriginalCommand_full_command_and_args(void **state)
{
	(void)state;
	assert_string_equal(command_line("['python']", "['train.py','--epochs','10']"),
			    "python train.py --epochs 10");
}

static void test_TestGetOriginalCommand_command_and_args_with_extra_spaces(void **state)
{
	(void)state;
	assert_string_equal(command_line("['  python  ']", "[' script.py ']"), "python    script.py");
	/* Go's TrimSpace trims Unicode white space too (U+00A0, U+3000) */
	assert_string_equal(command_line("['\\u00a0run\\u3000']", "[]"), "run");
	assert_string_equal(command_line("[]", "[]"), "");
}

/* ----------------------------------------------------- beyond upstream's tests */

/* The TrainJob's command and args go to the entrypoint as one string; the
 * args member is the template's again; without a TrainJob command the
 * runtime's is wrapped. */
static void command_is_wrapped_and_args_dropped(void **state)
{
	(void)state;
	cJSON *list = ex_expand_in(&ex_kubeflow,
				   FLUX_TJ("'numNodes':1,'command':['lmp','-in'],'args':['in.x']"),
				   FLUX_RT_WITH("", ",'command':['rt-cmd'],'args':['rt-arg']", ""),
				   &ex_key, TP_OK);
	const cJSON *node = ex_container(ex_job(list, "node"), "node");
	ex_assert_json(tp_get(node, "command"),
		       "['/bin/bash','/etc/flux-config/entrypoint.sh','lmp -in in.x']");
	ex_assert_json(tp_get(node, "args"), "['rt-arg']");
	cJSON_Delete(list);
	list = ex_expand_in(&ex_kubeflow, FLUX_TJ("'numNodes':1,'args':['a']"),
			    FLUX_RT_WITH("", ",'command':['rt-cmd']", ""), &ex_key, TP_OK);
	node = ex_container(ex_job(list, "node"), "node");
	ex_assert_json(tp_get(node, "command"),
		       "['/bin/bash','/etc/flux-config/entrypoint.sh','rt-cmd a']");
	assert_null(tp_get(node, "args"));
	cJSON_Delete(list);
}

/* FLUX_* settings: the runtime's env over the defaults, the TrainJob's over
 * both; an entry without a value counts as "". */
static void settings_come_from_the_env(void **state)
{
	(void)state;
	cJSON *list = ex_expand_in(
		&ex_kubeflow,
		FLUX_TJ("'numNodes':1,'env':[{'name':'FLUX_QUEUE_POLICY','value':'easy'},"
			"{'name':'FLUX_VIEW_IMAGE','valueFrom':{'fieldRef':{'fieldPath':'x'}}}]"),
		FLUX_RT_WITH("", ",'env':[{'name':'FLUX_NETWORK_DEVICE','value':'ib0'},"
				 "{'name':'FLUX_QUEUE_POLICY','value':'conservative'}]", ""),
		&ex_key, TP_OK);
	const char *init = cm_data(list, "init.sh");
	assert_non_null(strstr(init, "default_bind = \"tcp://ib0:%p\"\n"));
	assert_non_null(strstr(init, "queue-policy = \"easy\"\n"));
	/* an empty image: the init container has none (upstream writes a
	 * non-empty image only) */
	const cJSON *ic = cJSON_GetArrayItem(tp_get(node_pod(list), "initContainers"), 0);
	assert_null(tp_get(ic, "image"));
	cJSON_Delete(list);
}

/* The scripts' slots: flux R's resources, the lead host, flux run's flags,
 * the host list and the broker's connect address. */
static void scripts_carry_the_counts(void **state)
{
	(void)state;
	cJSON *list = ex_expand_in(&ex_kubeflow,
				   FLUX_TJ("'numNodes':3,'numProcPerNode':4,'resourcesPerNode':"
					   "{'limits':{'nvidia.com/gpu':'2'}}"),
				   FLUX_RT, &ex_key, TP_OK);
	const char *entry = cm_data(list, "entrypoint.sh");
	assert_non_null(strstr(entry, "flux R encode --hosts=${hosts} --cores=0-3 --gpu=0-1 > /tmp/R\n"));
	assert_non_null(strstr(entry, "mainHost=\"test-job-node-0-0\"\n"));
	assert_non_null(strstr(entry, "flags=\"-N 3 -n 12 -g 2  \"\n"));
	assert_null(strstr(entry, "%s"));
	const char *init = cm_data(list, "init.sh");
	assert_non_null(strstr(init, "fluxroot=/opt/view\nmainHost=test-job-0\n"));
	assert_non_null(strstr(init, "hosts=\"test-job-node-0-[0-2]\"\n"));
	assert_non_null(strstr(init, "{ host=\"test-job-node-0-[0-2]\"},\n"));
	assert_non_null(strstr(init, "default_connect = "
				     "\"tcp://%h.test-job.default.svc.cluster.local:%p\"\n"));
	assert_non_null(strstr(init, "default_bind = \"tcp://eth0:%p\"\n"));
	assert_non_null(strstr(init, "queue-policy = \"fcfs\"\n\nEOT\n"));
	/* no GPU: cores only; the runtime's numProcPerNode counts the tasks */
	cJSON_Delete(list);
	list = ex_expand_in(&ex_kubeflow, FLUX_TJ("'numNodes':1"),
			    FLUX_RT_WITH("'numProcPerNode':2", "", ""), &ex_key, TP_OK);
	entry = cm_data(list, "entrypoint.sh");
	assert_non_null(strstr(entry, "--hosts=${hosts} --cores=0-1 > /tmp/R\n"));
	assert_non_null(strstr(entry, "flags=\"-N 1 -n 2  \"\n"));
	cJSON_Delete(list);
}

/* Upstream's controller stops on a TrainJob without numNodes (a nil
 * dereference): the expansion names the field instead, and the strict
 * profile refuses it at admission. */
static void num_nodes_is_required(void **state)
{
	(void)state;
	tp_result *r = ex_expand_fail(FLUX_TJ("'image':'x'"), FLUX_RT, &ex_key, TP_EINVAL);
	assert_true(tt_has_error(r, "spec.trainer.numNodes", "e.g. numNodes: 2"));
	tp_result_free(r);
	tp_result *k = validate(FLUX_RT, FLUX_TJ("'image':'x'"));
	assert_true(tp_result_ok(k)); /* kubeflow: upstream admits it */
	tp_result_free(k);
}

/* No CURVE key: everything but the Secret (the mutating JobSet route). The
 * certificate holds the keys given, in Z85. */
static void the_secret_holds_the_key_given(void **state)
{
	(void)state;
	cJSON *list = ex_expand_in(&ex_kubeflow, FLUX_TJ("'numNodes':1"), FLUX_RT, NULL, TP_OK);
	assert_null(ex_kind(list, "Secret"));
	assert_non_null(ex_kind(list, "ConfigMap"));
	cJSON_Delete(list);
	list = ex_expand_in(&ex_kubeflow, FLUX_TJ("'numNodes':1"), FLUX_RT, &ex_key, TP_OK);
	tp_buf pub = TP_BUF_INIT(0), sec = TP_BUF_INIT(0), want = TP_BUF_INIT(0);
	assert_int_equal(tp__z85_encode(ex_curve.public_key, 32, &pub), TP_OK);
	assert_int_equal(tp__z85_encode(ex_curve.secret_key, 32, &sec), TP_OK);
	assert_int_equal(tp_buf_addf(&want,
				     "#  ZeroMQ CURVE Secret Certificate\n"
				     "#  Generated by Kubeflow Trainer\n\nmetadata\n"
				     "    name = \"test-job\"\ncurve\n    public-key = \"%s\"\n"
				     "    secret-key = \"%s\"\n", pub.data, sec.data), TP_OK);
	assert_string_equal(curve_cert(list), want.data);
	tp_buf_free(&pub);
	tp_buf_free(&sec);
	tp_buf_free(&want);
	cJSON_Delete(list);
}

/* The binary's keys: X25519 as RFC 7748 section 6.1 computes it, the
 * secret from SHA-256 of the uid as upstream does, and a key file. */
static void curve_keys_of_the_binary(void **state)
{
	(void)state;
	char err[256];
	tp_curve_key k;
	assert_int_equal(tw_curvekey_from_secret(ex_curve.secret_key, &k, err, sizeof(err)), 0);
	assert_memory_equal(k.public_key, ex_curve.public_key, 32);
	/* SHA-256("abc") (FIPS 180-2's example) is the secret key of uid "abc" */
	static const unsigned char abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
		0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
	};
	assert_int_equal(tw_curvekey_from_uid("abc", &k, err, sizeof(err)), 0);
	assert_memory_equal(k.secret_key, abc, 32);
	/* fresh keys differ */
	tp_curve_key a, b;
	assert_int_equal(tw_curvekey_generate(&a, err, sizeof(err)), 0);
	assert_int_equal(tw_curvekey_generate(&b, err, sizeof(err)), 0);
	assert_memory_not_equal(a.secret_key, b.secret_key, 32);
	/* a PEM file (RFC 8410's X25519 PKCS#8) gives its pair; another file
	 * is refused with the way to make one */
	char path[] = "/tmp/tw-curve-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("-----BEGIN PRIVATE KEY-----\n"
	      "MC4CAQAwBQYDK2VuBCIEIHcHbQpzGKV9PBbBclGyZkXfTC+H68CZKrF3+6UduSwq\n"
	      "-----END PRIVATE KEY-----\n", f);
	fclose(f);
	assert_int_equal(tw_curvekey_read(path, &k, err, sizeof(err)), 0);
	assert_memory_equal(&k, &ex_curve, sizeof(k));
	f = fopen(path, "w");
	fputs("not a key\n", f);
	fclose(f);
	assert_int_equal(tw_curvekey_read(path, &k, err, sizeof(err)), TW_EFAILED);
	assert_non_null(strstr(err, "openssl genpkey -algorithm X25519"));
	unlink(path);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_TestFlux_no_action_when_flux_policy_is_nil),
		cmocka_unit_test(test_TestFlux_flux_mutations_are_applied_correctly),
		cmocka_unit_test(test_TestValidate_valid_when_flux_policy_is_nil),
		cmocka_unit_test(test_TestValidate_valid_when_flux_policy_is_present),
		cmocka_unit_test(
			test_TestValidate_invalid_when_node_podSet_includes_reserved_flux_installer_init_container),
		cmocka_unit_test(test_TestDeterministicCurve),
		cmocka_unit_test(test_TestBuildCurveSecret),
		cmocka_unit_test(test_TestGenerateRange_single_node),
		cmocka_unit_test(test_TestGenerateRange_multiple_nodes_starting_at_zero),
		cmocka_unit_test(test_TestGenerateRange_multiple_nodes_with_offset_start),
		cmocka_unit_test(test_TestGenerateHostlist_prefix_with_one_node),
		cmocka_unit_test(test_TestGenerateHostlist_prefix_with_four_nodes),
		cmocka_unit_test(test_TestGenerateHostlist_empty_prefix_handled),
		cmocka_unit_test(test_TestEncodeZ85_32_bytes_produces_40_characters),
		cmocka_unit_test(test_TestEncodeZ85_invalid_length_returns_empty_string),
		cmocka_unit_test(test_TestEncodeZ85_all_zeros_produces_zeros_in_Z85),
		cmocka_unit_test(test_TestGetOriginalCommand_full_command_and_args),
		cmocka_unit_test(test_TestGetOriginalCommand_command_and_args_with_extra_spaces),
		cmocka_unit_test(command_is_wrapped_and_args_dropped),
		cmocka_unit_test(settings_come_from_the_env),
		cmocka_unit_test(scripts_carry_the_counts),
		cmocka_unit_test(num_nodes_is_required),
		cmocka_unit_test(the_secret_holds_the_key_given),
		cmocka_unit_test(curve_keys_of_the_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
