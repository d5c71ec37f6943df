/*
 * load/yaml_build.c — the YAML builder's errors and memory, below the rest
 * of load/yaml*.c: an error placed at the event being read, libyaml's
 * syntax errors in the same form, the nodes kept until their document
 * ends, and the release of what a document built (its open containers,
 * anchors and kept nodes) once it ends or fails.
 */
#include "policy/load/yaml_build.h"

#include <stdarg.h>
#include <stdio.h>

int tp__yaml_fail(ybuild *b, int code, const char *fmt, ...)
{
	char msg[sizeof(b->ld->err->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	int doc = b->in_doc ? b->doc : b->doc + 1;
	return tp__load_fail(b->ld, code, doc, (int)b->mark.line + 1, (int)b->mark.column + 1, "%s",
			     msg);
}

/* libyaml's own words, with where it looked. */
int tp__yaml_syntax_error(ybuild *b, const yaml_parser_t *p, size_t start)
{
	if (p->error == YAML_MEMORY_ERROR)
		return oom(b);
	const char *problem = p->problem ? p->problem : "invalid YAML";
	if (p->error == YAML_READER_ERROR) { /* a byte offset, not a mark */
		int line, col;
		tp__load_position(b->ld->data, start + p->problem_offset, &line, &col);
		b->mark.line = (size_t)line - 1;
		b->mark.column = (size_t)col - 1;
		return tp__yaml_fail(b, TP_EPARSE, "%s", problem);
	}
	b->mark = p->problem_mark;
	if (p->context)
		return tp__yaml_fail(b, TP_EPARSE, "%s (%s at line %d, column %d)", problem,
				     p->context, (int)p->context_mark.line + 1,
				     (int)p->context_mark.column + 1);
	return tp__yaml_fail(b, TP_EPARSE, "%s", problem);
}

int tp__yaml_bury(ybuild *b, cJSON *node)
{
	if (grow((void **)&b->grave, b->ngrave, &b->grave_cap, sizeof(*b->grave))) {
		cJSON_Delete(node);
		return oom(b);
	}
	b->grave[b->ngrave++] = node;
	return TP_OK;
}

void tp__yaml_frame_release(frame *f)
{
	cJSON_Delete(f->node);
	if (f->key)
		cJSON_free(f->key);
	free(f->anchor);
	free(f->key_lines);
	tp__strset_free(&f->ks);
	for (size_t i = 0; i < f->nmerges; i++)
		if (f->merges[i].owned)
			cJSON_Delete((cJSON *)f->merges[i].node);
	free(f->merges);
	for (size_t i = 0; i < f->nleft_out; i++)
		cJSON_free(f->left_out[i].key);
	free(f->left_out);
}

/* Everything one document built; anchors do not outlive their document. */
void tp__yaml_doc_reset(ybuild *b)
{
	while (b->depth)
		tp__yaml_frame_release(&b->st[--b->depth]);
	for (size_t i = 0; i < b->nanchors; i++)
		free(b->anchors[i].name);
	b->nanchors = 0;
	for (size_t i = 0; i < b->ngrave; i++)
		cJSON_Delete(b->grave[i]);
	b->ngrave = 0;
	cJSON_Delete(b->root);
	b->root = NULL;
}

void tp__yaml_build_free(ybuild *b)
{
	tp__yaml_doc_reset(b);
	free(b->st);
	free(b->anchors);
	free(b->grave);
}
