/*
 * test_up_plugins.c — upstream's cases for the MPI, XGBoost, JAX, PlainML,
 * Coscheduling and Volcano plugins (pkg/runtime/framework/plugins/<name>/
 * <name>_test.go at kubeflow/trainer@8c0f5059), ported under their upstream
 * names, in the kubeflow profile. Each runs the whole expansion (or the
 * TrainJob validator with the plugins' rules alone) on a runtime holding
 * the Info's pod sets, and checks what upstream's case checks in the output.
 */
#include "tests/unit/up_cases.h"
#include "tests/unit/test_expand.h"

#define KF TP_PROFILE_KUBEFLOW
#define ANCESTOR "'trainer.kubeflow.org/trainjob-ancestor-step'"
#define SETS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* A ClusterTrainingRuntime "rt": spec members (mlPolicy, podGroupPolicy,
 * annotations...) then the JobSet spec. */
static cJSON *rt_with(const char *members, const char *jobset_spec)
{
	char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		 "'metadata':{'name':'rt'},'spec':{%s%s'template':{'spec':%s}}}",
		 members, *members ? "," : "", jobset_spec);
	return tt_jsq(buf);
}

static cJSON *tj(const char *ns, const char *name, const char *trainer)
{
	cJSON *t = up_trainjob(ns, name, "ClusterTrainingRuntime", "rt");
	if (trainer)
		up_set(t, "spec.trainer", trainer);
	return t;
}

static cJSON *expand(cJSON *t, cJSON *rt)
{
	tp_result *res = NULL;
	cJSON *out = NULL;
	assert_int_equal(tp_result_new(&res), TP_OK);
	int rc = tp_expand_with_runtime(&ex_kubeflow, t, rt, &ex_key, &out, res);
	if (rc || !tp_result_ok(res))
		fail_msg("expansion failed (%d): %s", rc, up_text(res));
	tp_result_free(res);
	cJSON_Delete(t);
	cJSON_Delete(rt);
	return out;
}

static tp_result *validate(cJSON *rt, cJSON *t)
{
	cJSON *cluster[] = { rt, NULL };
	tp_result *r = up_validate_failing(KF, TP_OP_CREATE, t, NULL, cluster, TP_KIND_UNKNOWN, true);
	cJSON_Delete(rt);
	cJSON_Delete(t);
	return r;
}

#define TRAINER_JOB(pod)                                                                         \
	"{'name':'node','template':{'metadata':{'labels':{" ANCESTOR ":'trainer'}},'spec':"     \
	"{'template':{'spec':" pod "}}}}"
#define NODE_POD "{'containers':[{'name':'node'}]}"
#define TRAINER_ONLY "{'replicatedJobs':[" TRAINER_JOB(NODE_POD) "]}"

static const cJSON *node(const cJSON *l)
{
	return ex_container(ex_job(l, "node"), "node");
}

/* ================================================================ MPI */

/* MPI's runtimes: a launcher and a node job, the launcher being the
 * trainer job, as upstream's runtimes and test Infos have them. */
#define MPI_JOBS                                                                                \
	"{'replicatedJobs':[{'name':'launcher','template':{'metadata':{'labels':{" ANCESTOR     \
	":'trainer'}},'spec':{'template':{'spec':{'containers':[{'name':'node'}]}}}}},"          \
	"{'name':'node','template':{'spec':{'template':{'spec':{'containers':[{'name':'node'}]}}}}}]}"
#define MPI_POLICY(extra)                                                                      \
	"'mlPolicy':{'numNodes':1,'mpi':{'numProcPerNode':1,'mpiImplementation':'OpenMPI',"   \
	"'sshAuthMountPath':'/root/.ssh'" extra "}}"

static const char *hostfile(const cJSON *l)
{
	return tp_get_str(ex_kind(l, "ConfigMap"), "data.hostfile");
}

static void mpi_no_policy(void **state)
{
	const char *ml = *state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':2}"), rt_with(ml, MPI_JOBS));
	assert_null(ex_kind(l, "ConfigMap"));
	assert_null(ex_kind(l, "Secret"));
	assert_null(tp_get(ex_job(l, "node"), "template.spec.template.spec.volumes"));
	cJSON_Delete(l);
}

