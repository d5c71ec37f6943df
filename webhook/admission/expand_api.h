/*
 * webhook/admission/expand_api.h — the expansion as the binary offers it: POST
 * /expand and `trainer-webhook expand` (expand_api.c), and the mutating JobSet
 * route (mutate_jobset.c).
 */
#ifndef TW_EXPAND_API_H
#define TW_EXPAND_API_H

#include "webhook/admission/decide.h"
#include "webhook/admission/curvekey.h"
#include "webhook/admission/sshkey.h"

enum {
	TW_EXPAND_OK = 0,
	TW_EXPAND_INVALID = 1,   /* the TrainJob is refused: res has the field errors */
	TW_EXPAND_BAD_INPUT = 2, /* not a TrainJob, no key: err says */
	TW_EXPAND_NO_MEMORY = 3, /* out of memory (HTTP 500): err says */
	TW_EXPAND_UNAVAILABLE = 4, /* the runtime could not be looked up (HTTP 503): res says */
};

/* Keys a caller brings (expand --ssh-key, --curve-key). A NULL member is
 * made when the runtime needs it: a fresh SSH pair for MPI; for Flux the
 * CURVE pair upstream derives from metadata.uid, a fresh one without a uid. */
typedef struct tw_given_keys {
	const tw_sshkey *ssh;
	const tp_curve_key *curve;
} tw_given_keys;

/* Validate tj (CREATE) and expand it with the runtime from opt->lookup, else
 * opt->store, into a v1 List (*list, current arena if any), with the keys
 * given (NULL: none given). Without a lookup the caller holds the store's
 * read lock. */
int tw_expand_trainjob(const tp_options *opt, const cJSON *tj, const tw_given_keys *given,
		       cJSON **list, tp_result *res, char *err, size_t errlen);

/* POST /expand: body a TrainJob (JSON or YAML); out the List (200), the field
 * errors (422) or {"error"} (400). */
int tw_expand_handle(const tw_config *cfg, const char *body, size_t len, tp_arena *arena,
		     tp_buf *out, tw_outcome *oc);

/* The mutating JobSet route's decision (mutate_jobset.c). */
int tw_decide_jobset(const tp_options *opt, const tw_review *rv, tw_answer *ans);

#endif /* TW_EXPAND_API_H */
