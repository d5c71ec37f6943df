/*
 * webhook/cli/yaml_out.h — cJSON written as YAML, for `expand -o yaml`
 * (yaml_out.c).
 */
#ifndef TW_YAML_OUT_H
#define TW_YAML_OUT_H

#include "policy/trainpolicy.h"

/* Write obj as one YAML document (block style; strings that would read back
 * as another type are quoted, multi-line strings use the literal style). */
int tw_yaml_write(const cJSON *obj, tp_buf *out);

#endif /* TW_YAML_OUT_H */
