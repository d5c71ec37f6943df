/*
 * builtin_crds.c — upstream's CRD files of webhook/cli/crds/ in the binary,
 * as they are: the assembler copies each file's bytes (.incbin, at build
 * time, from the repository's root where make runs), so the built-in copy
 * is the folder's by construction; tests/unit/test_builtin_crds.c compares
 * the two byte for byte, and the Makefile rebuilds this object when a file
 * of the folder changes.
 *
 * Each file starts on a page of its own: its pages are given back as the
 * loader reads past them (MADV_DONTNEED on a private file mapping drops
 * them from the resident set; they would be read again from the binary if
 * touched), so the 3.2 MB of text is never resident at once, and none of
 * it stays in the server.
 */

#include "webhook/cli/builtin_crds.h"
#include "webhook/cli/crds.h"
#include "webhook/cli/embed.h"

#define TW_CRDS_DIR "webhook/cli/crds/"

/* Each file on a page of its own (above). */
#define TW_EMBED(sym, file) TW_EMBED_FILE(".rodata.tw_builtin_crds", 4096, sym, TW_CRDS_DIR file)

TW_EMBED(tw__crd_jobsets, "jobset.x-k8s.io_jobsets.yaml");
TW_EMBED(tw__crd_ctr, "trainer.kubeflow.org_clustertrainingruntimes.yaml");
TW_EMBED(tw__crd_optimizationjobs, "trainer.kubeflow.org_optimizationjobs.yaml");
TW_EMBED(tw__crd_tr, "trainer.kubeflow.org_trainingruntimes.yaml");
TW_EMBED(tw__crd_trainjobs, "trainer.kubeflow.org_trainjobs.yaml");

/* Lengths are taken at run time: the linker knows both ends, C does not
 * know them as constants. */
static const struct {
	const char *file;
	const char *start, *end;
} files[] = {
	{ "jobset.x-k8s.io_jobsets.yaml", tw__crd_jobsets, tw__crd_jobsets_end },
	{ "trainer.kubeflow.org_clustertrainingruntimes.yaml", tw__crd_ctr, tw__crd_ctr_end },
	{ "trainer.kubeflow.org_optimizationjobs.yaml", tw__crd_optimizationjobs,
	  tw__crd_optimizationjobs_end },
	{ "trainer.kubeflow.org_trainingruntimes.yaml", tw__crd_tr, tw__crd_tr_end },
	{ "trainer.kubeflow.org_trainjobs.yaml", tw__crd_trainjobs, tw__crd_trainjobs_end },
};
#define NFILES (sizeof(files) / sizeof(files[0]))

/* Also in webhook/cli/crds/README.md, which the test holds to it. */
const char tw_builtin_crds_source[] =
	"kubeflow/trainer v2.3.0 (8c0f5059) manifests/base/crds, "
	"kubernetes-sigs/jobset 08dfbdfd config/components/crd/bases";

size_t tw_builtin_crds_count(void)
{
	return NFILES;
}

bool tw_builtin_crd_get(size_t i, tw_builtin_crd *out)
{
	if (i >= NFILES)
		return false;
	*out = (tw_builtin_crd){ files[i].file, files[i].start,
				 (size_t)(files[i].end - files[i].start) };
	return true;
}

int tw_builtin_crds_load(tp_crds *crds, FILE *errf)
{
	int first = TP_OK;
	for (size_t i = 0; i < NFILES; i++) {
		size_t len = (size_t)(files[i].end - files[i].start);
		int rc = tw_crds_add_text(crds, files[i].file, files[i].start, len, true, errf, NULL);
		if (rc && !first)
			first = rc;
		if (rc == TP_ENOMEM)
			break;
	}
	/* Reading a file's first pages maps its neighbours' in the same
	 * 64 KiB (the kernel's fault-around): the previous file's last pages
	 * came back after it was given back. All of them, once more. */
	tw_crds_give_back(files[0].start, (size_t)(files[NFILES - 1].end - files[0].start));
	return first;
}