static void mpi_num_nodes(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':2}"), rt_with(MPI_POLICY(""), MPI_JOBS));
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 2);
	assert_string_equal(hostfile(l), "trainJob-node-0-0.trainJob slots=1\n"
					 "trainJob-node-0-1.trainJob slots=1\n");
	assert_string_equal(tp_get_str(ex_kind(l, "Secret"), "type"), "kubernetes.io/ssh-auth");
	assert_non_null(tp_find_named(tp_get(ex_job(l, "launcher"), "template.spec.template.spec."
								     "volumes"),
				      "name", "mpi-hostfile"));
	cJSON_Delete(l);
}

static void mpi_num_proc(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':1,'numProcPerNode':2}"),
			  rt_with(MPI_POLICY(""), MPI_JOBS));
	assert_string_equal(hostfile(l), "trainJob-node-0-0.trainJob slots=2\n");
	assert_string_equal(ex_env(ex_container(ex_job(l, "launcher"), "node"),
				   "OMPI_MCA_orte_set_default_slots"), "2");
	cJSON_Delete(l);
}

static void mpi_gpus(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob",
			     "{'numNodes':1,'image':'test:trainjob','command':['trainjob'],'args':"
			     "['trainjob'],'resourcesPerNode':{'requests':{'custom.com/gpu':'5'}}}"),
			  rt_with(MPI_POLICY(""), MPI_JOBS));
	assert_string_equal(hostfile(l), "trainJob-node-0-0.trainJob slots=5\n");
	cJSON_Delete(l);
}

static void mpi_launcher_as_node(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':10}"),
			  rt_with(MPI_POLICY(",'runLauncherAsNode':true"), MPI_JOBS));
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 9);
	const char *h = hostfile(l);
	assert_true(!strncmp(h, "trainJob-launcher-0-0.trainJob slots=1\ntrainJob-node-0-0.trainJob", 65));
	assert_non_null(strstr(h, "trainJob-node-0-8.trainJob slots=1\n"));
	const cJSON *lc = ex_container(ex_job(l, "launcher"), "node");
	ex_assert_env_names(lc, "OMPI_MCA_orte_default_hostfile,OMPI_MCA_orte_keep_fqdn_hostnames,"
				"OMPI_MCA_orte_set_default_slots,OMPI_MCA_plm_rsh_args");
	cJSON_Delete(l);
}

/* TestValidate */
static void mpi_v_no_ml(void **state)
{
	(void)state;
	up_allowed(validate(rt_with("", MPI_JOBS),
			    tj("default", "test", "{'env':[{'name':'OMPI_MCA_plm_rsh_args','value':'x'}]}")));
}

static void mpi_v_no_mpi(void **state)
{
	(void)state;
	up_allowed(validate(rt_with("'mlPolicy':{'torch':{}}", MPI_JOBS),
			    tj("default", "test", "{'env':[{'name':'OMPI_MCA_plm_rsh_args','value':'x'}]}")));
}

static void mpi_v_int(void **state)
{
	(void)state;
	up_allowed(validate(rt_with(MPI_POLICY(""), MPI_JOBS), tj("default", "test", "{'numProcPerNode':8}")));
}

#define LAN_ONLY(jobs) rt_with(MPI_POLICY(",'runLauncherAsNode':true"), jobs)
#define WANT_ONE "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have " \
	"either launcher and node"

static void mpi_v_no_launcher_one(void **state)
{
	(void)state;
	up_allowed(validate(LAN_ONLY(TRAINER_ONLY), tj("default", "test", "{'numNodes':1}")));
}

static void mpi_v_no_launcher_two(void **state)
{
	(void)state;
	tp_result *r = validate(LAN_ONLY("{'replicatedJobs':[{'name':'node','template':{'spec':"
					 "{'template':{'spec':" NODE_POD "}}}}]}"),
				tj("default", "test", "{'numNodes':2}"));
	assert_string_equal(tp_result_error_at(r, 0)->value, "2");
	up_denied(r, "spec.trainer.numNodes", WANT_ONE);
}

