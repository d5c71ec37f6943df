/*
 * test_one_tool.c — one of each basic tool (issue 33): one hash (the keyed
 * SipHash of policy/core/hash.c), one JSON reader (the library's: no
 * cJSON_Parse call in the binary's objects), one argv reader (the flag
 * table's tw_flags_parse: no command walks argv itself), the request
 * path's functions named for what they do (no three `static decide`), and
 * one error convention (no bare `return -1;` in webhook/ or certs/ but the
 * values whose function says what -1 means).
 *
 * The source checks read every .c and .h of policy/, webhook/ and certs/
 * (run from the repository's root, as tests/run.sh does); the symbol check
 * runs nm over the binary's objects under $BUILD (default build). The argv
 * checks run the binary on every command with an unknown flag, a flag
 * missing its value and the --flag=value form, and compare what it prints
 * with what each command's own parser printed before the table read argv
 * (the same bytes: issue 33 changes no output).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "certs/certs.h"
#include "tests/support/clicheck.h"
#include "tests/support/testutil.h"
#include "webhook/cli/flags.h"
#include "webhook/core/json_read.h"

/* ------------------------------------------------------------ sources */

struct needle {
	const char *text;  /* what no source but owner may hold */
	const char *owner; /* "" for none */
	const char *fix;   /* what to use instead */
};

static const struct needle needles[] = {
	/* FNV-1a's offset bases and primes (64 and 32 bits) */
	{ "14695981039346656037", "", "tp_hash_bytes / tp__hasher (policy/core/hash.h)" },
	{ "1469598103934665603", "", "tp_hash_bytes / tp__hasher (policy/core/hash.h)" },
	{ "0x100000001b3", "", "tp_hash_bytes / tp__hasher (policy/core/hash.h)" },
	{ "2166136261", "", "tp_hash_bytes / tp__hasher (policy/core/hash.h)" },
	{ "16777619", "", "tp_hash_bytes / tp__hasher (policy/core/hash.h)" },
	/* the binary reads JSON with the library's reader */
	{ "cJSON_Parse", "", "tp_load's JSON (policy/trainpolicy.h)" },
	/* one argv reader: the table's */
	{ "tw_flags_check(", "", "tw_flags_parse (webhook/cli/flags.h)" },
	{ "static bool decide(", "", "a name that says which step it is" },
	{ "static int decide(", "", "a name that says which step it is" },
	{ "MHD_Result decide(", "", "a name that says which step it is" },
};
#define NNEEDLES (sizeof(needles) / sizeof(needles[0]))

/* The files that give each command's flags their meaning: none may index
 * argv past the subcommand's name (tw_flags_parse hands them each flag). */
static const char *const parsers[] = {
	"webhook/cli/cmd_validate.c", "webhook/cli/cmd_review.c", "webhook/cli/cmd_expand.c",
	"webhook/cli/serve_args.c",   "webhook/cli/cmd_certs.c",  "webhook/cli/cli.c",
	"webhook/cli/cmd_completion.c",
};

static char found[16384];

static void note(const char *path, const char *what, const char *fix)
{
	size_t used = strlen(found);
	snprintf(found + used, sizeof(found) - used, "%s: %s (use %s)\n", path, what, fix);
}

/* Whether the comment right above the function that p is in says what its
 * -1 means ("-1 means not found"): the block comment that ends just before
 * its signature, no blank line or statement between. A comment that says
 * "returns -1" on failure does not make -1 a value. */
static bool function_says_minus_one(const char *text, const char *p)
{
	const char *body = NULL;
	for (const char *q = text; (q = strstr(q, "\n{\n")) && q < p; q++)
		body = q;
	const char *end = NULL;
	for (const char *q = text; body && (q = strstr(q, "*/")) && q < body; q++)
		end = q;
	if (!end)
		return false;
	for (const char *q = end + 2; q < body; q++)
		if (*q == ';' || *q == '}' || (q[0] == '\n' && q[1] == '\n'))
			return false;
	const char *start = end;
	while (start > text && strncmp(start, "/*", 2))
		start--;
	const char *says = strstr(start, "-1 means");
	return says && says < end;
}

