/*
 * test_linear_cost.c — every route and offline command costs O(n) in the
 * size of what it reads: the same input with 10x the items of one list or
 * map must take about 10x the instructions, never 100x (issue 20: 100,000
 * env items held a worker 51 s, 100,000 containers in a runtimePatch 93 s,
 * 100,000 labels 36 s on the mutate route).
 *
 * Instructions, not seconds: the commands run under callgrind, which counts
 * those of the decision alone, whatever else the machine does. Skipped when
 * valgrind is missing (tests/deps.sh installs it) and in `make asan`, whose
 * binary valgrind cannot run. (perf_event_open's instruction counter would
 * be cheaper, but where there is no hardware counter, as in a container on a
 * VM, it is not there at all; the library's own step count of a deadline
 * counts only the loops that tick it, so a quadratic loop that does not
 * would pass.)
 *
 * One callgrind start-up for the whole test: this program runs itself under
 * callgrind (--measure), calls the commands main() would (tw_cmd_review,
 * tw_cmd_validate, tw_cmd_expand: the same code as the binary's) on every
 * input, each in a child forked under callgrind, which dumps its count (a
 * client request). Only the function a case counts is instrumented and
 * collected: the Makefile links this program with -Wl,--wrap= for each
 * counted function, so that every call of it from the commands goes through
 * a wrapper here that turns callgrind's instrumentation on at its first
 * entry and collects from entry to return (what --toggle-collect=FN
 * counted). Everything before it (the command's start: reading the CRDs and
 * the runtimes, 60 of the 61 million instructions of a TrainJob review)
 * runs uninstrumented, and the inputs are written before, natively, each
 * into a folder of its run (their colliding names took most of the time
 * under valgrind). A planted quadratic (quadratic_probe) is counted the same
 * way, to show the check still catches one. 1 start-up of valgrind instead
 * of 7, and 25 CPU-seconds instead of 50. (A call of a counted function
 * from its own source file does not reach the wrapper: it counts only
 * within a counted caller.)
 *
 * What callgrind's time goes to is the binary's start, not the decision:
 * reading the CRDs' 3.2 MB of YAML was 97% of every run's instructions
 * (384 of 397 million for a TrainJob of 200 env items, 7.9 million in the
 * decision at 2,000). So the CRDs are read as JSON: setup writes the same
 * CRDs (the built-in ones, and ../shared's) as JSON files, loaded as the
 * binary loads them, and every case that checks with CRDs names those.
 * The CRDs compiled, and so the decision counted, are the same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glob.h>

#include <valgrind/callgrind.h>

#include "policy/trainpolicy.h"
#include "tests/support/testutil.h"
#include "webhook/admission/admission.h"
#include "webhook/admission/expand_api.h"
#include "webhook/cli/builtin_crds.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/findings.h"

/* 10x apart; large enough that an O(n^2) step dominates its case at the
 * big size (the old code: ratios of 30 to 100 at 2,000), small enough for
 * callgrind. A case whose items cost much (a Pod check each) sets a smaller
 * n_small: callgrind's time is the instructions it counts, and at 200 ->
 * 2,000 items the 27 cases counted 1.5 billion, half of them in five cases. */
#define N_SMALL 100
#define BIG_TIMES 10
/* linear is 10; a hash table's growth and n log n sorts stay well under */
#define MAX_RATIO 14.0
#define MIN_RATIO 5.0

static char tmp[64];
static bool have_valgrind;

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmp, name);
	return buf[i];
}

static void save(const char *name, const tp_buf *b)
{
	FILE *f = fopen(tpath(name), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->data, 1, b->len, f), b->len);
	fclose(f);
}

/* ------------------------------------------------------------ inputs
 * Each maker appends a JSON document with n items of one list or map. */

typedef void (*maker)(tp_buf *b, int n);

static void items(tp_buf *b, int n, const char *fmt)
{
	for (int i = 0; i < n; i++) {
		if (i)
			tp_buf_addc(b, ',');
		tp_buf_addf(b, fmt, i, i);
	}
}

static void trainjob_open(tp_buf *b, const char *runtime)
{
	tp_buf_addf(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		       "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\",\"uid\":\"u1\"},"
		       "\"spec\":{\"runtimeRef\":{\"name\":\"%s\"},", runtime);
}

static void tj_env(tp_buf *b, int n)
{
	trainjob_open(b, "torch-distributed");
	tp_buf_adds(b, "\"trainer\":{\"image\":\"x\",\"env\":[");
	items(b, n, "{\"name\":\"E%d\",\"value\":\"v%d\"}");
	tp_buf_adds(b, "]}}}");
}

static void tj_containers(tp_buf *b, int n)
{
	trainjob_open(b, "torch-distributed");
	tp_buf_adds(b, "\"runtimePatches\":[{\"manager\":\"example.com/m\",\"trainingRuntimeSpec\":"
		       "{\"template\":{\"spec\":{\"replicatedJobs\":[{\"name\":\"node\",\"template\":"
		       "{\"spec\":{\"template\":{\"spec\":{\"containers\":[");
	items(b, n, "{\"name\":\"c%d\",\"image\":\"i%d\"}");
	tp_buf_adds(b, "]}}}}}]}}}}]}}");
}

