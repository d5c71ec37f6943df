/*
 * patch/merge_index.h — the lookups a strategic merge makes in its
 * destination, through indexes kept for the whole merge (patch/merge.c
 * uses them; private to policy/patch).
 *
 * A patch element is matched to its destination by name or by merge key;
 * a scan of the destination per element made merges quadratic (100,000
 * containers in a runtimePatch took 93 s). A container past
 * TP_INDEX_SCAN_MAX entries gets an index at its first lookup, kept until
 * the merge ends (later patches find what earlier ones added) and told of
 * every change the merge makes to it. Small ones are scanned, as before.
 */
#ifndef TP_PATCH_MERGE_INDEX_H
#define TP_PATCH_MERGE_INDEX_H

#include "policy/core/index.h"

typedef struct tp__merge_index {
	tp_htab by_container; /* container address -> its index */
	struct tp__merge_lookup *all; /* every index made, to free them */
	cJSON *graveyard;     /* what the merge took out of the destination, freed at
			       * the end: no address an index names is handed out again */
} tp__merge_index;

void tp__merge_index_init(tp__merge_index *mi);
void tp__merge_index_free(tp__merge_index *mi);

/* obj's member name, arr's item whose key member equals value: NULL when
 * there is none, or (and *rc TP_ENOMEM) when an index could not be made. */
cJSON *tp__merge_member(tp__merge_index *mi, cJSON *obj, const char *name, int *rc);
cJSON *tp__merge_item(tp__merge_index *mi, cJSON *arr, const char *key, const cJSON *value,
		      int *rc);

/* The changes the merge makes: e appended to of (TP_OK or TP_ENOMEM); old
 * replaced where it stands by now; e taken out of of, into the graveyard. */
int tp__merge_added(tp__merge_index *mi, const cJSON *of, const cJSON *e);
void tp__merge_swapped(tp__merge_index *mi, const cJSON *of, const cJSON *old, const cJSON *now);
void tp__merge_bury(tp__merge_index *mi, cJSON *of, cJSON *e);

#endif
