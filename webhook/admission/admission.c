/*
 * admission.c — one AdmissionReview in, one AdmissionReview out.
 *
 * The server and `trainer-webhook review` both call tw_admission_handle, so
 * that a replayed request gets byte for byte the answer the cluster got.
 * Everything a request makes lives in its arena: the parsed body (parsed
 * once, in place), the decision's trees and the answer's text.
 *
 * Wire rules (docs/admission-protocol.md §1): the answer has the request's
 * apiVersion (v1, or v1beta1 for OME), echoes request.uid, and a denial
 * carries status {status: Failure, code: 403, reason: Forbidden, message},
 * as controller-runtime answers. A body that is not an AdmissionReview is an
 * HTTP 400 with {"error": "..."}: never an allow.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "webhook/admission/expand_api.h"

#define V1 "admission.k8s.io/v1"
#define V1BETA1 "admission.k8s.io/v1beta1"

/* ------------------------------------------------------------- answers */

int tw_json_put(const cJSON *root, tp_buf *out)
{
	int rc = tp_json_write(root, out);
	return rc ? rc : tp_buf_addc(out, '\n');
}

int tw_json_error(const char *msg, tp_buf *out)
{
	cJSON *root = cJSON_CreateObject();
	int rc = root && cJSON_AddStringToObject(root, "error", msg) ? tw_json_put(root, out)
								      : TP_ENOMEM;
	cJSON_Delete(root);
	return rc;
}

/* An HTTP error: status code and {"error": "<text>"}. */
static int http_error(tw_outcome *oc, tp_buf *out, int code, const char *fmt, ...)
	TP_PRINTF(4, 5);
static int http_error(tw_outcome *oc, tp_buf *out, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	oc->http_status = code;
	oc->allowed = false;
	oc->error = tp_arena_strdup(tp_arena_current(), msg);
	tp_buf_reset(out);
	return tw_json_error(msg, out);
}

/* The answer is written straight into out, in the order and bytes tw_json_put
 * gave the tree it was built as before: a cJSON node for each field, their
 * links, the print and the frees made make bench's TrainJob review 72,015
 * instructions, 68,581 written straight (callgrind). A string that cJSON
 * could not have made (NULL) is TP_ENOMEM, as its cJSON_CreateString was,
 * and out is then untouched. */
#define PUT(out, lit) tp_buf_add(out, lit, sizeof(lit) - 1)

/* s as a JSON string: the bytes tp_json_write gives a string node. */
static int put_string(tp_buf *out, const char *s)
{
	cJSON v = { .type = cJSON_String, .valuestring = (char *)s };
	return tp_json_write(&v, out);
}

/* Whether each text the answer holds is there (see above). */
static bool texts_present(const tw_review *rv, const tw_answer *ans)
{
	if (!rv->api_version || !rv->uid || (!ans->allowed && !ans->message))
		return false;
	for (size_t i = 0, n = tp_result_warning_count(ans->res); i < n; i++)
		if (!tp_result_warning_at(ans->res, i))
			return false;
	for (size_t i = 0, n = tp_result_annotation_count(ans->res); i < n; i++) {
		const char *k, *v;
		tp_result_annotation_at(ans->res, i, &k, &v);
		if (!k || !v)
			return false;
	}
	return true;
}

static int put_warnings(tp_buf *out, const tp_result *res)
{
	size_t n = tp_result_warning_count(res);
	if (!n)
		return TP_OK;
	int rc = PUT(out, ",\"warnings\":[");
	for (size_t i = 0; i < n && !rc; i++)
		if (!(rc = i ? tp_buf_addc(out, ',') : TP_OK))
			rc = put_string(out, tp_result_warning_at(res, i));
	return rc ? rc : tp_buf_addc(out, ']');
}

/* The API server files "dry-run" as "<webhook>/dry-run": an audit trail can
 * tell a `kubectl apply --dry-run=server` from a real change. A rule's own
 * "dry-run" annotation is kept, and then no second one is written. */