static void tj_patches(tp_buf *b, int n)
{
	trainjob_open(b, "torch-distributed");
	tp_buf_adds(b, "\"runtimePatches\":[");
	items(b, n, "{\"manager\":\"example.com/m%d\",\"trainingRuntimeSpec\":{\"template\":"
		    "{\"spec\":{\"replicatedJobs\":[{\"name\":\"j%d\"}]}}}}");
	tp_buf_adds(b, "]}}");
}

static void tj_labels(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		       "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\",\"labels\":{");
	items(b, n, "\"k%d\":\"v%d\"");
	tp_buf_adds(b, "}},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
		       "\"runtimePatches\":[{\"manager\":\"example.com/m\"}]}}");
}

static void tj_resources(tp_buf *b, int n)
{
	trainjob_open(b, "torch-distributed");
	tp_buf_adds(b, "\"trainer\":{\"image\":\"x\",\"resourcesPerNode\":{\"limits\":{");
	items(b, n, "\"example.com/r%d\":\"%d\"");
	tp_buf_adds(b, "}}}}}");
}

/* A ClusterTrainingRuntime "wide" of n jobs of 3 containers, and a TrainJob
 * whose one patch names each of them with a container: the JobSet plugin
 * looks every patched job and container up in the runtime. */
static void wide_runtime(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"wide\"},\"spec\":"
		       "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":"
		       "{\"replicatedJobs\":[");
	items(b, n, "{\"name\":\"j%d\",\"template\":{\"spec\":{\"template\":{\"spec\":"
		    "{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c%d\"}]}}}}}");
	tp_buf_adds(b, "]}}}}");
}

static void tj_wide_patch(tp_buf *b, int n)
{
	trainjob_open(b, "wide");
	tp_buf_adds(b, "\"runtimePatches\":[{\"manager\":\"example.com/m\",\"trainingRuntimeSpec\":"
		       "{\"template\":{\"spec\":{\"replicatedJobs\":[");
	for (int i = 0; i < n; i++)
		tp_buf_addf(b, "%s{\"name\":\"j%d\",\"template\":{\"spec\":{\"template\":"
			       "{\"spec\":{\"containers\":[{\"name\":\"c%d\"}]}}}}}", i ? "," : "",
			    n - 1 - i, n - 1 - i);
	tp_buf_adds(b, "]}}}}]}}");
}

static void runtime_jobs(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"big\"},\"spec\":"
		       "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":"
		       "{\"replicatedJobs\":[");
	items(b, n, "{\"name\":\"j%d\",\"dependsOn\":[{\"name\":\"j%d\",\"status\":\"Ready\"}],"
		    "\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":"
		    "[{\"name\":\"node\"}]}}}}}");
	tp_buf_adds(b, "]}}}}");
}

/* A runtime of n jobs, each depending on the one before it (the strict
 * profile finds each dependsOn among the jobs listed earlier). */
static void runtime_chain(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"chain\",\"labels\":"
		       "{\"trainer.kubeflow.org/framework\":\"torch\"}},\"spec\":{\"mlPolicy\":"
		       "{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":{\"replicatedJobs\":[");
	for (int i = 0; i < n; i++) {
		tp_buf_addf(b, "%s{\"name\":\"j%d\",", i ? "," : "", i);
		if (i)
			tp_buf_addf(b, "\"dependsOn\":[{\"name\":\"j%d\",\"status\":\"Complete\"}],",
				    i - 1);
		tp_buf_adds(b, "\"template\":{\"spec\":{\"template\":{\"spec\":{\"containers\":"
			       "[{\"name\":\"node\",\"image\":\"i\"}]}}}}}");
	}
	tp_buf_adds(b, "]}}}}");
}

/* A runtime "wide" of n jobs and one volumeClaimPolicy of n templates, each
 * job mounting one of them: the Pod checks find each mount among the
 * claims (every claim was added to every job's volumes). */
static void runtime_claims(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"wide\"},\"spec\":"
		       "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":"
		       "{\"replicatedJobs\":[");
	items(b, n, "{\"name\":\"j%d\",\"template\":{\"spec\":{\"template\":{\"spec\":"
		    "{\"containers\":[{\"name\":\"node\",\"image\":\"i\",\"volumeMounts\":"
		    "[{\"name\":\"t%d\",\"mountPath\":\"/m\"}]}]}}}}}");
	tp_buf_adds(b, "],\"volumeClaimPolicies\":[{\"templates\":[");
	items(b, n, "{\"metadata\":{\"name\":\"t%d\"},\"spec\":{\"storageClassName\":\"s%d\"}}");
	tp_buf_adds(b, "]}]}}}}");
}

/* ------------------------------------------------------------ colliding names
 * The unkeyed hashes the tables used before core/hash.h's keyed SipHash,
 * and names made to share a slot of theirs: each lookup or insertion then
 * walked all the earlier ones. */

