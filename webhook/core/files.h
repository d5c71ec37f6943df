/*
 * webhook/core/files.h — reading a whole file, or standard input, within a
 * size limit (files.c).
 */
#ifndef TW_FILES_H
#define TW_FILES_H

#include <stddef.h>

#include "policy/trainpolicy.h"

/* Read a whole file ("-": stdin) into buf, at most max bytes (TP_ELIMIT past it). */
int tw_read_file(const char *path, size_t max, tp_buf *buf);

/* Why tw_read_file failed with errno e, in words: "no such file", "a folder,
 * not a file: <folder_note>", "permission denied", ... */
const char *tw_read_failure(int e, const char *folder_note);

#endif /* TW_FILES_H */