static int put_annotations(tp_buf *out, const tp_result *res, bool dry_run)
{
	size_t n = tp_result_annotation_count(res);
	if (!n && !dry_run)
		return TP_OK;
	int rc = PUT(out, ",\"auditAnnotations\":{");
	for (size_t i = 0; i < n && !rc; i++) {
		const char *k, *v;
		tp_result_annotation_at(res, i, &k, &v);
		dry_run = dry_run && strcmp(k, "dry-run");
		if (!(rc = i ? tp_buf_addc(out, ',') : TP_OK) && !(rc = put_string(out, k)) &&
		    !(rc = tp_buf_addc(out, ':')))
			rc = put_string(out, v);
	}
	if (!rc && dry_run)
		rc = n ? PUT(out, ",\"dry-run\":\"true\"") : PUT(out, "\"dry-run\":\"true\"");
	return rc ? rc : tp_buf_addc(out, '}');
}

/* A denial is 403 Forbidden, as controller-runtime answers; an answer that
 * decides nothing (a lookup nobody could answer) is 500 InternalError, which
 * the user sees as an error to retry rather than a verdict to act on. */
static int put_status(tp_buf *out, const char *message, bool internal)
{
	int rc = internal ? PUT(out, ",\"status\":{\"metadata\":{},\"status\":\"Failure\",\"code\":500,"
				     "\"reason\":\"InternalError\",\"message\":")
			  : PUT(out, ",\"status\":{\"metadata\":{},\"status\":\"Failure\",\"code\":403,"
				     "\"reason\":\"Forbidden\",\"message\":");
	if (!rc)
		rc = put_string(out, message);
	return rc ? rc : tp_buf_addc(out, '}');
}

/* The patch's operations as the answer carries them: base64 of their JSON. */
static int patch_text(const cJSON *ops, tp_buf *b64)
{
	tp_buf text = TP_BUF_INIT(0);
	int rc = tp_json_write(ops, &text);
	if (!rc)
		rc = tp_base64_encode(text.data, text.len, b64);
	tp_buf_free(&text);
	return rc;
}

static int put_answer(const tw_review *rv, const tw_answer *ans, const tp_buf *b64, tp_buf *out)
{
	int rc = PUT(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":");
	if (!rc)
		rc = put_string(out, rv->api_version);
	if (!rc)
		rc = PUT(out, ",\"response\":{\"uid\":");
	if (!rc)
		rc = put_string(out, rv->uid);
	if (!rc)
		rc = ans->allowed ? PUT(out, ",\"allowed\":true") : PUT(out, ",\"allowed\":false");
	if (!rc && !ans->allowed)
		rc = put_status(out, ans->message, tp_result_unavailable(ans->res));
	if (!rc && b64->data) {
		rc = PUT(out, ",\"patchType\":\"JSONPatch\",\"patch\":");
		if (!rc)
			rc = put_string(out, b64->data);
	}
	if (!rc)
		rc = put_warnings(out, ans->res);
	if (!rc)
		rc = put_annotations(out, ans->res, rv->dry_run);
	return rc ? rc : PUT(out, "}}\n");
}

static int write_answer(const tw_review *rv, const tw_answer *ans, tw_outcome *oc, tp_buf *out)
{
	bool patched = ans->patch && cJSON_GetArraySize(ans->patch) > 0;
	tp_buf b64 = TP_BUF_INIT(0);
	int rc = patched ? patch_text(ans->patch, &b64) : TP_OK;
	if (!rc && (!texts_present(rv, ans) || (patched && !b64.data)))
		rc = TP_ENOMEM;
	if (!rc) {
		oc->allowed = ans->allowed;
		tw_outcome_reason(ans, oc);
		oc->unavailable = !ans->allowed && tp_result_unavailable(ans->res);
		oc->patched = patched;
		oc->warnings = tp_result_warning_count(ans->res);
		tp_buf_reset(out);
		rc = put_answer(rv, ans, &b64, out);
	}
	tp_buf_free(&b64);
	return rc;
}

