/*
 * test_deploy_image.c — the image people run, as far as a machine without a
 * Docker engine can tell: the Dockerfile's stages (bases pinned by digest,
 * the build as CI builds, a runtime stage that installs nothing and copies
 * the binary and its libraries only, OCI labels, a numeric non-root user);
 * the runtime's files as deploy/image/rootfs.sh makes them (stripped binary,
 * exactly ldd's libraries, run in a chroot when the machine allows one);
 * `make deploy`'s plan (make -n) and deploy/set-image.sh's kustomization,
 * rendered, with a stub docker for the pushed digest.
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

#include "tests/support/deploycheck.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

#define REPO "registry.example.com/ml/trainer-webhook"
#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
/* make in a test that make started: none of the outer make's flags, nor
 * tests/run.sh's BUILD (make asan's build-asan). */
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD make --no-print-directory"

/* --------------------------------------------------------- Dockerfile */

/* The lines of the stage whose FROM line holds `stage` (NULL: the last
 * stage), joined; its FROM line into from. */
static char *stage_text(const char *df, const char *stage, char *from, size_t fl)
{
	tp_buf b = TP_BUF_INIT(1 << 20);
	bool in = false;
	for (const char *line = df; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		if (!strncmp(line, "FROM ", 5)) {
			char buf[512];
			snprintf(buf, sizeof(buf), "%.*s", (int)(n < 511 ? n : 511), line);
			const char *as = strstr(buf, " AS ");
			in = !stage || (as && !strcmp(as + 4, stage));
			if (in) {
				tp_buf_reset(&b);
				snprintf(from, fl, "%s", buf);
			}
		} else if (in) {
			tp_buf_add(&b, line, n);
			tp_buf_addc(&b, '\n');
		}
		line = eol ? eol + 1 : NULL;
	}
	tp_buf_addc(&b, '\0');
	return b.data;
}

/* FROM <name>@sha256:<64 hex>[ AS x]: the digest into digest. */
static bool pinned(const char *from, char *digest, size_t n)
{
	const char *at = strstr(from, "@sha256:");
	if (!at || strspn(at + 8, "0123456789abcdef") != 64)
		return false;
	snprintf(digest, n, "%.71s", at + 1);
	return true;
}

static void dockerfile_stages(void **state)
{
	(void)state;
	size_t n;
	char *df = tt_read_file("Dockerfile", &n), *mk = tt_read_file("Makefile", &n);
	char *ci = tt_read_file(".ci/run", &n), *ign = tt_read_file(".dockerignore", &n);
	assert_non_null(df);
	assert_non_null(mk);
	assert_non_null(ci);
	assert_non_null(ign);
	char from[512] = "", digest[80];
	char *build = stage_text(df, "build", from, sizeof(from));
	if (strncmp(from, "FROM debian:bookworm@", 21) || !pinned(from, digest, sizeof(digest)))
		fail_msg("build stage: %s, want FROM debian:bookworm@sha256:<digest> AS build", from);
	/* what CI runs (deps, then make), without the test tools */
	assert_non_null(strstr(ci, "sh tests/deps.sh"));
	assert_non_null(strstr(mk, "\ntest: deps all"));
	if (!strstr(build, "\nRUN sh tests/deps.sh build && make && sh deploy/image/rootfs.sh "
			   "build/trainer-webhook /rootfs\n"))
		fail_msg("build stage: want RUN sh tests/deps.sh build && make && "
			 "sh deploy/image/rootfs.sh build/trainer-webhook /rootfs:\n%s", build);
	free(build);

	char *rt = stage_text(df, NULL, from, sizeof(from));
	if (!pinned(from, digest, sizeof(digest)))
		fail_msg("runtime stage: %s, want a base pinned by @sha256:<digest>", from);
	if (strstr(rt, "\nRUN ") || strncmp(rt, "RUN ", 4) == 0)
		fail_msg("runtime stage runs commands (installs packages?):\n%s", rt);
	if (!strstr(rt, "\nCOPY --from=build /rootfs/ /\n"))
		fail_msg("runtime stage: want COPY --from=build /rootfs/ / alone");
	char label[160];
	snprintf(label, sizeof(label), "org.opencontainers.image.base.digest=\"%s\"", digest);
	const char *labels[] = { "org.opencontainers.image.title=\"trainer-webhook\"",
				 "org.opencontainers.image.description=",
				 "org.opencontainers.image.version=\"${VERSION}\"",
				 "org.opencontainers.image.revision=\"${REVISION}\"",
				 "org.opencontainers.image.base.name=", label };
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strstr(rt, labels[i]))
			fail_msg("runtime stage: no label %s", labels[i]);
	const char *user = strstr(rt, "\nUSER ");
	if (!user || atoi(user + 6) <= 0)
		fail_msg("runtime stage: want USER with a numeric non-root UID");
	assert_non_null(strstr(rt, "ENTRYPOINT [\"/usr/local/bin/trainer-webhook\"]"));
	assert_non_null(strstr(rt, "CMD [\"serve\", \"--kube\""));
	/* --version: ARG VERSION's default is the release number (VERSION) */
	char version[64] = "", want[96];
	char *vf = tt_read_file("VERSION", &n);
	assert_non_null(vf);
	sscanf(vf, "%63s", version);
	free(vf);
	snprintf(want, sizeof(want), "\nARG VERSION=%s\n", version);
	assert_non_null(strstr(df, want));
	assert_non_null(strstr(mk, "docker build --build-arg VERSION="));
	/* the context leaves out builds, the test tools and keys */
	const char *ignored[] = { "\n.git\n", "\nbuild/\n", "\n.tools/\n", "\ncerts/dev/\n",
				  "\n**/*.key\n" };
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (!strstr(ign, ignored[i]))
			fail_msg(".dockerignore: no line%s", ignored[i]);
	free(rt);
	free(df);
	free(mk);
	free(ci);
	free(ign);
}

