/*
 * test_docs.c — the front door holds (issue 33, section 5): README.md is at
 * most 200 lines and begins with the two commands the project promises (the
 * server on its embedded default, the whole test suite); every relative link
 * of README.md, tests/README.md, deploy/README.md, the chart's README and
 * the Markdown files of docs/ names a file that exists, and its #anchor a
 * heading of that file;
 * every citation of a docs/ file in the code (any tracked file that is not
 * Markdown) names one that exists. Each check is also run on a text that
 * breaks it, so that it can fail. Run from the repository's root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/support/testutil.h"

#define README_MAX_LINES 200

static const char *const front_commands[] = {
	"    sh tests/deps.sh && make run ",
	"    sh tests/deps.sh && make test ",
};

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* --------------------------------------------------------------- README */

/* Problems of a README's text (name for the messages) into probs: more than
 * README_MAX_LINES lines, or first lines other than the two commands. */
static void check_front(const char *name, const char *text, tp_buf *probs)
{
	size_t lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	if (lines > README_MAX_LINES)
		tp_buf_addf(probs, "%s: %zu lines, want at most %d\n", name, lines, README_MAX_LINES);
	const char *line = text;
	for (size_t i = 0; i < sizeof(front_commands) / sizeof(front_commands[0]); i++) {
		size_t n = strlen(front_commands[i]);
		if (strncmp(line, front_commands[i], n))
			tp_buf_addf(probs, "%s: line %zu is not \"%s...\"\n", name, i + 1,
				    front_commands[i]);
		const char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : line + strlen(line);
	}
}

/* ---------------------------------------------------------------- links */

/* GitHub's anchor of a heading's text: lower case, letters, digits, '-'
 * and '_' kept, a space made '-', everything else dropped (bytes past
 * ASCII too: the headings here use none but punctuation such as an em
 * dash, which GitHub drops as well). */
static void slug(const char *text, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		unsigned char c = (unsigned char)text[i];
		if (isalnum(c) && c < 0x80)
			out[o++] = (char)tolower(c);
		else if (c == '-' || c == '_')
			out[o++] = (char)c;
		else if (c == ' ')
			out[o++] = '-';
	}
	out[o] = '\0';
}

/* Calls fn(line, len, arg) for each line of a Markdown text that is prose:
 * not inside a fenced block, not an indented code block. */
static void each_prose_line(const char *text, void (*fn)(const char *, size_t, void *), void *arg)
{
	bool fenced = false;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (!strncmp(line, "```", 3))
			fenced = !fenced;
		else if (!fenced && strncmp(line, "    ", 4) && line[0] != '\t')
			fn(line, len, arg);
		line += len + (nl ? 1 : 0);
	}
}

struct anchor_find {
	const char *want;
	bool found;
};

static void find_heading(const char *line, size_t len, void *arg)
{
	struct anchor_find *f = arg;
	size_t hashes = strspn(line, "#");
	if (!hashes || hashes > 6 || hashes >= len || line[hashes] != ' ')
		return;
	char s[512];
	slug(line + hashes + 1, len - hashes - 1, s, sizeof(s));
	if (!strcmp(s, f->want))
		f->found = true;
}

/* Does the Markdown text have a heading whose anchor is anchor? */
static bool has_anchor(const char *text, const char *anchor)
{
	struct anchor_find f = { anchor, false };
	each_prose_line(text, find_heading, &f);
	return f.found;
}

struct link_check {
	const char *name; /* the file the links are in, from the root */
	const char *text; /* its text, for anchors of its own */
	tp_buf *probs;
};

/* One link target of ctx->name: a file relative to its folder, with an
 * optional #anchor; a URL is not looked at. */
static void check_target(struct link_check *ctx, const char *t, size_t n)
{
	char target[1024];
	snprintf(target, sizeof(target), "%.*s", (int)n, t);
	if (strstr(target, "://") || !strncmp(target, "mailto:", 7))
		return;
	char *hash = strchr(target, '#');
	if (hash)
		*hash++ = '\0';
	char path[2048];
	const char *slash = strrchr(ctx->name, '/');
	if (!*target) { /* #anchor: a heading of this file */
		if (hash && !has_anchor(ctx->text, hash))
			tp_buf_addf(ctx->probs, "%s: link to #%s: no such heading\n", ctx->name, hash);
		return;
	}
	if (slash)
		snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - ctx->name), ctx->name, target);
	else
		snprintf(path, sizeof(path), "%s", target);
	if (!file_exists(path)) {
		tp_buf_addf(ctx->probs, "%s: link to %s: no such file\n", ctx->name, path);
		return;
	}
	if (!hash)
		return;
	char *text = tt_read_file(path, NULL);
	if (!has_anchor(text ? text : "", hash))
		tp_buf_addf(ctx->probs, "%s: link to %s#%s: no such heading\n", ctx->name, path, hash);
	free(text);
}

