/*
 * load/positions.c — where each node of a loaded document was written: a
 * side table from cJSON node to line and column (the nodes themselves stay
 * untouched), filled by the YAML builder as it goes and, for JSON, by a walk
 * of the text in step with the parsed tree. A member's position is its key's.
 * Recorded only when tp_load_limits.positions asks (never on the server's
 * hot path). And the reverse: the position of the field an error names.
 */
#include "policy/load/load.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct tp_posmap {
	const cJSON **key;
	int *line, *col;
	size_t cap, n;
};

static size_t slot_of(const tp_posmap *m, const cJSON *node)
{
	uintptr_t h = (uintptr_t)node;
	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 7) & (m->cap - 1);
}

static int grow_map(tp_posmap *m)
{
	tp_posmap bigger = { .cap = m->cap ? m->cap * 2 : 1024 };
	bigger.key = calloc(bigger.cap, sizeof(*bigger.key));
	bigger.line = malloc(bigger.cap * sizeof(int));
	bigger.col = malloc(bigger.cap * sizeof(int));
	if (!bigger.key || !bigger.line || !bigger.col) {
		free(bigger.key), free(bigger.line), free(bigger.col);
		return TP_ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->key[i]) {
			size_t s = slot_of(&bigger, m->key[i]);
			while (bigger.key[s])
				s = (s + 1) & (bigger.cap - 1);
			bigger.key[s] = m->key[i];
			bigger.line[s] = m->line[i];
			bigger.col[s] = m->col[i];
			bigger.n++;
		}
	free(m->key), free(m->line), free(m->col);
	*m = bigger;
	return TP_OK;
}

int tp__pos_put(tp_posmap *m, const cJSON *node, int line, int col)
{
	if (!m || !node)
		return TP_OK;
	if ((m->n + 1) * 4 > m->cap * 3 && grow_map(m))
		return TP_ENOMEM;
	size_t s = slot_of(m, node);
	while (m->key[s] && m->key[s] != node)
		s = (s + 1) & (m->cap - 1);
	m->n += !m->key[s];
	m->key[s] = node;
	m->line[s] = line;
	m->col[s] = col;
	return TP_OK;
}

static bool pos_get(const tp_posmap *m, const cJSON *node, int *line, int *col)
{
	if (!m || !m->cap || !node)
		return false;
	for (size_t s = slot_of(m, node); m->key[s]; s = (s + 1) & (m->cap - 1))
		if (m->key[s] == node) {
			*line = m->line[s];
			*col = m->col[s];
			return true;
		}
	return false;
}

void tp__pos_free(tp_posmap *m)
{
	if (!m)
		return;
	free(m->key), free(m->line), free(m->col);
	free(m);
}

tp_posmap *tp__pos_new(void)
{
	return calloc(1, sizeof(tp_posmap));
}

/* ------------------------------------------------------------ JSON */

typedef struct jwalk {
	const char *d;
	size_t i, end;
	int line, col; /* of d[i] */
	tp_posmap *m;
} jwalk;

static void adv(jwalk *w)
{
	unsigned char c = (unsigned char)w->d[w->i++];
	if (c == '\n') {
		w->line++;
		w->col = 1;
	} else if ((c & 0xc0) != 0x80) {
		w->col++; /* columns count characters */
	}
}

static void ws(jwalk *w)
{
	while (w->i < w->end && strchr(" \t\r\n", w->d[w->i]) && w->d[w->i])
		adv(w);
}

static void skip_string(jwalk *w)
{
	adv(w); /* the opening quote */
	while (w->i < w->end && w->d[w->i] != '"') {
		if (w->d[w->i] == '\\')
			adv(w);
		adv(w);
	}
	adv(w);
}

static int walk_value(jwalk *w, const cJSON *node, int depth);