/* FNV-1a: the Pod checks' name sets and the loader's duplicate-key set */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* 32-bit FNV-1a: a compiled schema's table of property names */
static uint64_t fnv1a_32(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The store's FNV-1a of a PriorityClass name (kind, no namespace, name) */
static uint64_t store_fnv1a(const char *name)
{
	uint64_t h = 1469598103934665603ULL;
	h = (h ^ (uint64_t)TP_KIND_PRIORITY_CLASS) * 1099511628211ULL;
	h = (h ^ 0xffu) * 1099511628211ULL;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return h;
}

/* The slot schema/memo.c's unkeyed 128-bit hash (FNV-1a beside a
 * multiplicative mix) gave the schema {"type":"string","title":title}: the
 * bytes its walk mixed, keys and strings with their NUL, 0x10 a string. */
static uint64_t memo_hash(const char *title)
{
	static const char head[] = "{type\0\x10string\0}title\0\x10";
	char bytes[96];
	size_t n = sizeof(head) - 1, t = strlen(title) + 1;
	memcpy(bytes, head, n);
	memcpy(bytes + n, title, t);
	memcpy(bytes + n + t, "}}", 2);
	n += t + 2;
	uint64_t a = 14695981039346656037ULL, b = 0x243F6A8885A308D3ULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)bytes[i];
		a = (a ^ c) * 1099511628211ULL;
		b = (b + c + 1) * 0x9E3779B97F4A7C15ULL;
		b ^= b >> 29;
	}
	return a ^ b;
}

/* The next name prefix<k in hex> that hash puts in slot 7 of a table of
 * 4,096 (and so of every smaller one); *k: where the search is. The hex is
 * written by hand: a name is found in about 4,096 tries, and snprintf's
 * were most of the time this program took to write its inputs. */
static const char *colliding(char *name, size_t len, const char *prefix,
			     uint64_t (*hash)(const char *), long *k)
{
	size_t p = strlen(prefix);
	assert_true(p + 17 <= len);
	memcpy(name, prefix, p);
	do {
		char hex[16];
		int d = 0;
		unsigned long v = (unsigned long)(*k)++;
		do
			hex[d++] = "0123456789abcdef"[v & 15];
		while (v >>= 4);
		for (int i = 0; i < d; i++)
			name[p + i] = hex[d - 1 - i];
		name[p + d] = '\0';
	} while ((hash(name) & 4095) != 7);
	return name;
}

/* n items of fmt, whose %s (or %1$s) is each time the next colliding name */
static void colliding_items(tp_buf *b, int n, const char *fmt, const char *prefix,
			    uint64_t (*hash)(const char *))
{
	char name[32];
	long k = 0;
	for (int i = 0; i < n; i++) {
		if (i)
			tp_buf_addc(b, ',');
		tp_buf_addf(b, fmt, colliding(name, sizeof(name), prefix, hash, &k));
	}
}

/* A runtime of one job whose n volumes have names that collide in FNV-1a. */
static void runtime_colliding_volumes(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"vols\"},\"spec\":"
		       "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":"
		       "{\"replicatedJobs\":[{\"name\":\"node\",\"template\":{\"spec\":{\"template\":"
		       "{\"spec\":{\"containers\":[{\"name\":\"node\",\"image\":\"i\"}],\"volumes\":[");
	colliding_items(b, n, "{\"name\":\"%s\",\"emptyDir\":{}}", "v", fnv1a);
	tp_buf_adds(b, "]}}}}}]}}}}");
}

/* A TrainJob of n annotations whose keys collide in FNV-1a: the loader
 * checks every key of a big mapping against the earlier ones in a set. */
static void tj_colliding_annotations(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		       "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\",\"annotations\":{");
	colliding_items(b, n, "\"%s\":\"v\"", "example.com/a", fnv1a);
	tp_buf_adds(b, "}},\"spec\":{\"runtimeRef\":{\"name\":\"torch-distributed\"},"
		       "\"trainer\":{\"image\":\"x\"}}}");
}

/* n PriorityClasses (a kind: List) whose names collide in the store's FNV-1a. */
static void colliding_priority_classes(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
	colliding_items(b, n, "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":"
			      "\"PriorityClass\",\"metadata\":{\"name\":\"%s\"},\"value\":1}",
			"p", store_fnv1a);
	tp_buf_adds(b, "]}");
}

/* A CRD (kind Wide) whose spec has n properties: items of fmt as
 * colliding_items writes them, with names of prefix that hash collides. */
static void wide_crd(tp_buf *b, int n, const char *fmt, const char *prefix,
		     uint64_t (*hash)(const char *))
{
	tp_buf_adds(b, "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		       "\"CustomResourceDefinition\",\"metadata\":{\"name\":\"wides.example.com\"},"
		       "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\",\"names\":"
		       "{\"kind\":\"Wide\",\"plural\":\"wides\"},\"versions\":[{\"name\":\"v1\","
		       "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":"
		       "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
		       "\"properties\":{");
	colliding_items(b, n, fmt, prefix, hash);
	tp_buf_adds(b, "}}}}}}]}}");
}

/* n property names that collide in the props table's FNV-1a, one schema */
static void crd_colliding_props(tp_buf *b, int n)
{
	wide_crd(b, n, "\"%s\":{\"type\":\"string\"}", "p", fnv1a_32);
}

/* n schemas that differ in their title only (each property named after
 * it), whose hashes share a slot of the table of subtrees compiled once
 * (schema/memo.c) */
static void crd_colliding_schemas(tp_buf *b, int n)
{
	wide_crd(b, n, "\"%1$s\":{\"type\":\"string\",\"title\":\"%1$s\"}", "t", memo_hash);
}

/* A runtime "wide" of n jobs whose containers run privileged, and a TrainJob
 * of it in a namespace that enforces restricted (rt/ns-locked.json): every
 * job is denied, each naming its place in the runtime. */
