/*
 * test_expand_mpi.c — mlPolicy.mpi: counts, hostfile ConfigMap, SSH Secret,
 * volumes with their modes, mounts, OMPI env, runLauncherAsNode, the key.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/test_expand.h"

#define RT_MPI(policy) RT_MPI_WITH("'numNodes':1,", policy)
/* ml: mlPolicy members before mpi, each followed by a comma. */
#define RT_MPI_WITH(ml, policy)                                                           \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"  \
	"'metadata':{'name':'rt'},'spec':{'mlPolicy':{" ml "'mpi':{" policy "}},"          \
	"'template':{'spec':{'replicatedJobs':["                                            \
	"{'name':'node','template':{'spec':{'template':{'spec':{'containers':"              \
	"[{'name':'node','image':'n','command':['/usr/sbin/sshd']}]}}}}},"                  \
	"{'name':'launcher','template':{'metadata':{'labels':"                              \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"   \
	"{'spec':{'containers':[{'name':'node','image':'n'}]}}}}}]}}}}"

static const cJSON *volume(const cJSON *job, const char *name)
{
	return tp_find_named(tp_get(job, "template.spec.template.spec.volumes"), "name", name);
}

static void hostfile_has_a_line_per_node(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':4}"), RT_MPI("'numProcPerNode':2"), &ex_key,
				TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 4);
	assert_int_equal(ex_int(ex_job(list, "launcher"), "template.spec.parallelism"), 1);
	const cJSON *cm = ex_item(list, 1);
	assert_string_equal(tp_get_str(cm, "kind"), "ConfigMap");
	assert_string_equal(tp_get_str(cm, "apiVersion"), "v1");
	assert_string_equal(tp_get_str(cm, "metadata.name"), "tj-mpi-hostfile");
	assert_string_equal(tp_get_str(cm, "metadata.namespace"), "team");
	assert_string_equal(tp_get_str(cm, "data.hostfile"),
			    "tj-node-0-0.tj slots=2\ntj-node-0-1.tj slots=2\n"
			    "tj-node-0-2.tj slots=2\ntj-node-0-3.tj slots=2\n");
	ex_assert_json(tp_get(cm, "metadata.ownerReferences"),
		       "[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'tj',"
		       "'uid':'u-1','controller':true,'blockOwnerDeletion':true}]");
	cJSON_Delete(list);
}

static void launcher_as_node(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':4,'env':[{'name':'U','value':'1'}]}"),
				RT_MPI("'runLauncherAsNode':true,'sshAuthMountPath':'/home/u/.ssh'"),
				&ex_key, TP_OK);
	/* one of the four nodes is the launcher */
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 3);
	assert_int_equal(ex_int(ex_job(list, "launcher"), "template.spec.completions"), 1);
	assert_string_equal(tp_get_str(ex_kind(list, "ConfigMap"), "data.hostfile"),
			    "tj-node-0-0.tj slots=1\ntj-node-0-1.tj slots=1\ntj-node-0-2.tj slots=1\n"
			    "tj-launcher-0-0.tj slots=1\n");
	/* the trainer env reaches the node job too */
	assert_string_equal(ex_env(ex_container(ex_job(list, "node"), "node"), "U"), "1");
	const cJSON *mounts = tp_get(ex_container(ex_job(list, "node"), "node"), "volumeMounts");
	ex_assert_json(mounts, "[{'name':'mpi-ssh-auth','mountPath':'/home/u/.ssh'}]");
	cJSON_Delete(list);
	/* with one node, the node job still runs one pod */
	list = ex_expand(TJ(""), RT_MPI("'runLauncherAsNode':true"), &ex_key, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 1);
	cJSON_Delete(list);
	/* so does numNodes 0 or 1 (upstream: max(numNodes-1, 1)) */
	list = ex_expand_in(&ex_kubeflow, TJ(",'trainer':{'numNodes':0}"),
			    RT_MPI("'runLauncherAsNode':true"), &ex_key, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 1);
	cJSON_Delete(list);
}

/* Without the TrainJob's numNodes upstream leaves the counts the runtime
 * info gave: the node job its parallelism, the launcher (the trainer job)
 * the runtime's numNodes; the strict profile counts the runtime's numNodes
 * as the TrainJob's and runs one launcher pod. */