static void mpi_v_no_node_two(void **state)
{
	(void)state;
	up_denied(validate(LAN_ONLY("{'replicatedJobs':[{'name':'launcher','template':{'spec':"
				    "{'template':{'spec':" NODE_POD "}}}}]}"),
			   tj("default", "test", "{'numNodes':2}")),
		  "spec.trainer.numNodes", WANT_ONE);
}

static void mpi_v_neither_two(void **state)
{
	(void)state;
	up_denied(validate(LAN_ONLY("{'replicatedJobs':[]}"), tj("default", "test", "{'numNodes':2}")),
		  "spec.trainer.numNodes", WANT_ONE);
}

static void mpi_v_reserved(void **state)
{
	(void)state;
	up_denied(validate(rt_with(MPI_POLICY(""), MPI_JOBS),
			   tj("default", "test", "{'env':[{'name':'OMPI_MCA_orte_default_hostfile',"
						 "'value':'/custom/hostfile'}]}")),
		  "spec.trainer.env",
		  "must not have reserved envs, invalid envs configured: [OMPI_MCA_orte_default_hostfile]");
}

static void mpi_v_reserved_many(void **state)
{
	(void)state;
	up_denied(validate(rt_with(MPI_POLICY(""), MPI_JOBS),
			   tj("default", "test", "{'env':[{'name':'OMPI_MCA_orte_default_hostfile',"
						 "'value':'/custom/hostfile'},{'name':"
						 "'OMPI_MCA_plm_rsh_args','value':'custom-args'}]}")),
		  "spec.trainer.env",
		  "must not have reserved envs, invalid envs configured: "
		  "[OMPI_MCA_orte_default_hostfile OMPI_MCA_plm_rsh_args]");
}

static void mpi_v_not_reserved(void **state)
{
	(void)state;
	up_allowed(validate(rt_with(MPI_POLICY(""), MPI_JOBS),
			    tj("default", "test", "{'env':[{'name':'CUSTOM_ENV','value':'custom-value'}]}")));
}

/* ============================================================ XGBoost */

#define XGB "'mlPolicy':{'numNodes':1,'xgboost':{}}"

static void xgb_v_no_xgb(void **state)
{
	(void)state;
	up_allowed(validate(rt_with("'mlPolicy':{'torch':{}}", TRAINER_ONLY),
			    tj("default", "test", "{'numNodes':1,'env':[{'name':'DMLC_TRACKER_URI',"
						  "'value':'custom-tracker'}]}")));
}

static void xgb_v_nil_trainer(void **state)
{
	(void)state;
	up_allowed(validate(rt_with(XGB, TRAINER_ONLY), tj("default", "test", NULL)));
}

static void xgb_v_ok(void **state)
{
	(void)state;
	up_allowed(validate(rt_with(XGB, TRAINER_ONLY),
			    tj("default", "test", "{'numNodes':1,'env':[{'name':'MY','value':'v'}]}")));
}

static void xgb_v_tracker(void **state)
{
	(void)state;
	up_denied(validate(rt_with(XGB, TRAINER_ONLY),
			   tj("default", "test", "{'numNodes':1,'env':[{'name':'DMLC_TRACKER_URI',"
						 "'value':'custom-tracker'}]}")),
		  "spec.trainer.env[0]", "DMLC_TRACKER_URI is reserved for the XGBoost runtime");
}

static void xgb_v_workers(void **state)
{
	(void)state;
	up_denied(validate(rt_with(XGB, TRAINER_ONLY),
			   tj("default", "test", "{'numNodes':1,'env':[{'name':'DMLC_NUM_WORKER',"
						 "'value':'10'}]}")),
		  "spec.trainer.env[0]", "DMLC_NUM_WORKER is reserved for the XGBoost runtime");
}