/* ------------------------------------------------------------- request */

static const char *gvk_text(const tw_review *rv)
{
	return tp_arena_printf(tp_arena_current(), "%s (%s/%s)", rv->kind, rv->group,
			       rv->version);
}

/* The members of request read here and by the request log, found in one
 * pass over it: a lookup from its first member for each (tp_get_str and
 * cJSON_GetObjectItemCaseSensitive) took these reads 2,700 instructions of
 * make bench's TrainJob review, 1,500 now (callgrind). The first member of
 * a name, as those find it (the reader refuses a name written twice
 * anyway). */
typedef struct req_members {
	const cJSON *uid, *kind, *operation, *object, *old_object, *dry_run;
	const cJSON *namespace_, *name, *user_info;
} req_members;

static const cJSON **member_slot(req_members *m, const char *k)
{
	switch (k[0]) {
	case 'd':
		return !strcmp(k, "dryRun") ? &m->dry_run : NULL;
	case 'k':
		return !strcmp(k, "kind") ? &m->kind : NULL;
	case 'n':
		return !strcmp(k, "name")        ? &m->name
		       : !strcmp(k, "namespace") ? &m->namespace_
						 : NULL;
	case 'o':
		return !strcmp(k, "object")      ? &m->object
		       : !strcmp(k, "oldObject") ? &m->old_object
		       : !strcmp(k, "operation") ? &m->operation
						 : NULL;
	case 'u':
		return !strcmp(k, "uid")        ? &m->uid
		       : !strcmp(k, "userInfo") ? &m->user_info
						: NULL;
	default:
		return NULL;
	}
}

static void request_members(const cJSON *req, req_members *m)
{
	for (const cJSON *c = req->child; c; c = c->next) {
		const cJSON **slot = c->string ? member_slot(m, c->string) : NULL;
		if (slot && !*slot)
			*slot = c;
	}
}

static const char *string_of(const cJSON *v)
{
	return v && (v->type & 0xff) == cJSON_String ? v->valuestring : NULL;
}

/* Checks the envelope; on failure writes why into err and returns TW_EFAILED.
 * m: request's members. */
static int read_request(const cJSON *root, tw_review *rv, req_members *m, char *err,
			size_t errlen)
{
	const char *av = tp_get_str(root, "apiVersion");
	const char *kind = tp_get_str(root, "kind");
	if (!av || !kind || strcmp(kind, "AdmissionReview")) {
		snprintf(err, errlen, "the body is not an AdmissionReview: want kind "
				      "\"AdmissionReview\" and apiVersion \"" V1 "\"");
		return TW_EFAILED;
	}
	if (strcmp(av, V1) && strcmp(av, V1BETA1)) {
		snprintf(err, errlen, "unsupported AdmissionReview apiVersion \"%s\": this webhook "
				      "speaks \"" V1 "\" and \"" V1BETA1 "\"", av);
		return TW_EFAILED;
	}
	rv->api_version = av;
	rv->req = tp_get_object(root, "request");
	if (!rv->req) {
		snprintf(err, errlen, "the AdmissionReview has no \"request\" object");
		return TW_EFAILED;
	}
	request_members(rv->req, m);
	rv->uid = string_of(m->uid);
	if (!rv->uid || !*rv->uid) {
		snprintf(err, errlen, "request.uid is missing or empty: the answer must echo it");
		return TW_EFAILED;
	}
	rv->group = tp_get_str(m->kind, "group");
	rv->version = tp_get_str(m->kind, "version");
	rv->kind = tp_get_str(m->kind, "kind");
	if (!rv->group || !rv->version || !rv->kind) {
		snprintf(err, errlen, "request.kind must be an object with group, version and kind");
		return TW_EFAILED;
	}
	const char *op = string_of(m->operation);
	if (tp_operation_parse(op, &rv->op)) {
		snprintf(err, errlen, "request.operation \"%s\" is none of CREATE, UPDATE, DELETE, "
				      "CONNECT", op ? op : "");
		return TW_EFAILED;
	}
	rv->object = m->object;
	rv->old_object = m->old_object;
	if (cJSON_IsNull(rv->object))
		rv->object = NULL;
	if (cJSON_IsNull(rv->old_object))
		rv->old_object = NULL;
	if ((rv->op == TP_OP_CREATE || rv->op == TP_OP_UPDATE) && !cJSON_IsObject(rv->object)) {
		snprintf(err, errlen, "request.object must be an object on %s", op);
		return TW_EFAILED;
	}
	if (rv->op == TP_OP_UPDATE && !cJSON_IsObject(rv->old_object)) {
		snprintf(err, errlen, "request.oldObject must be an object on UPDATE");
		return TW_EFAILED;
	}
	rv->dry_run = cJSON_IsTrue(m->dry_run);
	return 0;
}