static void runtime_num_nodes_with_launcher_as_node(void **state)
{
	(void)state;
	const char *rt = RT_MPI_WITH("'numNodes':3,", "'runLauncherAsNode':true");
	cJSON *list = ex_expand_in(&ex_kubeflow, TJ(""), rt, &ex_key, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 1);
	assert_int_equal(ex_int(ex_job(list, "launcher"), "template.spec.parallelism"), 3);
	cJSON_Delete(list);
	list = ex_expand(TJ(""), rt, &ex_key, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
	assert_int_equal(ex_int(ex_job(list, "launcher"), "template.spec.parallelism"), 1);
	cJSON_Delete(list);
	/* the TrainJob's numNodes: one of them is the launcher, in both */
	list = ex_expand_in(&ex_kubeflow, TJ(",'trainer':{'numNodes':3}"), rt, &ex_key, TP_OK);
	assert_int_equal(ex_int(ex_job(list, "node"), "template.spec.parallelism"), 2);
	cJSON_Delete(list);
}

static void volumes_mounts_and_env(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':2,'env':[{'name':'U','value':'1'}]}"),
				RT_MPI("'numProcPerNode':4"), &ex_key, TP_OK);
	const char *ssh = "{'name':'mpi-ssh-auth','secret':{'secretName':'tj-mpi-ssh-auth','items':["
			  "{'key':'ssh-privatekey','path':'id_rsa','mode':416},"
			  "{'key':'ssh-publickey','path':'id_rsa.pub','mode':420},"
			  "{'key':'ssh-publickey','path':'authorized_keys','mode':420}],'defaultMode':256}}";
	const cJSON *node = ex_job(list, "node"), *launcher = ex_job(list, "launcher");
	ex_assert_json(volume(node, "mpi-ssh-auth"), ssh);
	ex_assert_json(volume(launcher, "mpi-ssh-auth"), ssh);
	assert_null(volume(node, "mpi-hostfile"));
	ex_assert_json(volume(launcher, "mpi-hostfile"),
		       "{'name':'mpi-hostfile','configMap':{'name':'tj-mpi-hostfile','items':"
		       "[{'key':'hostfile','path':'hostfile','mode':292}]}}");
	ex_assert_json(tp_get(ex_container(node, "node"), "volumeMounts"),
		       "[{'name':'mpi-ssh-auth','mountPath':'/root/.ssh'}]");
	const cJSON *lc = ex_container(launcher, "node");
	ex_assert_json(tp_get(lc, "volumeMounts"),
		       "[{'name':'mpi-ssh-auth','mountPath':'/root/.ssh'},"
		       "{'name':'mpi-hostfile','mountPath':'/etc/mpi'}]");
	ex_assert_env_names(lc, "U,OMPI_MCA_orte_default_hostfile,OMPI_MCA_orte_keep_fqdn_hostnames,"
				"OMPI_MCA_orte_set_default_slots,OMPI_MCA_plm_rsh_args");
	assert_string_equal(ex_env(lc, "OMPI_MCA_orte_default_hostfile"), "/etc/mpi/hostfile");
	assert_string_equal(ex_env(lc, "OMPI_MCA_orte_keep_fqdn_hostnames"), "true");
	assert_string_equal(ex_env(lc, "OMPI_MCA_orte_set_default_slots"), "4");
	assert_string_equal(ex_env(lc, "OMPI_MCA_plm_rsh_args"), "-o ConnectionAttempts=10");
	/* the node job (not the trainer, not launcher-as-node) gets no OMPI env */
	assert_null(ex_env(ex_container(node, "node"), "OMPI_MCA_orte_default_hostfile"));
	/* runtime command kept where the TrainJob sets none */
	ex_assert_json(tp_get(ex_container(node, "node"), "command"), "['/usr/sbin/sshd']");
	cJSON_Delete(list);
}

static void secret_holds_the_key(void **state)
{
	(void)state;
	tp_ssh_key key = { "priv", "pub-line" };
	cJSON *list = ex_expand(TJ(""), RT_MPI(""), &(tp_keys){ &key, NULL }, TP_OK);
	assert_int_equal(cJSON_GetArraySize(tp_get(list, "items")), 3);
	const cJSON *s = ex_item(list, 2);
	ex_assert_json(s, "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'tj-mpi-ssh-auth',"
			  "'namespace':'team','ownerReferences':[{'apiVersion':"
			  "'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'tj','uid':'u-1',"
			  "'controller':true,'blockOwnerDeletion':true}]},'immutable':true,"
			  "'data':{'ssh-privatekey':'cHJpdg==','ssh-publickey':'cHViLWxpbmU='},"
			  "'type':'kubernetes.io/ssh-auth'}");
	cJSON_Delete(list);
}

