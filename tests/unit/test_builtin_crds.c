/*
 * test_builtin_crds.c — the CRDs built into the binary are upstream's files
 * of webhook/cli/crds/ byte for byte: every YAML file of the folder is built
 * in and every built-in one is a file of the folder, with the same bytes;
 * the folder's README names the release --version gives; they compile; and
 * where ../shared is beside the repository, they are its fixtures' CRDs too;
 * and loading them leaves the heap compact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glob.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/support/testutil.h"
#include "webhook/cli/builtin_crds.h"
#include "webhook/cli/crds.h"

#define FOLDER "webhook/cli/crds"

static void compare_with(const char *folder)
{
	size_t n = tw_builtin_crds_count();
	assert_true(n >= 5);
	for (size_t i = 0; i < n; i++) {
		tw_builtin_crd c;
		assert_true(tw_builtin_crd_get(i, &c));
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", folder, c.file);
		size_t len = 0;
		char *want = tt_read_file(path, &len);
		if (!want)
			fail_msg("%s is built in but not in %s", c.file, folder);
		if (len != c.len || memcmp(want, c.data, len))
			fail_msg("%s: the built-in copy (%zu bytes) differs from %s (%zu bytes)",
				 c.file, c.len, path, len);
		assert_int_equal(c.data[c.len], '\0');
		free(want);
	}
	assert_false(tw_builtin_crd_get(n, &(tw_builtin_crd){ 0 }));
}

static void builtin_copy_is_the_folder(void **state)
{
	(void)state;
	compare_with(FOLDER);
	/* and nothing of the folder is left out */
	glob_t g;
	assert_int_equal(glob(FOLDER "/*.yaml", 0, NULL, &g), 0);
	assert_int_equal(g.gl_pathc, tw_builtin_crds_count());
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *base = g.gl_pathv[i] + strlen(FOLDER "/");
		bool found = false;
		for (size_t k = 0; k < tw_builtin_crds_count(); k++) {
			tw_builtin_crd c;
			tw_builtin_crd_get(k, &c);
			found |= !strcmp(c.file, base);
		}
		if (!found)
			fail_msg("%s is in the folder but not built in (webhook/cli/builtin_crds.c)",
				 g.gl_pathv[i]);
	}
	globfree(&g);
}

static void builtin_copy_is_upstreams_fixture(void **state)
{
	(void)state;
	TT_REQUIRE_SHARED();
	char *dir = tt_shared_path("fixtures/upstream/crds");
	compare_with(dir);
	free(dir);
}

/* The folder's README names the source --version prints, the licence is
 * beside it. */
static void readme_names_the_source(void **state)
{
	(void)state;
	char *readme = tt_read_file(FOLDER "/README.md", NULL);
	assert_non_null(readme);
	/* "kubeflow/trainer v2.3.0 (8c0f5059) manifests/base/crds, ..." in parts */
	char src[512];
	snprintf(src, sizeof(src), "%s", tw_builtin_crds_source);
	for (char *tok = strtok(src, " ,()"); tok; tok = strtok(NULL, " ,()"))
		if (!strstr(readme, tok))
			fail_msg("README.md of " FOLDER " does not name \"%s\" (of --version's "
				 "\"%s\")", tok, tw_builtin_crds_source);
	assert_non_null(strstr(readme, "Apache License"));
	free(readme);
	char *lic = tt_read_file(FOLDER "/LICENSE", NULL);
	assert_non_null(lic);
	assert_non_null(strstr(lic, "Apache License"));
	assert_non_null(strstr(lic, "Version 2.0"));
	free(lic);
}