/* The links "](target)" of a prose line, outside `code spans`. */
static void check_line_links(const char *line, size_t len, void *arg)
{
	bool code = false;
	for (size_t i = 0; i + 1 < len; i++) {
		if (line[i] == '`')
			code = !code;
		if (code || line[i] != ']' || line[i + 1] != '(')
			continue;
		const char *t = line + i + 2;
		size_t n = 0;
		while (i + 2 + n < len && t[n] != ')' && t[n] != ' ')
			n++;
		check_target(arg, t, n);
	}
}

static void check_links(const char *name, const char *text, tp_buf *probs)
{
	struct link_check ctx = { name, text, probs };
	each_prose_line(text, check_line_links, &ctx);
}

/* ------------------------------------------------------------ citations */

/* Every "docs/NAME.md" of a code file's text (not the tail of a longer
 * path or URL such as kubernetes.io/docs/...) names a file of docs/. */
static void check_citations(const char *name, const char *text, tp_buf *probs)
{
	for (const char *at = strstr(text, "docs/"); at; at = strstr(at + 1, "docs/")) {
		if (at > text && (isalnum((unsigned char)at[-1]) || strchr("/._-", at[-1])))
			continue;
		size_t n = strspn(at + 5, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789_.-");
		while (n && at[5 + n - 1] == '.') /* the end of a sentence */
			n--;
		if (n < 4 || strncmp(at + 5 + n - 3, ".md", 3))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "docs/%.*s", (int)n, at + 5);
		if (!file_exists(path))
			tp_buf_addf(probs, "%s: cites %s, which does not exist\n", name, path);
	}
}

/* ---------------------------------------------------------------- tests */

static void fail_if_any(tp_buf *probs, const char *what)
{
	tp_buf_addc(probs, '\0');
	if (probs->data[0])
		fail_msg("%s:\n%s", what, probs->data);
}

static void readme_is_a_front_door(void **state)
{
	(void)state;
	char *readme = tt_read_file("README.md", NULL);
	assert_non_null(readme);
	tp_buf probs = TP_BUF_INIT(1 << 16);
	check_front("README.md", readme, &probs);
	fail_if_any(&probs, "README.md");
	tp_buf_free(&probs);
	free(readme);
}

static void check_links_of(const char *name, tp_buf *probs)
{
	char *text = tt_read_file(name, NULL);
	if (!text) {
		tp_buf_addf(probs, "%s: cannot be read\n", name);
		return;
	}
	check_links(name, text, probs);
	free(text);
}

static void every_link_resolves(void **state)
{
	(void)state;
	tp_buf probs = TP_BUF_INIT(1 << 20);
	static const char *const fronts[] = { "README.md", "tests/README.md", "deploy/README.md",
					      "charts/trainer-webhook/README.md" };
	for (size_t i = 0; i < sizeof(fronts) / sizeof(fronts[0]); i++)
		check_links_of(fronts[i], &probs);
	DIR *d = opendir("docs");
	assert_non_null(d);
	int docs = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		if (n < 4 || strcmp(e->d_name + n - 3, ".md"))
			continue;
		char name[600];
		snprintf(name, sizeof(name), "docs/%s", e->d_name);
		check_links_of(name, &probs);
		docs++;
	}
	closedir(d);
	assert_true(docs >= 8);
	fail_if_any(&probs, "links that do not resolve");
	tp_buf_free(&probs);
}