/* The binary's failures are the one enum's codes (issue 33): a bare
 * `return -1;` in webhook/ or certs/ is a value (an index, not found, an
 * API's own -1) only where its function's comment says what -1 means. */
static void bare_returns(const char *path, const char *text)
{
	for (const char *p = text; (p = strstr(p, "return -1;")); p++)
		if (!function_says_minus_one(text, p)) {
			int line = 1;
			for (const char *q = text; q < p; q++)
				line += *q == '\n';
			char what[64];
			snprintf(what, sizeof(what), "line %d: return -1;", line);
			note(path, what,
			     "TW_EFAILED, TP_ENOMEM, ..., or say \"-1 means\" above the function");
		}
}

static void one_file(const char *path, const char *text)
{
	for (size_t i = 0; i < NNEEDLES; i++)
		if (strstr(text, needles[i].text) && strcmp(path, needles[i].owner))
			note(path, needles[i].text, needles[i].fix);
	for (size_t i = 0; i < sizeof(parsers) / sizeof(parsers[0]); i++) {
		if (strcmp(path, parsers[i]))
			continue;
		/* argv[0] and argv[1] (certs' subcommand) are dispatch, not
		 * flags; any other index is a parser of its own */
		for (const char *p = text; (p = strstr(p, "argv[")); p++)
			if (strncmp(p, "argv[1]", 7) && strncmp(p, "argv[0]", 7))
				note(path, "argv[...]", "tw_flags_parse's callbacks");
		if (strstr(text, "for (int i = 1; i < argc; i++)"))
			note(path, "a loop over argv", "tw_flags_parse");
	}
	if (!strncmp(path, "webhook/", 8) || !strncmp(path, "certs/", 6))
		bare_returns(path, text);
}

static void one_of_each_in_the_sources(void **state)
{
	(void)state;
	found[0] = '\0';
	const char *folders[] = { "policy", "webhook", "certs" };
	for (size_t i = 0; i < 3; i++)
		tt_each_source(folders[i], one_file);
	if (found[0])
		fail_msg("a second tool beside the one kept:\n%s", found);
}

/* ------------------------------------------------------------ symbols */

/* No object of the binary (libtwebhook.a) calls a cJSON parser: a planted
 * cJSON_ParseWithLength in webhook/cluster/ fails this even if the source
 * check above were fooled by a macro. */
static void no_second_json_reader_linked(void **state)
{
	(void)state;
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[256], line[512];
	snprintf(cmd, sizeof(cmd), "nm -u '%.200s/libtwebhook.a' 2>/dev/null", build);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t lines = 0;
	found[0] = '\0';
	while (fgets(line, sizeof(line), p)) {
		lines++;
		if (strstr(line, "cJSON_Parse"))
			note(build, line, "tp_load's JSON");
	}
	pclose(p);
	if (!lines) {
		print_message("%s/libtwebhook.a not found or nm missing: skipped\n", build);
		skip();
	}
	if (found[0])
		fail_msg("the binary links a second JSON reader:\n%s", found);
}

/* What the API client, the watches and the credential plugins read: one
 * object, else NULL, as cJSON_ParseWithLength's callers had it (and as
 * deep: 150 levels pass, which the loader's default 100 for files would
 * refuse). */
