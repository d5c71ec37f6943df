/*
 * expand_api.c — a TrainJob in, the JobSet and its companions out: what
 * `POST /expand` and `trainer-webhook expand` share.
 *
 * The TrainJob is validated as a CREATE first, so a preview never shows a
 * JobSet that admission would have refused. MPI runtimes need an SSH key
 * pair, Flux runtimes a CURVE pair; they are made unless the caller brings
 * its own.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/admission/expand_api.h"

/* The TrainJob's runtime, to see which keys it needs. With a lookup (the
 * server) it is asked for like any other; a runtime that cannot be found
 * here is reported by the validation that follows. */
static const cJSON *runtime_of(const tp_options *opt, const cJSON *tj)
{
	const cJSON *rt = NULL;
	if (!opt->lookup)
		return tp_store_runtime_for(opt->store, tj);
	if (tp_get_str(tj, "spec.runtimeRef.name")) {
		const char *kind = tp_get_str(tj, "spec.runtimeRef.kind");
		bool ns = kind && !strcmp(kind, "TrainingRuntime");
		tp_lookup_get(opt, ns ? TP_KIND_TRAINING_RUNTIME : TP_KIND_CLUSTER_TRAINING_RUNTIME,
			      ns ? tp_meta_namespace(tj) : NULL,
			      tp_get_str(tj, "spec.runtimeRef.name"), &rt, NULL, 0);
	}
	return rt;
}

static bool has_policy(const cJSON *rt, const char *policy)
{
	return tp_get_object(tp_get_object(rt, "spec.mlPolicy"), policy) != NULL;
}

/* Flux's pair: the one given, else upstream's from the uid, else fresh. */
static int curve_key(const cJSON *tj, const tp_curve_key *given, tp_curve_key *out, char *err,
		     size_t errlen)
{
	const char *uid = tp_get_str(tj, "metadata.uid");
	if (given) {
		*out = *given;
		return 0;
	}
	return uid && *uid ? tw_curvekey_from_uid(uid, out, err, errlen)
			   : tw_curvekey_generate(out, err, errlen);
}

int tw_expand_trainjob(const tp_options *opt, const cJSON *tj, const tw_given_keys *given,
		       cJSON **list, tp_result *res, char *err, size_t errlen)
{
	static const tw_given_keys none = { NULL, NULL };
	*list = NULL;
	given = given ? given : &none;
	if (tp_kind_of(tj) != TP_KIND_TRAINJOB) {
		const char *av = tp_get_str(tj, "apiVersion"), *kind = tp_get_str(tj, "kind");
		snprintf(err, errlen, "want a TrainJob (apiVersion trainer.kubeflow.org/v1alpha1), "
				      "got apiVersion \"%s\" kind \"%s\"",
			 av ? av : "", kind ? kind : "");
		return TW_EXPAND_BAD_INPUT;
	}
	int rc = tp_validate_trainjob(opt, TP_OP_CREATE, tj, NULL, res);
	if (rc) {
		snprintf(err, errlen, "cannot validate the TrainJob: %s", tp_strerror(rc));
		return rc == TP_ENOMEM ? TW_EXPAND_NO_MEMORY : TW_EXPAND_BAD_INPUT;
	}
	if (tp_result_unavailable(res))
		return TW_EXPAND_UNAVAILABLE;
	if (!tp_result_ok(res))
		return TW_EXPAND_INVALID;
	const cJSON *rt = runtime_of(opt, tj);
	tw_sshkey made = { 0 };
	tp_curve_key curve;
	tp_ssh_key ssh_view;
	tp_keys keys = { NULL, NULL };
	if (has_policy(rt, "mpi")) {
		const tw_sshkey *ssh = given->ssh;
		if (!ssh && tw_sshkey_generate(&made, err, errlen))
			return TW_EXPAND_BAD_INPUT;
		ssh_view = tw_sshkey_view(ssh ? ssh : &made);
		keys.ssh = &ssh_view;
	}
	if (has_policy(rt, "flux")) {
		if (curve_key(tj, given->curve, &curve, err, errlen)) {
			tw_sshkey_free(&made);
			return TW_EXPAND_BAD_INPUT;
		}
		keys.curve = &curve;
	}
	rc = tp_expand(opt, tj, &keys, list, res);
	tw_sshkey_free(&made);
	if (rc == TP_ENOMEM) {
		snprintf(err, errlen, "out of memory");
		return TW_EXPAND_NO_MEMORY;
	}
	if (tp_result_unavailable(res))
		return TW_EXPAND_UNAVAILABLE;
	return rc || !tp_result_ok(res) ? TW_EXPAND_INVALID : TW_EXPAND_OK;
}

/* 422 body: the message and one cause per field error, as the API server's
 * own Invalid status lists them. */
