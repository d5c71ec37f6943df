/*
 * test_store.c — the object store: keys, scopes, ownership, concurrency.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

static cJSON *object(const char *api_version, const char *kind, const char *ns, const char *name,
		     const char *marker)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "apiVersion", api_version);
	cJSON_AddStringToObject(o, "kind", kind);
	cJSON *m = cJSON_AddObjectToObject(o, "metadata");
	if (name)
		cJSON_AddStringToObject(m, "name", name);
	if (ns)
		cJSON_AddStringToObject(m, "namespace", ns);
	if (marker)
		cJSON_AddStringToObject(cJSON_AddObjectToObject(o, "spec"), "marker", marker);
	return o;
}

static cJSON *tr(const char *ns, const char *name, const char *marker)
{
	return object(TP_APIVERSION_TRAINER, "TrainingRuntime", ns, name, marker);
}

static cJSON *ctr(const char *ns, const char *name, const char *marker)
{
	return object(TP_APIVERSION_TRAINER, "ClusterTrainingRuntime", ns, name, marker);
}

static const char *marker_of(const tp_store *s, tp_kind k, const char *ns, const char *name)
{
	return tp_get_str(tp_store_get(s, k, ns, name), "spec.marker");
}

static void put_get_replace_remove(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	uint64_t g0 = tp_store_generation(s);
	assert_int_equal(tp_store_put(s, tr("team-a", "torch", "1")), TP_OK);
	assert_true(tp_store_generation(s) > g0);
	tp_store_rdlock(s);
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, "team-a", "torch"), "1");
	assert_null(tp_store_get(s, TP_KIND_TRAINING_RUNTIME, "team-b", "torch"));
	assert_null(tp_store_get(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, "", "torch"));
	assert_int_equal(tp_store_count(s, TP_KIND_TRAINING_RUNTIME), 1);
	tp_store_unlock(s);

	uint64_t g1 = tp_store_generation(s);
	assert_int_equal(tp_store_put(s, tr("team-a", "torch", "2")), TP_OK); /* old tree freed */
	assert_true(tp_store_generation(s) > g1);
	tp_store_rdlock(s);
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, "team-a", "torch"), "2");
	assert_int_equal(tp_store_count(s, TP_KIND_TRAINING_RUNTIME), 1);
	tp_store_unlock(s);

	assert_int_equal(tp_store_remove(s, TP_KIND_TRAINING_RUNTIME, "team-a", "torch"), TP_OK);
	assert_int_equal(tp_store_remove(s, TP_KIND_TRAINING_RUNTIME, "team-a", "torch"), TP_ENOTFOUND);
	tp_store_rdlock(s);
	assert_null(tp_store_get(s, TP_KIND_TRAINING_RUNTIME, "team-a", "torch"));
	assert_int_equal(tp_store_count(s, TP_KIND_TRAINING_RUNTIME), 0);
	tp_store_unlock(s);
	tp_store_free(s);
}

static void default_namespace_and_cluster_scope(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, tr(NULL, "nons", "a")), TP_OK);
	assert_int_equal(tp_store_put(s, tr("", "emptyns", "b")), TP_OK);
	assert_int_equal(tp_store_put(s, ctr("ignored", "torch-distributed", "c")), TP_OK);
	assert_int_equal(tp_store_put(s, object(TP_APIVERSION_TRAINER, "TrainJob", NULL, "tj", "d")),
			 TP_OK);
	tp_store_rdlock(s);
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, "default", "nons"), "a");
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, "", "nons"), "a");
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, NULL, "emptyns"), "b");
	assert_string_equal(marker_of(s, TP_KIND_TRAINJOB, "", "tj"), "d");
	/* cluster scope: the namespace, on put or get, plays no part */
	assert_string_equal(marker_of(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, "", "torch-distributed"), "c");
	assert_string_equal(marker_of(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, "x", "torch-distributed"), "c");
	tp_store_unlock(s);
	assert_int_equal(tp_store_remove(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, "y", "torch-distributed"),
			 TP_OK);
	assert_int_equal(tp_store_remove(s, TP_KIND_TRAINING_RUNTIME, NULL, "nons"), TP_OK);
	tp_store_free(s);
}