static void runtime_privileged(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"wide\"},\"spec\":"
		       "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{}},\"template\":{\"spec\":"
		       "{\"replicatedJobs\":[");
	items(b, n, "{\"name\":\"j%d\",\"template\":{\"spec\":{\"template\":{\"spec\":"
		    "{\"containers\":[{\"name\":\"c%d\",\"image\":\"i\",\"securityContext\":"
		    "{\"privileged\":true}}]}}}}}");
	tp_buf_adds(b, "]}}}}");
}

static void tj_locked(tp_buf *b, int n)
{
	(void)n;
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		       "\"metadata\":{\"name\":\"big\",\"namespace\":\"locked\"},\"spec\":"
		       "{\"runtimeRef\":{\"name\":\"wide\"},\"trainer\":{\"image\":\"x\"}}}");
}

/* A torch runtime "wide" of n jobs whose envInjection targets each of them. */
static void runtime_targets(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"
		       "\"ClusterTrainingRuntime\",\"metadata\":{\"name\":\"wide\"},\"spec\":"
		       "{\"mlPolicy\":{\"numNodes\":1,\"torch\":{\"envInjection\":{\"targets\":[");
	items(b, n, "{\"jobName\":\"j%d\",\"containerNames\":[\"side%d\"]}");
	tp_buf_adds(b, "]}}},\"template\":{\"spec\":{\"replicatedJobs\":[");
	items(b, n, "{\"name\":\"j%d\",\"template\":{\"spec\":{\"template\":{\"spec\":"
		    "{\"containers\":[{\"name\":\"node\",\"image\":\"i\"},{\"name\":\"side%d\","
		    "\"image\":\"i\"}]}}}}}");
	tp_buf_adds(b, "]}}}}");
}

static void tj_of_wide(tp_buf *b, int n)
{
	(void)n;
	trainjob_open(b, "wide");
	tp_buf_adds(b, "\"trainer\":{\"image\":\"x\",\"numNodes\":1}}}");
}

static void jobset_jobs(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
		       "\"metadata\":{\"name\":\"js\",\"namespace\":\"default\"},\"spec\":"
		       "{\"replicatedJobs\":[");
	for (int i = 0; i < n; i++)
		tp_buf_addf(b, "%s{\"name\":\"j%d\",%s\"template\":{\"spec\":{\"template\":{\"spec\":"
			       "{\"volumes\":[{\"name\":\"v%d\"}],\"containers\":[{\"name\":\"c\","
			       "\"volumeMounts\":[{\"name\":\"t%d\",\"mountPath\":\"/m\"}]}]}}}}}",
			    i ? "," : "", i, i ? "\"dependsOn\":[{\"name\":\"j0\"}]," : "", i, i);
	tp_buf_adds(b, "],\"successPolicy\":{\"operator\":\"All\",\"targetReplicatedJobs\":[");
	items(b, n, "\"j%d\"");
	tp_buf_adds(b, "]},\"failurePolicy\":{\"rules\":[");
	items(b, n, "{\"name\":\"r%d\",\"action\":\"FailJobSet\",\"targetReplicatedJobs\":[\"j%d\"]}");
	tp_buf_adds(b, "]},\"volumeClaimPolicies\":[{\"templates\":[");
	items(b, n, "{\"metadata\":{\"name\":\"t%d\"},\"spec\":{\"storageClassName\":\"s%d\"}}");
	tp_buf_adds(b, "]}]}}");
}

/* A JobSet its TrainJob (stored beside the runtime) owns, with n labels
 * and n jobs of its own: the mutating JobSet route lays the built JobSet
 * over it. */
static void jobset_owned(tp_buf *b, int n)
{
	tp_buf_adds(b, "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
		       "\"metadata\":{\"name\":\"big\",\"namespace\":\"default\",\"ownerReferences\":"
		       "[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\","
		       "\"name\":\"big\",\"uid\":\"u1\",\"controller\":true}],\"labels\":{");
	items(b, n, "\"k%d\":\"v%d\"");
	tp_buf_adds(b, "}},\"spec\":{\"replicatedJobs\":[");
	items(b, n, "{\"name\":\"x%d\",\"template\":{\"spec\":{\"template\":{\"spec\":"
		    "{\"containers\":[{\"name\":\"c%d\"}]}}}}}");
	tp_buf_adds(b, "]}}");
}

/* An AdmissionReview of the document made by m. */
static void review(tp_buf *b, int n, maker m, const char *group, const char *kind,
		   const char *op)
{
	tp_buf obj = TP_BUF_INIT(0);
	m(&obj, n);
	bool update = !strcmp(op, "UPDATE");
	tp_buf_addf(b, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
		       "\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"%s\",\"version\":\"%s\","
		       "\"kind\":\"%s\"},\"namespace\":\"default\",\"operation\":\"%s\","
		       "\"userInfo\":{\"username\":\"a\"},\"object\":%s,\"oldObject\":%s}}",
		    group, strcmp(group, "jobset.x-k8s.io") ? "v1alpha1" : "v1alpha2", kind, op,
		    obj.data, update ? obj.data : "null");
	tp_buf_free(&obj);
}

/* ------------------------------------------------------------ measuring */