static void xgb_v_many(void **state)
{
	(void)state;
	tp_result *r = validate(rt_with(XGB, TRAINER_ONLY),
				tj("default", "test", "{'numNodes':1,'env':[{'name':'DMLC_TRACKER_URI',"
						      "'value':'a'},{'name':'DMLC_TASK_ID','value':'0'}]}"));
	assert_int_equal(tp_result_error_count(r), 2);
	assert_true(tt_has_error(r, "spec.trainer.env[0]", "DMLC_TRACKER_URI is reserved"));
	up_denied(r, "spec.trainer.env[1]", "DMLC_TASK_ID is reserved for the XGBoost runtime");
}

static void xgb_none(const char *ml, const char *trainer)
{
	cJSON *l = expand(tj("default", "test-job", trainer), rt_with(ml, TRAINER_ONLY));
	assert_null(ex_env(node(l), "DMLC_NUM_WORKER"));
	cJSON_Delete(l);
}

static void xgb_e_nil(void **state)
{
	(void)state;
	xgb_none("", "{'numNodes':1}");
}

static void xgb_e_null(void **state)
{
	(void)state;
	xgb_none("'mlPolicy':{}", "{'numNodes':1}");
}

static void xgb_e_no_trainer(void **state)
{
	(void)state;
	xgb_none(XGB, NULL);
}

/* name, trainer, runtime's node pod, workers */
struct xgb_row {
	const char *name, *trainer, *rt_nodes, *pod, *workers;
	long long count;
};

#define GPU_POD(n) "{'containers':[{'name':'node','resources':{'requests':{'example.com/gpu':'" n "'}}}]}"

static const struct xgb_row xgb_rows[] = {
	{ "test-job", "{'numNodes':1}", "1", NODE_POD, "1", 1 },
	{ "multi-node-job", "{'numNodes':4}", "2", NODE_POD, "4", 4 },
	{ "gpu-job", "{'numNodes':2,'image':'xgboost/xgboost:latest','resourcesPerNode':{'requests':"
		     "{'cpu':'8','memory':'32Gi','example.com/gpu':'4'}}}", "1", NODE_POD, "8", 2 },
	{ "trainJob", "{'numNodes':3}", "1", NODE_POD, "3", 3 },
	{ "no-res-job", "{'numNodes':2}", "2", NODE_POD, "2", 2 },
	{ "runtime-res-job", "{'numNodes':3}", "1", GPU_POD("2"), "6", 3 },
	{ "trainjob-res", "{'numNodes':2,'image':'xgboost/xgboost:latest','resourcesPerNode':"
			  "{'requests':{'example.com/gpu':'4'}}}", "1", NODE_POD, "8", 2 },
	{ "both-res-job", "{'numNodes':2,'image':'xgboost/xgboost:latest','resourcesPerNode':"
			  "{'requests':{'example.com/gpu':'3'}}}", "1", GPU_POD("1"), "6", 2 },
};

static void xgb_e(void **state)
{
	const struct xgb_row *row = *state;
	char ml[128], jobs[1024], addr[128];
	snprintf(ml, sizeof(ml), "'mlPolicy':{'numNodes':%s,'xgboost':{}}", row->rt_nodes);
	snprintf(jobs, sizeof(jobs),
		 "{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':{" ANCESTOR
		 ":'trainer'}},'spec':{'template':{'spec':%s}}}}]}", row->pod);
	cJSON *l = expand(tj("default", row->name, row->trainer), rt_with(ml, jobs));
	const cJSON *c = node(l);
	snprintf(addr, sizeof(addr), "%s-node-0-0.%s", row->name, row->name);
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), row->count);
	assert_string_equal(ex_env(c, "DMLC_TRACKER_URI"), addr);
	assert_string_equal(ex_env(c, "DMLC_TRACKER_PORT"), "29500");
	assert_string_equal(ex_env(c, "DMLC_TASK_ID"), "(valueFrom)");
	assert_string_equal(ex_env(c, "DMLC_NUM_WORKER"), row->workers);
	ex_assert_json(tp_get(c, "ports"), "[{'containerPort':29500}]");
	cJSON_Delete(l);
}

/* ================================================================ JAX */

static void jax_none(const char *ml, const char *jobs)
{
	cJSON *l = expand(tj("default", "test-job", "{'numNodes':2}"), rt_with(ml, jobs));
	const cJSON *c = ex_container(ex_job(l, "node"), "node");
	assert_null(ex_env(c, "JAX_NUM_PROCESSES"));
	cJSON_Delete(l);
}