static void slots_follow_gpus_and_the_trainjob(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'resourcesPerNode':{'limits':{'nvidia.com/gpu':2}}}"),
				RT_MPI("'numProcPerNode':1"), &ex_key, TP_OK);
	assert_string_equal(tp_get_str(ex_kind(list, "ConfigMap"), "data.hostfile"),
			    "tj-node-0-0.tj slots=2\n");
	cJSON_Delete(list);
	list = ex_expand(TJ(",'trainer':{'numProcPerNode':3,'resourcesPerNode':{'limits':"
			    "{'nvidia.com/gpu':2}}}"),
			 RT_MPI("'numProcPerNode':1"), &ex_key, TP_OK);
	assert_string_equal(tp_get_str(ex_kind(list, "ConfigMap"), "data.hostfile"),
			    "tj-node-0-0.tj slots=3\n");
	assert_string_equal(ex_env(ex_container(ex_job(list, "launcher"), "node"),
				   "OMPI_MCA_orte_set_default_slots"), "3");
	cJSON_Delete(list);
}

static void subdomain_from_the_template(void **state)
{
	(void)state;
	cJSON *list = ex_expand(TJ(",'trainer':{'numNodes':2}"
				   ",'runtimePatches':[{'manager':'a.io/b','trainingRuntimeSpec':{"
				   "'template':{'spec':{'network':{'subdomain':'sub'}}}}}]"),
				RT_MPI(""), &ex_key, TP_OK);
	assert_string_equal(tp_get_str(ex_kind(list, "ConfigMap"), "data.hostfile"),
			    "tj-node-0-0.sub slots=1\ntj-node-0-1.sub slots=1\n");
	cJSON_Delete(list);
}

static void a_key_is_whole_or_absent(void **state)
{
	(void)state;
	/* No key: everything but the Secret. */
	cJSON *nokey = ex_expand(TJ(""), RT_MPI(""), NULL, TP_OK);
	assert_null(ex_kind(nokey, "Secret"));
	assert_non_null(ex_kind(nokey, "ConfigMap"));
	assert_non_null(ex_kind(nokey, "JobSet"));
	cJSON_Delete(nokey);
	tp_ssh_key half = { "priv", NULL };
	tp_result *res = ex_expand_fail(TJ(""), RT_MPI(""), &(tp_keys){ &half, NULL }, TP_EINVAL);
	assert_true(tt_has_error(res, "spec.runtimeRef", "SSH key is required"));
	tp_result_free(res);
	/* torch needs none */
	cJSON *list = ex_expand(TJ(""), RT_TORCH, NULL, TP_OK);
	cJSON_Delete(list);
}

static void other_implementations_warn(void **state)
{
	(void)state;
	cJSON *t = ex_js(TJ("")), *r = ex_js(RT_MPI("'mpiImplementation':'Intel'")), *out = NULL;
	tp_result *res = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_expand_with_runtime(NULL, t, r, &ex_key, &out, res), TP_OK);
	assert_true(tt_has_warning(res, "only OpenMPI"));
	assert_null(ex_env(ex_container(ex_job(out, "launcher"), "node"), "OMPI_MCA_plm_rsh_args"));
	cJSON_Delete(out);
	cJSON_Delete(t);
	cJSON_Delete(r);
	tp_result_free(res);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostfile_has_a_line_per_node),
		cmocka_unit_test(launcher_as_node),
		cmocka_unit_test(volumes_mounts_and_env),
		cmocka_unit_test(secret_holds_the_key),
		cmocka_unit_test(runtime_num_nodes_with_launcher_as_node),
		cmocka_unit_test(slots_follow_gpus_and_the_trainjob),
		cmocka_unit_test(subdomain_from_the_template),
		cmocka_unit_test(a_key_is_whole_or_absent),
		cmocka_unit_test(other_implementations_warn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
