/*
 * test_release_sources.c — one licence, one version, one home (issue 31):
 * the project's Apache-2.0 LICENSE and a NOTICE of what it embeds, named by
 * the chart, the image labels and the krew archive; the file VERSION as the
 * release every shipped mention says (--version, the chart, the image tags
 * in deploy/, the krew manifest, the pre-commit and Action examples of
 * docs/usage.md); the Makefile's PROJECT_REPO and PROJECT_IMAGE as the only
 * repository and registry a shipped file names as this project's (the krew
 * manifest, the chart, the SARIF report's informationUri included). Each
 * scan is tried on a text that breaks it, so that it can fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"
#include "tests/support/server_proc.h"
#include "tests/support/testutil.h"

static char release[64], repo[256], image[256];

static char *must_read(const char *path)
{
	size_t n;
	char *s = tt_read_file(path, &n);
	if (!s)
		fail_msg("%s: cannot read", path);
	return s;
}

/* The Makefile's `name := value` into out. */
static void make_var(const char *mk, const char *name, char *out, size_t n)
{
	char key[64];
	snprintf(key, sizeof(key), "\n%s ", name);
	const char *at = strstr(mk, key);
	if (!at)
		fail_msg("Makefile: no %s", name);
	at = strstr(at, ":= ");
	assert_non_null(at);
	snprintf(out, n, "%.*s", (int)strcspn(at + 3, " \n"), at + 3);
}

static int setup(void **state)
{
	(void)state;
	char *v = must_read("VERSION"), *mk = must_read("Makefile");
	snprintf(release, sizeof(release), "%.*s", (int)strcspn(v, "\n"), v);
	make_var(mk, "PROJECT_REPO", repo, sizeof(repo));
	make_var(mk, "PROJECT_IMAGE", image, sizeof(image));
	free(v);
	free(mk);
	return 0;
}

/* --------------------------------------------------------------- licence */

static void licence_is_apache_and_named_everywhere(void **state)
{
	(void)state;
	char *lic = must_read("LICENSE"), *notice = must_read("NOTICE");
	const char *apache[] = { "Apache License", "Version 2.0, January 2004",
				 "END OF TERMS AND CONDITIONS" };
	for (size_t i = 0; i < sizeof(apache) / sizeof(apache[0]); i++)
		if (!strstr(lic, apache[i]))
			fail_msg("LICENSE: no \"%s\": not the Apache License 2.0", apache[i]);
	/* NOTICE: what is embedded from elsewhere, and under which licence */
	const char *embedded[] = { "webhook/cli/crds/", "kubeflow/trainer", "kubernetes-sigs/jobset",
				   "policy/plugins/flux_scripts.c", "Apache License, Version 2.0" };
	for (size_t i = 0; i < sizeof(embedded) / sizeof(embedded[0]); i++)
		if (!strstr(notice, embedded[i]))
			fail_msg("NOTICE: does not name %s", embedded[i]);
	struct {
		const char *file, *want;
	} named[] = {
		{ "charts/trainer-webhook/Chart.yaml", "\n  artifacthub.io/license: Apache-2.0\n" },
		{ "Containerfile", "org.opencontainers.image.licenses=\"Apache-2.0\"" },
		{ "deploy/kubectl-plugin/trainer.yaml", "\n        - from: trainer-webhook/*\n" },
		{ "deploy/release/tarball.sh", " \"$root/LICENSE\" \"$root/NOTICE\" \"$dir/\"\n" },
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		char *s = must_read(named[i].file);
		if (!strstr(s, named[i].want))
			fail_msg("%s: no \"%s\"", named[i].file, named[i].want);
		free(s);
	}
	free(lic);
	free(notice);
}

/* --------------------------------------------------------------- version */

/* The files the project ships (git's; tests/ and upstream's CRDs left out),
 * one per line; NULL outside a git checkout. */
