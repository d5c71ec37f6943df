/*
 * schema/walk.c — the state every step of a schema walk shares (check.c,
 * prune.c, listtype.c): the field path as steps, written out as text only
 * when a finding needs it, the walk's step budget, and which result a
 * finding goes to. Apart from check.c, which calls the other two, so that
 * no file of schema/ calls back into one that calls it.
 */
#include "policy/schema/schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* ------------------------------------------------------------ paths */

bool tp__sch_more_steps(tp_sch_walk *w)
{
	size_t cap = w->cap ? 2 * w->cap : 32;
	tp_sch_step *p = realloc(w->steps, cap * sizeof(*p));
	if (!p) {
		w->rc |= TP_ENOMEM;
		return false;
	}
	w->steps = p;
	w->cap = cap;
	return true;
}

static size_t index_digits(unsigned long u)
{
	if (u < 10) /* most lists: no division */
		return 1;
	size_t n = 1;
	while (u /= 10)
		n++;
	return n;
}

size_t tp__sch_push_index(tp_sch_walk *w, long i)
{
	size_t depth = tp__sch_push(w, '[', NULL, i);
	tp__sch_grow(w, index_digits(i < 0 ? 0 : (unsigned long)i) + 2);
	return depth;
}

size_t tp__sch_push_key(tp_sch_walk *w, const char *key)
{
	size_t depth = tp__sch_push(w, 'k', key, 0);
	tp__sch_grow(w, strlen(key) + 2);
	return depth;
}

void tp__sch_pop_written(tp_sch_walk *w, size_t depth)
{
	w->written = depth;
	w->path.len = w->steps[depth].len < w->path.len ? w->steps[depth].len : w->path.len;
	if (w->path.data)
		w->path.data[w->path.len] = '\0';
}

/* One step's text, as the walk wrote it at every node before. */
static int write_step(tp_buf *b, const tp_sch_step *st)
{
	int rc = TP_OK;
	if (st->kind == '.') {
		if (b->len)
			rc |= tp_buf_addc(b, '.');
		return rc | tp_buf_adds(b, st->name);
	}
	if (st->kind == 'k') {
		rc |= tp_buf_addc(b, '[');
		rc |= tp_buf_adds(b, st->name);
		return rc | tp_buf_addc(b, ']');
	}
	/* every item of every list: no printf here */
	char buf[24], *p = buf + sizeof(buf);
	unsigned long u = st->index < 0 ? 0 : (unsigned long)st->index;
	*--p = ']';
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	*--p = '[';
	return tp_buf_add(b, p, (size_t)(buf + sizeof(buf) - p));
}

/* Paths written out by this thread (tests read it: a walk that finds
 * nothing writes none). */
static _Thread_local size_t paths_written;

size_t tp__sch_paths_written(void)
{
	return paths_written;
}

const char *tp__sch_path(tp_sch_walk *w)
{
	paths_written++;
	for (; w->written < w->depth; w->written++)
		w->rc |= write_step(&w->path, &w->steps[w->written]);
	return w->path.data ? w->path.data : "";
}

void tp__sch_walk_free(tp_sch_walk *w)
{
	tp_buf_free(&w->path);
	free(w->steps);
	w->steps = NULL;
	w->depth = w->cap = w->written = w->len = 0;
}

/* ------------------------------------------------------------ results */

tp_result *tp__sch_out(tp_sch_walk *w, bool lists)
{
	if (!w->one_pass)
		return w->res;
	tp_result **r = lists ? &w->lists_res : &w->checks_res;
	if (!*r && tp_result_new(r))
		w->rc |= TP_ENOMEM;
	return *r;
}
