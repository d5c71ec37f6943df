/*
 * test_manifests.c — reading manifest files and folders into the store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"
#include "webhook/core/files.h"
#include "webhook/cli/manifests.h"

#define RUNTIME(kind, name)                                                          \
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: " kind "\nmetadata:\n  name: " name \
	"\nspec:\n  mlPolicy:\n    numNodes: 2\n"

typedef struct tmp {
	char dir[200];
} tmp;

static void put_file(const tmp *t, const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void put_dir(const tmp *t, const char *rel)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	assert_int_equal(mkdir(path, 0700), 0);
}

static int tmp_setup(void **state)
{
	tmp *t = calloc(1, sizeof(*t));
	const char *base = getenv("TMPDIR");
	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "%s/tw-manifests-XXXXXX", base && *base ? base : P_tmpdir);
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	tmp *t = *state;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	int rc = system(cmd);
	free(t);
	return rc;
}

/* What the walker saw, in order. */
typedef struct seen {
	char names[16][256];
	int n;
	int fail_on; /* 1-based call that returns TP_EPARSE, 0: none */
} seen;

static int record(const char *path, void *ctx)
{
	seen *s = ctx;
	if (s->n < 16)
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", path);
	s->n++;
	return s->n == s->fail_on ? TP_EPARSE : TP_OK;
}

static const char *rel(const tmp *t, const char *path)
{
	size_t n = strlen(t->dir);
	return strncmp(path, t->dir, n) ? path : path + n + 1;
}

static char *errtext(FILE *f)
{
	static char buf[4096];
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	return buf;
}

static void read_file_limits(void **state)
{
	tmp *t = *state;
	put_file(t, "a.yaml", "kind: A\n");
	char path[256];
	snprintf(path, sizeof(path), "%s/a.yaml", t->dir);
	tp_buf b = TP_BUF_INIT(1 << 20);
	assert_int_equal(tw_read_file(path, 8, &b), TP_OK);
	assert_string_equal(b.data, "kind: A\n");
	tp_buf_reset(&b);
	assert_int_equal(tw_read_file(path, 7, &b), TP_ELIMIT);
	assert_int_equal(b.len, 0);
	snprintf(path, sizeof(path), "%s/missing.yaml", t->dir);
	assert_int_equal(tw_read_file(path, 100, &b), TP_EIO);
	assert_int_equal(tw_read_file(t->dir, 100, &b), TP_EIO);
	tp_buf_free(&b);

	/* An endless stream stops one byte past the limit. */
	FILE *z = fopen("/dev/zero", "rb");
	if (z) {
		fclose(z);
		tp_buf big = TP_BUF_INIT((size_t)1 << 30);
		assert_int_equal(tw_read_file("/dev/zero", 1 << 20, &big), TP_ELIMIT);
		assert_true(big.cap <= (size_t)4 << 20);
		tp_buf_free(&big);
	}
}

static void walk_sorted_recursive(void **state)
{
	tmp *t = *state;
	put_dir(t, "b");
	put_dir(t, "a");
	put_file(t, "z.json", "{}");
	put_file(t, "b/2.yml", "x: 1\n");
	put_file(t, "b/1.yaml", "x: 1\n");
	put_file(t, "a/readme.md", "# no\n");
	put_file(t, "a/c.yaml", "x: 1\n");
	put_file(t, "m.yaml.bak", "x: 1\n");
	char link[256], loop[256];
	snprintf(link, sizeof(link), "%s/b/up", t->dir);
	snprintf(loop, sizeof(loop), "%s", t->dir);
	assert_int_equal(symlink(loop, link), 0); /* b/up -> the top: a loop */

	seen s = { 0 };
	FILE *errf = tmpfile();
	assert_int_equal(tw_walk_manifests(t->dir, record, &s, errf), TP_OK);
	assert_int_equal(s.n, 4);
	assert_string_equal(rel(t, s.names[0]), "a/c.yaml");
	assert_string_equal(rel(t, s.names[1]), "b/1.yaml");
	assert_string_equal(rel(t, s.names[2]), "b/2.yml");
	assert_string_equal(rel(t, s.names[3]), "z.json");
	assert_non_null(strstr(errtext(errf), "b/up: a symbolic link loop"));
	fclose(errf);

	/* The walk goes on after a failure and returns the first one. */
	seen f = { .fail_on = 2 };
	assert_int_equal(tw_walk_manifests(t->dir, record, &f, NULL), TP_EPARSE);
	assert_int_equal(f.n, 4);

	/* A file named directly is read whatever its name; "-" once. */
	seen one = { 0 };
	char path[256];
	snprintf(path, sizeof(path), "%s/a/readme.md", t->dir);
	assert_int_equal(tw_walk_manifests(path, record, &one, NULL), TP_OK);
	assert_int_equal(tw_walk_manifests("-", record, &one, NULL), TP_OK);
	assert_int_equal(one.n, 2);
	assert_string_equal(one.names[1], "-");

	/* A folder typed with its slash ("dir/") names its files "dir/x" */
	seen sl = { 0 };
	snprintf(path, sizeof(path), "%s/a/", t->dir);
	assert_int_equal(tw_walk_manifests(path, record, &sl, NULL), TP_OK);
	assert_int_equal(sl.n, 1);
	assert_string_equal(rel(t, sl.names[0]), "a/c.yaml");

	snprintf(path, sizeof(path), "%s/nothing-here", t->dir);
	errf = tmpfile();
	assert_int_equal(tw_walk_manifests(path, record, &one, errf), TP_EIO);
	assert_non_null(strstr(errtext(errf), "nothing-here: No such file or directory"));
	fclose(errf);
}