static void jax_nil(void **state)
{
	(void)state;
	jax_none("", TRAINER_ONLY);
}

static void jax_null(void **state)
{
	(void)state;
	jax_none("'mlPolicy':{}", TRAINER_ONLY);
}

static void jax_no_trainer_job(void **state)
{
	(void)state;
	jax_none("'mlPolicy':{'jax':{}}",
		 "{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':" NODE_POD
		 "}}}}]}");
}

struct jax_row {
	const char *name, *trainer, *rt_nodes, *processes;
};

static const struct jax_row jax_rows[] = {
	{ "test-job", "{'numNodes':1}", "1", "1" },
	{ "multi-node-job", "{'numNodes':4}", "2", "4" },
	{ "trainJob", "{'numNodes':3}", "1", "3" },
	{ "gpu-job", "{'numNodes':2,'resourcesPerNode':{'requests':{'cpu':'8','memory':'32Gi',"
		     "'nvidia.com/gpu':'4'}}}", "1", "2" },
};

static void jax_e(void **state)
{
	const struct jax_row *row = *state;
	char ml[96], addr[128];
	snprintf(ml, sizeof(ml), "'mlPolicy':{'numNodes':%s,'jax':{}}", row->rt_nodes);
	cJSON *l = expand(tj("default", row->name, row->trainer), rt_with(ml, TRAINER_ONLY));
	const cJSON *c = node(l);
	snprintf(addr, sizeof(addr), "%s-node-0-0.%s:29500", row->name, row->name);
	assert_string_equal(ex_env(c, "JAX_NUM_PROCESSES"), row->processes);
	assert_string_equal(ex_env(c, "JAX_PROCESS_ID"), "(valueFrom)");
	assert_string_equal(ex_env(c, "JAX_COORDINATOR_ADDRESS"), addr);
	ex_assert_json(tp_get(c, "ports"), "[{'containerPort':29500}]");
	cJSON_Delete(l);
}

/* ============================================================ PlainML */

static void plain_num_nodes(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "test", "{'numNodes':200}"),
			  rt_with("'mlPolicy':{'numNodes':100}", TRAINER_ONLY));
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 200);
	cJSON_Delete(l);
}

static void plain_env(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "test", "{'numNodes':1,'env':[{'name':'CONFLICT','value':"
						"'FROM_TRAINER'}]}"),
			  rt_with("'mlPolicy':{'numNodes':100}",
				  "{'replicatedJobs':[" TRAINER_JOB("{'containers':[{'name':'node','env':"
								    "[{'name':'CONFLICT','value':"
								    "'FROM_RUNTIME'}]}]}") "]}"));
	assert_int_equal(ex_int(ex_job(l, "node"), "template.spec.parallelism"), 1);
	ex_assert_json(tp_get(node(l), "env"), "[{'name':'CONFLICT','value':'FROM_TRAINER'}]");
	cJSON_Delete(l);
}

/* ======================================================= Coscheduling */

#define COSCHED "'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':30}}"

static void cosched_none(void **state)
{
	const char *pg = *state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':2}"), rt_with(pg, TRAINER_ONLY));
	assert_null(ex_kind(l, "PodGroup"));
	assert_null(ex_key_str(ex_job(l, "node"), "template.spec.template.metadata.labels",
			       "scheduling.x-k8s.io/pod-group"));
	cJSON_Delete(l);
}

static const cJSON *pod_group(const cJSON *l)
{
	const cJSON *pg = ex_kind(l, "PodGroup");
	assert_non_null(pg);
	return pg;
}

static void cs_build(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob", NULL), rt_with(COSCHED, TRAINER_ONLY));
	const cJSON *pg = pod_group(l);
	assert_string_equal(tp_get_str(pg, "apiVersion"), "scheduling.x-k8s.io/v1alpha1");
	ex_assert_json(tp_get(pg, "spec"), "{'minMember':1,'scheduleTimeoutSeconds':30,'minResources':{}}");
	assert_string_equal(ex_key_str(ex_job(l, "node"), "template.spec.template.metadata.labels",
				       "scheduling.x-k8s.io/pod-group"), "trainJob");
	cJSON_Delete(l);
}