typedef struct cost_case {
	const char *name;
	const char *fn;   /* where the decision is made */
	const char *args; /* the command and its options; %s: the temp folder */
	maker make;
	const char *review_kind; /* NULL: the document itself, else an AdmissionReview */
	const char *review_group;
	const char *op;
	bool crds;        /* needs ../shared's CRDs */
	maker runtime;    /* a runtime of n items too, in the store (rt/wide.json) */
	maker crd;        /* a CRD of n items too, at crd.json */
	int n_small;      /* the small input's items (0: N_SMALL), the big one's BIG_TIMES that */
} cost_case;

static int small_n(const cost_case *c)
{
	return c->n_small ? c->n_small : N_SMALL;
}

/* The planted failure: n*n steps, which the check must call not linear. */
__attribute__((noipa)) static long quadratic_probe(int n)
{
	volatile long s = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			s += i ^ j;
	return s;
}

static bool can_run(const cost_case *c)
{
	return !c->crds || tt_shared_dir();
}

/* The command line of c run in dir (its args, then dir's input), split at
 * spaces into argv, argv[0] the command as main() passes it; the words live
 * in line. */
static int command_argv(const cost_case *c, const char *dir, char *line, size_t len,
			char **argv, int max)
{
	char crds[128];
	/* the CRDs as JSON (setup): ../shared's, or the built-in ones where the
	 * case names none (the binary's default; expand has no --crds) */
	snprintf(crds, sizeof(crds), "%s/%s", tmp, c->crds ? "shared-crds" : "builtin-crds");
	int used = snprintf(line, len, c->args, dir, crds);
	if (!c->crds && !strstr(c->args, "--crds") && !strstr(c->args, "--no-schema") &&
	    strncmp(c->args, "expand ", 7))
		used += snprintf(line + used, len - (size_t)used, " --crds %s", crds);
	snprintf(line + used, len - (size_t)used, " %s/input.json", dir);
	int argc = 0;
	for (char *w = strtok(line, " "); w && argc < max - 1; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	return argc;
}

/* The folder of the r-th counted run (0 on): its input.json, its rt/ (the
 * store of the runs that name one: setup's rt/, with the case's runtime as
 * wide.json) and its crd.json. */
static const char *run_dir(int r)
{
	static char dir[96];
	snprintf(dir, sizeof(dir), "%s/run%d", tmp, r);
	return dir;
}

/* Writes the input of c at n items (and its runtime or CRD) into run r's
 * folder: natively, before the counting, which then runs commands alone. */
static void write_input(const cost_case *c, int n, int r)
{
	char cmd[300], name[128];
	snprintf(cmd, sizeof(cmd), "mkdir %1$s && cp -R %2$s/rt %1$s/rt", run_dir(r), tmp);
	assert_int_equal(system(cmd), 0);
	tp_buf b = TP_BUF_INIT(0);
	if (c->runtime) {
		c->runtime(&b, n);
		snprintf(name, sizeof(name), "run%d/rt/wide.json", r);
		save(name, &b);
		tp_buf_reset(&b);
	}
	if (c->crd) {
		c->crd(&b, n);
		snprintf(name, sizeof(name), "run%d/crd.json", r);
		save(name, &b);
		tp_buf_reset(&b);
	}
	if (c->review_kind)
		review(&b, n, c->make, c->review_group, c->review_kind, c->op);
	else
		c->make(&b, n);
	snprintf(name, sizeof(name), "run%d/input.json", r);
	save(name, &b);
	tp_buf_free(&b);
}

/* Every case's inputs that it can run, at its small size then BIG_TIMES
 * that, each in its run's folder, in the order of cases[]. */
static void write_inputs(const cost_case *cases_, size_t n_cases)
{
	int r = 0;
	for (size_t i = 0; i < n_cases; i++)
		for (int k = 0; can_run(&cases_[i]) && k < 2; k++)
			write_input(&cases_[i], small_n(&cases_[i]) * (k ? BIG_TIMES : 1), r++);
}

/* ------------------------------------------------------------ counting
 * In a counted child, counted_fn names the function whose instructions
 * count; its wrapper below turns instrumentation on at its first entry (in
 * this child: earlier code runs uninstrumented) and collects from its
 * outermost entry to its return (callgrind runs --collect-atstart=no). A
 * call nested in another counted function's (tp_validate in
 * tw_admission_handle) counts only when it is the case's function. */
static const char *counted_fn;
static int counted_depth;

static bool count_enter(const char *fn)
{
	if (!counted_fn || strcmp(fn, counted_fn))
		return false;
	if (counted_depth++ == 0) {
		CALLGRIND_START_INSTRUMENTATION; /* a no-op once it is on */
		CALLGRIND_TOGGLE_COLLECT;
	}
	return true;
}

static void count_leave(bool counting)
{
	if (counting && --counted_depth == 0)
		CALLGRIND_TOGGLE_COLLECT;
}

/* The wrappers the linker puts in place of each counted function
 * (-Wl,--wrap=FN: the commands' calls of FN reach __wrap_FN, and
 * __real_FN is FN itself). */
#define COUNTED(ret, fn, params, args)          \
	ret __real_##fn params;                 \
	ret __wrap_##fn params;                 \
	ret __wrap_##fn params                  \
	{                                       \
		bool counting = count_enter(#fn); \
		ret r = __real_##fn args;       \
		count_leave(counting);          \
		return r;                       \
	}

COUNTED(int, tw_admission_handle,
	(const tw_config *cfg, const tw_route *route, const char *body, size_t len,
	 tp_arena *arena, tp_buf *out, tw_outcome *oc),
	(cfg, route, body, len, arena, out, oc))
COUNTED(int, tw_findings_add,
	(const tw_finding_ctx *fc, const tp_result *res, cJSON *errs, cJSON *warns),
	(fc, res, errs, warns))
COUNTED(int, tw_expand_trainjob,
	(const tp_options *opt, const cJSON *tj, const tw_given_keys *given, cJSON **list,
	 tp_result *res, char *err, size_t errlen),
	(opt, tj, given, list, res, err, errlen))
COUNTED(int, tp_validate,
	(const tp_options *opt, tp_operation op, const cJSON *obj, const cJSON *old_obj,
	 tp_result *res),
	(opt, op, obj, old_obj, res))
COUNTED(int, tp_store_put, (tp_store *s, cJSON *obj), (s, obj))
COUNTED(int, tp_crds_add, (tp_crds *c, const cJSON *crd, char *why, size_t whylen),
	(c, crd, why, whylen))

/* The planted quadratic, counted as a command's function is. */
static long counted_probe(int n)
{
	bool counting = count_enter("quadratic_probe");
	long s = quadratic_probe(n);
	count_leave(counting);
	return s;
}

/* One counted run of fn, in a child of its own (forked under callgrind: no
 * new start-up), so that nothing one command leaves in the process (a cache,
 * a lazily built table) counts in or out of the next; its pid appended to
 * pids, whose dump is <out>.<pid>.1. */
static void counted_child(FILE *pids, const char *fn, int (*cmd)(int, char **), int argc,
			  char **argv, int probe)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		counted_fn = fn;
		if (cmd)
			cmd(argc, argv);
		else
			counted_probe(probe);
		CALLGRIND_DUMP_STATS;
		_exit(0);
	}
	int st;
	if (pid > 0)
		waitpid(pid, &st, 0);
	fprintf(pids, "%d\n", (int)pid);
}

