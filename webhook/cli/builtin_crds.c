/*
 * builtin_crds.c — upstream's CRD files of webhook/cli/crds/ in the binary,
 * as they are: the assembler copies each file's bytes (.incbin, at build
 * time, from the repository's root where make runs), so the built-in copy
 * is the folder's by construction; tests/unit/test_builtin_crds.c compares
 * the two byte for byte, and the Makefile rebuilds this object when a file
 * of the folder changes.
 *
 * Each file starts on a page of its own: once compiled, its pages are
 * given back (MADV_DONTNEED on a private file mapping drops them from the
 * resident set; they would be read again from the binary if touched), so
 * the 3.2 MB of text never stays resident in the server.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "webhook/cli/builtin_crds.h"
#include "webhook/cli/crds.h"

#define TW_CRDS_DIR "webhook/cli/crds/"

/* sym: the file's first byte; sym_end: one past its last (a NUL follows). */
#define TW_EMBED(sym, file)                                                    \
	__asm__(".section .rodata.tw_builtin_crds,\"a\"\n"                     \
		".balign 4096\n"                                               \
		".globl " #sym "\n.hidden " #sym "\n" #sym ":\n"               \
		".incbin \"" TW_CRDS_DIR file "\"\n"                           \
		".globl " #sym "_end\n.hidden " #sym "_end\n" #sym "_end:\n"   \
		".byte 0\n"                                                    \
		".previous\n");                                                \
	extern const char sym[], sym##_end[]

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

/* The whole pages inside [p, p + n): gone from the resident set. */
static void give_back(const char *p, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return;
	uintptr_t lo = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	uintptr_t hi = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

int tw_builtin_crds_load(tp_crds *crds, FILE *errf)
{
	int first = TP_OK;
	for (size_t i = 0; i < NFILES; i++) {
		size_t len = (size_t)(files[i].end - files[i].start);
		int rc = tw_crds_add_text(crds, files[i].file, files[i].start, len, errf, NULL);
		give_back(files[i].start, len);
		if (rc && !first)
			first = rc;
		if (rc == TP_ENOMEM)
			return rc;
	}
	return first;
}
