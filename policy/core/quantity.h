/*
 * core/quantity.h — Kubernetes resource quantities ("500m", "2", "1.5", "4Gi",
 * "1e3"): parse, add, multiply, round and render them the way apimachinery's
 * resource.Quantity does, for the expansion's CPU/GPU counts and PodGroup
 * minResources. Private to policy/.
 */
#ifndef TP_QUANTITY_H
#define TP_QUANTITY_H

#include "policy/trainpolicy.h"

typedef enum tp_qformat {
	TP_QFMT_DECIMAL_SI = 0, /* "", k, M, G, ... and m, u, n */
	TP_QFMT_BINARY_SI,      /* Ki, Mi, Gi, ... */
	TP_QFMT_DECIMAL_EXP,    /* "1e3" */
} tp_qformat;

/* value × 10^scale, as apimachinery's int64Amount; scale is never below -9
 * (nano), the finest unit a quantity keeps. */
typedef struct tp_quantity {
	int64_t value;
	int32_t scale;
	tp_qformat format;
} tp_quantity;

/* TP_EINVAL when s is not a quantity, TP_ELIMIT when it does not fit. */
int tp__quantity_parse(const char *s, tp_quantity *out);
/* A quantity from JSON: a string, or a number (YAML "gpu: 2"). */
int tp__quantity_from_json(const cJSON *v, tp_quantity *out);
/* acc += q. The sum takes the format of the first non-zero operand, as
 * Quantity.Add does. TP_ELIMIT on overflow. */
int tp__quantity_add(tp_quantity *acc, const tp_quantity *q);
/* q *= n. TP_ELIMIT on overflow. */
int tp__quantity_mul(tp_quantity *q, int64_t n);
bool tp__quantity_is_zero(const tp_quantity *q);
/* <0, 0, >0 as a is less than, equal to or greater than b. */
int tp__quantity_cmp(const tp_quantity *a, const tp_quantity *b);
/* Rounded up to a whole number (Quantity.Value); TP_ELIMIT past int64. */
int tp__quantity_ceil(const tp_quantity *q, int64_t *out);
/* Canonical text ("1500m", "12Gi", "3"); TP_ELIMIT when buf is too small. */
int tp__quantity_format(const tp_quantity *q, char *buf, size_t n);

#define TP_QUANTITY_MAX_TEXT 48

#endif