static char *shipped_files(void)
{
	char *out = NULL;
	if (tt_run("git ls-files -- . ':!tests/' ':!webhook/cli/crds/' ':!**/*.json' 2>/dev/null",
		   &out, NULL) || !out || !*out) {
		free(out);
		return NULL;
	}
	return out;
}

/* scan(file, text, probs) on the text of every shipped file (binary ones
 * left out). */
static void scan_shipped(void (*scan)(const char *, const char *, tp_buf *), tp_buf *probs)
{
	char *files = shipped_files();
	if (!files)
		return;
	for (char *f = strtok(files, "\n"); f; f = strtok(NULL, "\n")) {
		size_t n;
		char *s = tt_read_file(f, &n);
		if (s && strlen(s) == n)
			scan(f, s, probs);
		free(s);
	}
	free(files);
}

/* Where text (of file) says a release after one of the markers, it says
 * this one: "trainer-webhook:<tag>", "trainer-webhook@v<x>" (the Action),
 * "rev: v<x>" (pre-commit), "releases/download/v<x>/", "image.tag=<x>",
 * "--version <x>" (the chart from the registry), "ARG VERSION=<x>". Each
 * other release (or a tag such as dev) is a line of probs. */
static void scan_versions(const char *file, const char *text, tp_buf *probs)
{
	static const char *markers[] = { "trainer-webhook:", "trainer-webhook@", "rev: ",
					  "releases/download/", "image.tag=", "--version ",
					  "ARG VERSION=" };
	for (size_t m = 0; m < sizeof(markers) / sizeof(markers[0]); m++) {
		size_t ml = strlen(markers[m]);
		for (const char *at = strstr(text, markers[m]); at; at = strstr(at + 1, markers[m])) {
			const char *v = at + ml;
			/* a placeholder (TAG, $(VERSION), ${VERSION}) or a port: not a release */
			if (!(isdigit((unsigned char)v[0]) || (v[0] == 'v' && isdigit((unsigned char)v[1])) ||
			      !strncmp(v, "dev", 3) || !strncmp(v, "latest", 6)))
				continue;
			if (*v == 'v')
				v++;
			size_t n = strspn(v, "0123456789.");
			while (n && v[n - 1] == '.') /* the end of a sentence */
				n--;
			bool ok = n == strlen(release) && !strncmp(v, release, n);
			/* a port ("trainer-webhook:9443") has no dot */
			if (n && !memchr(v, '.', n))
				ok = true;
			if (!ok)
				tp_buf_addf(probs, "%s: \"%.*s\", want release %s\n", file,
					    (int)(ml + strcspn(at + ml, " \n\"'`)")), at, release);
		}
	}
}

static void every_mention_is_the_release(void **state)
{
	(void)state;
	/* VERSION: x.y.z */
	int a, b, c;
	char tail;
	if (sscanf(release, "%d.%d.%d%c", &a, &b, &c, &tail) != 3)
		fail_msg("VERSION: \"%s\", want x.y.z", release);
	/* the places that must say it */
	struct {
		const char *file, *fmt;
	} says[] = {
		{ "charts/trainer-webhook/Chart.yaml", "\nversion: %s\n" },
		{ "charts/trainer-webhook/Chart.yaml", "\nappVersion: \"%s\"\n" },
		{ "deploy/base/deployment.yaml", "\n        image: IMAGE:%s\n" },
		{ "deploy/overlays/production/kustomization.yaml", "\n  newTag: %s\n" },
		{ "deploy/kubectl-plugin/trainer.yaml", "\n  version: v%s\n" },
		{ "deploy/kubectl-plugin/trainer.yaml", "/releases/download/v%s/" },
		{ "docs/usage.md", "\n          rev: v%s\n" },
		{ "docs/usage.md", "/trainer-webhook@v%s\n" },
		{ "charts/trainer-webhook/README.md", " --version %s " },
	};
	tp_buf probs = TP_BUF_INIT(1 << 20);
	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++) {
		char *s = must_read(says[i].file), want[1024], fmt[512];
		const char *img = strstr(says[i].fmt, "IMAGE");
		if (img)
			snprintf(fmt, sizeof(fmt), "%.*s%s%s", (int)(img - says[i].fmt), says[i].fmt,
				 image, img + 5);
		else
			snprintf(fmt, sizeof(fmt), "%s", says[i].fmt);
		snprintf(want, sizeof(want), fmt, release);
		if (!strstr(s, want))
			tp_buf_addf(&probs, "%s: no \"%s\"\n", says[i].file, want);
		free(s);
	}
	/* and no shipped file says another */
	scan_shipped(scan_versions, &probs);
	/* --version */
	char cmd[1024], *out = NULL, want[128];
	snprintf(cmd, sizeof(cmd), "'%s' --version", tt_bin());
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	snprintf(want, sizeof(want), "trainer-webhook %s", release);
	if (!out || strncmp(out, want, strlen(want)) || !strchr(" \n", out[strlen(want)]))
		tp_buf_addf(&probs, "--version: %s", out ? out : "(nothing)\n");
	free(out);
	tp_buf_addc(&probs, '\0');
	if (probs.data[0])
		fail_msg("releases other than VERSION's %s:\n%s", release, probs.data);
	tp_buf_free(&probs);
}