/* A request whose kind is not this route's is a configuration mistake:
 * say which path the kind belongs on. NULL when it fits. */
static const char *misrouted(const tw_route *route, const tw_review *rv)
{
	tp_kind k = tw_kind_of_gvk(rv->group, rv->version, rv->kind);
	if (k != TP_KIND_UNKNOWN && k == route->kind)
		return NULL;
	bool mutating = route->type != TW_ROUTE_VALIDATE;
	const tw_route *right = tw_route_for_kind(rv->group, rv->version, rv->kind, mutating);
	if (!right)
		right = tw_route_for_kind(rv->group, rv->version, rv->kind, !mutating);
	if (right)
		return tp_arena_printf(tp_arena_current(),
				       "%s does not belong on %s: send it to %s (fix the rules of "
				       "the webhook configuration)",
				       gvk_text(rv), route->path, right->path);
	return tp_arena_printf(tp_arena_current(),
			       "%s is not handled by this webhook (%s takes %s): remove it from "
			       "the rules of the webhook configuration",
			       gvk_text(rv), route->path, tp_kind_name(route->kind));
}

/* The route a replayed request takes when none is named: the validating one
 * where the kind has one, else the mutating one. */
static const tw_route *route_of(const tw_review *rv)
{
	const tw_route *r = tw_route_for_kind(rv->group, rv->version, rv->kind, false);
	return r ? r : tw_route_for_kind(rv->group, rv->version, rv->kind, true);
}

/* The object itself must be what request.kind says. */
static const char *object_mismatch(const tw_review *rv, tp_kind want)
{
	const cJSON *obj = rv->object ? rv->object : rv->old_object;
	if (!obj || tp_kind_of(obj) == want)
		return NULL;
	const char *av = tp_get_str(obj, "apiVersion"), *kind = tp_get_str(obj, "kind");
	return tp_arena_printf(tp_arena_current(),
			       "request.object has apiVersion \"%s\" and kind \"%s\", but "
			       "request.kind says %s: they must agree",
			       av ? av : "", kind ? kind : "", gvk_text(rv));
}

/* The object's metadata as the API server always sends it: an object, with
 * a string name (or a generateName) and, when present, a string namespace.
 * review and the fuzzers can send anything; no rule below expects that. */
static const char *metadata_wrong(const tw_review *rv)
{
	static const char *const which[] = { "object", "oldObject" };
	const cJSON *objs[] = { rv->object, rv->old_object };
	for (int i = 0; i < 2; i++) {
		const cJSON *m = objs[i] ? tp_member(objs[i], "metadata") : NULL;
		if (!objs[i] || cJSON_IsNull(objs[i]))
			continue;
		if (!cJSON_IsObject(m))
			return tp_arena_printf(tp_arena_current(), "request.%s.metadata: must be an "
					       "object with a name, not %s", which[i],
					       m ? tp_json_type_name(m) : "missing");
		const cJSON *name = tp_member(m, "name");
		const cJSON *ns = tp_member(m, "namespace");
		if (name ? !cJSON_IsString(name) : !tp_get_str(m, "generateName"))
			return tp_arena_printf(tp_arena_current(), "request.%s.metadata.name: must be "
					       "a string (or give generateName), not %s", which[i],
					       name ? tp_json_type_name(name) : "missing");
		if (ns && !cJSON_IsString(ns) && !cJSON_IsNull(ns))
			return tp_arena_printf(tp_arena_current(), "request.%s.metadata.namespace: "
					       "must be a string, not %s", which[i],
					       tp_json_type_name(ns));
	}
	return NULL;
}

