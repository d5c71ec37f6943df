/*
 * webhook/cli/hints.h — what to write instead, for the findings a person
 * most often makes (hints.c): a quantity in the units people know from
 * elsewhere ("4GB", "4Gib", "two"), a name the API server refuses, a
 * runtime name with a typo. Each hint is one plain sentence that follows
 * the API server's own text; "" when there is nothing better to say.
 */
#ifndef TW_HINTS_H
#define TW_HINTS_H

#include <stdbool.h>
#include <stddef.h>

/* kube-openapi's pattern of a resource.Quantity, as the CRDs carry it. */
#define TW_QUANTITY_PATTERN                                                        \
	"^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?" \
	"(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"

/* For the value s of a quantity field (its path tells CPU and GPU from
 * memory): "use 4Gi or 4G", "did you mean 4Gi?", "use 2", ... */
void tw_hint_quantity(const char *field, const char *s, char *out, size_t n);

/* For a metadata.name the API server refuses: the rule in words and a name
 * that passes it ("Bad_Name" -> "bad-name"). label: a DNS-1035 label
 * (TrainJob), else a DNS-1123 subdomain. name NULL: the name is missing. */
void tw_hint_name(const char *kind, bool label, const char *name, char *out, size_t n);

/* For a runtime field the runtime guides document that the CRDs in force
 * lack (upstream v2.3.0's, the built-in ones): where it lives now and what
 * to write there. written: its value as written (NULL: not a scalar). ""
 * for any other field. */
void tw_hint_guide_field(const char *field, const char *written, char *out, size_t n);

/* Edit distance of a and b (insertions, deletions, substitutions, and two
 * neighbours swapped), or max + 1 once it is past max. */
size_t tw_edit_distance(const char *a, const char *b, size_t max);

/* Whether candidate is near enough to typed to suggest it. */
bool tw_is_near(const char *typed, const char *candidate);

#endif /* TW_HINTS_H */
