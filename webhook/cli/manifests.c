/*
 * manifests.c — manifest files from disk into the runtime store.
 *
 * `serve --runtimes`, `validate` and `expand` all read the same kinds of
 * paths: one file, a folder of manifests (searched recursively, in sorted
 * order so that later files replace earlier ones predictably), or "-" for
 * standard input. The walk follows symbolic links, as `kubectl apply -R`
 * does, but never into a folder that is already open above it, so a link
 * loop ends the branch instead of the program.
 */
#include "webhook/cli/manifests.h"
#include "webhook/core/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WALK_MAX_DEPTH 64 /* folders deeper than this are not searched */

/* ---------------------------------------------------------------- walking */

static bool is_manifest_name(const char *name)
{
	static const char *const exts[] = { ".yaml", ".yml", ".json" };
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i]);
		if (n > e && !strcmp(name + n - e, exts[i]))
			return true;
	}
	return false;
}

/* The folders open above the current one, to recognise a link loop. */
typedef struct walk {
	tw_file_fn fn;
	void *ctx;
	FILE *errf;
	dev_t dev[WALK_MAX_DEPTH];
	ino_t ino[WALK_MAX_DEPTH];
	int depth;
	int first_rc; /* the first failure; the walk goes on to report the rest */
} walk;

static void walk_note(walk *w, int rc)
{
	if (rc && !w->first_rc)
		w->first_rc = rc;
}

static void walk_report(walk *w, const char *path, const char *what)
{
	if (w->errf)
		fprintf(w->errf, "%s: %s\n", path, what);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of a folder, sorted (caller frees each and the array). */
static int list_dir(const char *path, char ***out, size_t *n)
{
	DIR *d = opendir(path);
	if (!d)
		return TP_EIO;
	char **v = NULL;
	size_t len = 0, cap = 0;
	int rc = TP_OK;
	struct dirent *de;
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (len == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				rc = TP_ENOMEM;
				break;
			}
			v = nv;
		}
		if (!(v[len] = strdup(de->d_name)))
			rc = TP_ENOMEM;
		else
			len++;
	}
	closedir(d);
	if (v)
		qsort(v, len, sizeof(*v), name_cmp);
	*out = v;
	*n = len;
	return rc;
}

static void walk_path(walk *w, const char *path, bool named);

static void walk_dir(walk *w, const char *path, const struct stat *st)
{
	for (int i = 0; i < w->depth; i++)
		if (w->dev[i] == st->st_dev && w->ino[i] == st->st_ino) {
			walk_report(w, path, "a symbolic link loop; not searched again");
			return;
		}
	if (w->depth == WALK_MAX_DEPTH) {
		walk_report(w, path, "folders nested too deep; not searched");
		return;
	}
	char **names = NULL;
	size_t n = 0;
	int rc = list_dir(path, &names, &n);
	if (rc) {
		walk_report(w, path, rc == TP_EIO ? strerror(errno) : "out of memory");
		walk_note(w, rc);
	} else {
		w->dev[w->depth] = st->st_dev;
		w->ino[w->depth] = st->st_ino;
		w->depth++;
		for (size_t i = 0; i < n; i++) {
			size_t len = strlen(path) + strlen(names[i]) + 2;
			char *child = malloc(len);
			if (!child) {
				walk_note(w, TP_ENOMEM);
				break;
			}
			/* "dir/" as typed (a shell's completion) joins as "dir/x" */
			size_t plen = strlen(path);
			bool slash = plen && path[plen - 1] == '/';
			snprintf(child, len, "%s%s%s", path, slash ? "" : "/", names[i]);
			walk_path(w, child, false);
			free(child);
		}
		w->depth--;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* named: the user gave this path, so a file is read whatever its name. */
static void walk_path(walk *w, const char *path, bool named)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		walk_report(w, path, strerror(errno));
		walk_note(w, TP_EIO);
		return;
	}
	if (S_ISDIR(st.st_mode))
		walk_dir(w, path, &st);
	else if (named || (S_ISREG(st.st_mode) && is_manifest_name(strrchr(path, '/') + 1)))
		walk_note(w, w->fn(path, w->ctx));
}

int tw_walk_manifests(const char *path, tw_file_fn fn, void *ctx, FILE *errf)
{
	if (!path || !fn)
		return TP_EINVAL;
	if (!strcmp(path, "-"))
		return fn(path, ctx);
	walk w = { .fn = fn, .ctx = ctx, .errf = errf };
	walk_path(&w, path, true);
	return w.first_rc;
}

