/*
 * outcome.c — why an admission answer refused, for the request log and the
 * denials metric: the first finding, worded as the answer words it, and its
 * class, one of a fixed few so that a metric labelled by it stays small
 * (never the text, which holds names and values).
 */
#include "webhook/admission/decide.h"

const char *const tw_reason_classes[TW_REASON_CLASSES] = {
	"required", "invalid", "unsupported", "forbidden", "duplicate", "too_long",
	"too_many", "not_found", "internal", "other", "request",
};

_Static_assert(TP_FIELD_REQUIRED == 0 && TP_FIELD_NOT_FOUND == 7 && TP_FIELD_PLAIN == 9,
	       "tw_reason_classes follows tp_field_type's order");

/* tp_field_type, in its enum's order, to its class. */
static const char *class_of(tp_field_type t)
{
	return (unsigned)t <= TP_FIELD_PLAIN ? tw_reason_classes[t] : "other";
}

void tw_outcome_reason(const tw_answer *ans, tw_outcome *oc)
{
	if (ans->allowed)
		return;
	const tp_field_error *e = tp_result_error_at(ans->res, 0);
	if (!e) {
		oc->reason = ans->message;
		oc->reason_class = "request";
		return;
	}
	oc->reason_class = class_of(e->type);
	tp_buf b = TP_BUF_INIT(0);
	if (!tp_field_error_format(e, &b))
		oc->reason = tp_arena_strdup(tp_arena_current(), b.data);
	tp_buf_free(&b);
	if (!oc->reason)
		oc->reason = ans->message;
}