static void all_stored_kinds(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	assert_int_equal(tp_store_put(s, object(TP_APIVERSION_OME, "TrainingRuntime", "o", "r", "1")), TP_OK);
	assert_int_equal(tp_store_put(s, object(TP_APIVERSION_OME, "ClusterTrainingRuntime", NULL, "r", "2")),
			 TP_OK);
	assert_int_equal(tp_store_put(s, object(TP_APIVERSION_JOBSET, "JobSet", "o", "r", "3")), TP_OK);
	assert_int_equal(tp_store_put(s, tr("o", "r", "4")), TP_OK);
	tp_store_rdlock(s);
	assert_string_equal(marker_of(s, TP_KIND_OME_TRAINING_RUNTIME, "o", "r"), "1");
	assert_string_equal(marker_of(s, TP_KIND_OME_CLUSTER_TRAINING_RUNTIME, NULL, "r"), "2");
	assert_string_equal(marker_of(s, TP_KIND_JOBSET, "o", "r"), "3");
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, "o", "r"), "4");
	for (int k = TP_KIND_TRAINJOB; k < TP_KIND_OUTDATED; k++)
		assert_int_equal(tp_store_count(s, (tp_kind)k),
				 k == TP_KIND_TRAINJOB || k == TP_KIND_CLUSTER_TRAINING_RUNTIME ? 0 : 1);
	tp_store_unlock(s);
	tp_store_free(s);
}

static void namespaces_of_is_sorted(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	const char *nss[] = { "zeta", "alpha", "mid", "beta", "omega" };
	for (int i = 0; i < 5; i++)
		assert_int_equal(tp_store_put(s, tr(nss[i], "torch", NULL)), TP_OK);
	assert_int_equal(tp_store_put(s, tr("aaa", "other", NULL)), TP_OK);
	assert_int_equal(tp_store_put(s, ctr(NULL, "torch", NULL)), TP_OK);
	tp_store_rdlock(s);
	const char *out[8];
	assert_int_equal(tp_store_namespaces_of(s, TP_KIND_TRAINING_RUNTIME, "torch", out, 8), 5);
	const char *want[] = { "alpha", "beta", "mid", "omega", "zeta" };
	for (int i = 0; i < 5; i++)
		assert_string_equal(out[i], want[i]);
	/* fewer slots than namespaces: the first ones, total still counted */
	assert_int_equal(tp_store_namespaces_of(s, TP_KIND_TRAINING_RUNTIME, "torch", out, 2), 5);
	assert_string_equal(out[0], "alpha");
	assert_string_equal(out[1], "beta");
	assert_int_equal(tp_store_namespaces_of(s, TP_KIND_TRAINING_RUNTIME, "none", out, 8), 0);
	assert_int_equal(tp_store_namespaces_of(s, TP_KIND_TRAINING_RUNTIME, "torch", NULL, 0), 5);
	tp_store_unlock(s);
	tp_store_free(s);
}

static void clear_kind_keeps_others(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	char name[32];
	for (int i = 0; i < 200; i++) { /* enough to make the table grow */
		snprintf(name, sizeof(name), "rt-%d", i);
		assert_int_equal(tp_store_put(s, tr("ns", name, NULL)), TP_OK);
	}
	assert_int_equal(tp_store_put(s, ctr(NULL, "keep", "k")), TP_OK);
	uint64_t g = tp_store_generation(s);
	tp_store_clear_kind(s, TP_KIND_TRAINING_RUNTIME);
	assert_true(tp_store_generation(s) > g);
	tp_store_rdlock(s);
	assert_int_equal(tp_store_count(s, TP_KIND_TRAINING_RUNTIME), 0);
	assert_null(tp_store_get(s, TP_KIND_TRAINING_RUNTIME, "ns", "rt-7"));
	assert_string_equal(marker_of(s, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "keep"), "k");
	tp_store_unlock(s);
	assert_int_equal(tp_store_put(s, tr("ns", "rt-7", "again")), TP_OK);
	tp_store_rdlock(s);
	assert_string_equal(marker_of(s, TP_KIND_TRAINING_RUNTIME, "ns", "rt-7"), "again");
	tp_store_unlock(s);
	tp_store_free(s);
}

