/*
 * load/yaml_anchors.c — YAML's anchors, aliases and merge keys, for
 * load/yaml.c's builder: the anchors of one document, the copy an alias
 * stands for (every node counted against TP_LOAD_MAX_ALIAS_NODES, so a
 * "billion laughs" document fails after a bounded amount of work), and the
 * << sources of a mapping, merged once it is complete: keys written in the
 * mapping win over merged ones, and earlier merged mappings over later ones.
 */
#include "policy/load/yaml_build.h"

int tp__yaml_anchor_add(ybuild *b, char *name, const cJSON *node)
{
	if (grow((void **)&b->anchors, b->nanchors, &b->anchors_cap, sizeof(*b->anchors))) {
		free(name);
		return oom(b);
	}
	b->anchors[b->nanchors++] = (anchor){ .name = name, .node = node };
	return TP_OK;
}

int tp__yaml_anchor_add_copy(ybuild *b, const char *name, const cJSON *node)
{
	char *n = strdup(name);
	return n ? tp__yaml_anchor_add(b, n, node) : oom(b);
}

/* The latest definition wins, as YAML says. */
const cJSON *tp__yaml_anchor_find(const ybuild *b, const char *name)
{
	for (size_t i = b->nanchors; i-- > 0;)
		if (!strcmp(b->anchors[i].name, name))
			return b->anchors[i].node;
	return NULL;
}

/* A copy of src placed at depth; every node counts against the copy budget. */
cJSON *tp__yaml_copy_node(ybuild *b, const cJSON *src, int depth, int *rc)
{
	if (++b->copied > TP_LOAD_MAX_ALIAS_NODES) {
		*rc = tp__yaml_fail(
			b, TP_ELIMIT,
			"aliases expand to more than %zu nodes (a \"billion laughs\" document?)",
			TP_LOAD_MAX_ALIAS_NODES);
		return NULL;
	}
	bool container = cJSON_IsObject(src) || cJSON_IsArray(src);
	if (container && depth > b->ld->lim.max_depth) {
		*rc = tp__yaml_fail(b, TP_ELIMIT, "an alias nests deeper than %d levels",
				    b->ld->lim.max_depth);
		return NULL;
	}
	cJSON *n = cJSON_IsObject(src)	 ? cJSON_CreateObject()
		   : cJSON_IsArray(src)	 ? cJSON_CreateArray()
		   : cJSON_IsString(src) ? cJSON_CreateString(src->valuestring)
		   : cJSON_IsNumber(src) ? cJSON_CreateNumber(src->valuedouble)
		   : cJSON_IsBool(src)	 ? cJSON_CreateBool(cJSON_IsTrue(src))
					 : cJSON_CreateNull();
	if (!n) {
		*rc = oom(b);
		return NULL;
	}
	cJSON *tail = NULL;
	for (const cJSON *c = container ? src->child : NULL; c; c = c->next) {
		cJSON *k = tp__yaml_copy_node(b, c, depth + 1, rc);
		if (k && c->string && !(k->string = json_strndup(c->string, strlen(c->string)))) {
			cJSON_Delete(k);
			k = NULL;
			*rc = oom(b);
		}
		if (!k) {
			cJSON_Delete(n);
			return NULL;
		}
		tp__json_link(n, &tail, k);
	}
	return n;
}

/* The value of a << key: a mapping or a sequence of mappings. */
int tp__yaml_merge_add(ybuild *b, frame *f, const cJSON *v, bool owned)
{
	bool ok = cJSON_IsObject(v);
	if (cJSON_IsArray(v)) {
		ok = true;
		for (const cJSON *c = v->child; c; c = c->next)
			ok = ok && cJSON_IsObject(c);
	}
	int rc = TP_OK;
	if (!ok)
		rc = tp__yaml_fail(b, TP_EPARSE,
				   "map merge requires map or sequence of maps as the value");
	else if (grow((void **)&f->merges, f->nmerges, &f->merges_cap, sizeof(*f->merges)))
		rc = oom(b);
	if (rc) {
		if (owned)
			cJSON_Delete((cJSON *)v);
		return rc;
	}
	f->merges[f->nmerges++] = (merge_src){ .node = v, .owned = owned };
	f->key_merge = false;
	return TP_OK;
}

/* Merge every pending << source into the finished mapping f. */
int tp__yaml_merge_run(ybuild *b, frame *f)
{
	for (size_t m = 0; m < f->nmerges; m++) {
		const cJSON *src = f->merges[m].node;
		const cJSON *maps = cJSON_IsArray(src) ? src->child : src;
		for (; maps; maps = cJSON_IsArray(src) ? maps->next : NULL) {
			for (const cJSON *c = maps->child; c; c = c->next) {
				int fresh = tp__key_is_new(f->node, f->count, &f->ks, c->string);
				if (fresh < 0)
					return oom(b);
				if (!fresh || left_out_line(f, c->string))
					continue; /* written in the mapping, or merged earlier */
				int rc = TP_OK;
				cJSON *k = tp__yaml_copy_node(b, c, (int)b->depth + 1, &rc);
				if (!k)
					return rc;
				if (!(k->string = json_strndup(c->string, strlen(c->string)))) {
					cJSON_Delete(k);
					return oom(b);
				}
				tp__json_link(f->node, &f->tail, k);
				f->count++;
			}
		}
		if (f->merges[m].owned) {
			f->merges[m].owned = false;
			int rc = tp__yaml_bury(b, (cJSON *)src);
			if (rc)
				return rc;
		}
	}
	return TP_OK;
}
