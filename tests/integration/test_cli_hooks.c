/*
 * test_cli_hooks.c — where CI users already are: the kubectl plugin through a
 * real kubectl (`make install`, then `kubectl trainer validate`; skipped when
 * no kubectl is on PATH), the pre-commit hook through `pre-commit try-repo`
 * (else its entry run exactly as pre-commit runs it: entry, args, then the
 * files), and the GitHub Action's steps (action.yml) run with bash as the
 * runner would, inputs put where ${{ inputs.* }} stands.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/testutil.h"

static char tmp[64], root[PATH_MAX], bindir[256], bin[PATH_MAX];

static const char bad_yaml[] =
	"apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
	"metadata: {name: mnist}\n"
	"spec:\n  runtimeRef: {name: torch-distributed}\n"
	"  trainer:\n    numProcPerNod: 4\n";               /* line 7 */

static void contains(const char *hay, const char *needle)
{
	if (!hay || !strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay ? hay : "(null)");
}

static int sh(char **out, const char *fmt, ...) TP_PRINTF(2, 3);
static int sh(char **out, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	cmd[0] = '(';
	vsnprintf(cmd + 1, sizeof(cmd) - 3, fmt, ap);
	strcat(cmd, ")"); /* tt_run's redirections then take the whole line */
	va_end(ap);
	char *o = NULL, *e = NULL;
	int rc = tt_run(cmd, &o, &e);
	size_t n = strlen(o ? o : "") + strlen(e ? e : "") + 1;
	char *both = malloc(n);
	snprintf(both, n, "%s%s", o ? o : "", e ? e : "");
	free(o);
	free(e);
	if (out)
		*out = both;
	else
		free(both);
	return rc;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/tw-hooks-XXXXXX");
	if (!mkdtemp(tmp) || !getcwd(root, sizeof(root)) || !realpath(tt_bin(), bin))
		return -1;
	/* the binary under test, as "trainer-webhook" on PATH */
	snprintf(bindir, sizeof(bindir), "%s/bin", tmp);
	char cmd[PATH_MAX * 5];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/repo %s && ln -s %s %s/trainer-webhook", tmp, bindir,
		 bin, bindir);
	if (system(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/repo/bad.yaml", tmp);
	FILE *f = fopen(cmd, "w");
	if (!f)
		return -1;
	fputs(bad_yaml, f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ kubectl */

static void kubectl_plugin(void **state)
{
	(void)state;
	if (sh(NULL, "command -v kubectl")) {
		print_message("no kubectl on PATH: skipped\n");
		skip();
	}
	char *out = NULL;
	/* make install's two files, beside each other */
	int rc = sh(&out, "install -D -m 0755 %s %s/inst/bin/trainer-webhook && "
			  "install -D -m 0755 deploy/kubectl-plugin/kubectl-trainer %s/inst/bin/kubectl-trainer && "
			  "make -n install DESTDIR=%s/x | grep -c 'install -D'", tt_bin(), tmp, tmp, tmp);
	if (rc)
		fail_msg("install: %s", out);
	contains(out, "2"); /* make install installs exactly those two */
	free(out);
	rc = sh(&out, "PATH=%s/inst/bin:$PATH kubectl plugin list", tmp);
	contains(out, "/inst/bin/kubectl-trainer");
	free(out);
	rc = sh(&out, "PATH=%s/inst/bin:$PATH kubectl trainer validate %s/repo/bad.yaml", tmp, tmp);
	assert_int_equal(rc, 1);
	contains(out, "bad.yaml:7:5: TrainJob/mnist: denied: unknown field \"spec.trainer.numProcPerNod\"");
	free(out);
	rc = sh(&out, "PATH=%s/inst/bin:$PATH kubectl trainer --version", tmp);
	assert_int_equal(rc, 0);
	contains(out, "trainer-webhook 0.4.0");
	free(out);
	/* nothing to run: a clear error */
	rc = sh(&out, "PATH=/usr/bin:/bin %s/inst/bin/kubectl-trainer validate x 2>&1; "
		      "rm %s/inst/bin/trainer-webhook; PATH=/usr/bin:/bin %s/inst/bin/kubectl-trainer "
		      "validate x", tmp, tmp, tmp);
	assert_int_equal(rc, 2);
	contains(out, "kubectl trainer: trainer-webhook not found");
	free(out);
}

/* The krew manifest names the archive make krew builds (the release
 * tarball, deploy/release/tarball.sh), with its sha256. Of the binary under
 * test, as it is: -o keeps make from building the library into the fresh
 * BUILD (a minute of compiling) and from linking the binary again from it,
 * which rewrote it under the tests running beside this one. */
static void krew_manifest(void **state)
{
	(void)state;
	char *out = NULL;
	if (sh(&out, "make -s -o %s -o %s/krew-build/libtrainpolicy.a krew BUILD=%s/krew-build "
		     "BIN=%s >/dev/null && "
		     "sha256sum %s/krew-build/krew/trainer-webhook_*_linux_*.tar.gz && "
		     "tar -tzf %s/krew-build/krew/trainer-webhook_*_linux_*.tar.gz && "
		     "cat %s/krew-build/krew/trainer.yaml", tt_bin(), tmp, tmp, tt_bin(), tmp, tmp, tmp))
		fail_msg("make krew: %s", out);
	char sum[65];
	snprintf(sum, sizeof(sum), "%.64s", out);
	char want[100];
	snprintf(want, sizeof(want), "sha256: %s\n", sum);
	contains(out, want);
	contains(out, "trainer-webhook/kubectl-trainer\n");
	contains(out, "trainer-webhook/trainer-webhook\n");
	contains(out, "trainer-webhook/lib/trainer-webhook\n");
	contains(out, "trainer-webhook/LICENSE\n");
	contains(out, "kind: Plugin\n");
	contains(out, "bin: kubectl-trainer\n");
	free(out);
}

/* ------------------------------------------------------------ pre-commit */

static void pre_commit_hook(void **state)
{
	(void)state;
	char *out = NULL;
	int rc;
	if (!sh(NULL, "command -v pre-commit") && !sh(NULL, "git -C %s rev-parse", root)) {
		/* try-repo takes the hook from this checkout (uncommitted changes too) */
		rc = sh(&out, "cd %s/repo && git init -q && git add bad.yaml && PATH=%s:$PATH "
			      "PRE_COMMIT_HOME=%s/pc pre-commit try-repo %s trainer-webhook-validate "
			      "--files bad.yaml", tmp, bindir, tmp, root);
	} else {
		print_message("no pre-commit: running the hook's entry as pre-commit would\n");
		cJSON *hooks = NULL;
		char *text = tt_read_file(".pre-commit-hooks.yaml", NULL);
		tp_docs *docs = NULL;
		tp_load_error err;
		assert_int_equal(tp_load(text, strlen(text), NULL, &docs, &err), TP_OK);
		hooks = tp_docs_at(docs, 0)->obj;
		const cJSON *hook = cJSON_GetArrayItem(hooks, 0), *a;
		char args[512] = "";
		cJSON_ArrayForEach(a, tp_get_array(hook, "args"))
			snprintf(args + strlen(args), sizeof(args) - strlen(args), " %s", a->valuestring);
		rc = sh(&out, "cd %s/repo && PATH=%s:$PATH %s%s bad.yaml", tmp, bindir,
			tp_get_str(hook, "entry"), args);
		tp_docs_free(docs);
		free(text);
	}
	assert_int_equal(rc, 1);
	contains(out, "bad.yaml:7:5: TrainJob/mnist: denied: unknown field");
	free(out);
	/* the hook's shape: the id the README names, YAML and JSON files */
	char *hooks = tt_read_file(".pre-commit-hooks.yaml", NULL);
	contains(hooks, "- id: trainer-webhook-validate\n");
	contains(hooks, "files: \\.(ya?ml|json)$\n");
	free(hooks);
}

/* ------------------------------------------------------------ Action */

/* ${{ inputs.NAME }} -> the input given, else its default. */
static const char *input(const cJSON *action, const cJSON *given, const char *ref)
{
	char name[64];
	if (sscanf(ref, "${{ inputs.%63[a-z-] }}", name) != 1)
		return ref;
	const char *v = tp_get_str(given, name);
	if (v)
		return v;
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(tp_get(action, "inputs"), name);
	v = tp_get_str(in, "default");
	return v ? v : "";
}

/* Run every step of action.yml whose if holds, as the runner would; the
 * last step's exit status and output. */
static int run_action(const cJSON *action, const cJSON *given, char **out)
{
	const cJSON *step;
	int rc = 0;
	cJSON_ArrayForEach(step, tp_get_array(action, "runs.steps")) {
		const char *cond = tp_get_str(step, "if");
		if (cond && !strcmp(cond, "inputs.binary == ''") && *input(action, given,
									   "${{ inputs.binary }}"))
			continue;
		assert_string_equal(tp_get_str(step, "shell"), "bash");
		char script[PATH_MAX];
		snprintf(script, sizeof(script), "%s/step.sh", tmp);
		FILE *f = fopen(script, "w");
		assert_non_null(f);
		fprintf(f, "export GITHUB_ACTION_PATH='%s'\n", root);
		const cJSON *e;
		cJSON_ArrayForEach(e, tp_get(step, "env"))
			fprintf(f, "export %s='%s'\n", e->string, input(action, given, e->valuestring));
		fprintf(f, "cd '%s/repo'\n%s", tmp, tp_get_str(step, "run"));
		fclose(f);
		free(*out);
		*out = NULL;
		rc = sh(out, "bash -e %s", script);
		if (rc && tp_get_str(step, "env.TW_PATHS") == NULL)
			fail_msg("step %s: exit %d\n%s", tp_get_str(step, "name"), rc, *out);
	}
	return rc;
}

static void github_action(void **state)
{
	(void)state;
	char *text = tt_read_file("action.yml", NULL), *out = NULL;
	assert_non_null(text);
	tp_docs *docs = NULL;
	tp_load_error err;
	assert_int_equal(tp_load(text, strlen(text), NULL, &docs, &err), TP_OK);
	const cJSON *action = tp_docs_at(docs, 0)->obj;
	assert_string_equal(tp_get_str(action, "runs.using"), "composite");
	/* no binary given: the release's tarball for this architecture, fetched
	 * (here from a folder laid out as the release's downloads: the tarball
	 * deploy/release/tarball.sh makes of the binary under test, and
	 * SHA256SUMS), checked, and kept in the tool cache */
	char *v = tt_read_file("VERSION", NULL), *arch = NULL;
	assert_non_null(v);
	v[strcspn(v, "\n")] = '\0';
	assert_int_equal(sh(&arch, "dpkg --print-architecture"), 0);
	arch[strcspn(arch, "\n")] = '\0';
	if (sh(&out, "mkdir -p %s/releases/v%s && cd %s/releases/v%s && SOURCE_DATE_EPOCH=0 sh "
		     "%s/deploy/release/tarball.sh %s %s trainer-webhook_%s_linux_%s.tar.gz && "
		     "sha256sum * > SHA256SUMS",
	       tmp, v, tmp, v, root, bin, v, v, arch))
		fail_msg("tarball.sh: %s", out);
	char url[PATH_MAX], cache[PATH_MAX];
	snprintf(url, sizeof(url), "file://%s/releases", tmp);
	snprintf(cache, sizeof(cache), "%s/toolcache", tmp);
	setenv("TW_RELEASES", url, 1);
	setenv("RUNNER_TOOL_CACHE", cache, 1);
	char given[PATH_MAX + 100];
	cJSON *in = tt_json("{\"paths\":\"bad.yaml\"}");
	assert_int_equal(run_action(action, in, &out), 1);
	contains(out, "::error file=bad.yaml,line=7,col=5,title=TrainJob/mnist::unknown field");
	cJSON_Delete(in);
	char cached[PATH_MAX + 200];
	snprintf(cached, sizeof(cached), "%s/trainer-webhook/%s/%s/trainer-webhook/trainer-webhook",
		 cache, v, arch);
	struct stat st;
	assert_int_equal(stat(cached, &st), 0);
	free(v);
	free(arch);
	/* SARIF for code scanning; fail-on-denied false lets the upload run */
	snprintf(given, sizeof(given), "{\"paths\":\"bad.yaml\",\"format\":\"sarif\",\"binary\":\"%s\","
				       "\"fail-on-denied\":\"false\"}", bin);
	in = tt_json(given);
	assert_int_equal(run_action(action, in, &out), 0);
	contains(out, "1 object in 1 file: 0 allowed, 1 denied");
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/repo/trainer-webhook.sarif", tmp);
	char *sarif = tt_read_file(path, NULL);
	cJSON *s = tt_json(sarif);
	assert_string_equal(tp_get_str(s, "version"), "2.1.0");
	contains(sarif, "\"ruleId\":\t\"unknown-field\"");
	cJSON_Delete(s);
	free(sarif);
	cJSON_Delete(in);
	free(out);
	tp_docs_free(docs);
	free(text);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kubectl_plugin),
		cmocka_unit_test(krew_manifest),
		cmocka_unit_test(pre_commit_hook),
		cmocka_unit_test(github_action),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