static void store_loads_known_kinds(void **state)
{
	tmp *t = *state;
	put_dir(t, "rt");
	put_file(t, "rt/a.yaml",
		 RUNTIME("ClusterTrainingRuntime", "torch") "---\n"
		 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n---\n"
		 RUNTIME("TrainingRuntime", "local"));
	put_file(t, "rt/b.json",
		 "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{\"apiVersion\":"
		 "\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"ClusterTrainingRuntime\","
		 "\"metadata\":{\"name\":\"jax\"}}]}");
	put_file(t, "rt/kustomization.yaml", "resources:\n- a.yaml\n");
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	FILE *errf = tmpfile();
	assert_int_equal(tw_store_load_path(store, t->dir, errf), TP_OK);
	assert_string_equal(errtext(errf), "");
	assert_int_equal(tp_store_count(store, TP_KIND_CLUSTER_TRAINING_RUNTIME), 2);
	assert_int_equal(tp_store_count(store, TP_KIND_TRAINING_RUNTIME), 1);
	tp_store_rdlock(store);
	const cJSON *rt = tp_store_get(store, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "torch");
	long long n = 0;
	assert_true(tp_get_int(rt, "spec.mlPolicy.numNodes", &n));
	assert_int_equal(n, 2);
	assert_non_null(tp_store_get(store, TP_KIND_TRAINING_RUNTIME, "default", "local"));
	tp_store_unlock(store);
	fclose(errf);

	/* Loading inside a request arena still puts heap objects in the store. */
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	tp_arena *prev = tp_arena_enter(a);
	assert_int_equal(tw_store_load_path(store, t->dir, NULL), TP_OK);
	tp_arena_leave(prev);
	assert_int_equal(tp_arena_used(a), 0);
	tp_arena_free(a);
	assert_int_equal(tp_store_count(store, TP_KIND_CLUSTER_TRAINING_RUNTIME), 2);
	tp_store_free(store);
}

static void store_reports_problems(void **state)
{
	tmp *t = *state;
	put_file(t, "1-good.yaml", RUNTIME("ClusterTrainingRuntime", "ok"));
	put_file(t, "2-bad.yaml", RUNTIME("ClusterTrainingRuntime", "x") "---\nkind: A\nkind: B\n");
	put_file(t, "3-noname.yaml",
		 "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nspec: {}\n");
	put_file(t, "4-empty.yaml", "");
	put_file(t, "5-good.yml", RUNTIME("ClusterTrainingRuntime", "later"));
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	FILE *errf = tmpfile();
	assert_int_equal(tw_store_load_path(store, t->dir, errf), TP_EPARSE);
	const char *out = errtext(errf);
	char want[512];
	snprintf(want, sizeof(want),
		 "%s/2-bad.yaml: document 2, line 10, column 1: mapping key \"kind\" already defined "
		 "at line 9\n",
		 t->dir);
	if (!strstr(out, want))
		fail_msg("errors:\n%s\nlack:\n%s", out, want);
	snprintf(want, sizeof(want), "%s/3-noname.yaml: document 1, line 1: the object has no metadata.name",
		 t->dir);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "%s/4-empty.yaml: no YAML or JSON document found", t->dir);
	assert_non_null(strstr(out, want));
	/* Good files on both sides of the bad ones are loaded; the bad file is not. */
	assert_int_equal(tp_store_count(store, TP_KIND_CLUSTER_TRAINING_RUNTIME), 2);
	fclose(errf);
	tp_store_free(store);
}

static void store_reads_stdin(void **state)
{
	tmp *t = *state;
	put_file(t, "in.yaml", RUNTIME("ClusterTrainingRuntime", "piped"));
	char path[256];
	snprintf(path, sizeof(path), "%s/in.yaml", t->dir);
	assert_non_null(freopen(path, "rb", stdin));
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tw_store_load_path(store, "-", NULL), TP_OK);
	assert_int_equal(tp_store_count(store, TP_KIND_CLUSTER_TRAINING_RUNTIME), 1);
	tp_store_free(store);

	/* A bad stream is reported under the name <stdin>. */
	put_file(t, "in.yaml", "a: 1\na: 2\n");
	assert_non_null(freopen(path, "rb", stdin));
	assert_int_equal(tp_store_new(&store), TP_OK);
	FILE *errf = tmpfile();
	assert_int_equal(tw_store_load_path(store, "-", errf), TP_EPARSE);
	assert_non_null(strstr(errtext(errf), "<stdin>: document 1, line 2, column 1: mapping key"));
	fclose(errf);
	tp_store_free(store);
}

static void shared_runtimes_load(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *dir = tt_shared_path("fixtures/upstream/runtimes");
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	FILE *errf = tmpfile();
	assert_int_equal(tw_store_load_path(store, dir, errf), TP_OK);
	assert_string_equal(errtext(errf), "");
	assert_true(tp_store_count(store, TP_KIND_CLUSTER_TRAINING_RUNTIME) >= 5);
	tp_store_rdlock(store);
	assert_non_null(
		tp_store_get(store, TP_KIND_CLUSTER_TRAINING_RUNTIME, NULL, "torch-distributed"));
	tp_store_unlock(store);
	fclose(errf);
	tp_store_free(store);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(read_file_limits, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(walk_sorted_recursive, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(store_loads_known_kinds, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(store_reports_problems, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(store_reads_stdin, tmp_setup, tmp_teardown),
		cmocka_unit_test(shared_runtimes_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
