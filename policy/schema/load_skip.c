/*
 * schema/load_skip.c — what loading a CRD may leave out: the description
 * strings of its schemas (tp_crds_load_skip, for tp_load_limits.skip).
 *
 * A CRD is mostly documentation: upstream's JobSet CRD holds 257 KB of
 * schema descriptions in 824 KB of text, and every one became a cJSON node
 * and a string that tp_crds_add never reads (compile.c lifts only what
 * validation reads; memo.c's hash leaves the same descriptions out). The
 * loader asks here, node by node, where it is:
 *
 *   document -> spec -> versions[] -> schema -> openAPIV3Schema: a schema;
 *   a schema's items, additionalProperties, not (a mapping): a schema;
 *   a schema's properties, allOf, anyOf, oneOf: schemas, each member or item;
 *   a List's items[]: documents (kubectl get crd -o yaml prints a List).
 *
 * Only a schema's own description is left out. A property named
 * description is a member of properties, a schema (kept, and its own
 * description left out); a description inside default, enum, example or
 * x-kubernetes-validations is a value, and everything below them is kept.
 */
#include "policy/schema/schema.h"

enum {
	DOC = TP_LOAD_SKIP_ROOT + 1, /* a CRD, or a List of them */
	LIST_ITEMS,
	SPEC,
	VERSIONS,
	VERSION,
	VERSION_SCHEMA, /* spec.versions[].schema */
	SCHEMA,
	SCHEMAS, /* properties, allOf, anyOf, oneOf: a schema in each member or item */
};

static int open_node(int parent, const char *key, bool mapping)
{
	const char *k = key ? key : "";
	switch (parent) {
	case TP_LOAD_SKIP_ROOT:
		return mapping ? DOC : TP_LOAD_SKIP_NONE;
	case DOC:
		if (!strcmp(k, "spec") && mapping)
			return SPEC;
		return !strcmp(k, "items") && !mapping ? LIST_ITEMS : TP_LOAD_SKIP_NONE;
	case LIST_ITEMS:
		return mapping ? DOC : TP_LOAD_SKIP_NONE;
	case SPEC:
		return !strcmp(k, "versions") && !mapping ? VERSIONS : TP_LOAD_SKIP_NONE;
	case VERSIONS:
		return mapping ? VERSION : TP_LOAD_SKIP_NONE;
	case VERSION:
		return !strcmp(k, "schema") && mapping ? VERSION_SCHEMA : TP_LOAD_SKIP_NONE;
	case VERSION_SCHEMA:
		return !strcmp(k, "openAPIV3Schema") && mapping ? SCHEMA : TP_LOAD_SKIP_NONE;
	case SCHEMA:
		switch (tp__sch_member_kind(k)) {
		case 1:
			return mapping ? SCHEMA : TP_LOAD_SKIP_NONE; /* items: [...] is a value */
		case 2:
			return SCHEMAS;
		default:
			return TP_LOAD_SKIP_NONE; /* default, enum, example, rules, ... */
		}
	case SCHEMAS:
		return mapping ? SCHEMA : TP_LOAD_SKIP_NONE;
	default:
		return TP_LOAD_SKIP_NONE;
	}
}

static bool drop_member(int ctx, const char *key)
{
	return ctx == SCHEMA && !strcmp(key, "description");
}

const tp_load_skip *tp_crds_load_skip(void)
{
	static const tp_load_skip skip = { .open = open_node, .drop = drop_member };
	return &skip;
}
