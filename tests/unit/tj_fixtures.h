/*
 * tj_fixtures.h — the runtimes and helpers the TrainJob tests share
 * (header-only: each test binary is one translation unit).
 */
#ifndef TT_TJ_FIXTURES_H
#define TT_TJ_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

/* A replicated job: name, ancestor label, container (with the initializer mount
 * and its volume: the strict profile refuses Pods that mount what they lack). */
#define TJ_JOB(name, step, container)                                                    \
	"{\"name\":\"" name "\",\"template\":{\"metadata\":{\"labels\":{"                 \
	"\"trainer.kubeflow.org/trainjob-ancestor-step\":\"" step "\"}},\"spec\":{"        \
	"\"template\":{\"spec\":{\"volumes\":[{\"name\":\"initializer\",\"emptyDir\":{}}]," \
	"\"initContainers\":[{\"name\":\"prep\",\"image\":\"img\"}],\"containers\":[{"      \
	"\"name\":\"" container "\",\"image\":\"img\",\"volumeMounts\":[{\"name\":"         \
	"\"initializer\",\"mountPath\":\"/workspace\"}]}]}}}}}"

#define TJ_RUNTIME(kind, ns, name, labels, spec)                                          \
	"{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"" kind "\","         \
	"\"metadata\":{\"name\":\"" name "\",\"namespace\":\"" ns "\",\"labels\":{" labels \
	"}},\"spec\":" spec "}"

#define TJ_DEPRECATED "\"trainer.kubeflow.org/support\":\"deprecated\""

/* Parse outside any arena with plain malloc: the store frees with cJSON_Delete. */
static inline void tj_put(tp_store *s, const char *json)
{
	cJSON *o = cJSON_Parse(json);
	if (!o) {
		fprintf(stderr, "bad fixture JSON: %s\n", json);
		abort();
	}
	if (tp_store_put(s, o) != TP_OK)
		abort();
}