static void the_json_reader_reads_one_object(void **state)
{
	(void)state;
	static const char ok[] = "{\"kind\":\"Status\",\"message\":\"no\",\"n\":3}";
	cJSON *o = tw_json_object(ok, sizeof(ok) - 1);
	assert_non_null(o);
	assert_string_equal(tp_get_str(o, "message"), "no");
	cJSON_Delete(o);
	/* a watch line is not NUL-terminated: only len bytes are read */
	o = tw_json_object("{\"type\":\"ADDED\"}{\"x\"", 16);
	assert_non_null(o);
	cJSON_Delete(o);
	const char *bad[] = { "", "   ", "[1]", "\"s\"", "3", "{", "{\"a\":1}{\"b\":2}", "not json",
			      "{\"a\":}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_null(tw_json_object(bad[i], strlen(bad[i])));
	assert_null(tw_json_object(NULL, 0));
	char deep[1024] = "";
	for (int i = 0; i < 150; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "1");
	for (int i = 0; i < 150; i++)
		strcat(deep, "}");
	o = tw_json_object(deep, strlen(deep));
	assert_non_null(o);
	cJSON_Delete(o);
	/* a finding's rendered value, back to its string */
	cJSON *v = tw_json_value("\"caf\\u00e9 \\\"x\\\"\"");
	assert_true(cJSON_IsString(v));
	assert_string_equal(v->valuestring, "caf\xc3\xa9 \"x\"");
	cJSON_Delete(v);
	v = tw_json_value("12");
	assert_true(cJSON_IsNumber(v));
	cJSON_Delete(v);
	assert_null(tw_json_value("\"cut..."));
	assert_null(tw_json_value("1 2"));
}

/* ------------------------------------------------------------ paths */

/* One walk finds where a finding's field was written: the deepest node of
 * the path that has a position, a node made after loading standing in for
 * none (validate's findings.c no longer cuts the path and asks again). */
static void one_walk_places_a_path(void **state)
{
	(void)state;
	static const char yaml[] = "kind: TrainJob\n"
				   "spec:\n"
				   "  trainer:\n"
				   "    numNodes: 2\n"
				   "metadata:\n"
				   "  labels:\n"
				   "    app.kubernetes.io/name: x\n";
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.positions = true;
	tp_docs *d = NULL;
	tp_load_error err = { 0 };
	assert_int_equal(tp_load(yaml, sizeof(yaml) - 1, &lim, &d, &err), TP_OK);
	cJSON *root = tp_docs_at(d, 0)->obj;
	int line = 0, col = 0;
	assert_true(tp_docs_path_position(d, root, "spec.trainer.numNodes", &line, &col));
	assert_int_equal(line, 4);
	assert_int_equal(col, 5);
	assert_true(tp_docs_path_position(d, root, "spec.trainer.image", &line, &col));
	assert_int_equal(line, 3); /* its parent, written */
	assert_true(tp_docs_path_position(d, root, "metadata.labels.app.kubernetes.io/name", &line,
					  &col));
	assert_int_equal(line, 7);
	/* made after loading: no position of its own, nor its child */
	cJSON *made = cJSON_AddObjectToObject(cJSON_GetObjectItem(root, "spec"), "made");
	assert_non_null(cJSON_AddObjectToObject(made, "inner"));
	line = col = 0;
	assert_true(tp_docs_path_position(d, root, "spec.made.inner.x", &line, &col));
	assert_int_equal(line, 2);
	assert_int_equal(col, 1);
	tp_docs_free(d);
}

/* ------------------------------------------------------------ errors */

/* One error enum for library and binary: tp_error's codes, then the
 * binary's range from TW_EFIRST down, and certs' names mapped onto them, so
 * that no number means two things (certs' -1 was "bad input" where the
 * library's -1 is "out of memory"). */
static void one_error_enum(void **state)
{
	(void)state;
	static const int codes[] = {
		TP_ENOMEM, TP_EINVAL, TP_EPARSE, TP_ELIMIT, TP_ENOTFOUND, TP_EUNSUPPORTED,
		TP_ECONFLICT, TP_EIO, TP_EUNAVAILABLE, TP_ETIMEDOUT,
		TW_EFAILED, TW_EEXIST, TW_EBAD, TW_ECRYPTO,
	};
	size_t n = sizeof(codes) / sizeof(codes[0]);
	for (size_t i = 0; i < n; i++) {
		assert_true(codes[i] < 0);
		assert_true(i < 10 ? codes[i] > TW_EFIRST : codes[i] <= TW_EFIRST);
		for (size_t j = i + 1; j < n; j++) {
			assert_int_not_equal(codes[i], codes[j]);
			assert_string_not_equal(tp_strerror(codes[i]), tp_strerror(codes[j]));
		}
		/* one function names every code of the one enum */
		assert_string_not_equal(tp_strerror(codes[i]), "unknown error");
	}
	/* certs' codes are the one enum's, each meaning what it meant */
	assert_int_equal(TW_CERTS_OK, TP_OK);
	assert_int_equal(TW_CERTS_EINVAL, TP_EINVAL);
	assert_int_equal(TW_CERTS_EIO, TP_EIO);
	assert_int_equal(TW_CERTS_EEXIST, TW_EEXIST);
	assert_int_equal(TW_CERTS_EBAD, TW_EBAD);
	assert_int_equal(TW_CERTS_ECRYPTO, TW_ECRYPTO);
	assert_int_not_equal(TW_CERTS_EINVAL, TP_ENOMEM);
}

/* ------------------------------------------------------------ argv */

/* What tw_flags_parse handed to the callbacks, one line each. */
static char seen[1024];

static void add(const char *fmt, const char *a, const char *b)
{
	size_t used = strlen(seen);
	snprintf(seen + used, sizeof(seen) - used, fmt, a, b);
}

static int rec_flag(void *ctx, const char *as, const tw_flag *f, const char *v)
{
	(void)ctx;
	add("flag %s=%s\n", as, v ? v : "(none)");
	(void)f;
	return 0;
}

static int rec_operand(void *ctx, const char *arg)
{
	(void)ctx;
	add("operand %s%s\n", arg, "");
	return 0;
}

static int rec_unknown(void *ctx, const char *arg)
{
	(void)ctx;
	add("unknown %s%s\n", arg, "");
	return 0;
}

static int rec_help(void *ctx)
{
	(void)ctx;
	add("help%s%s\n", "", "");
	return 0;
}

static const char *parse(const char *command, bool equals, int argc, char **argv)
{
	seen[0] = '\0';
	tw_argv p = { command, NULL, rec_flag, rec_operand, rec_unknown, rec_help, equals };
	assert_int_equal(tw_flags_parse(&p, argc, argv), 0);
	return seen;
}

/* The table hands each argument to its callback: a value flag takes the next
 * argument whatever it is, a switch none, "-" is an operand, "--" and a
 * --flag=value are unknown unless the command takes that form (certs). */
static void the_table_reads_argv(void **state)
{
	(void)state;
	char *a[] = { "validate", "-o", "--quiet", "-", "--", "-h", "--no-schema", "x",
		      "--exclude", NULL };
	assert_string_equal(parse("validate", false, 9, a),
			    "flag -o=--quiet\noperand -\nunknown --\nhelp\nflag --no-schema=(none)\n"
			    "operand x\nflag --exclude=(none)\n");
	char *b[] = { "validate", "--profile=strict", "--quiet=1", NULL };
	assert_string_equal(parse("validate", false, 3, b),
			    "unknown --profile=strict\nunknown --quiet=1\n");
	char *c[] = { "generate", "--service=s", "--dns=", "--force=1", "--force", NULL };
	assert_string_equal(parse("certs generate", true, 5, c),
			    "flag --service=s=s\nflag --dns==\nunknown --force=1\n"
			    "flag --force=(none)\n");
}

/* The messages each command printed for a bad argv before the table read
 * argv (trainer-webhook at 31ce900), byte for byte. */
static const struct {
	const char *args, *err;
} usage[] = {
	{ "validate --profil strict x.yaml",
	  "trainer-webhook validate: unknown option \"--profil\"; did you mean \"--profile\"? "
	  "(see trainer-webhook validate --help)\n" },
	{ "validate --profile=strict x.yaml",
	  "trainer-webhook validate: unknown option \"--profile=strict\" (see trainer-webhook "
	  "--help)\n" },
	{ "validate -o", "trainer-webhook validate: -o needs a value (see trainer-webhook --help)\n" },
	{ "validate --profile",
	  "trainer-webhook validate: --profile needs a value (see trainer-webhook --help)\n" },
	{ "validate --output bad x",
	  "trainer-webhook validate: -o \"bad\": use text, json, github, junit or sarif (see "
	  "trainer-webhook --help)\n" },
	{ "validate -- x", "trainer-webhook validate: unknown option \"--\" (see trainer-webhook "
			   "--help)\n" },
	{ "review --bogus", "trainer-webhook review: unknown option \"--bogus\" (see trainer-webhook "
			    "review --help)\n" },
	{ "review --path", "trainer-webhook review: --path needs a route (see trainer-webhook "
			   "--help)\n" },
	{ "review --strict-action",
	  "trainer-webhook review: --strict-action: use deny or warn (see trainer-webhook --help)\n" },
	{ "review --path=/x",
	  "trainer-webhook review: unknown option \"--path=/x\" (see trainer-webhook --help)\n" },
	{ "review a b", "trainer-webhook review: one AdmissionReview at a time (got \"a\" and "
			"\"b\") (see trainer-webhook --help)\n" },
	{ "expand --ssh-key",
	  "trainer-webhook expand: --ssh-key needs a value (see trainer-webhook --help)\n" },
	{ "expand --output toml x",
	  "trainer-webhook expand: -o \"toml\": use yaml or json (see trainer-webhook --help)\n" },
	{ "expand --ssh-key=x a",
	  "trainer-webhook expand: unknown option \"--ssh-key=x\" (see trainer-webhook --help)\n" },
	{ "expand", "trainer-webhook expand: name the TRAINJOB file (or -) (see trainer-webhook "
		    "--help)\n" },
	{ "serve --listen",
	  "trainer-webhook serve: --listen needs a value (see trainer-webhook --help)\n" },
	{ "serve --listen=:1",
	  "trainer-webhook serve: unknown option \"--listen=:1\" (see trainer-webhook --help)\n" },
	{ "serve foo", "trainer-webhook serve: unknown option \"foo\" (see trainer-webhook --help)\n" },
	{ "serve --dev=1",
	  "trainer-webhook serve: unknown option \"--dev=1\" (see trainer-webhook --help)\n" },
	{ "serve --dev --strict-action maybe",
	  "trainer-webhook serve: --strict-action \"maybe\": use deny or warn (see trainer-webhook "
	  "--help)\n" },
	{ "certs generate --service",
	  "trainer-webhook certs: --service needs a value\n"
	  "run \"trainer-webhook certs --help\" for the flags\n" },
	{ "certs generate --service=s",
	  "trainer-webhook certs: --namespace is required (the webhook's Service namespace)\n"
	  "run \"trainer-webhook certs --help\" for the flags\n" },
	{ "certs generate --force=1",
	  "trainer-webhook certs: unknown flag or argument \"--force=1\" for certs generate\n"
	  "run \"trainer-webhook certs --help\" for the flags\n" },
	{ "certs generate -",
	  "trainer-webhook certs: unknown flag or argument \"-\" for certs generate\n"
	  "run \"trainer-webhook certs --help\" for the flags\n" },
	{ "certs check --tls-cert",
	  "trainer-webhook certs: --tls-cert needs a value\n"
	  "run \"trainer-webhook certs --help\" for the flags\n" },
	{ "certs check --force",
	  "trainer-webhook certs check: unknown option \"--force\" (see trainer-webhook certs check "
	  "--help)\n" },
	{ "completion --x",
	  "usage: trainer-webhook completion bash|zsh (see trainer-webhook completion --help)\n" },
	{ "completion bash zsh",
	  "usage: trainer-webhook completion bash|zsh (see trainer-webhook completion --help)\n" },
};

static void every_command_says_the_same(void **state)
{
	(void)state;
	unsetenv("TRAINER_WEBHOOK_PROG");
	for (size_t i = 0; i < sizeof(usage) / sizeof(usage[0]); i++) {
		char *out = NULL, *err = NULL;
		int rc = tt_cli_run(&out, &err, "%s", usage[i].args);
		if (rc != 2 || strcmp(err, usage[i].err) || *out)
			fail_msg("trainer-webhook %s: exit %d, stderr:\n%swanted exit 2 and:\n%s",
				 usage[i].args, rc, err, usage[i].err);
		free(out);
		free(err);
	}
}

TT_CLI_GROUP("test_one_tool")

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_of_each_in_the_sources),
		cmocka_unit_test(no_second_json_reader_linked),
		cmocka_unit_test(the_json_reader_reads_one_object),
		cmocka_unit_test(one_walk_places_a_path),
		cmocka_unit_test(one_error_enum),
		cmocka_unit_test(the_table_reads_argv),
		cmocka_unit_test(every_command_says_the_same),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