static int invalid_body(const tp_result *res, tp_buf *out)
{
	/* every node checked: an arena that runs out halfway is TP_ENOMEM (the
	 * server then grows it), never an answer with its message left out */
	cJSON *root = cJSON_CreateObject();
	cJSON *causes = root ? cJSON_AddArrayToObject(root, "causes") : NULL;
	tp_buf msg = TP_BUF_INIT(0);
	int rc = causes ? tp_result_format(res, &msg) : TP_ENOMEM;
	if (!rc && !cJSON_AddStringToObject(root, "error", msg.data ? msg.data : ""))
		rc = TP_ENOMEM;
	for (size_t i = 0; !rc && i < tp_result_error_count(res); i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		tp_buf one = TP_BUF_INIT(0);
		cJSON *c = cJSON_CreateObject();
		if (c && !cJSON_AddItemToArray(causes, c)) {
			cJSON_Delete(c);
			c = NULL;
		}
		/* c, once in causes, is root's to free */
		if (!c || tp_field_error_format(e, &one) ||
		    !cJSON_AddStringToObject(c, "field", e->path ? e->path : "") ||
		    !cJSON_AddStringToObject(c, "message", one.data ? one.data : ""))
			rc = TP_ENOMEM;
		tp_buf_free(&one);
	}
	if (!rc)
		rc = tw_json_put(root, out);
	cJSON_Delete(root);
	tp_buf_free(&msg);
	return rc;
}

int tw_expand_handle(const tw_config *cfg, const char *body, size_t len, tp_arena *arena,
		     tp_buf *out, tw_outcome *oc)
{
	memset(oc, 0, sizeof(*oc));
	tp_arena *prev = tp_arena_enter(arena);
	tp_options opt = cfg->opt;
	opt.store = cfg->store;
	char err[512] = "";
	cJSON *tj = NULL, *list = NULL;
	tp_result *res = NULL;
	int rc = tp_result_new(&res);
	if (!rc)
		rc = tw_body_parse(cfg, body, len, "TrainJob", &tj, err, sizeof(err));
	if (rc == TP_ENOMEM)
		goto done;
	tp_buf_reset(out);
	if (rc) {
		oc->http_status = 400;
		rc = tw_json_error(err, out);
		goto done;
	}
	oc->kind = "TrainJob";
	oc->name = tp_meta_name(tj);
	oc->namespace_ = tp_meta_namespace(tj);
	/* An MPI key takes milliseconds to make: not while holding the store's
	 * read lock, which a waiting watch writer would turn into everyone's wait.
	 * With a lookup (the server's resolver) no lock is taken at all. */
	bool lock = cfg->store && !opt.lookup;
	tw_sshkey key = { 0 };
	if (lock)
		tp_store_rdlock(cfg->store);
	bool need_key = has_policy(runtime_of(&opt, tj), "mpi");
	if (lock)
		tp_store_unlock(cfg->store);
	int v = TW_EXPAND_OK;
	if (need_key && tw_sshkey_generate(&key, err, sizeof(err)))
		v = TW_EXPAND_BAD_INPUT;
	if (lock)
		tp_store_rdlock(cfg->store);
	if (v == TW_EXPAND_OK)
		v = tw_expand_trainjob(&opt, tj, &(tw_given_keys){ need_key ? &key : NULL, NULL },
				       &list, res, err, sizeof(err));
	if (lock)
		tp_store_unlock(cfg->store);
	tw_sshkey_free(&key);
	if (v == TW_EXPAND_NO_MEMORY) {
		/* the arena's allowance ran out: the caller's to grow (the server
		 * asks its memory budget for more and decides again, or answers
		 * 413/503), never an answer of its own */
		rc = TP_ENOMEM;
		goto done;
	}
	if (v == TW_EXPAND_BAD_INPUT) {
		oc->http_status = 400;
		rc = tw_json_error(err, out);
	} else if (v == TW_EXPAND_UNAVAILABLE) {
		/* Nothing was decided: the runtime could not be looked up. */
		oc->http_status = 503;
		oc->unavailable = true;
		tp_buf msg = TP_BUF_INIT(0);
		rc = tp_result_format(res, &msg);
		if (!rc)
			rc = tw_json_error(msg.data ? msg.data : "", out);
		tp_buf_free(&msg);
	} else if (v == TW_EXPAND_INVALID) {
		oc->http_status = 422;
		rc = invalid_body(res, out);
	} else {
		oc->http_status = 200;
		oc->allowed = true;
		rc = tw_json_put(list, out);
	}
	oc->error = oc->http_status == 200 ? NULL : tp_arena_strdup(arena, out->data);
done:
	cJSON_Delete(list);
	cJSON_Delete(tj);
	tp_result_free(res);
	tp_arena_leave(prev);
	return rc;
}
