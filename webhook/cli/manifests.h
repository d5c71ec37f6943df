/*
 * webhook/cli/manifests.h — manifest files and folders on disk: the walk
 * `validate` and --crds share, and loading what they hold into a store
 * (manifests.c).
 */
#ifndef TW_MANIFESTS_H
#define TW_MANIFESTS_H

#include <stdio.h>

#include "policy/trainpolicy.h"

/* Load every object found at path (a file, a folder searched recursively for
 * *.yaml, *.yml and *.json, or "-" for standard input) into store. Problems
 * are reported on errf as "<file>: document N, line L: <what>".
 * Returns 0, or TP_EIO / TP_EPARSE / TP_ELIMIT on the first unreadable input. */
int tw_store_load_path(tp_store *store, const char *path, FILE *errf);
/* The same, noting each runtime put in names (tw_note_runtime), so that a
 * finding can suggest a near name. */
int tw_store_load_path_names(tp_store *store, const char *path, FILE *errf, cJSON *names);
/* Append { kind, namespace, name } of obj to the array names when obj is a
 * runtime; TP_OK or TP_ENOMEM. */
int tw_note_runtime(cJSON *names, const cJSON *obj);

/* fn is called once per manifest file under path, in sorted order (*.yaml,
 * *.yml, *.json, folders searched recursively, symbolic links followed but
 * never in a loop). A file or "-" named directly is passed to fn once,
 * whatever its name. The walk goes on after a failure, reporting unreadable
 * paths on errf (may be NULL), and returns the first nonzero code (fn's, or
 * TP_EIO / TP_ENOMEM). */
typedef int (*tw_file_fn)(const char *path, void *ctx);
int tw_walk_manifests(const char *path, tw_file_fn fn, void *ctx, FILE *errf);

#endif /* TW_MANIFESTS_H */
