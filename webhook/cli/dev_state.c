/*
 * dev_state.c — `serve --dev`'s private folder and what the binary carries
 * for it. The example runtimes and the sample AdmissionReview are copied in
 * at build time (embed.h, as builtin_crds.c does the CRDs), so --dev runs
 * from any folder: before, it read deploy/runtimes relative to the current
 * folder and wrote certs/dev (a CA key among them) there.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "webhook/cli/dev_state.h"
#include "webhook/cli/embed.h"

#define TW_DEV_EMBED(sym, file) TW_EMBED_FILE(".rodata.tw_dev_examples", 1, sym, file)

TW_DEV_EMBED(tw__dev_deepspeed, "deploy/runtimes/deepspeed-distributed.yaml");
TW_DEV_EMBED(tw__dev_mpi, "deploy/runtimes/mpi-team-a.yaml");
TW_DEV_EMBED(tw__dev_torch, "deploy/runtimes/torch-distributed.yaml");
TW_DEV_EMBED(tw__dev_legacy, "deploy/runtimes/torch-legacy-deprecated.yaml");
TW_DEV_EMBED(tw__dev_sample, "deploy/samples/admissionreview-trainjob.json");

/* tests/integration/test_install_edges.c holds this list to deploy/runtimes/. */
static const struct {
	const char *name, *start, *end;
} runtimes[] = {
	{ "deepspeed-distributed.yaml", tw__dev_deepspeed, tw__dev_deepspeed_end },
	{ "mpi-team-a.yaml", tw__dev_mpi, tw__dev_mpi_end },
	{ "torch-distributed.yaml", tw__dev_torch, tw__dev_torch_end },
	{ "torch-legacy-deprecated.yaml", tw__dev_legacy, tw__dev_legacy_end },
};
#define NRUNTIMES (sizeof(runtimes) / sizeof(runtimes[0]))

size_t tw_dev_runtimes_count(void)
{
	return NRUNTIMES;
}

const char *tw_dev_runtime(size_t i, const char **name, size_t *len)
{
	*name = runtimes[i].name;
	*len = (size_t)(runtimes[i].end - runtimes[i].start);
	return runtimes[i].start;
}

/* A file or folder that cannot be made: TP_EIO, errno's words in err. */
static int fail(char *err, size_t errlen, const char *what, const char *path)
{
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
	return TP_EIO;
}

/* mkdir -p path, each new folder 0700; then path itself made 0700 and
 * checked to be this user's folder. */
static int private_dir(const char *path, char *err, size_t errlen)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return fail(err, errlen, "cannot create", p);
		*s = c;
		if (!c)
			break;
	}
	struct stat st;
	if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		errno = errno ? errno : EPERM;
		snprintf(err, errlen, "%s is not a folder of this user's", path);
		return TW_EFAILED;
	}
	if ((st.st_mode & 0777) != 0700 && chmod(path, 0700))
		return fail(err, errlen, "cannot make private", path);
	return 0;
}

/* Write len bytes to path (replaced whole: a temporary, then rename). */
static int write_file(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return fail(err, errlen, "cannot write", tmp);
	bool ok = fwrite(text, 1, len, f) == len;
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return fail(err, errlen, "cannot write", path);
	}
	return 0;
}

/* The folder among the candidates that can be made private: 0, or the
 * last candidate's code with its reason in err. */
static int choose_dir(tw_dev_state *st, char *err, size_t errlen)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	if (xdg && *xdg == '/') {
		snprintf(st->dir, sizeof(st->dir), "%s/trainer-webhook/dev", xdg);
		if (!private_dir(st->dir, err, errlen))
			return 0;
	} else if (home && *home == '/') {
		snprintf(st->dir, sizeof(st->dir), "%s/.local/state/trainer-webhook/dev", home);
		if (!private_dir(st->dir, err, errlen))
			return 0;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(st->dir, sizeof(st->dir), "%s/trainer-webhook-dev.XXXXXX",
		 tmp && *tmp == '/' ? tmp : "/tmp");
	if (!mkdtemp(st->dir))
		return fail(err, errlen, "cannot create", st->dir);
	return 0;
}

int tw_dev_state_open(tw_dev_state *st, char *err, size_t errlen)
{
	int rc = choose_dir(st, err, errlen);
	if (rc)
		return rc;
	snprintf(st->runtimes, sizeof(st->runtimes), "%.*s/runtimes", PATH_MAX - 16, st->dir);
	snprintf(st->certs, sizeof(st->certs), "%.*s/certs", PATH_MAX - 16, st->dir);
	snprintf(st->cert, sizeof(st->cert), "%.*s/tls.crt", PATH_MAX - 16, st->certs);
	snprintf(st->key, sizeof(st->key), "%.*s/tls.key", PATH_MAX - 16, st->certs);
	snprintf(st->ca, sizeof(st->ca), "%.*s/ca.crt", PATH_MAX - 16, st->certs);
	snprintf(st->sample, sizeof(st->sample), "%.*s/admissionreview-trainjob.json",
		 PATH_MAX - 40, st->dir);
	if ((rc = private_dir(st->runtimes, err, errlen)))
		return rc;
	for (size_t i = 0; i < NRUNTIMES; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof(path), "%s/%s", st->runtimes, runtimes[i].name);
		if ((rc = write_file(path, runtimes[i].start,
				     (size_t)(runtimes[i].end - runtimes[i].start), err, errlen)))
			return rc;
	}
	return write_file(st->sample, tw__dev_sample, (size_t)(tw__dev_sample_end - tw__dev_sample),
			  err, errlen);
}
