/*
 * test_layering.c — the shape of policy/ and webhook/ as their object files
 * show it (nm) and their #include lines say:
 *   - in neither do files call each other's functions in a circle (the
 *     dispatcher above what it dispatches to, shared helpers below);
 *   - the library calls nothing of webhook/ or certs/ (docs/design.md: policy/
 *     calls nobody of ours);
 *   - policy/'s folders (policy_order) and webhook/'s (webhook_order) are
 *     layers in a declared order: a file calls functions of, and includes
 *     headers from, its own folder or lower ones only, and every folder has
 *     its place in the order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/testutil.h"

#define MAX_OBJS 256
#define MAX_SYMS 4096

struct sym {
	char name[96];
	int obj;
};

static char objs[MAX_OBJS][160];
static int nobjs;
static struct sym defs[MAX_SYMS], uses[MAX_SYMS * 4];
static int ndefs, nuses;
static bool edge[MAX_OBJS][MAX_OBJS];
static size_t build_len; /* objs[] are "<build>/<source path>o" */

/* The symbols of every object, from one run of nm over all of them (one
 * nm per object cost most of this test's time): nm heads each object's
 * lines with "<path>:". */
static void read_symbols(void)
{
	static char cmd[8 + MAX_OBJS * (sizeof(objs[0]) + 3)];
	char line[512];
	size_t len = (size_t)snprintf(cmd, sizeof(cmd), "nm");
	for (int o = 0; o < nobjs; o++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " '%.159s'", objs[o]);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	int o = -1;
	while (fgets(line, sizeof(line), p)) {
		char a[128], b[128], c[128];
		size_t ll = strcspn(line, "\n");
		line[ll] = '\0';
		if (ll && line[ll - 1] == ':') {
			line[ll - 1] = '\0';
			for (o = 0; o < nobjs && strcmp(objs[o], line); o++)
				;
			assert_true(o < nobjs);
			continue;
		}
		int n = sscanf(line, "%127s %127s %127s", a, b, c);
		if (o < 0 || n < 2)
			continue;
		if (n == 3 && strchr("TDBR", b[0]) && ndefs < MAX_SYMS) {
			snprintf(defs[ndefs].name, sizeof(defs[ndefs].name), "%.95s", c);
			defs[ndefs++].obj = o;
		} else if (n == 2 && !strcmp(a, "U") && nuses < MAX_SYMS * 4) {
			snprintf(uses[nuses].name, sizeof(uses[nuses].name), "%.95s", b);
			uses[nuses++].obj = o;
		}
	}
	assert_int_equal(pclose(p), 0);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct sym *)a)->name, ((const struct sym *)b)->name);
}

/* The first of defs (sorted by name) named name, or ndefs when none is:
 * every use is looked up here, not compared with every definition (the
 * nested loops took tens of seconds of a suite run). */