/* ---------------------------------------------------------------- loading */

typedef struct store_load {
	tp_store *store;
	FILE *errf;
	cJSON *names; /* the runtimes put: { kind, namespace, name } (may be NULL) */
} store_load;

static void report_load_error(FILE *errf, const char *name, const tp_load_error *err)
{
	tp_buf b = TP_BUF_INIT(4096);
	if (errf && tp_load_error_format(err, name, &b) == TP_OK)
		fprintf(errf, "%s\n", b.data);
	tp_buf_free(&b);
}

static void report_doc(FILE *errf, const char *name, const tp_doc *doc, const char *what)
{
	if (!errf)
		return;
	fprintf(errf, "%s: document %d", name, doc->index);
	if (doc->item)
		fprintf(errf, ", item %d", doc->item);
	fprintf(errf, ", line %d: %s\n", doc->line, what);
}

/* Every object the store keeps goes in; other kinds (ConfigMaps,
 * kustomization files, ...) are not the store's business and are skipped. */
static int put_docs(store_load *sl, const char *name, tp_docs *docs)
{
	int first = TP_OK;
	for (size_t i = 0; i < tp_docs_count(docs); i++) {
		const tp_doc *doc = tp_docs_at(docs, i);
		if (tp_kind_of(doc->obj) == TP_KIND_UNKNOWN)
			continue;
		cJSON *obj = tp_docs_take(docs, i);
		if (sl->names && tw_note_runtime(sl->names, obj))
			return TP_ENOMEM;
		int rc = tp_store_put(sl->store, obj);
		if (rc == TP_OK)
			continue;
		cJSON_Delete(obj); /* the store took it only on success */
		if (rc == TP_EUNSUPPORTED)
			continue; /* a kind the store does not hold (an outdated API) */
		report_doc(sl->errf, name, doc,
			   rc == TP_EINVAL ? "the object has no metadata.name" : tp_strerror(rc));
		if (!first)
			first = rc;
	}
	return first;
}

static int load_one_file(const char *path, void *ctx)
{
	store_load *sl = ctx;
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	tp_buf buf = TP_BUF_INIT(lim.max_total_bytes + 1);
	int rc = tw_read_file(path, lim.max_total_bytes, &buf);
	if (rc) {
		if (sl->errf)
			fprintf(sl->errf, "%s: %s\n", name,
				rc == TP_EIO ? strerror(errno) : tp_strerror(rc));
		tp_buf_free(&buf);
		return rc;
	}
	tp_docs *docs = NULL;
	tp_load_error err;
	rc = tp_load(buf.data, buf.len, &lim, &docs, &err);
	tp_buf_free(&buf);
	if (rc) {
		report_load_error(sl->errf, name, &err);
		return rc;
	}
	rc = put_docs(sl, name, docs);
	tp_docs_free(docs);
	return rc;
}

int tw_note_runtime(cJSON *names, const cJSON *obj)
{
	tp_kind k = tp_kind_of(obj);
	if (!tp_kind_is_runtime(k) || !*tp_meta_name(obj))
		return TP_OK;
	cJSON *n = cJSON_CreateObject();
	if (!n || !cJSON_AddItemToArray(names, n)) {
		cJSON_Delete(n);
		return TP_ENOMEM;
	}
	return cJSON_AddStringToObject(n, "kind", tp_get_str(obj, "kind")) &&
	       cJSON_AddStringToObject(n, "namespace", tp_meta_namespace(obj)) &&
	       cJSON_AddStringToObject(n, "name", tp_meta_name(obj)) ? TP_OK : TP_ENOMEM;
}

int tw_store_load_path(tp_store *store, const char *path, FILE *errf)
{
	return tw_store_load_path_names(store, path, errf, NULL);
}

int tw_store_load_path_names(tp_store *store, const char *path, FILE *errf, cJSON *names)
{
	if (!store || !path)
		return TP_EINVAL;
	/* Store objects must live on the heap, never in a request's arena. */
	tp_arena *prev = tp_arena_enter(NULL);
	store_load sl = { .store = store, .errf = errf, .names = names };
	int rc = tw_walk_manifests(path, load_one_file, &sl, errf);
	tp_arena_leave(prev);
	return rc;
}