/* The scan finds a stale release, a tag such as dev, and passes ports and
 * placeholders. */
static void version_scan_can_fail(void **state)
{
	(void)state;
	char text[1024];
	snprintf(text, sizeof(text),
		 "image: ghcr.io/x/trainer-webhook:%s\nuses: o/trainer-webhook@v%s\n"
		 "svc trainer-webhook:9443 IMAGE=REGISTRY/trainer-webhook:TAG\n"
		 "ARG VERSION=${VERSION}\n",
		 release, release);
	tp_buf probs = TP_BUF_INIT(1 << 16);
	scan_versions("good", text, &probs);
	tp_buf_addc(&probs, '\0');
	assert_string_equal(probs.data, "");
	tp_buf_reset(&probs);
	scan_versions("bad",
		      "image: trainer-webhook:dev\n  rev: v0.1.0\nx/releases/download/v0.3.0/a.tgz\n"
		      "--set image.tag=v0.3.0\n",
		      &probs);
	tp_buf_addc(&probs, '\0');
	const char *want[] = { "\"trainer-webhook:dev\"", "\"rev: v0.1.0\"",
			       "\"releases/download/v0.3.0/a.tgz\"", "\"image.tag=v0.3.0\"" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(probs.data, want[i]))
			fail_msg("the scan missed %s:\n%s", want[i], probs.data);
	tp_buf_free(&probs);
}

/* ------------------------------------------------------------------ home */

/* Every link to a repository or an image called trainer-webhook in text is
 * the project's own: github.com/<owner>/trainer-webhook is repo, ghcr.io/.../
 * trainer-webhook is image (its charts beside it); OWNER is a placeholder
 * where the home is known. */
static void scan_home(const char *file, const char *text, tp_buf *probs)
{
	const char *gh = "github.com/";
	for (const char *at = strstr(text, gh); at; at = strstr(at + 1, gh)) {
		const char *owner = at + strlen(gh);
		size_t on = strcspn(owner, "/ \n\"'`)");
		if (owner[on] != '/' || strncmp(owner + on + 1, "trainer-webhook", 15) ||
		    isalnum((unsigned char)owner[on + 16]) || owner[on + 16] == '-')
			continue;
		const char *home = strstr(repo, gh);
		if (!home || strncmp(at, home, strlen(home)))
			tp_buf_addf(probs, "%s: %.*s, want %s\n", file, (int)(on + 16 + strlen(gh)), at,
				    repo);
	}
	for (const char *at = strstr(text, "OWNER/trainer-webhook"); at;
	     at = strstr(at + 1, "OWNER/trainer-webhook"))
		tp_buf_addf(probs, "%s: OWNER/trainer-webhook, want %s\n", file, repo);
	for (const char *at = strstr(text, "ghcr.io/"); at; at = strstr(at + 1, "ghcr.io/")) {
		size_t n = strcspn(at, " \n\"'`):@=,");
		if (n < 16 || strncmp(at + n - 15, "trainer-webhook", 15))
			continue;
		char charts[300];
		snprintf(charts, sizeof(charts), "%.*s/charts/trainer-webhook",
			 (int)(strrchr(image, '/') - image), image);
		if (!(n == strlen(image) && !strncmp(at, image, n)) &&
		    !(n == strlen(charts) && !strncmp(at, charts, n)))
			tp_buf_addf(probs, "%s: %.*s, want %s\n", file, (int)n, at, image);
	}
}