static void every_citation_names_a_doc(void **state)
{
	(void)state;
	char *files = NULL;
	if (tt_run("git ls-files -- . ':!*.md' ':!tests/unit/test_docs.c' ':!webhook/cli/crds/' "
		   "':!**/*.json' 2>/dev/null",
		   &files, NULL) || !files || !*files) {
		free(files);
		print_message("test_docs: skipped: not a git checkout\n");
		skip();
	}
	tp_buf probs = TP_BUF_INIT(1 << 20);
	int cited = 0;
	for (char *f = strtok(files, "\n"); f; f = strtok(NULL, "\n")) {
		size_t n;
		char *s = tt_read_file(f, &n);
		if (s && strlen(s) == n) { /* text files only */
			check_citations(f, s, &probs);
			cited += strstr(s, "docs/") != NULL;
		}
		free(s);
	}
	free(files);
	print_message("test_docs: %d code files mention docs/\n", cited);
	fail_if_any(&probs, "citations of docs/ files that do not exist");
	tp_buf_free(&probs);
}

/* Each check finds what it is for in a text that breaks it, and passes
 * one that keeps it. */
static void the_checks_can_fail(void **state)
{
	(void)state;
	tp_buf probs = TP_BUF_INIT(1 << 16);
	/* the front: a third line of README_MAX_LINES + 1, the commands swapped */
	tp_buf text = TP_BUF_INIT(1 << 16);
	tp_buf_addf(&text, "%s# the suite\n%s# the server\n", front_commands[1], front_commands[0]);
	for (int i = 0; i < README_MAX_LINES; i++)
		tp_buf_adds(&text, "more\n");
	tp_buf_addc(&text, '\0');
	check_front("long", text.data, &probs);
	tp_buf_addc(&probs, '\0');
	assert_non_null(strstr(probs.data, "long: 202 lines, want at most 200"));
	assert_non_null(strstr(probs.data, "long: line 1 is not"));
	assert_non_null(strstr(probs.data, "long: line 2 is not"));
	tp_buf_reset(&probs);
	tp_buf_reset(&text);
	tp_buf_addf(&text, "%sthe server\n%sthe suite\n", front_commands[0], front_commands[1]);
	tp_buf_addc(&text, '\0');
	check_front("short", text.data, &probs);
	tp_buf_addc(&probs, '\0');
	assert_string_equal(probs.data, "");
	tp_buf_free(&text);

	/* anchors as GitHub makes them */
	char s[128];
	const char *h = "7. Ambiguities / version drift";
	slug(h, strlen(h), s, sizeof(s));
	assert_string_equal(s, "7-ambiguities--version-drift");
	h = "The Pods a TrainJob will make (strict)";
	slug(h, strlen(h), s, sizeof(s));
	assert_string_equal(s, "the-pods-a-trainjob-will-make-strict");

	/* links: a missing file, a missing heading, one of its own; code is
	 * not read as links */
	tp_buf_reset(&probs);
	check_links("docs/x.md",
		    "# Top\n\nSee [a](nosuch.md), [b](design.md#no-such-heading), [c](#top),\n"
		    "[d](#nowhere), [e](../README.md), [f](https://example.com/x.md).\n"
		    "    [eE](\\+|-) in an indented block\n"
		    "```\n[g](fenced.md)\n```\n"
		    "`[h](span.md)` in a code span\n",
		    &probs);
	tp_buf_addc(&probs, '\0');
	assert_non_null(strstr(probs.data, "docs/x.md: link to docs/nosuch.md: no such file"));
	assert_non_null(strstr(probs.data, "link to docs/design.md#no-such-heading: no such heading"));
	assert_non_null(strstr(probs.data, "docs/x.md: link to #nowhere: no such heading"));
	assert_null(strstr(probs.data, "#top"));
	assert_null(strstr(probs.data, "README"));
	assert_null(strstr(probs.data, "example.com"));
	assert_null(strstr(probs.data, "fenced"));
	assert_null(strstr(probs.data, "span"));
	assert_null(strstr(probs.data, "\\+"));

	/* citations: a missing doc; a URL's docs/ and an existing doc pass */
	tp_buf_reset(&probs);
	check_citations("x.c",
			"/* docs/rules.md §1, docs/nosuch.md. kubernetes.io/docs/concepts.md */",
			&probs);
	tp_buf_addc(&probs, '\0');
	assert_string_equal(probs.data, "x.c: cites docs/nosuch.md, which does not exist\n");
	tp_buf_free(&probs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_checks_can_fail),
		cmocka_unit_test(readme_is_a_front_door),
		cmocka_unit_test(every_link_resolves),
		cmocka_unit_test(every_citation_names_a_doc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