/* Under callgrind (--measure DIR): every case of cases[] it can run, on the
 * inputs write_inputs wrote, in the order of cases[], then the probe. */
static int run_counted(const cost_case *cases_, size_t n_cases)
{
	tp_json_init();
	char path[200];
	snprintf(path, sizeof(path), "%s/cg.pids", tmp);
	FILE *pids = fopen(path, "w");
	if (!pids || !freopen("/dev/null", "w", stdout))
		return 1;
	int r = 0;
	for (size_t i = 0; i < n_cases; i++) {
		const cost_case *c = &cases_[i];
		for (int k = 0; can_run(c) && k < 2; k++) {
			char line[1024], *argv[32];
			int argc = command_argv(c, run_dir(r++), line, sizeof(line), argv, 32);
			int (*cmd)(int, char **) = !strcmp(argv[0], "review")	   ? tw_cmd_review
						   : !strcmp(argv[0], "validate") ? tw_cmd_validate
										   : tw_cmd_expand;
			counted_child(pids, c->fn, cmd, argc, argv, 0);
		}
	}
	for (int k = 0; k < 2; k++)
		counted_child(pids, "quadratic_probe", NULL, 0, NULL, k ? 10 * BIG_TIMES : 10);
	return fclose(pids) ? 1 : 0;
}

static const cost_case cases[27];

/* This program under callgrind, counting every case and the probe
 * (run_counted), once for both tests: the stem of its dumps' paths. */
static const char *count_under_callgrind(void)
{
	static char out[160];
	if (out[0])
		return out;
	char cmd[1024], *err = NULL;
	write_inputs(cases, sizeof(cases) / sizeof(*cases));
	snprintf(out, sizeof(out), "%s/cg", tmp);
	snprintf(cmd, sizeof(cmd), "valgrind --tool=callgrind --instr-atstart=no "
		 "--collect-atstart=no --callgrind-out-file=%s.%%p /proc/%d/exe --measure %s",
		 out, (int)getpid(), tmp);
	long long t0 = tt_mono_ms();
	if (tt_run(cmd, NULL, &err))
		fail_msg("%s\n%s", cmd, err ? err : "");
	printf("  (counted under callgrind in %.1f s)\n", (tt_mono_ms() - t0) / 1000.0);
	free(err);
	return out;
}

/* The instructions callgrind counted in the i-th run (0 on) under out. */
static long long dumped(const char *out, int i)
{
	char path[200], line[256];
	snprintf(path, sizeof(path), "%s.pids", out);
	FILE *f = fopen(path, "r");
	int pid = -1;
	for (int k = 0; f && k <= i && fgets(line, sizeof(line), f); k++)
		pid = atoi(line);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s.%d.1", out, pid);
	f = fopen(path, "r");
	long long n = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "totals: ", 8))
			n = atoll(line + 8);
	if (f)
		fclose(f);
	if (n <= 0)
		fail_msg("no instruction count in %s", path);
	return n;
}

static double ratio_of(const char *name, long long small, long long big, int n_small)
{
	double ratio = (double)big / (double)small;
	printf("  %-34s %9lld -> %10lld instructions for %d -> %d items: x%.1f\n", name, small,
	       big, n_small, n_small * BIG_TIMES, ratio);
	return ratio;
}

#define RT "--runtimes %1$s/rt"
#define TJ_GROUP "trainer.kubeflow.org"