static void one_home(void **state)
{
	(void)state;
	tp_buf probs = TP_BUF_INIT(1 << 20);
	char want[512];
	/* the keys that say whose project this is */
	struct {
		const char *file, *key;
	} keys[] = {
		{ "deploy/kubectl-plugin/trainer.yaml", "\n  homepage: %s\n" },
		{ "deploy/kubectl-plugin/trainer.yaml", "\n      uri: %s/releases/download/" },
		{ "charts/trainer-webhook/Chart.yaml", "\nhome: %s\n" },
		{ "docs/usage.md", "\n        - repo: %s\n" },
	};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *s = must_read(keys[i].file);
		snprintf(want, sizeof(want), keys[i].key, repo);
		if (!strstr(s, want))
			tp_buf_addf(&probs, "%s: no \"%s\"\n", keys[i].file, want + 1);
		free(s);
	}
	scan_shipped(scan_home, &probs);
	/* the SARIF report's tool */
	char cmd[1024], *out = NULL;
	snprintf(cmd, sizeof(cmd), "'%s' validate -o sarif deploy/runtimes/torch-distributed.yaml",
		 tt_bin());
	tt_run(cmd, &out, NULL);
	cJSON *sarif = out ? cJSON_Parse(out) : NULL;
	const char *uri = tp_get_str(cJSON_GetArrayItem(tp_get_array(sarif, "runs"), 0),
				     "tool.driver.informationUri");
	if (!uri || strcmp(uri, repo))
		tp_buf_addf(&probs, "validate -o sarif: informationUri %s, want %s\n",
			    uri ? uri : "(none)", repo);
	cJSON_Delete(sarif);
	free(out);
	tp_buf_addc(&probs, '\0');
	if (probs.data[0])
		fail_msg("not the project's home (%s, %s):\n%s", repo, image, probs.data);
	tp_buf_free(&probs);
}

static void home_scan_can_fail(void **state)
{
	(void)state;
	char text[2048];
	snprintf(text, sizeof(text),
		 "%s/releases\nimage: %s:1\nhelm install oci://%.*s/charts/trainer-webhook\n"
		 "upstream: https://github.com/kubeflow/trainer\n",
		 repo, image, (int)(strrchr(image, '/') - image), image);
	tp_buf probs = TP_BUF_INIT(1 << 16);
	scan_home("good", text, &probs);
	tp_buf_addc(&probs, '\0');
	assert_string_equal(probs.data, "");
	tp_buf_reset(&probs);
	scan_home("bad",
		  "- repo: https://github.com/OWNER/trainer-webhook\n"
		  "uri: https://github.com/someone/trainer-webhook/releases\n"
		  "image: ghcr.io/kubeflow/trainer-webhook:1\n",
		  &probs);
	tp_buf_addc(&probs, '\0');
	const char *want[] = { "bad: github.com/OWNER/trainer-webhook, want ",
			       "bad: github.com/someone/trainer-webhook, want ",
			       "bad: ghcr.io/kubeflow/trainer-webhook, want " };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(probs.data, want[i]))
			fail_msg("the scan missed %s:\n%s", want[i], probs.data);
	tp_buf_free(&probs);
}

/* ------------------------------------------------------------- release */

/* Every `make TARGET` of the release workflow (which runs only on GitHub)
 * names a target the Makefile has. */
