/*
 * webhook/cli/finding_rules.h — which kind of finding (SARIF rule) an error,
 * a warning or a load error is (finding_rules.c); the table of kinds is
 * findings.h's tw_finding_rule_*.
 */
#ifndef TW_FINDING_RULES_H
#define TW_FINDING_RULES_H

#include <stdbool.h>

#include "webhook/cli/findings.h"

/* field: where the error is reported; from_message: the field was read from
 * the text of a rule of the whole object. */
const char *tw_finding_rule_of_error(const tp_field_error *e, const char *field, bool from_message);
const char *tw_finding_rule_of_warning(const char *warning);
/* A file that does not load (tp_load_error's message; at_tab: the error
 * points at a tab). */
const char *tw_finding_rule_of_load(const char *msg, bool at_tab);

#endif /* TW_FINDING_RULES_H */
