/*
 * crds.c — CustomResourceDefinitions from files and folders (--crds), as
 * `kubectl get crd -o yaml` prints them (one, or a List) or as upstream's
 * manifests ship them. Each CRD is compiled once into a tp_crds set.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "webhook/cli/crds.h"
#include "webhook/core/files.h"
#include "webhook/cli/manifests.h"

#define MAX_CRD_FILE ((size_t)64 * 1024 * 1024)

struct crd_load {
	tp_crds *crds;
	FILE *errf;
	size_t added;
	int rc;
};

void tw_crds_give_back(const char *p, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return;
	uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* tp_load_limits.read_to for a mapped text: what the loader has read past
 * in this pass is given back, so that at most a step of the text is
 * resident at a time, not all of it (the start-up peak). */
static void read_to(void *arg, const char *data, size_t upto)
{
	(void)arg;
	tw_crds_give_back(data, upto);
}

/* The parsed text lives in an arena of its own, gone in one free once
 * compiled: were its nodes malloc'd one by one between the set's long-lived
 * allocations, the holes they leave would keep the heap's pages resident
 * (serve with the built-in CRDs at rest: RssAnon 2.5 -> 2.0 MiB). No limit
 * beyond MAX_CRD_FILE's on the text, as with malloc. */
static int load_text(const char *text, size_t len, bool mapped, tp_arena **arena,
		     tp_docs **docs, tp_load_error *err)
{
	if (tp_arena_new(arena, SIZE_MAX))
		return TP_ENOMEM;
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.max_doc_bytes = MAX_CRD_FILE; /* a CRD with an embedded PodSpec is ~1 MiB */
	lim.skip = tp_crds_load_skip(); /* its schemas' descriptions: a third of its text */
	if (mapped)
		lim.read_to = read_to;
	tp_arena *prev = tp_arena_enter(*arena);
	int rc = tp_load(text, len, &lim, docs, err);
	tp_arena_leave(prev);
	return rc;
}

int tw_crds_add_text(tp_crds *crds, const char *name, const char *text, size_t len, bool mapped,
		     FILE *errf, size_t *added)
{
	tp_docs *docs = NULL;
	tp_arena *arena = NULL;
	tp_load_error err = { 0 };
	int rc = load_text(text, len, mapped, &arena, &docs, &err);
	if (mapped)
		tw_crds_give_back(text, len); /* what an error's position read again, too */
	if (rc) {
		if (errf)
			fprintf(errf, "%s: %s\n", name, err.msg[0] ? err.msg : tp_strerror(rc));
		tp_docs_free(docs);
		tp_arena_free(arena);
		return rc == TP_ENOMEM ? rc : TP_EIO;
	}
	int first = TP_OK;
	for (size_t i = 0; i < tp_docs_count(docs); i++) {
		const cJSON *o = tp_docs_at(docs, i)->obj;
		const char *kind = tp_get_str(o, "kind");
		if (!kind || strcmp(kind, "CustomResourceDefinition"))
			continue; /* a kustomization.yaml, or another object beside them */
		char why[512] = "";
		rc = tp_crds_add(crds, o, why, sizeof(why));
		if (rc && errf)
			fprintf(errf, "%s: %s\n", name, why[0] ? why : tp_strerror(rc));
		if (rc && first != TP_ENOMEM)
			first = rc == TP_ENOMEM ? rc : TP_EINVAL;
		else if (!rc && added)
			++*added;
	}
	tp_docs_free(docs); /* the objects are the arena's */
	tp_arena_free(arena);
	return first;
}

static int add_crd_file(const char *path, void *ctx)
{
	struct crd_load *cl = ctx;
	tp_buf b = TP_BUF_INIT(0);
	int rc = tw_read_file(path, MAX_CRD_FILE, &b);
	if (rc) {
		if (cl->errf)
			fprintf(cl->errf, "%s: %s\n", path, tp_strerror(rc));
		tp_buf_free(&b);
		return cl->rc = rc == TP_ENOMEM ? rc : TP_EIO, 0;
	}
	rc = tw_crds_add_text(cl->crds, path, b.data ? b.data : "", b.len, false, cl->errf,
			      &cl->added);
	tp_buf_free(&b);
	if (rc)
		cl->rc = rc;
	return cl->rc == TP_ENOMEM ? TP_ENOMEM : 0;
}

int tw_crds_load(tp_crds *crds, const char *path, FILE *errf, size_t *added)
{
	struct crd_load cl = { .crds = crds, .errf = errf };
	int rc = tw_walk_manifests(path, add_crd_file, &cl, errf);
	if (added)
		*added += cl.added;
	if (!rc && !cl.added && !cl.rc) {
		if (errf)
			fprintf(errf, "%s: no CustomResourceDefinition in it\n", path);
		return TP_ENOTFOUND;
	}
	return rc ? rc : cl.rc;
}