/* ------------------------------------------------------ runtime files */

/* How many lines of ldd's output name a file (the vDSO does not). */
static int ldd_files(const char *bin)
{
	char cmd[512], *out = NULL;
	snprintf(cmd, sizeof(cmd), "(ldd '%s' | grep -c /)", bin); /* tt_run's stdin: grep's */
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	int n = atoi(out);
	free(out);
	return n;
}

static void runtime_files(void **state)
{
	(void)state;
	char dir[128], cmd[1024], *out = NULL;
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-rootfs"), 0);
	snprintf(cmd, sizeof(cmd), "sh deploy/image/rootfs.sh '%s' '%s/root'", tt_bin(), dir);
	assert_int_equal(tt_run(cmd, NULL, NULL), 0);
	/* stripped: no symbol table, smaller */
	char bin[256];
	snprintf(bin, sizeof(bin), "%s/root/usr/local/bin/trainer-webhook", dir);
	struct stat full, small;
	assert_int_equal(stat(tt_bin(), &full), 0);
	assert_int_equal(stat(bin, &small), 0);
	snprintf(cmd, sizeof(cmd), "(readelf -S '%s' | grep -c '\\.symtab')", bin);
	tt_run(cmd, &out, NULL);
	int symtabs = atoi(out);
	free(out);
	out = NULL;
	if (symtabs != 0 || small.st_size >= full.st_size)
		fail_msg("%s: not stripped (%lld bytes, unstripped %lld)", bin,
			 (long long)small.st_size, (long long)full.st_size);
	print_message("runtime files: binary %lld -> %lld bytes stripped\n",
		      (long long)full.st_size, (long long)small.st_size);
	/* exactly the libraries it links, and the binary */
	snprintf(cmd, sizeof(cmd), "(find '%s/root' -type f | wc -l)", dir);
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	assert_int_equal(atoi(out), ldd_files(tt_bin()) + 1);
	free(out);
	out = NULL;
	/* It runs from them alone: as root a chroot, else one in a user namespace. */
	char *err = NULL;
	snprintf(cmd, sizeof(cmd), "(ldd '%s' | grep -q libasan)", tt_bin());
	bool sanitized = tt_run(cmd, NULL, NULL) == 0;
	snprintf(cmd, sizeof(cmd),
		 "(mkdir '%s/root/out' && %s chroot '%s/root' /usr/local/bin/trainer-webhook "
		 "certs generate --service trainer-webhook --namespace ns --out /out && "
		 "%s chroot '%s/root' /usr/local/bin/trainer-webhook --version)",
		 dir, geteuid() ? "unshare -r" : "", dir, geteuid() ? "unshare -r" : "", dir);
	if (sanitized) {
		print_message("a sanitizer build reads /proc, which the chroot lacks: not run\n");
	} else if (geteuid() && tt_run("unshare -r true", NULL, NULL)) {
		print_message("no chroot here (not root, no user namespaces): not run\n");
	} else if (tt_run(cmd, &out, &err) != 0 || !strstr(out, "trainer-webhook ")) {
		fail_msg("%s:\n%s%s", cmd, out ? out : "", err ? err : "");
	} else {
		char crt[256];
		snprintf(crt, sizeof(crt), "%s/root/out/tls.crt", dir);
		assert_int_equal(access(crt, R_OK), 0);
	}
	free(out);
	free(err);
	sp_rmtree(dir);
}

/* ------------------------------------------------------------ make deploy */