/* ------------------------------------------------------------ decisions */

static int validate_into(const tp_options *opt, const tw_review *rv, tp_result *res)
{
	int rc = tp_validate(opt, rv->op, rv->object, rv->old_object, res);
	if (rc == TP_ENOMEM)
		return rc;
	if (rc)
		return tp_result_add(res, TP_FIELD_INTERNAL, "request.object", NULL,
				     "cannot validate this object: %s", tp_strerror(rc));
	return TP_OK;
}

static int decide_validate(const tw_config *cfg, const tp_options *opt, const tw_review *rv,
			   tw_answer *ans, tw_outcome *oc)
{
	if (rv->op != TP_OP_CREATE && rv->op != TP_OP_UPDATE)
		return TP_OK; /* upstream checks nothing on DELETE or CONNECT */
	int rc = validate_into(opt, rv, ans->res);
	if (rc || !cfg->strict_warn || opt->profile != TP_PROFILE_STRICT || tp_result_ok(ans->res) ||
	    tp_result_unavailable(ans->res))
		return rc;
	return tw_strict_as_warnings(opt, rv, &ans->res, &oc->strict_warned);
}

static int decide_default_trainjob(const tp_options *opt, const tw_review *rv,
				   tw_answer *ans)
{
	if (rv->op != TP_OP_CREATE && rv->op != TP_OP_UPDATE)
		return TP_OK;
	/* The API server refuses a list past its maxItems right after this route
	 * answers: stamping 100,000 runtimePatches for it took more than the
	 * request's arena. The answer is that refusal, as the validating route's. */
	bool refused;
	int rc = tp_trainjob_too_many(opt, rv->op, rv->object, rv->old_object, ans->res, &refused);
	if (rc == TP_ENOMEM)
		return rc;
	if (rc)
		return tp_result_add(ans->res, TP_FIELD_INTERNAL, "request.object", NULL,
				     "cannot default this TrainJob: %s", tp_strerror(rc));
	if (refused)
		return TP_OK;
	cJSON *defaulted = NULL;
	rc = tp_default_trainjob(opt, rv->op, rv->object, rv->old_object, &defaulted);
	if (!rc)
		rc = tp_jsonpatch_diff(rv->object, defaulted, &ans->patch);
	cJSON_Delete(defaulted);
	if (rc && rc != TP_ENOMEM)
		return tp_result_add(ans->res, TP_FIELD_INTERNAL, "request.object", NULL,
				     "cannot default this TrainJob: %s", tp_strerror(rc));
	return rc;
}

/* The route's check: a validation, a TrainJob's defaults or a JobSet's. */
static int decide_by_route(const tw_config *cfg, const tw_route *route, const tw_review *rv,
			   tw_answer *ans, tw_outcome *oc)
{
	tp_options opt = cfg->opt;
	opt.store = cfg->store;
	switch (route->type) {
	case TW_ROUTE_VALIDATE:
		return decide_validate(cfg, &opt, rv, ans, oc);
	case TW_ROUTE_MUTATE_TRAINJOB:
		return decide_default_trainjob(&opt, rv, ans);
	case TW_ROUTE_MUTATE_JOBSET:
		return tw_decide_jobset(&opt, rv, ans);
	default:
		return TP_EINVAL;
	}
}

/* ---------------------------------------------------------------- entry */