static const cost_case cases[27] = {
	{ "validate: TrainJob env", "tw_admission_handle", "review " RT, tj_env, "TrainJob",
	  TJ_GROUP, "CREATE", false, .n_small = 200 },
	{ "validate: runtimePatch containers", "tw_admission_handle", "review " RT, tj_containers,
	  "TrainJob", TJ_GROUP, "CREATE", false },
	{ "validate: runtimePatches", "tw_admission_handle", "review " RT, tj_patches, "TrainJob",
	  TJ_GROUP, "CREATE", false },
	{ "validate: a patch of a wide runtime", "tw_admission_handle", "review " RT,
	  tj_wide_patch, "TrainJob", TJ_GROUP, "CREATE", false, wide_runtime, .n_small = 200 },
	/* --no-schema: with a schema, replicatedJobs past its 100 are one "Too many" */
	{ "validate command: its findings", "tw_findings_add", "validate --no-schema " RT,
	  tj_wide_patch, NULL, NULL, NULL, false, wide_runtime, .n_small = 25 },
	{ "validate, CRDs: TrainJob env", "tw_admission_handle", "review " RT " --crds %2$s",
	  tj_env, "TrainJob", TJ_GROUP, "CREATE", true, .n_small = 200 },
	{ "validate, CRDs: UPDATE resources", "tw_admission_handle", "review " RT " --crds %2$s",
	  tj_resources, "TrainJob", TJ_GROUP, "UPDATE", true },
	{ "mutate: TrainJob labels", "tw_admission_handle",
	  "review " RT " --path /mutate-trainer-kubeflow-org-v1alpha1-trainjob", tj_labels,
	  "TrainJob", TJ_GROUP, "CREATE", false },
	{ "mutate: UPDATE runtimePatches", "tw_admission_handle",
	  "review " RT " --path /mutate-trainer-kubeflow-org-v1alpha1-trainjob", tj_patches,
	  "TrainJob", TJ_GROUP, "UPDATE", false },
	{ "expand: env", "tw_expand_trainjob", "expand --no-schema " RT, tj_env, NULL, NULL,
	  NULL, false },
	{ "expand: resourcesPerNode", "tw_expand_trainjob", "expand " RT, tj_resources, NULL,
	  NULL, NULL, false },
	{ "validate: runtime replicatedJobs", "tp_validate", "validate --profile kubeflow",
	  runtime_jobs, NULL, NULL, NULL, false },
	{ "validate, CRDs: UPDATE runtime jobs", "tw_admission_handle",
	  "review --profile kubeflow --crds %2$s", runtime_jobs, "ClusterTrainingRuntime",
	  TJ_GROUP, "UPDATE", true, .n_small = 50 },
	{ "validate, strict: runtime dependsOn", "tp_validate", "validate --profile strict",
	  runtime_chain, NULL, NULL, NULL, false, .n_small = 50 },
	{ "validate --no-schema: runtime jobs", "tp_validate",
	  "validate --profile strict --no-schema", runtime_chain, NULL, NULL, NULL, false },
	{ "built-in schema: runtime UPDATE", "tw_admission_handle",
	  "review --profile kubeflow --crds none", runtime_jobs, "ClusterTrainingRuntime",
	  TJ_GROUP, "UPDATE", false },
	{ "validate: runtime claim templates", "tp_validate", "validate --profile strict",
	  runtime_claims, NULL, NULL, NULL, false, .n_small = 50 },
	{ "validate: colliding volume names", "tp_validate", "validate --profile strict",
	  runtime_colliding_volumes, NULL, NULL, NULL, false },
	{ "validate: colliding annotation keys", "tw_admission_handle", "review " RT,
	  tj_colliding_annotations, "TrainJob", TJ_GROUP, "CREATE", false },
	{ "store: colliding PriorityClass names", "tp_store_put", "validate " RT, tj_env, NULL,
	  NULL, NULL, false, colliding_priority_classes },
	{ "CRD: colliding property names", "tp_crds_add", "validate --crds %1$s/crd.json",
	  tj_env, NULL, NULL, NULL, false, NULL, crd_colliding_props },
	{ "CRD: colliding schemas", "tp_crds_add", "validate --crds %1$s/crd.json", tj_env,
	  NULL, NULL, NULL, false, NULL, crd_colliding_schemas },
	{ "Pod Security: a wide runtime", "tw_admission_handle", "review " RT,
	  tj_locked, "TrainJob", TJ_GROUP, "CREATE", false, runtime_privileged, .n_small = 25 },
	{ "validate: torch envInjection", "tw_admission_handle", "review " RT,
	  tj_of_wide, "TrainJob", TJ_GROUP, "CREATE", false, runtime_targets, .n_small = 50 },
	{ "expand: torch envInjection", "tw_expand_trainjob", "expand --no-schema " RT,
	  tj_of_wide, NULL, NULL, NULL, false, runtime_targets, .n_small = 25 },
	{ "validate: JobSet", "tp_validate", "validate", jobset_jobs, NULL, NULL, NULL, false,
	  .n_small = 50 },
	{ "mutate: JobSet of a TrainJob", "tw_admission_handle",
	  "review " RT " --path /mutate-jobset-x-k8s-io-v1alpha2-jobset", jobset_owned, "JobSet",
	  "jobset.x-k8s.io", "CREATE", false, .n_small = 50 },
};