#define TWO_JOBS                                                                                \
	"{'replicatedJobs':[" TRAINER_JOB("{'containers':[{'name':'node','resources':{'requests':" \
					  "{'cpu':'500m','memory':'1Gi'}}}]}")                      \
	",{'name':'launcher','template':{'spec':{'template':{'spec':{'containers':[{'name':'node',"  \
	"'resources':{'requests':{'cpu':'250m','memory':'512Mi'}}}]}}}}}]}"

static void cs_build_multiple(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':2}"), rt_with(COSCHED, TWO_JOBS));
	const cJSON *pg = pod_group(l);
	assert_int_equal(ex_int(pg, "spec.minMember"), 3);
	ex_assert_json(tp_get(pg, "spec.minResources"), "{'cpu':'1250m','memory':'2560Mi'}");
	cJSON_Delete(l);
}

static void cs_build_min_resources(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "trainJob", "{'numNodes':2}"),
			  rt_with(COSCHED, "{'replicatedJobs':[" TRAINER_JOB(
						   "{'containers':[{'name':'node','resources':"
						   "{'requests':{'cpu':'500m','memory':'1Gi'}}}]}") "]}"));
	const cJSON *pg = pod_group(l);
	assert_int_equal(ex_int(pg, "spec.minMember"), 2);
	ex_assert_json(tp_get(pg, "spec.minResources"), "{'cpu':'1','memory':'2Gi'}");
	assert_int_equal(ex_int(pg, "spec.scheduleTimeoutSeconds"), 30);
	cJSON_Delete(l);
}

/* ============================================================ Volcano */

static void vc_annotation(void **state)
{
	(void)state;
	cJSON *l = expand(tj("default", "test-trainjob", NULL),
			  rt_with("'podGroupPolicy':{'volcano':{}}", TRAINER_ONLY));
	assert_string_equal(ex_key_str(ex_job(l, "node"), "template.spec.template.metadata.annotations",
				       "scheduling.k8s.io/group-name"), "test-trainjob");
	const cJSON *pg = pod_group(l);
	assert_string_equal(tp_get_str(pg, "apiVersion"), "scheduling.volcano.sh/v1beta1");
	assert_string_equal(tp_get_str(pg, "metadata.name"), "test-trainjob");
	assert_non_null(tp_get(pg, "spec.minResources"));
	cJSON_Delete(l);
}

/* "PodGroup exists but trainjob suspended": the PodGroup upstream builds. */
static void vc_suspended(void **state)
{
	(void)state;
	/* the queue comes from the JobSet template's annotation */
	cJSON *t = tj("test-ns", "job-update", NULL);
	up_set(t, "spec.suspend", "true");
	up_set(t, "metadata.uid", "'2'");
	cJSON *rt = rt_with("'podGroupPolicy':{'volcano':{'networkTopology':{'mode':'hard',"
			    "'highestTierAllowed':1}}}",
			    "{'replicatedJobs':[{'name':'launcher','template':{'spec':{'template':"
			    "{'spec':{'priorityClassName':'high-priority','containers':[{'name':"
			    "'l','resources':{'requests':{'cpu':'300m','memory':'1Gi'}}}]}}}}},"
			    "{'name':'worker','template':{'spec':{'parallelism':4,'template':"
			    "{'spec':{'containers':[{'name':'w','resources':{'requests':{'cpu':"
			    "'500m','memory':'0.5Gi'}}}]}}}}}]}");
	up_set(rt, "spec.template.metadata", "{'annotations':{'scheduling.volcano.sh/queue-name':'q1'}}");
	cJSON *l = expand(t, rt);
	const cJSON *pg = pod_group(l);
	ex_assert_json(tp_get(pg, "metadata"),
		       "{'name':'job-update','namespace':'test-ns','ownerReferences':[{'apiVersion':"
		       "'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'job-update','uid':'2',"
		       "'controller':true,'blockOwnerDeletion':true}]}");
	assert_int_equal(ex_int(pg, "spec.minMember"), 5);
	ex_assert_json(tp_get(pg, "spec.minResources"), "{'cpu':'2300m','memory':'3Gi'}");
	assert_string_equal(tp_get_str(pg, "spec.queue"), "q1");
	assert_string_equal(tp_get_str(pg, "spec.priorityClassName"), "high-priority");
	ex_assert_json(tp_get(pg, "spec.networkTopology"), "{'mode':'hard','highestTierAllowed':1}");
	cJSON_Delete(l);
}