static void release_workflow_calls_real_targets(void **state)
{
	(void)state;
	char *wf = must_read(".github/workflows/release.yml"), *mk = must_read("Makefile");
	int calls = 0;
	for (const char *at = strstr(wf, "make "); at; at = strstr(at + 1, "make ")) {
		const char *bol = at;
		while (bol > wf && bol[-1] != '\n')
			bol--;
		if (bol[strspn(bol, " ")] == '#') /* the header's words */
			continue;
		const char *w = at + 5;
		while (*w == '-') /* flags: -s */
			w += strcspn(w, " ") + 1;
		char target[64], rule[80];
		snprintf(target, sizeof(target), "%.*s", (int)strcspn(w, " \n\")$`"), w);
		if (!*target || strchr(target, '='))
			continue;
		/* print-NAME: the pattern rule print-%, for a variable the Makefile sets */
		if (!strncmp(target, "print-", 6)) {
			snprintf(rule, sizeof(rule), "\n%s ", target + 6);
			if (!strstr(mk, "\nprint-%:") || !strstr(mk, rule))
				fail_msg("release.yml: make %s: no such variable", target);
		} else {
			snprintf(rule, sizeof(rule), "\n%s:", target);
			if (!strstr(mk, rule))
				fail_msg("release.yml: make %s: the Makefile has no such target", target);
		}
		calls++;
	}
	assert_true(calls >= 3); /* test, release, print-... */
	assert_non_null(strstr(wf, "make release VERSION="));
	free(wf);
	free(mk);
}

/* The release tarball runs on its own libraries: every library the loader
 * maps for it (LD_TRACE_LOADED_OBJECTS through the wrapper) is in its lib/,
 * and it validates a runtime with an empty environment. */
static void release_tarball_carries_its_libraries(void **state)
{
	(void)state;
	char tmp[128], cmd[2048], *out = NULL, *err = NULL;
	assert_int_equal(sp_mkdtemp(tmp, sizeof(tmp), "tw-tarball"), 0);
	snprintf(cmd, sizeof(cmd),
		 "SOURCE_DATE_EPOCH=0 sh deploy/release/tarball.sh '%s' %s '%s/t.tar.gz' && "
		 "tar -C '%s' -xzf '%s/t.tar.gz'",
		 tt_bin(), release, tmp, tmp, tmp);
	if (tt_run(cmd, &out, &err))
		fail_msg("tarball.sh: %s", err ? err : "");
	free(out);
	free(err);
	/* the loader the wrapper runs, with the wrapper's library path, listing */
	snprintf(cmd, sizeof(cmd),
		 "(cd '%s/trainer-webhook' && env -i lib/ld-linux* --library-path \"$PWD/lib\" "
		 "--list lib/trainer-webhook)",
		 tmp);
	assert_int_equal(tt_run(cmd, &out, NULL), 0);
	char lib[192];
	snprintf(lib, sizeof(lib), "%s/trainer-webhook/lib/", tmp);
	int libs = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		const char *arrow = strstr(line, "=> /");
		if (!arrow)
			continue;
		if (strncmp(arrow + 3, lib, strlen(lib)))
			fail_msg("the tarball's binary loads a library of the host's: %s", line);
		libs++;
	}
	assert_true(libs > 5);
	free(out);
	snprintf(cmd, sizeof(cmd),
		 "env -i '%s/trainer-webhook/kubectl-trainer' validate "
		 "deploy/runtimes/torch-distributed.yaml",
		 tmp);
	if (tt_run(cmd, &out, &err))
		fail_msg("kubectl-trainer validate from the tarball: %s%s", out ? out : "",
			 err ? err : "");
	free(out);
	free(err);
	sp_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(licence_is_apache_and_named_everywhere),
		cmocka_unit_test(every_mention_is_the_release),
		cmocka_unit_test(version_scan_can_fail),
		cmocka_unit_test(one_home),
		cmocka_unit_test(home_scan_can_fail),
		cmocka_unit_test(release_workflow_calls_real_targets),
		cmocka_unit_test(release_tarball_carries_its_libraries),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