int tw_body_parse(const tw_config *cfg, const char *body, size_t len, const char *want,
		  cJSON **out, char *err, size_t errlen)
{
	tp_load_limits lim;
	tp_load_limits_default(&lim);
	lim.max_doc_bytes = lim.max_total_bytes = cfg->max_body ? cfg->max_body
								: TW_DEFAULT_MAX_BODY;
	lim.max_docs = 1;
	lim.json_only = cfg->json_only;
	tp_load_error lerr = { 0 };
	tp_docs *docs = NULL;
	int rc = tp_load(body, len, &lim, &docs, &lerr);
	if (rc == TP_ENOMEM) {
		snprintf(err, errlen, "out of memory");
	} else if (rc) {
		tp_buf b = TP_BUF_INIT(errlen);
		tp_load_error_format(&lerr, "body", &b);
		snprintf(err, errlen, "%s", b.data ? b.data : tp_strerror(rc));
		tp_buf_free(&b);
	} else if (tp_docs_count(docs) != 1) {
		snprintf(err, errlen, "the body holds %zu objects: send one %s",
			 tp_docs_count(docs), want);
		rc = TP_EPARSE;
	} else {
		*out = tp_docs_take(docs, 0);
	}
	tp_docs_free(docs);
	return rc;
}

int tw_admission_handle(const tw_config *cfg, const tw_route *route, const char *body,
			size_t len, tp_arena *arena, tp_buf *out, tw_outcome *oc)
{
	memset(oc, 0, sizeof(*oc));
	oc->http_status = 200;
	tp_arena *prev = tp_arena_enter(arena);
	char err[512];
	cJSON *root = NULL;
	tw_review rv = { 0 };
	tw_answer ans = { .allowed = true };
	req_members m = { 0 };
	int rc = tw_body_parse(cfg, body, len, "AdmissionReview", &root, err, sizeof(err));
	if (rc == TP_ENOMEM)
		goto done;
	if (rc || read_request(root, &rv, &m, err, sizeof(err))) {
		rc = http_error(oc, out, 400, "%s", err);
		goto done;
	}
	oc->uid = rv.uid;
	oc->kind = rv.kind;
	oc->operation = tp_operation_name(rv.op);
	oc->namespace_ = string_of(m.namespace_);
	oc->name = string_of(m.name);
	oc->user = tp_get_str(m.user_info, "username");
	oc->dry_run = rv.dry_run;
	if (!route && !(route = route_of(&rv))) {
		rc = http_error(oc, out, 404, "no route of this webhook handles %s",
				gvk_text(&rv));
		goto done;
	}
	oc->route = route;
	if ((rc = tp_result_new(&ans.res)) != TP_OK)
		goto done;
	const char *wrong = misrouted(route, &rv);
	if (!wrong)
		wrong = object_mismatch(&rv, route->kind);
	if (!wrong)
		wrong = metadata_wrong(&rv);
	if (wrong) {
		ans.allowed = false;
		ans.message = wrong;
	} else {
		/* With a lookup (the server's resolver) nothing is held across the
		 * decision, which may wait on the API server; without one the store is
		 * read in place under its read lock. */
		bool lock = cfg->store && !cfg->opt.lookup;
		if (lock)
			tp_store_rdlock(cfg->store);
		rc = decide_by_route(cfg, route, &rv, &ans, oc);
		if (lock)
			tp_store_unlock(cfg->store);
		if (rc)
			goto done;
		if (!tp_result_ok(ans.res)) {
			tp_buf msg = TP_BUF_INIT(0);
			if ((rc = tp_result_format(ans.res, &msg)) == TP_OK) {
				ans.allowed = false;
				ans.message = tp_arena_strdup(arena, msg.data);
			}
			tp_buf_free(&msg);
			if (rc)
				goto done;
		}
	}
	rc = write_answer(&rv, &ans, oc, out);
done:
	tp_result_free(ans.res);
	tp_arena_leave(prev);
	return rc;
}