static void refusals_leave_ownership_with_caller(void **state)
{
	(void)state;
	tp_store *s;
	assert_int_equal(tp_store_new(&s), TP_OK);
	cJSON *pod = object("v1", "Pod", "ns", "p", NULL);
	assert_int_equal(tp_store_put(s, pod), TP_EUNSUPPORTED);
	cJSON_Delete(pod);
	cJSON *old = object("kubeflow.org/v2alpha1", "TrainJob", "ns", "p", NULL);
	assert_int_equal(tp_store_put(s, old), TP_EUNSUPPORTED);
	cJSON_Delete(old);
	cJSON *nameless = tr("ns", NULL, NULL);
	assert_int_equal(tp_store_put(s, nameless), TP_EINVAL);
	cJSON_Delete(nameless);
	assert_int_equal(tp_store_put(s, NULL), TP_EINVAL);

	/* inside an arena the tree would die with the request */
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	tp_arena *prev = tp_arena_enter(a);
	cJSON *in_arena = tr("ns", "x", NULL);
	assert_int_equal(tp_store_put(s, in_arena), TP_EINVAL);
	tp_arena_leave(prev);
	tp_arena_free(a);

	tp_store_rdlock(s);
	assert_int_equal(tp_store_count(s, TP_KIND_TRAINING_RUNTIME), 0);
	tp_store_unlock(s);
	assert_int_equal(tp_store_generation(s), 0);
	tp_store_free(s);
}

/* ------------------------------------------------------------ concurrency */

#define READERS 4
#define NAMES 16
#define ROUNDS 300

struct shared {
	tp_store *store;
	atomic_int stop;
	atomic_long lookups;
	atomic_int bad;
};

/* Every object's marker is its own name: a reader that ever sees another
 * name's tree, or a freed one (ASan), has caught a race. */
static void *reader(void *arg)
{
	struct shared *sh = arg;
	char name[16];
	for (unsigned i = 0; !atomic_load(&sh->stop); i++) {
		snprintf(name, sizeof(name), "rt-%u", i % NAMES);
		tp_store_rdlock(sh->store);
		const char *m = marker_of(sh->store, TP_KIND_TRAINING_RUNTIME, "ns", name);
		if (m && strcmp(m, name))
			atomic_fetch_add(&sh->bad, 1);
		tp_store_unlock(sh->store);
		atomic_fetch_add(&sh->lookups, 1);
	}
	return NULL;
}

static void readers_and_a_writer(void **state)
{
	(void)state;
	struct shared sh = { 0 };
	assert_int_equal(tp_store_new(&sh.store), TP_OK);
	pthread_t th[READERS];
	for (int i = 0; i < READERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, reader, &sh), 0);
	/* let every reader start before the writer does (valgrind serialises
	 * threads) */
	while (atomic_load(&sh.lookups) < READERS)
		sched_yield();
	char name[16];
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NAMES; i++) {
			snprintf(name, sizeof(name), "rt-%d", i);
			if ((r + i) % 7 == 0)
				tp_store_remove(sh.store, TP_KIND_TRAINING_RUNTIME, "ns", name);
			else
				assert_int_equal(tp_store_put(sh.store, tr("ns", name, name)), TP_OK);
		}
	atomic_store(&sh.stop, 1);
	for (int i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&sh.bad), 0);
	/* the last round decided each name's fate */
	size_t present = 0;
	tp_store_rdlock(sh.store);
	for (int i = 0; i < NAMES; i++) {
		snprintf(name, sizeof(name), "rt-%d", i);
		const char *m = marker_of(sh.store, TP_KIND_TRAINING_RUNTIME, "ns", name);
		if ((ROUNDS - 1 + i) % 7 == 0) {
			assert_null(m);
		} else {
			assert_string_equal(m, name);
			present++;
		}
	}
	assert_int_equal(tp_store_count(sh.store, TP_KIND_TRAINING_RUNTIME), present);
	tp_store_unlock(sh.store);
	tp_store_free(sh.store);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put_get_replace_remove),
		cmocka_unit_test(default_namespace_and_cluster_scope),
		cmocka_unit_test(all_stored_kinds),
		cmocka_unit_test(namespaces_of_is_sorted),
		cmocka_unit_test(clear_kind_keeps_others),
		cmocka_unit_test(refusals_leave_ownership_with_caller),
		cmocka_unit_test(readers_and_a_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