static int walk_container(jwalk *w, const cJSON *node, int depth)
{
	bool obj = w->d[w->i] == '{';
	adv(w);
	ws(w);
	for (const cJSON *c = node->child; c && w->i < w->end; c = c->next) {
		if (obj) {
			int line = w->line, col = w->col;
			skip_string(w);
			ws(w);
			adv(w); /* ':' */
			ws(w);
			if (tp__pos_put(w->m, c, line, col))
				return TP_ENOMEM;
			if (walk_value(w, c, depth + 1) < 0)
				return TP_ENOMEM;
		} else if (walk_value(w, c, depth + 1) < 0) {
			return TP_ENOMEM;
		}
		ws(w);
		if (w->d[w->i] == ',') {
			adv(w);
			ws(w);
		}
	}
	adv(w); /* the closing bracket */
	return TP_OK;
}

/* One value at w->i (already past white space) whose tree is node. Array
 * items are placed where they start; members were placed at their key. */
static int walk_value(jwalk *w, const cJSON *node, int depth)
{
	if (!node->string && tp__pos_put(w->m, node, w->line, w->col))
		return TP_ENOMEM;
	char c = w->d[w->i];
	if ((c == '{' || c == '[') && depth < 1000)
		return walk_container(w, node, depth);
	if (c == '"') {
		skip_string(w);
		return TP_OK;
	}
	while (w->i < w->end && !strchr(",]} \t\r\n", w->d[w->i]))
		adv(w);
	return TP_OK;
}

int tp__pos_json(tp_posmap *m, const char *data, size_t from, size_t end, const cJSON *root)
{
	int line, col;
	tp__load_position(data, from, &line, &col);
	jwalk w = { .d = data, .i = from, .end = end, .line = line, .col = col, .m = m };
	return walk_value(&w, root, 0);
}

/* ------------------------------------------------------------ lookups */

bool tp_docs_position(const tp_docs *d, const cJSON *node, int *line, int *col)
{
	return d && pos_get(d->pos, node, line, col);
}

/* The member of obj named by path's next segment (a name that may itself
 * hold dots, as label keys do: the longest that exists wins). */
static const cJSON *member_at(const cJSON *obj, const char *p, size_t *used)
{
	size_t n = strcspn(p, ".[");
	const cJSON *best = NULL;
	for (;;) {
		for (const cJSON *c = obj->child; c; c = c->next)
			if (strlen(c->string) == n && !strncmp(c->string, p, n)) {
				best = c;
				*used = n;
			}
		if (p[n] != '.')
			break;
		n += 1 + strcspn(p + n + 1, ".[");
	}
	if (!best) { /* upstream names some paths in Go's case ("spec.RuntimeRef") */
		n = strcspn(p, ".[");
		for (const cJSON *c = obj->child; c && !best; c = c->next)
			if (strlen(c->string) == n && !strncasecmp(c->string, p, n))
				best = c, *used = n;
	}
	return best;
}

/* One walk down the path: the position kept is that of the deepest node on
 * it that has one (a node made after loading has none; its nearest written
 * parent stands for it), so a caller never cuts the path and asks again. */
bool tp_docs_path_position(const tp_docs *d, const cJSON *root, const char *path, int *line,
			   int *col)
{
	const cJSON *at = root;
	bool found = tp_docs_position(d, root, line, col);
	const char *p = path ? path : "";
	while (*p && at) {
		size_t used = 0;
		const cJSON *next = NULL;
		if (*p == '[') {
			const char *close = strchr(p, ']');
			if (!close)
				break;
			if (cJSON_IsArray(at))
				next = cJSON_GetArrayItem(at, atoi(p + 1));
			else if (cJSON_IsObject(at))
				for (const cJSON *c = at->child; c && !next; c = c->next)
					if (strlen(c->string) == (size_t)(close - p - 1) &&
					    !strncmp(c->string, p + 1, (size_t)(close - p - 1)))
						next = c;
			used = (size_t)(close - p) + 1;
		} else if (cJSON_IsObject(at)) {
			next = member_at(at, p, &used);
		}
		if (!next)
			break;
		at = next;
		found |= tp_docs_position(d, at, line, col);
		p += used;
		if (*p == '.')
			p++;
	}
	return found;
}