/* TestValidate (the priorityClassName cases are in test_validate_trainjob.c) */
static void vc_v_not_enabled(void **state)
{
	(void)state;
	cJSON *rt = rt_with("", TRAINER_ONLY);
	up_set(rt, "spec.template.metadata", "{'annotations':{'scheduling.volcano.sh/queue-name':''}}");
	up_allowed(validate(rt, tj("default", "test", NULL)));
}

static void vc_v_empty_queue(void **state)
{
	(void)state;
	cJSON *rt = rt_with("'podGroupPolicy':{'volcano':{}}", TRAINER_ONLY);
	up_set(rt, "spec.template.metadata", "{'annotations':{'scheduling.volcano.sh/queue-name':''}}");
	tp_result *r = validate(rt, tj("default", "test", NULL));
	assert_string_equal(tp_result_error_at(r, 0)->value, "\"\"");
	up_denied(r, "spec.annotations[scheduling.volcano.sh/queue-name]",
		  "Volcano queue name must not be empty");
}

int main(void)
{
	tp_json_init();
	static const up_case cases[] = {
		/* mpi_test.go */
		UP_ROW("TestMPI/no action when mlPolicySource is nil", mpi_no_policy, ""),
		UP_ROW("TestMPI/no action when mlPolicySource mpi is null", mpi_no_policy, "'mlPolicy':{}"),
		UP_CASE("TestMPI/trainJob numNodes is respected rather than mlPolicy one", mpi_num_nodes),
		UP_CASE("TestMPI/trainJob numProcPerNode is respected rather than mlPolicy one",
			mpi_num_proc),
		UP_CASE("TestMPI/numProcPerNode is set to number of GPUs in TrainJob", mpi_gpus),
		UP_CASE("TestMPI/runLauncherAsNode is true", mpi_launcher_as_node),
		UP_CASE("TestValidate/no action when info does not have MLPolicySource", mpi_v_no_ml),
		UP_CASE("TestValidate/info does not have MPIPolicySource", mpi_v_no_mpi),
		UP_CASE("TestValidate/numProcPerNode typed is int", mpi_v_int),
		UP_CASE("TestValidate/runtime does not have Launcher but TrainJob has only 1 numNodes",
			mpi_v_no_launcher_one),
		UP_CASE("TestValidate/runtime does not have Launcher even though MPI with runLauncherAsNode "
			"has 2 numNodes", mpi_v_no_launcher_two),
		UP_CASE("TestValidate/runtime does not have Node even though MPI with runLauncherAsNode has "
			"2 numNodes", mpi_v_no_node_two),
		UP_CASE("TestValidate/runtime does not have Launcher and Node even though MPI with "
			"runLauncherAsNode has 2 numNodes", mpi_v_neither_two),
		UP_CASE("TestValidate/trainer has reserved MPI env OMPI_MCA_orte_default_hostfile",
			mpi_v_reserved),
		UP_CASE("TestValidate/trainer has multiple reserved MPI envs", mpi_v_reserved_many),
		UP_CASE("TestValidate/trainer has non-reserved env is valid", mpi_v_not_reserved),
		/* xgboost_test.go */
		UP_CASE("TestXGBoostValidate/no error when runtime is not XGBoost (e.g. Torch)", xgb_v_no_xgb),
		UP_CASE("TestXGBoostValidate/no error when trainer is nil", xgb_v_nil_trainer),
		UP_CASE("TestXGBoostValidate/no error when env does not contain reserved names", xgb_v_ok),
		UP_CASE("TestXGBoostValidate/error when using reserved DMLC_TRACKER_URI env", xgb_v_tracker),
		UP_CASE("TestXGBoostValidate/error when using reserved DMLC_NUM_WORKER env", xgb_v_workers),
		UP_CASE("TestXGBoostValidate/multiple errors when using multiple reserved envs", xgb_v_many),
		UP_CASE("TestXGBoostEnforceMLPolicy/no action when mlPolicySource is nil", xgb_e_nil),
		UP_CASE("TestXGBoostEnforceMLPolicy/no action when mlPolicySource XGBoost is null",
			xgb_e_null),
		UP_CASE("TestXGBoostEnforceMLPolicy/no env injection when trainJob.Spec.Trainer is nil",
			xgb_e_no_trainer),
		UP_ROW("TestXGBoostEnforceMLPolicy/single node XGBoost training (CPU)", xgb_e, &xgb_rows[0]),
		UP_ROW("TestXGBoostEnforceMLPolicy/multi-node XGBoost training (CPU)", xgb_e, &xgb_rows[1]),
		UP_ROW("TestXGBoostEnforceMLPolicy/XGBoost training with GPU resources", xgb_e, &xgb_rows[2]),
		UP_ROW("TestXGBoostEnforceMLPolicy/trainJob numNodes is respected", xgb_e, &xgb_rows[3]),
		UP_ROW("TestXGBoostEnforceMLPolicy/resources not set - defaults to 1 worker per node", xgb_e,
		       &xgb_rows[4]),
		UP_ROW("TestXGBoostEnforceMLPolicy/resources set in Runtime only", xgb_e, &xgb_rows[5]),
		UP_ROW("TestXGBoostEnforceMLPolicy/resources set in TrainJob only", xgb_e, &xgb_rows[6]),
		UP_ROW("TestXGBoostEnforceMLPolicy/resources set in both Runtime and TrainJob", xgb_e,
		       &xgb_rows[7]),
		/* jax_test.go */
		UP_CASE("TestJAXEnforceMLPolicy/no action when mlPolicySource is nil", jax_nil),
		UP_CASE("TestJAXEnforceMLPolicy/no action when mlPolicySource JAX is null", jax_null),
		UP_CASE("TestJAXEnforceMLPolicy/no panic when JAX policy is set but trainer PodSet is absent",
			jax_no_trainer_job),
		UP_ROW("TestJAXEnforceMLPolicy/single node JAX training", jax_e, &jax_rows[0]),
		UP_ROW("TestJAXEnforceMLPolicy/multi-node JAX training", jax_e, &jax_rows[1]),
		UP_ROW("TestJAXEnforceMLPolicy/trainJob numNodes is respected", jax_e, &jax_rows[2]),
		UP_ROW("TestJAXEnforceMLPolicy/JAX training with GPU resources", jax_e, &jax_rows[3]),
		/* plainml_test.go */
		UP_CASE("TestPlainML/trainJob trainer numNodes are respected rather than runtimeInfo",
			plain_num_nodes),
		UP_CASE("TestPlainML/trainJob trainer env are respected rather than runtimeInfo", plain_env),
		/* coscheduling_test.go */
		UP_ROW("TestCoScheduling/no action when podGroupPolicy is nil", cosched_none, ""),
		UP_ROW("TestCoScheduling/no action when coscheduling is nil", cosched_none, "'podGroupPolicy':{}"),
		UP_CASE("TestCoScheduling/succeeded to build PodGroup", cs_build),
		UP_CASE("TestCoScheduling/succeeded to build PodGroup with multiple PodSets",
			cs_build_multiple),
		UP_CASE("TestCoScheduling/succeeded to build PodGroup with MinResources",
			cs_build_min_resources),
		/* volcano_test.go */
		UP_CASE("TestVolcano/inject group-name annotation", vc_annotation),
		UP_CASE("TestVolcano/PodGroup exists but trainjob suspended", vc_suspended),
		UP_CASE("TestValidate/no action when Volcano policy not enabled", vc_v_not_enabled),
		UP_CASE("TestValidate/queue annotation is empty", vc_v_empty_queue),
	};
	return UP_RUN("upstream plugins", cases);
}
