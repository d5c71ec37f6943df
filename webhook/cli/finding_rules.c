/*
 * finding_rules.c — the kinds of finding the offline commands report, one
 * SARIF rule each, with what it is and what to do about it; and which kind a
 * decision's error or warning is, read from the words the API server and the
 * webhook use for it (their texts are fixed: upstream's and Kubernetes').
 */
#include <string.h>

#include "webhook/cli/finding_rules.h"
#include "webhook/cli/hints.h"

static const tw_finding_rule rules[] = {
	{ "unknown-field", "error", "A field the CRD's schema does not have",
	  "The API server refuses unknown fields (kubectl's strict field validation): fix the "
	  "spelling (the message names the nearest field) or remove it." },
	{ "unknown-kind", "error", "A version or kind its API group does not serve",
	  "Use a version and kind the message lists as served (apiVersion "
	  "trainer.kubeflow.org/v1alpha1 for TrainJob and the runtimes)." },
	{ "invalid-quantity", "error", "A resource quantity Kubernetes cannot read",
	  "Write a number with an optional unit: Ki Mi Gi Ti Pi Ei (powers of 1024), k M G T "
	  "P E (powers of 1000) or m (milli), as in 4Gi, 4G, 500m." },
	{ "invalid-name", "error", "A metadata.name the API server refuses, or none",
	  "Names are lowercase letters, digits and '-' (runtimes may also use '.'), start and "
	  "end with a letter or digit; a TrainJob's starts with a letter and has at most 63." },
	{ "runtime-not-found", "error", "The runtime a TrainJob names is not known",
	  "Give the runtime with --runtimes DIR or its file in the same run, or fix "
	  "spec.runtimeRef (the message suggests a near name)." },
	{ "outdated-api-version", "error", "An object of the pre-release API",
	  "Use apiVersion trainer.kubeflow.org/v1alpha1." },
	{ "cel-rule", "error", "A validation rule of the CRD (x-kubernetes-validations) fails",
	  "Change the object so that the rule the message quotes holds." },
	{ "schema", "error", "A value the CRD's OpenAPI schema refuses",
	  "Change the value as the message says (its type, range, length or pattern)." },
	{ "required-field", "error", "A required field is missing", "Add the field." },
	{ "forbidden-field", "error", "A field that must not be set here",
	  "Remove the field, or move it where the message says." },
	{ "unsupported-value", "error", "A value outside the supported ones",
	  "Use one of the values the message lists." },
	{ "duplicate-value", "error", "A value given twice where each must be unique",
	  "Remove or rename the duplicate." },
	{ "too-long", "error", "A value longer than allowed", "Shorten it." },
	{ "too-many", "error", "More items than allowed", "Remove items." },
	{ "immutable-field", "error", "A field that cannot change once the object exists",
	  "Keep the old value, or delete and recreate the object." },
	{ "invalid-value", "error", "A value the webhook's rules refuse",
	  "Change the value as the message says." },
	{ "deprecated-runtime", "warning", "A runtime that is deprecated, or a TrainJob using one",
	  "Move to the runtime the deprecation policy names before it is removed." },
	{ "rule-not-checked", "warning", "A CRD rule this linter cannot run",
	  "Check the rule with the API server (kubectl apply --dry-run=server)." },
	{ "warning", "warning", "A warning the API server would return", "Read the warning." },
	{ "yaml-syntax", "error", "The file is no valid YAML or JSON",
	  "Fix the syntax at the line and column given." },
	{ "yaml-tab", "error", "A tab where YAML wants spaces",
	  "Indent with spaces: YAML does not allow tabs for indentation." },
	{ "yaml-duplicate-key", "error", "A key given twice in one mapping",
	  "Keep one of them: the API server would take the last, silently." },
	{ "unreadable", "error", "The input could not be read",
	  "Check that the path exists, is readable and is under 64 MiB." },
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

size_t tw_finding_rule_count(void)
{
	return NRULES;
}

const tw_finding_rule *tw_finding_rule_at(size_t i)
{
	return i < NRULES ? &rules[i] : NULL;
}

/* The rule's index in the table; -1 means no rule has that id. */
int tw_finding_rule_index(const char *id)
{
	for (size_t i = 0; i < NRULES; i++)
		if (!strcmp(rules[i].id, id))
			return (int)i;
	return -1;
}

static bool starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

const char *tw_finding_rule_of_error(const tp_field_error *e, const char *field, bool from_message)
{
	const char *d = e->detail ? e->detail : "";
	if (starts(d, "unknown field"))
		return "unknown-field";
	if (starts(d, "no matches for kind"))
		return "unknown-kind";
	if (strstr(d, "should match '" TW_QUANTITY_PATTERN "'"))
		return "invalid-quantity";
	if (!strcmp(field, "metadata.name"))
		return "invalid-name";
	if (strstr(d, "must be created before the TrainJob is created"))
		return "runtime-not-found";
	if (!strcmp(field, "apiVersion") && strstr(d, "outdated API version"))
		return "outdated-api-version";
	if (from_message || strstr(d, " evaluating rule: ") || starts(d, "failed rule: ") ||
	    strstr(d, "validation rules were not checked") || strstr(d, "running out of cost budget"))
		return "cel-rule";
	if (strstr(d, "field is immutable"))
		return "immutable-field";
	if (strstr(d, " in body "))
		return "schema";
	switch (e->type) {
	case TP_FIELD_REQUIRED: return "required-field";
	case TP_FIELD_FORBIDDEN: return "forbidden-field";
	case TP_FIELD_UNSUPPORTED: return "unsupported-value";
	case TP_FIELD_DUPLICATE: return "duplicate-value";
	case TP_FIELD_TOO_LONG: return "too-long";
	case TP_FIELD_TOO_MANY: return "too-many";
	default: return "invalid-value";
	}
}

const char *tw_finding_rule_of_warning(const char *w)
{
	if (strstr(w, " is deprecated"))
		return "deprecated-runtime";
	if (strstr(w, "x-kubernetes-validations rule") && strstr(w, "was not checked"))
		return "rule-not-checked";
	return "warning";
}

const char *tw_finding_rule_of_load(const char *msg, bool at_tab)
{
	if (strstr(msg, "already defined"))
		return "yaml-duplicate-key";
	if (at_tab)
		return "yaml-tab";
	return "yaml-syntax";
}