/* The runs of every case it can run, two each, in run_counted's order. */
static int runnable_cases(void)
{
	int n = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		n += can_run(&cases[i]);
	return n;
}

static void linear_costs(void **state)
{
	(void)state;
	if (!have_valgrind)
		skip();
	size_t n_cases = sizeof(cases) / sizeof(*cases);
	const char *out = count_under_callgrind();
	int bad = 0, dump = 0;
	for (size_t i = 0; i < n_cases; i++) {
		if (!can_run(&cases[i]))
			continue;
		long long small = dumped(out, dump), big = dumped(out, dump + 1);
		dump += 2;
		int n = small_n(&cases[i]);
		double r = ratio_of(cases[i].name, small, big, n);
		if (r > MAX_RATIO || r < MIN_RATIO) {
			printf("  %s: %lld -> %lld instructions (x%.1f) for %d -> %d items: "
			       "not linear\n", cases[i].name, small, big, r, n, n * BIG_TIMES);
			bad++;
		}
	}
	if (bad)
		fail_msg("%d of %zu cases not linear (above)", bad, n_cases);
}

/* The check itself: counted the same way, a quadratic step is not linear. */
static void a_quadratic_step_is_caught(void **state)
{
	(void)state;
	if (!have_valgrind)
		skip();
	const char *out = count_under_callgrind();
	int probe = 2 * runnable_cases();
	long long small = dumped(out, probe), big = dumped(out, probe + 1);
	double r = ratio_of("planted: quadratic_probe", small, big, 10);
	assert_true(r > MAX_RATIO);
}

/* ------------------------------------------------------------ fixtures */

/* The CRDs of text (YAML) as name.<i>.json under dir/, one a file, loaded as the binary
 * loads CRDs (their descriptions left out); 0 or -1. */
static int crds_as_json(const char *dir, const char *name, const char *text, size_t len)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.max_doc_bytes = len + 1;
	lim.skip = tp_crds_load_skip();
	tp_docs *docs = NULL;
	tp_load_error err = { 0 };
	if (tp_load(text, len, &lim, &docs, &err)) {
		fprintf(stderr, "%s: %s\n", name, err.msg);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < tp_docs_count(docs); i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s.%zu.json", dir, name, i);
		char *json = cJSON_PrintUnformatted(tp_docs_at(docs, i)->obj);
		FILE *f = json ? fopen(path, "wb") : NULL;
		rc = f && fputs(json, f) >= 0 ? 0 : -1;
		if (f && fclose(f))
			rc = -1;
		free(json);
	}
	tp_docs_free(docs);
	return rc;
}

/* tmp/builtin-crds/: the binary's built-in CRDs; tmp/shared-crds/:
 * ../shared's upstream ones (when ../shared is there). */
static int json_crds(void)
{
	char dir[128];
	snprintf(dir, sizeof(dir), "%s/builtin-crds", tmp);
	if (mkdir(dir, 0700))
		return -1;
	tw_builtin_crd crd;
	for (size_t i = 0; tw_builtin_crd_get(i, &crd); i++)
		if (crds_as_json(dir, crd.file, crd.data, crd.len))
			return -1;
	char *shared = tt_shared_path("fixtures/upstream/crds");
	if (!shared)
		return 0;
	snprintf(dir, sizeof(dir), "%s/shared-crds", tmp);
	char pat[600];
	snprintf(pat, sizeof(pat), "%s/*.yaml", shared);
	free(shared);
	glob_t g;
	int rc = mkdir(dir, 0700) || glob(pat, 0, NULL, &g) ? -1 : 0;
	for (size_t i = 0; !rc && i < g.gl_pathc; i++) {
		size_t len;
		char *text = tt_read_file(g.gl_pathv[i], &len);
		rc = text ? crds_as_json(dir, strrchr(g.gl_pathv[i], '/') + 1, text, len) : -1;
		free(text);
	}
	if (!rc || g.gl_pathc)
		globfree(&g);
	return rc;
}

static int setup(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	have_valgrind = false; /* this build's binary is AddressSanitizer's */
#else
	have_valgrind = system("valgrind --version >/dev/null 2>&1") == 0;
#endif
	snprintf(tmp, sizeof(tmp), "/tmp/tw-linear-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/rt && cp deploy/runtimes/torch-distributed.yaml %s/rt/",
		 tmp, tmp);
	if (system(cmd) != 0 || json_crds())
		return -1;
	/* the TrainJob the owned JobSet names */
	tp_buf b = TP_BUF_INIT(0);
	trainjob_open(&b, "torch-distributed");
	tp_buf_adds(&b, "\"trainer\":{\"image\":\"x\",\"numNodes\":2}}}");
	save("rt/trainjob.json", &b);
	tp_buf_reset(&b);
	tp_buf_adds(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
		       "\"locked\",\"labels\":{\"pod-security.kubernetes.io/enforce\":\"restricted\"}}}");
	save("rt/ns-locked.json", &b);
	tp_buf_free(&b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--measure")) { /* under callgrind: the counting */
		snprintf(tmp, sizeof(tmp), "%s", argv[2]);
		return run_counted(cases, sizeof(cases) / sizeof(*cases));
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_quadratic_step_is_caught),
		cmocka_unit_test(linear_costs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