static void make_deploy_plan(void **state)
{
	(void)state;
	char *out = NULL, *err = NULL;
	int rc = tt_run(MAKE " -n deploy IMAGE=" REPO ":v1 OVERLAY=deploy/overlays/cert-manager",
			&out, &err);
	if (rc)
		fail_msg("make -n deploy: exit %d: %s", rc, err ? err : "");
	const char *steps[] = {
		"docker build --build-arg VERSION=",
		"-t " REPO ":v1 .",
		"\ndocker push " REPO ":v1\n",
		"sh deploy/set-image.sh --pushed " REPO ":v1 deploy/overlays/cert-manager build/deploy\n",
		"kubectl apply -k build/deploy\n",
	};
	const char *at = out;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const char *s = strstr(at, steps[i]);
		if (!s)
			fail_msg("make -n deploy: want \"%s\" after what came before:\n%s", steps[i], out);
		at = s + strlen(steps[i]);
	}
	free(out);
	free(err);
	out = err = NULL;
	/* no registry: refused before anything is built */
	assert_int_not_equal(tt_run(MAKE " -n deploy IMAGE=trainer-webhook:dev", &out, &err), 0);
	assert_non_null(strstr(err, "make deploy: IMAGE=trainer-webhook:dev names no registry"));
	assert_null(strstr(out, "docker build"));
	free(out);
	free(err);
}

/* deploy/set-image.sh's kustomization in dir, rendered: the image it sets,
 * and deploy/'s checks on the rest. */
static void expect_image(const char *dir, const char *want, bool cert_manager)
{
	char err[4096];
	cJSON *objs = dc_render(dir, err, sizeof(err));
	if (!objs)
		fail_msg("%s", err);
	const cJSON *dep = dc_find(objs, "Deployment", 0);
	const char *img = tp_get_str(
		cJSON_GetArrayItem(tp_get_array(dep, "spec.template.spec.containers"), 0), "image");
	if (!img || strcmp(img, want))
		fail_msg("image %s, want %s", img ? img : "(none)", want);
	dc_probs p;
	dc_probs_init(&p);
	if (cert_manager)
		dc_check_cert_manager(objs, &p);
	else
		dc_check_all(objs, &p);
	if (p.n)
		fail_msg("%s: %s", dir, p.text.data);
	tp_buf_free(&p.text);
	cJSON_Delete(objs);
}

static int set_image(const char *dir, const char *args, char **err)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "PATH='%s/bin':\"$PATH\" sh deploy/set-image.sh %s '%s/out'", dir,
		 args, dir);
	return tt_run(cmd, NULL, err);
}

static void set_image_writes_the_overlay(void **state)
{
	(void)state;
	DC_REQUIRE(dc_kubectl);
	char dir[128], out[192], bin[192];
	assert_int_equal(sp_mkdtemp(dir, sizeof(dir), "tw-setimage"), 0);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	assert_int_equal(mkdir(bin, 0755), 0);
	assert_int_equal(set_image(dir, REPO ":v1 deploy/base", NULL), 0);
	expect_image(out, REPO ":v1", false);
	assert_int_equal(set_image(dir, "localhost:5000/trainer-webhook deploy/base", NULL), 0);
	expect_image(out, "localhost:5000/trainer-webhook:latest", false);
	assert_int_equal(set_image(dir, REPO "@" DIGEST " deploy/overlays/cert-manager", NULL), 0);
	expect_image(out, REPO "@" DIGEST, true);
	/* --pushed: the digest docker recorded for this repository, not another's */
	assert_int_equal(sp_write(bin, "docker",
				  "#!/bin/sh\n"
				  "echo 'mirror.example.com/trainer-webhook@sha256:"
				  "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'\n"
				  "echo '" REPO "@" DIGEST "'\n"),
			 0);
	char stub[256];
	snprintf(stub, sizeof(stub), "%s/docker", bin);
	assert_int_equal(chmod(stub, 0755), 0);
	assert_int_equal(set_image(dir, "--pushed " REPO ":v1 deploy/base", NULL), 0);
	expect_image(out, REPO "@" DIGEST, false);
	/* nothing pushed: refused */
	assert_int_equal(sp_write(bin, "docker", "#!/bin/sh\nexit 0\n"), 0);
	char *err = NULL;
	assert_int_equal(set_image(dir, "--pushed " REPO ":v1 deploy/base", &err), 1);
	assert_non_null(strstr(err, "docker knows no digest of " REPO ":v1 in " REPO));
	free(err);
	err = NULL;
	assert_int_equal(set_image(dir, REPO ":v1 deploy/nowhere", &err), 2);
	assert_non_null(strstr(err, "deploy/nowhere: no kustomization.yaml"));
	free(err);
	sp_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dockerfile_stages),
		cmocka_unit_test(runtime_files),
		cmocka_unit_test(make_deploy_plan),
		cmocka_unit_test(set_image_writes_the_overlay),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