static void builtin_crds_compile(void **state)
{
	(void)state;
	tp_crds *crds = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	assert_int_equal(tw_builtin_crds_load(crds, stderr), TP_OK);
	assert_true(tp_crds_count(crds) >= tw_builtin_crds_count()); /* versions served */
	static const char *const kinds[][2] = {
		{ "trainer.kubeflow.org", "TrainJob" },
		{ "trainer.kubeflow.org", "TrainingRuntime" },
		{ "trainer.kubeflow.org", "ClusterTrainingRuntime" },
		{ "trainer.kubeflow.org", "OptimizationJob" },
		{ "jobset.x-k8s.io", "JobSet" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!tp_crds_has_kind(crds, kinds[i][0], kinds[i][1]))
			fail_msg("no built-in CRD serves %s %s", kinds[i][0], kinds[i][1]);
	/* given back pages read again from the binary: loading twice works */
	tp_crds *again = NULL;
	assert_int_equal(tp_crds_new(&again), TP_OK);
	assert_int_equal(tw_builtin_crds_load(again, stderr), TP_OK);
	assert_int_equal(tp_crds_count(again), tp_crds_count(crds));
	tp_crds_unref(again);
	tp_crds_unref(crds);
	compare_with(FOLDER); /* and still the same bytes */
}

/* Pages wholly inside the built-in texts that are mapped in (pagemap's
 * present bit), or -1 when pagemap cannot be read. */
static long resident_text_pages(void)
{
	FILE *f = fopen("/proc/self/pagemap", "rb");
	if (!f)
		return -1;
	long page = sysconf(_SC_PAGESIZE), resident = 0;
	for (size_t i = 0; i < tw_builtin_crds_count(); i++) {
		tw_builtin_crd c;
		tw_builtin_crd_get(i, &c);
		uintptr_t lo = ((uintptr_t)c.data + (uintptr_t)page - 1) / (uintptr_t)page;
		uintptr_t hi = ((uintptr_t)c.data + c.len) / (uintptr_t)page;
		for (uintptr_t pg = lo; pg < hi; pg++) {
			uint64_t e = 0;
			if (fseek(f, (long)(pg * sizeof(e)), SEEK_SET) || fread(&e, sizeof(e), 1, f) != 1) {
				fclose(f);
				return -1;
			}
			resident += (long)(e >> 63);
		}
	}
	fclose(f);
	return resident;
}

/* Once loaded, no page of the texts stays resident: not those the loader
 * read past, nor a file's last ones, mapped again by the kernel's
 * fault-around when the next file's first page was read (248 pages stayed
 * here without the last give-back over all the files). */
static void texts_are_given_back(void **state)
{
	(void)state;
	tp_crds *crds = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	assert_int_equal(tw_builtin_crds_load(crds, stderr), TP_OK);
	long left = resident_text_pages();
	tp_crds_unref(crds);
	if (left < 0)
		skip();
	if (left > 0)
		fail_msg("%ld pages of the built-in CRDs' text are still resident", left);
}

/* text added as a mapped text (a private mapping of a file holding it, its
 * pages given back as they are read) and as plain memory: the messages on
 * errf and the return codes are the same. The message, malloc'd. */
static char *same_mapped_and_not(const char *text, size_t len)
{
	char path[] = "/tmp/test_builtin_crds.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	char *map = mmap(NULL, len + 1, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	unlink(path);
	char *msg[2] = { NULL, NULL };
	size_t msglen[2];
	int rc[2];
	size_t added[2] = { 0, 0 };
	for (int mapped = 0; mapped < 2; mapped++) {
		tp_crds *crds = NULL;
		assert_int_equal(tp_crds_new(&crds), TP_OK);
		FILE *errf = open_memstream(&msg[mapped], &msglen[mapped]);
		rc[mapped] = tw_crds_add_text(crds, "f.yaml", mapped ? map : text, len, mapped, errf,
					      &added[mapped]);
		fclose(errf);
		tp_crds_unref(crds);
	}
	assert_int_equal(rc[0], rc[1]);
	assert_int_equal(added[0], added[1]);
	assert_string_equal(msg[0], msg[1]);
	munmap(map, len + 1);
	free(msg[0]);
	return msg[1];
}

/* Pages given back as the loader reads past them are read again from the
 * file by the next pass and by an error's position: a CRD past the first
 * steps loads, and an error at its end is placed at the same line. */
static void mapped_text_reads_given_back_pages_again(void **state)
{
	(void)state;
	tw_builtin_crd c;
	assert_true(tw_builtin_crd_get(0, &c));
	char *msg = same_mapped_and_not(c.data, c.len);
	assert_string_equal(msg, "");
	free(msg);
	char *bad = malloc(c.len + 32);
	assert_non_null(bad);
	memcpy(bad, c.data, c.len);
	strcpy(bad + c.len, "bad: [unclosed\n");
	msg = same_mapped_and_not(bad, strlen(bad));
	if (!strstr(msg, "f.yaml: ") || !strstr(msg, "line"))
		fail_msg("no error placed at a line: %s", msg);
	free(msg);
	strcpy(bad + c.len, "x: \xff\n"); /* the byte checks count the lines from the start */
	msg = same_mapped_and_not(bad, strlen(bad));
	if (!strstr(msg, "invalid UTF-8 at byte"))
		fail_msg("no UTF-8 error: %s", msg);
	free(msg);
	free(bad);
}

/* Resident pages of the process's [heap] (the brk heap malloc grows), or
 * -1 when it has none (ASan's or valgrind's allocator). */
static long resident_heap_pages(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t lo = 0, hi = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	if (f)
		fclose(f);
	long page = sysconf(_SC_PAGESIZE);
	if (!hi || page <= 0)
		return -1;
	size_t n = (hi - lo) / (size_t)page;
	unsigned char *vec = malloc(n + 64); /* the heap may grow for it: some slack */
	long resident = -1;
	if (vec && !mincore((void *)lo, n * (size_t)page, vec)) {
		resident = 0;
		for (size_t i = 0; i < n; i++)
			resident += vec[i] & 1;
	}
	free(vec);
	return resident;
}

/* The parsed CRDs are freed once compiled; what stays resident of the heap
 * is what the compiled set holds, not the holes of the parse between its
 * allocations (each text is parsed in an arena of its own: the heap kept
 * 816 KB resident for 396 KB in use when the parse's nodes were malloc'd
 * one by one, 304 KB for 331 KB with the arena). */
static void loading_leaves_the_heap_compact(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__)
	skip(); /* ASan's allocator has no brk heap to measure */
#endif
	long page = sysconf(_SC_PAGESIZE);
	malloc_trim(0);
	long before = resident_heap_pages();
	size_t used_before = mallinfo2().uordblks;
	tp_crds *crds = NULL;
	assert_int_equal(tp_crds_new(&crds), TP_OK);
	assert_int_equal(tw_builtin_crds_load(crds, stderr), TP_OK);
	malloc_trim(0);
	long after = resident_heap_pages();
	size_t used = mallinfo2().uordblks;
	tp_crds_unref(crds);
	if (before < 0 || after < 0)
		skip();
	long grown = (after - before) * page;
	long kept = used > used_before ? (long)(used - used_before) : 0;
	if (grown > kept + 256 * 1024)
		fail_msg("loading the built-in CRDs left %ld KB of heap resident for %ld KB in use",
			 grown / 1024, kept / 1024);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		/* first: on a heap no other load has grown */
		cmocka_unit_test(loading_leaves_the_heap_compact),
		cmocka_unit_test(builtin_copy_is_the_folder),
		cmocka_unit_test(builtin_copy_is_upstreams_fixture),
		cmocka_unit_test(readme_names_the_source),
		cmocka_unit_test(builtin_crds_compile),
		cmocka_unit_test(mapped_text_reads_given_back_pages_again),
		cmocka_unit_test(texts_are_given_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