static inline tp_store *tj_store(void)
{
	tp_store *s;
	if (tp_store_new(&s))
		abort();
	const char *torch = "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{\"envInjection\":{"
			    "\"targets\":[{\"jobName\":\"node\",\"containerNames\":[\"prep\"]}]}}},"
			    "\"template\":{\"spec\":{\"replicatedJobs\":["
			    TJ_JOB("dataset-initializer", "dataset-initializer", "dataset-initializer") ","
			    TJ_JOB("node", "trainer", "node") "]}}}";
	char buf[8192];
	snprintf(buf, sizeof(buf), TJ_RUNTIME("TrainingRuntime", "team-a", "team-torch", "", "%s"),
		 torch);
	tj_put(s, buf);
	snprintf(buf, sizeof(buf), TJ_RUNTIME("TrainingRuntime", "team-a", "old-torch",
					      TJ_DEPRECATED, "%s"), torch);
	tj_put(s, buf);
	snprintf(buf, sizeof(buf), TJ_RUNTIME("ClusterTrainingRuntime", "", "torch-distributed",
					      TJ_DEPRECATED, "%s"), torch);
	tj_put(s, buf);
	snprintf(buf, sizeof(buf), TJ_RUNTIME("ClusterTrainingRuntime", "", "torch-current", "",
					      "%s"), torch);
	tj_put(s, buf);
	snprintf(buf, sizeof(buf), TJ_RUNTIME("TrainingRuntime", "team-b", "elsewhere", "", "%s"),
		 torch);
	tj_put(s, buf);
	snprintf(buf, sizeof(buf), TJ_RUNTIME("TrainingRuntime", "team-c", "elsewhere", "", "%s"),
		 torch);
	tj_put(s, buf);
	tj_put(s, TJ_RUNTIME("ClusterTrainingRuntime", "", "mpi-solo", "",
			     "{\"mlPolicy\":{\"mpi\":{\"runLauncherAsNode\":true}},\"template\":{"
			     "\"spec\":{\"replicatedJobs\":[" TJ_JOB("node", "trainer", "node") "]}}}"));
	tj_put(s, TJ_RUNTIME("ClusterTrainingRuntime", "", "mpi-pair", "",
			     "{\"mlPolicy\":{\"mpi\":{\"runLauncherAsNode\":true}},\"template\":{"
			     "\"spec\":{\"replicatedJobs\":[" TJ_JOB("launcher", "trainer", "node") ","
			     TJ_JOB("node", "trainer", "node") "]}}}"));
	tj_put(s, TJ_RUNTIME("ClusterTrainingRuntime", "", "xgb", "",
			     "{\"mlPolicy\":{\"xgboost\":{}},\"template\":{\"spec\":{"
			     "\"replicatedJobs\":[" TJ_JOB("node", "trainer", "node") "]}}}"));
	tj_put(s, TJ_RUNTIME("ClusterTrainingRuntime", "", "volcano-empty", "",
			     "{\"podGroupPolicy\":{\"volcano\":{}},\"template\":{\"metadata\":{"
			     "\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"\"}},\"spec\":{"
			     "\"replicatedJobs\":[" TJ_JOB("node", "trainer", "node") "]}}}"));
	tj_put(s, TJ_RUNTIME("ClusterTrainingRuntime", "", "volcano-queue", "",
			     "{\"podGroupPolicy\":{\"volcano\":{}},\"template\":{\"metadata\":{"
			     "\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"q1\"}},\"spec\":{"
			     "\"replicatedJobs\":[" TJ_JOB("node", "trainer", "node") "]}}}"));
	/* Volcano with priorityClassNames: "high" exists, "low" does not. */
#define TJ_PC_JOB(name, pc)                                                                    \
	"{\"name\":\"" name "\",\"template\":{\"spec\":{\"template\":{\"spec\":{"              \
	"\"priorityClassName\":\"" pc "\",\"containers\":[{\"name\":\"node\",\"image\":\"i\"}]}}}}}"
#define TJ_VOLCANO(name, jobs)                                                                  \
	TJ_RUNTIME("ClusterTrainingRuntime", "", name, "",                                     \
		   "{\"podGroupPolicy\":{\"volcano\":{}},\"template\":{\"spec\":{"             \
		   "\"replicatedJobs\":[" jobs "]}}}")
	tj_put(s, "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
		  "\"metadata\":{\"name\":\"high\"},\"value\":1000}");
	tj_put(s, TJ_VOLCANO("volcano-pc", TJ_PC_JOB("a", "high") "," TJ_PC_JOB("b", "low")));
	tj_put(s, TJ_VOLCANO("volcano-pc-ok", TJ_PC_JOB("a", "high")));
	tj_put(s, TJ_VOLCANO("volcano-pc-system",
			     TJ_PC_JOB("a", "system-node-critical") "," TJ_PC_JOB("b", "low")));
	const char *tune[] = { "torchtune-llama3.2-1b", "torchtune-llama3.2-3b",
			       "torchtune-llama3.3-70b", "torchtune-qwen2.5-1.5b", "torchtune-gpt-2b" };
	for (size_t i = 0; i < sizeof(tune) / sizeof(*tune); i++) {
		snprintf(buf, sizeof(buf), TJ_RUNTIME("ClusterTrainingRuntime", "", "%s", "",
						      "{\"mlPolicy\":{\"torch\":{}},\"template\":{"
						      "\"spec\":{\"replicatedJobs\":["
						      TJ_JOB("node", "trainer", "node") "]}}}"), tune[i]);
		tj_put(s, buf);
	}
	/* The JobSet of TrainJob team-a/busy: its node job still runs. */
	tj_put(s, "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":"
		  "{\"name\":\"busy\",\"namespace\":\"team-a\"},\"status\":{\"replicatedJobsStatus\":"
		  "[{\"name\":\"dataset-initializer\",\"active\":0},{\"name\":\"node\",\"active\":2}]}}");
	return s;
}

/* A TrainJob team-a/<name> referencing kind/ref, with extra spec members. */
static inline cJSON *tj_job(const char *name, const char *kind, const char *ref,
			    const char *spec_extra)
{
	size_t n = strlen(spec_extra) + 512;
	char *buf = malloc(n);
	snprintf(buf, n, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		 "\"metadata\":{\"name\":\"%s\",\"namespace\":\"team-a\"},\"spec\":{\"runtimeRef\":"
		 "{\"name\":\"%s\",\"apiGroup\":\"trainer.kubeflow.org\",\"kind\":\"%s\"}%s%s}}",
		 name, ref, kind, *spec_extra ? "," : "", spec_extra);
	cJSON *j = tt_json(buf);
	free(buf);
	return j;
}

/* The group state every TrainJob test file uses: a store of the runtimes
 * above and one result, made by setup and freed by teardown. */
#define TJ_GROUP_STATE                                                                     \
	static tp_store *store;                                                           \
	static tp_result *res;                                                            \
	static int setup(void **state)                                                    \
	{                                                                                 \
		(void)state;                                                              \
		tp_json_init();                                                           \
		store = tj_store();                                                       \
		return tp_result_new(&res);                                               \
	}                                                                                 \
	static int teardown(void **state)                                                 \
	{                                                                                 \
		(void)state;                                                              \
		tp_result_free(res);                                                      \
		tp_store_free(store);                                                     \
		return 0;                                                                 \
	}

#endif