static int first_def(const char *name)
{
	int lo = 0, hi = ndefs;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (strcmp(defs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ndefs && !strcmp(defs[lo].name, name) ? lo : ndefs;
}

/* The objects of the sources matching pat[0..npat) (files that are gone
 * are no part of it); skips the test when fewer than min are built. The
 * last set loaded is kept: the tests of one folder share one run of nm per
 * object. */
static void load_objects(const char *const *pat, int npat, int min)
{
	static const char *const *loaded;
	if (loaded == pat)
		return;
	loaded = NULL;
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	build_len = strlen(build) > 40 ? 40 : strlen(build);
	nobjs = ndefs = nuses = 0;
	memset(edge, 0, sizeof(edge));
	for (int k = 0; k < npat; k++) {
		glob_t g;
		if (glob(pat[k], 0, NULL, &g) == 0)
			for (size_t i = 0; i < g.gl_pathc; i++) {
				const char *src = g.gl_pathv[i];
				if (nobjs == MAX_OBJS) {
					globfree(&g);
					fail_msg("more than %d objects: raise MAX_OBJS", MAX_OBJS);
				}
				snprintf(objs[nobjs], sizeof(objs[0]), "%.40s/%.*so", build,
					 (int)strlen(src) - 1, src);
				if (access(objs[nobjs], R_OK) == 0)
					nobjs++;
			}
		globfree(&g);
	}
	if (nobjs < min) {
		print_message("%s objects not found under %s: skipped\n", pat[0], build);
		skip();
	}
	read_symbols();
	qsort(defs, (size_t)ndefs, sizeof(defs[0]), by_name);
	for (int u = 0; u < nuses; u++)
		for (int d = first_def(uses[u].name);
		     d < ndefs && !strcmp(uses[u].name, defs[d].name); d++)
			if (defs[d].obj != uses[u].obj)
				edge[uses[u].obj][defs[d].obj] = true;
	loaded = pat;
}

/* The library: policy/ and its folders. */
static void load(void)
{
	static const char *const pat[] = { "policy/*.c", "policy/*/*.c" };
	load_objects(pat, 2, 10);
}

/* The binary: webhook/, its folders, and certs/ below them. */
static void load_webhook(void)
{
	static const char *const pat[] = { "webhook/*.c", "webhook/*/*.c", "certs/*.c" };
	load_objects(pat, 3, 20);
}

/* Does o reach target through edges (depth-first)? */
static bool reaches(int o, int target, bool *seen)
{
	for (int w = 0; w < nobjs; w++) {
		if (!edge[o][w] || seen[w])
			continue;
		if (w == target)
			return true;
		seen[w] = true;
		if (reaches(w, target, seen))
			return true;
	}
	return false;
}

/* Fails naming every object loaded that calls back into itself. */
static void assert_no_circles(void)
{
	static char circles[MAX_OBJS * 200];
	size_t len = 0;
	for (int o = 0; o < nobjs; o++) {
		bool seen[MAX_OBJS] = { false };
		if (reaches(o, o, seen) && len < sizeof(circles))
			len += (size_t)snprintf(circles + len, sizeof(circles) - len,
						"  %.159s calls back into itself through others\n",
						objs[o]);
	}
	if (len)
		fail_msg("calls in a circle:\n%s", circles);
}

static void no_circles_in_policy(void **state)
{
	(void)state;
	load();
	assert_no_circles();
}

static void no_circles_in_webhook(void **state)
{
	(void)state;
	load_webhook();
	assert_no_circles();
}

/* The library's undefined symbols are its own, libc's and its libraries':
 * never a tw_ (webhook/, certs/) function. */
static void policy_calls_nobody_of_ours(void **state)
{
	(void)state;
	load();
	for (int u = 0; u < nuses; u++)
		if (!strncmp(uses[u].name, "tw_", 3))
			fail_msg("%s calls %s of webhook/ or certs/", objs[uses[u].obj], uses[u].name);
}

/* ------------------------------------------------------------- layers */

/* The folders of one tree, lowest first. A file calls functions of, and
 * includes headers from, its own folder or one before it in order, never
 * one after. */
struct layering {
	const char *tree;  /* "policy" or "webhook" */
	const char *order_name; /* the array's name, for the messages */
	const char *const *order;
	int n;
	/* The layer name of a path inside the repository with no folder below
	 * tree/ (a file at its top, or outside it): NULL when it has none. */
	const char *(*outside)(const char *path);
	const char *const *pat; /* the sources to read for #include lines */
	int npat, min_files;
	/* An upward include the order lets stand (NULL: none does). */
	bool (*allowed)(const char *file, const char *line);
};

/* The layer of a path inside the repository (a source, or an object with
 * its build folder cut off): <tree>/<folder>/..., or what l->outside says
 * of anything else; -1 for a folder with no place in l->order. */
static int layer_of(const struct layering *l, const char *path, char *name, size_t n)
{
	size_t tl = strlen(l->tree);
	const char *p = path + tl + 1;
	const char *slash = NULL;
	if (!strncmp(path, l->tree, tl) && path[tl] == '/')
		slash = strchr(p, '/');
	const char *other = slash ? NULL : l->outside(path);
	if (slash)
		snprintf(name, n, "%.*s", (int)(slash - p), p);
	else
		snprintf(name, n, "%.40s", other ? other : path);
	for (int i = 0; i < l->n; i++)
		if (!strcmp(name, l->order[i]))
			return i;
	return -1;
}

/* An object's path inside the repository: "build/webhook/core/log.o" ->
 * "webhook/core/log.o". */
static const char *in_repo(int o)
{
	return objs[o] + build_len + 1;
}

/* Every folder of the tree has its place in the order: a new folder is
 * placed on purpose, not by accident. */
static void every_folder_has_a_layer(const struct layering *l)
{
	char pat[64];
	glob_t g;
	snprintf(pat, sizeof(pat), "%s/*/", l->tree);
	if (glob(pat, GLOB_ONLYDIR, NULL, &g) != 0) {
		print_message("%s/ not found from here: skipped\n", l->tree);
		skip();
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char name[64];
		if (layer_of(l, g.gl_pathv[i], name, sizeof(name)) < 0) {
			char dir[256];
			snprintf(dir, sizeof(dir), "%s", g.gl_pathv[i]);
			globfree(&g);
			fail_msg("%s has no place in %s (tests/unit/test_layering.c): "
				 "add it where it belongs, after every folder it uses",
				 dir, l->order_name);
		}
	}
	globfree(&g);
}

/* No function is called from a folder below the one that defines it (the
 * objects loaded are the tree's). */
static void calls_only_lower_layers(const struct layering *l)
{
	for (int u = 0; u < nuses; u++)
		for (int d = first_def(uses[u].name);
		     d < ndefs && !strcmp(uses[u].name, defs[d].name); d++) {
			char from[64], to[64];
			int lu = layer_of(l, in_repo(uses[u].obj), from, sizeof(from));
			int ld = layer_of(l, in_repo(defs[d].obj), to, sizeof(to));
			if (lu < 0 || ld < 0 || ld > lu)
				fail_msg("%s (%s) calls %s of %s (%s), a layer above it in "
					 "%s: move the function down, or hand it in "
					 "as a callback from above",
					 objs[uses[u].obj], from, uses[u].name, objs[defs[d].obj], to,
					 l->order_name);
		}
}

/* The same for #include "<tree>/...": a header's types and macros are a
 * dependency too, even with no call. */
static void includes_only_lower_layers(const struct layering *l)
{
	char want[32];
	int files = 0;
	snprintf(want, sizeof(want), "#include \"%s/", l->tree);
	for (int k = 0; k < l->npat; k++) {
		glob_t g;
		if (glob(l->pat[k], 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++, files++) {
			FILE *f = fopen(g.gl_pathv[i], "r");
			assert_non_null(f);
			char line[512], from[64], to[64];
			int lf = layer_of(l, g.gl_pathv[i], from, sizeof(from));
			for (int ln = 1; fgets(line, sizeof(line), f); ln++) {
				const char *h = strstr(line, want);
				if (h != line)
					continue;
				line[strcspn(line, "\n")] = '\0';
				char target[256];
				snprintf(target, sizeof(target), "%.*s",
					 (int)strcspn(h + 10, "\""), h + 10);
				int lh = layer_of(l, target, to, sizeof(to));
				if ((lf < 0 || lh < 0 || lh > lf) &&
				    !(l->allowed && l->allowed(g.gl_pathv[i], line))) {
					char file[256];
					snprintf(file, sizeof(file), "%s", g.gl_pathv[i]);
					fclose(f);
					globfree(&g);
					fail_msg("%s:%d (%s) includes a header of %s, a layer above "
						 "it in %s: %s",
						 file, ln, from, to, l->order_name, line);
				}
			}
			fclose(f);
		}
		globfree(&g);
	}
	if (files < l->min_files) {
		print_message("%s/ sources not found from here: skipped\n", l->tree);
		skip();
	}
}

/* ------------------------------------------------------------- policy/ */

/* policy/'s folders, lowest first (docs/layout.md says what each holds),
 * as upstream lays out its runtime framework: pkg/runtime (runtime/: what
 * a plugin is handed and the helpers it uses) below pkg/runtime/framework
 * and its plugins (plugins/), and the three that run the plugins above
 * them: the Pod check (pod/), the expansion (expand/), the validators
 * (admission/). "trainpolicy.h" is the public header, whose types every
 * folder uses. */
static const char *const policy_order[] = {
	"trainpolicy.h", /* policy/trainpolicy.h */
	"core",      /* arena, buffers, results, object access, names, quantities, hashes */
	"load",      /* YAML and JSON into objects, positions */
	"cel",       /* the CEL interpreter CRD rules use */
	"schema",    /* CRDs compiled; the API server's checks of a custom resource */
	"store",     /* the cluster's objects and how a rule looks one up */
	"patch",     /* JSON Patch, strategic merge, a runtime's patched template, upserts */
	"runtime",   /* the contexts plugins are handed, field checks, job and pod builders */
	"plugins",   /* one file per framework or scheduler, the table they run from */
	"pod",       /* what kube-apiserver and Pod Security will say of the Pods */
	"expand",    /* a TrainJob's JobSet: runtime info, the plugins' phases, the snapshot */
	"admission", /* the validators of each kind; validate.c dispatches */
};

static const char *policy_outside(const char *path)
{
	return !strcmp(path, "policy/trainpolicy.h") ? "trainpolicy.h" : NULL;
}

static const char *const policy_sources[] = { "policy/*.[ch]", "policy/*/*.[ch]" };

static const struct layering policy_layers = {
	"policy", "policy_order", policy_order,
	(int)(sizeof(policy_order) / sizeof(policy_order[0])),
	policy_outside, policy_sources, 2, 50, NULL,
};

static void every_policy_folder_has_a_layer(void **state)
{
	(void)state;
	every_folder_has_a_layer(&policy_layers);
}

static void policy_calls_only_lower_layers(void **state)
{
	(void)state;
	load();
	calls_only_lower_layers(&policy_layers);
}

static void policy_includes_only_lower_layers(void **state)
{
	(void)state;
	includes_only_lower_layers(&policy_layers);
}

/* ------------------------------------------------------------ webhook/ */

/* webhook/'s folders, lowest first (docs/layout.md says what each holds).
 * certs/ (the certificates' OpenSSL side) is below them all; "main" is
 * webhook/main.c, the command table. */
static const char *const webhook_order[] = {
	"certs",   /* certs/ */
	"core",    /* clock, durations, the log, files, JSON lines, key sets */
	"admission", /* the route table, AdmissionReview in, answer out */
	"metrics", /* the counters every folder above updates, their text */
	"cluster", /* the API-server client, the watch, the certificate manager */
	"server",  /* listener, TLS, HTTP, /metrics, the CRDs followed */
	"cli",     /* the commands */
	"main",    /* webhook/main.c */
};

/* certs/... is the layer "certs", webhook/main.c "main"; any other file at
 * the top of webhook/ is a layer of its own name, which has no place. */
static const char *webhook_outside(const char *path)
{
	if (!strncmp(path, "certs/", 6))
		return "certs";
	if (!strncmp(path, "webhook/", 8) && !strncmp(path + 8, "main.", 5))
		return "main";
	return NULL;
}

static const char *const webhook_sources[] = { "webhook/*.[ch]", "webhook/*/*.[ch]",
					       "certs/*.[ch]" };

static const struct layering webhook_layers = {
	"webhook", "webhook_order", webhook_order,
	(int)(sizeof(webhook_order) / sizeof(webhook_order[0])),
	webhook_outside, webhook_sources, 3, 20, NULL,
};

static void every_webhook_folder_has_a_layer(void **state)
{
	(void)state;
	every_folder_has_a_layer(&webhook_layers);
}

static void webhook_calls_only_lower_layers(void **state)
{
	(void)state;
	load_webhook();
	calls_only_lower_layers(&webhook_layers);
}

static void webhook_includes_only_lower_layers(void **state)
{
	(void)state;
	includes_only_lower_layers(&webhook_layers);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_circles_in_policy),
		cmocka_unit_test(policy_calls_nobody_of_ours),
		cmocka_unit_test(every_policy_folder_has_a_layer),
		cmocka_unit_test(policy_calls_only_lower_layers),
		cmocka_unit_test(policy_includes_only_lower_layers),
		cmocka_unit_test(no_circles_in_webhook),
		cmocka_unit_test(every_webhook_folder_has_a_layer),
		cmocka_unit_test(webhook_calls_only_lower_layers),
		cmocka_unit_test(webhook_includes_only_lower_layers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
